#include "sgemm.h"

#include "../core/error.h"

#include <omp.h>
#include <xmmintrin.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

// Note [packed sgemm]
// The classic GotoBLAS/BLIS scheme, in row-major terms. B is packed block by block (KC rows by NC
// columns, sized for L2) into panels of NR columns; A is packed (MC rows by KC) into panels of MR rows.
// The micro-kernel keeps an MR x NR tile of C in registers: per step of k it loads NR/W vectors of
// B and broadcasts MR values of A. One A panel stays in L1 while the loop walks all B panels of the
// block. Packing reads any strides, so transposed operands (x @ W.T in Linear) need no copy first.
// The last rows of A run a kernel of that many rows; the last columns of B are computed into a
// scratch tile and merged, so the kernels themselves have no masks.

namespace fl::blas {
namespace {

constexpr int64_t KC = 256;   // depth of one packed block
constexpr int64_t NC = 512;   // columns of B per packed block: KC x NC floats = 512 KiB, in L2
constexpr int64_t MC = 240;   // rows of A per task (a multiple of both MRs)
constexpr int64_t KC_ROWS = 640;  // most depth of one block of sgemm_rows (a 3x3 conv's 576: one pass over C)

template <int W>
struct Vec {
  typedef float type __attribute__((vector_size(W * 4)));
  typedef float unaligned __attribute__((vector_size(W * 4), aligned(4)));
};

// The register tile: ROWS rows of NV vectors of W floats, over an A panel of height MR and a B panel
// of NB vectors' width (ROWS < MR for the last rows of a matrix and NV < NB for its last columns, so
// that they cost no padded work). Inlined into the ISA-specific wrappers below, so the vector type
// maps to zmm or ymm registers.
// With OFFSETS, B is not packed: row p of the panel is the NR floats at bp + boff[p] (sgemm_rows).
template <int W, int ROWS, int NV, int MR, int NB, bool OFFSETS = false>
__attribute__((always_inline)) inline void micro_kernel(int64_t kc, const float* __restrict ap, const float* __restrict bp,
                                                        const int64_t* __restrict boff, float alpha, float beta, float* c,
                                                        int64_t ldc, const float* cin, int64_t ldcin) {
  using V = typename Vec<W>::type;
  using VU = typename Vec<W>::unaligned;
  constexpr int NR = W * NB;
  V acc[ROWS][NV];
#pragma GCC unroll 16
  for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = V{};
  for (int64_t p = 0; p < kc; ++p) {
    V b[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      if constexpr (OFFSETS) b[v] = *reinterpret_cast<const VU*>(bp + boff[p] + v * W);
      else b[v] = *reinterpret_cast<const V*>(bp + v * W);
    }
#pragma GCC unroll 16
    for (int i = 0; i < ROWS; ++i) {
      const float a = ap[i];  // scalar * vector: a broadcast GCC folds into the FMA
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] += a * b[v];
    }
    ap += MR;
    if constexpr (!OFFSETS) bp += NR;
  }
#pragma GCC unroll 16
  for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      V r = acc[i][v] * alpha;
      if (beta != 0.0f) r += *reinterpret_cast<const VU*>(cin + i * ldcin + v * W) * beta;
      *reinterpret_cast<VU*>(c + i * ldc + v * W) = r;
    }
}

// (kc, A panel, B panel, alpha, beta, C, ldc, addend, its row stride): C = alpha * A B + beta * addend, where
// the addend is C itself (ldc) or a row broadcast over the tile's rows (stride 0: a bias)
using KernelFn = void (*)(int64_t, const float*, const float*, float, float, float*, int64_t, const float*, int64_t);
using RowsKernelFn = void (*)(int64_t, const float*, const float*, const int64_t*, float, float*, int64_t);

// The largest register tile (AVX-512: 12 x 32), the size of the scratch tile for the last columns.
constexpr int kMaxTile = 12 * 32;

// An ISA's kernels: rows[r] computes r rows of the tile (r = 1..mr; rows[mr] is the full tile), half[r]
// r rows of its first nr / 2 columns (the last columns of a matrix, when no more are left).
struct Isa {
  int mr, nr;
  KernelFn rows[13], half[13];
  RowsKernelFn from_rows[13];  // rows[r] with B read through row offsets (sgemm_rows), alpha 1
};

template <int ROWS, int NV>
__attribute__((target("avx512f,fma"))) void kernel_avx512(int64_t kc, const float* ap, const float* bp, float alpha,
                                                            float beta, float* c, int64_t ldc, const float* cin,
                                                            int64_t ldcin) {
  micro_kernel<16, ROWS, NV, 12, 2>(kc, ap, bp, nullptr, alpha, beta, c, ldc, cin, ldcin);
}
// (the second, unused parameter lets FL_ROWS12 below list these kernels as it lists the others)
template <int ROWS, int>
__attribute__((target("avx512f,fma"))) void rows_kernel_avx512(int64_t kc, const float* ap, const float* bp,
                                                                 const int64_t* boff, float beta, float* c, int64_t ldc) {
  micro_kernel<16, ROWS, 2, 12, 2, true>(kc, ap, bp, boff, 1.0f, beta, c, ldc, c, ldc);
}
template <int ROWS, int NV>
__attribute__((target("avx2,fma"))) void kernel_avx2(int64_t kc, const float* ap, const float* bp, float alpha,
                                                      float beta, float* c, int64_t ldc, const float* cin,
                                                      int64_t ldcin) {
  micro_kernel<8, ROWS, NV, 6, 2>(kc, ap, bp, nullptr, alpha, beta, c, ldc, cin, ldcin);
}
template <int ROWS, int>
__attribute__((target("avx2,fma"))) void rows_kernel_avx2(int64_t kc, const float* ap, const float* bp,
                                                           const int64_t* boff, float beta, float* c, int64_t ldc) {
  micro_kernel<8, ROWS, 2, 6, 2, true>(kc, ap, bp, boff, 1.0f, beta, c, ldc, c, ldc);
}

// The best kernel this CPU runs. FLOWLIKE_SGEMM_ISA=avx2 or =none caps it (avx512, the default, does
// not), so that tests cover the narrower kernel and the OpenBLAS fallback on any machine.
const Isa* detect_isa() {
#define FL_ROWS6(k, nv) nullptr, k<1, nv>, k<2, nv>, k<3, nv>, k<4, nv>, k<5, nv>, k<6, nv>
#define FL_ROWS12(k, nv) FL_ROWS6(k, nv), k<7, nv>, k<8, nv>, k<9, nv>, k<10, nv>, k<11, nv>, k<12, nv>
  static const Isa avx512{12, 32, {FL_ROWS12(kernel_avx512, 2)}, {FL_ROWS12(kernel_avx512, 1)},
                          {FL_ROWS12(rows_kernel_avx512, 2)}};
  static const Isa avx2{6, 16, {FL_ROWS6(kernel_avx2, 2)}, {FL_ROWS6(kernel_avx2, 1)}, {FL_ROWS6(rows_kernel_avx2, 2)}};
#undef FL_ROWS12
#undef FL_ROWS6
  const char* cap = std::getenv("FLOWLIKE_SGEMM_ISA");
  const std::string limit = cap ? cap : "avx512";
  FL_CHECK(limit == "avx512" || limit == "avx2" || limit == "none", ValueError,
           "FLOWLIKE_SGEMM_ISA must be avx512, avx2 or none, got '", limit, "'");
  const bool fma = __builtin_cpu_supports("fma");
  if (limit == "avx512" && fma && __builtin_cpu_supports("avx512f")) return &avx512;
  if (limit != "none" && fma && __builtin_cpu_supports("avx2")) return &avx2;
  return nullptr;
}

// A grow-only, 64-byte aligned scratch buffer per thread (packing buffers are reused across calls:
// fresh pages for every GEMM would cost more than small GEMMs themselves).
float* scratch(int slot, size_t floats) {
  struct Buf {
    float* p = nullptr;
    size_t n = 0;
    ~Buf() { std::free(p); }
  };
  thread_local Buf bufs[2];
  Buf& b = bufs[slot];
  if (b.n < floats) {
    std::free(b.p);
    b.p = static_cast<float*>(std::aligned_alloc(64, (floats * sizeof(float) + 63) / 64 * 64));
    b.n = b.p ? floats : 0;
  }
  return b.p;
}

// This thread's packing buffers at the most any sgemm_packed task asks (mc <= MC, kc <= KC, nc <= NC), taken before
// anything is written: a failed allocation then makes sgemm_packed return false (the caller's fallback runs) and
// never happens halfway through C or inside a parallel region, where there is no way to report it.
bool reserve_packing() { return scratch(0, size_t(MC) * KC) && scratch(1, size_t(KC) * NC); }

// dst[p * width + r] = src[r * ld + p] for r < rows, p < kc: the transposing copy both packings
// need (A row-major, B transposed as in x @ W.T), in 4x4 SSE blocks.
void pack_transposed(const float* src, int64_t ld, int64_t rows, int64_t kc, int width, float* dst) {
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    const float* s0 = src + r * ld;
    int64_t p = 0;
    for (; p + 4 <= kc; p += 4) {
      __m128 x0 = _mm_loadu_ps(s0 + p), x1 = _mm_loadu_ps(s0 + ld + p), x2 = _mm_loadu_ps(s0 + 2 * ld + p),
             x3 = _mm_loadu_ps(s0 + 3 * ld + p);
      _MM_TRANSPOSE4_PS(x0, x1, x2, x3);
      _mm_storeu_ps(dst + p * width + r, x0);
      _mm_storeu_ps(dst + (p + 1) * width + r, x1);
      _mm_storeu_ps(dst + (p + 2) * width + r, x2);
      _mm_storeu_ps(dst + (p + 3) * width + r, x3);
    }
    for (; p < kc; ++p)
      for (int64_t q = 0; q < 4; ++q) dst[p * width + r + q] = s0[q * ld + p];
  }
  for (; r < rows; ++r)
    for (int64_t p = 0; p < kc; ++p) dst[p * width + r] = src[r * ld + p];
}

// Copies `kc` rows of `cols` contiguous floats (row stride ld) into rows of `width` floats. A full panel row (a
// register tile's 12 or 32 floats, AVX2's 6 or 16) is a copy of constant size, which the compiler inlines as a few
// vector moves instead of a libc call per 48 or 128 bytes (a GPT-mini's products: packing 11% -> 9.8% of their time).
// (COLS 0: a row of `cols` floats, through memcpy's call)
template <int COLS>
void pack_rows_of(const float* src, int64_t ld, int64_t cols, int64_t kc, int width, float* dst) {
  const size_t bytes = (COLS ? COLS : cols) * sizeof(float);
  for (int64_t p = 0; p < kc; ++p) std::memcpy(dst + p * width, src + p * ld, bytes);
}
void pack_rows(const float* src, int64_t ld, int64_t cols, int64_t kc, int width, float* dst) {
  switch (cols) {
    case 32: return pack_rows_of<32>(src, ld, cols, kc, width, dst);
    case 16: return pack_rows_of<16>(src, ld, cols, kc, width, dst);
    case 12: return pack_rows_of<12>(src, ld, cols, kc, width, dst);
    case 6: return pack_rows_of<6>(src, ld, cols, kc, width, dst);
    default: return pack_rows_of<0>(src, ld, cols, kc, width, dst);
  }
}

// dst[p * width + r] = src[r * rs + p * cs], zero-padded to `width`: one packed panel of A (r: rows
// of A, p: depth) or of B (r: columns of B, with B's strides swapped).
void pack_panel(const float* src, int64_t rs, int64_t cs, int64_t rows, int64_t kc, int width, float* dst) {
  if (rows < width) std::fill(dst, dst + kc * width, 0.0f);
  if (rs == 1 && rows > 1) pack_rows(src, cs, rows, kc, width, dst);
  else if (cs == 1) pack_transposed(src, rs, rows, kc, width, dst);
  else
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t p = 0; p < kc; ++p) dst[p * width + r] = src[r * rs + p * cs];
}

// One task: rows [i0, i0 + mc) of C against B panels [jp0, jp1) of the packed block; `ep` (set for the last
// depth block only) runs on each tile right after it is stored. `row` (set for the first depth block only) is
// the addend beta scales, broadcast over the rows, in place of C.
void run_task(const Isa& isa, int64_t i0, int64_t mc, int64_t jp0, int64_t jp1, int64_t j_base, int64_t nc, int64_t kc,
              Mat<const float> a, const float* bpack, float alpha, float beta, Mat<float> c, const Epilogue* ep,
              const float* row) {
  const int MR = isa.mr, NR = isa.nr;
  float* apack = scratch(0, static_cast<size_t>((mc + MR - 1) / MR * MR * kc));
  for (int64_t ir = 0; ir < mc; ir += MR)
    pack_panel(a.data + (i0 + ir) * a.rs, a.rs, a.cs, std::min<int64_t>(MR, mc - ir), kc, MR, apack + ir * kc);
  alignas(64) float tile[kMaxTile];
  for (int64_t ir = 0; ir < mc; ir += MR) {
    const int64_t mr = std::min<int64_t>(MR, mc - ir);
    const float* ap = apack + ir * kc;
    for (int64_t jp = jp0; jp < jp1; ++jp) {
      const int64_t j = jp * NR, nr = std::min<int64_t>(NR, nc - j);
      float* cp = c.data + (i0 + ir) * c.rs + j_base + j;
      const KernelFn kernel = isa.rows[mr];
      const float* cin = row ? row + j_base + j : cp;
      const int64_t ldcin = row ? 0 : c.rs;
      if (nr == NR) {
        kernel(kc, ap, bpack + jp * NR * kc, alpha, beta, cp, c.rs, cin, ldcin);
      } else {
        // the last columns: a tile (half width when they fit in half) into scratch, merged column by column
        (nr <= NR / 2 ? isa.half[mr] : kernel)(kc, ap, bpack + jp * NR * kc, 1.0f, 0.0f, tile, NR, tile, NR);
        for (int64_t i = 0; i < mr; ++i)
          for (int64_t jj = 0; jj < nr; ++jj) {
            float& out = cp[i * c.rs + jj];
            out = beta == 0.0f ? alpha * tile[i * NR + jj] : alpha * tile[i * NR + jj] + beta * cin[i * ldcin + jj];
          }
      }
      if (ep)
        for (int64_t i = 0; i < mr; ++i) (*ep)(cp + i * c.rs, nr);
    }
  }
}

}  // namespace

int sgemm_rows_width() {
  static const Isa* isa = detect_isa();
  return isa ? isa->nr : 0;
}

bool sgemm_rows(int64_t m, int64_t n, int64_t k, Mat<const float> a, const float* b, const int64_t* boff, float beta,
                Mat<float> c) {
  static const Isa* isa = detect_isa();
  if (!isa || m <= 0 || n <= 0 || k <= 0 || n % isa->nr) return false;
  const int MR = isa->mr, NR = isa->nr;
  // depth blocks of equal size; B's rows come from L2 anyway, and a deep block updates C fewer times (a 3x3
  // convolution from 64 channels ran 37.7 ms in one block of 576, 38.2 in three of 192)
  const int64_t blocks = (k + KC_ROWS - 1) / KC_ROWS, kc_max = (k + blocks - 1) / blocks;
  float* apack = scratch(0, static_cast<size_t>((m + MR - 1) / MR * MR * kc_max));
  if (!apack) return false;  // out of memory: the caller's fallback runs, nothing is written yet
  for (int64_t pc = 0; pc < k; pc += kc_max) {
    const int64_t kc = std::min(kc_max, k - pc);
    for (int64_t ir = 0; ir < m; ir += MR)
      pack_panel(a.data + ir * a.rs + pc * a.cs, a.rs, a.cs, std::min<int64_t>(MR, m - ir), kc, MR, apack + ir * kc);
    const float beta_k = pc == 0 ? beta : 1.0f;
    for (int64_t j = 0; j < n; j += NR)
      for (int64_t ir = 0; ir < m; ir += MR)
        isa->from_rows[std::min<int64_t>(MR, m - ir)](kc, apack + ir * kc, b + j, boff + pc, beta_k,
                                                       c.data + ir * c.rs + j, c.rs);
  }
  return true;
}

bool sgemm_packed(int64_t m, int64_t n, int64_t k, float alpha, Mat<const float> a, Mat<const float> b, float beta,
                  Mat<float> c, const Epilogue& ep, const float* row) {
  static const Isa* isa = detect_isa();
  if (!isa || m <= 0 || n <= 0 || k <= 0 || !(c.cs == 1 || n == 1)) return false;
  const int MR = isa->mr, NR = isa->nr;
  // Small products and calls from inside a parallel region (bmm batches) run on the calling thread.
  const int threads = omp_in_parallel() || 2.0 * m * n * k < 4e5 ? 1 : omp_get_max_threads();
  // Tasks: a multiple of `threads` row blocks of at most MC rows, so each thread packs only its own
  // rows of A; when m is too small for that, column chunks of the packed block split the rows' work.
  const int64_t panels = (m + MR - 1) / MR, max_panels = MC / MR;
  const int64_t mblocks_wanted = threads * ((panels + threads * max_panels - 1) / (threads * max_panels));
  const int64_t mc = (panels + mblocks_wanted - 1) / mblocks_wanted * MR;
  const int64_t mblocks = (m + mc - 1) / mc;
  // Depth blocks of equal size: 784 = 4 x 196, not 3 x 256 + 16 (a thin last block costs a full
  // pass over C for little work).
  const int64_t kc_max = (k + (k + KC - 1) / KC - 1) / ((k + KC - 1) / KC);
  if (!reserve_packing()) return false;
  float* bpack = scratch(1, static_cast<size_t>(kc_max * ((std::min(NC, n) + NR - 1) / NR * NR)));

  // Every thread walks the same blocks; work inside a block is dealt round-robin by thread id, with
  // barriers around the shared packed B (no OpenMP runtime calls at all when single-threaded).
  auto work = [&](int tid, int nth) {
    for (int64_t jc = 0; jc < n; jc += NC) {
      const int64_t nc = std::min(NC, n - jc), npanels = (nc + NR - 1) / NR;
      const int64_t nsplit = mblocks >= nth ? 1 : std::min<int64_t>(npanels, (nth + mblocks - 1) / mblocks);
      const int64_t chunk = (npanels + nsplit - 1) / nsplit;
      for (int64_t pc = 0; pc < k; pc += kc_max) {
        const int64_t kc = std::min(kc_max, k - pc);
        if (nth > 1) {
#pragma omp barrier
        }
        for (int64_t jp = tid; jp < npanels; jp += nth)
          pack_panel(b.data + pc * b.rs + (jc + jp * NR) * b.cs, b.cs, b.rs, std::min<int64_t>(NR, nc - jp * NR), kc, NR,
                     bpack + jp * NR * kc);
        if (nth > 1) {
#pragma omp barrier
        }
        const Mat<const float> ablock{a.data + pc * a.cs, a.rs, a.cs};
        const float beta_k = pc == 0 ? beta : 1.0f;
        const Epilogue* ep_k = ep && pc + kc >= k ? &ep : nullptr;
        for (int64_t t = tid; t < mblocks * nsplit; t += nth) {
          const int64_t i0 = t / nsplit * mc, jp0 = t % nsplit * chunk;
          if (jp0 < npanels)
            run_task(*isa, i0, std::min(mc, m - i0), jp0, std::min(npanels, jp0 + chunk), jc, nc, kc, ablock, bpack,
                     alpha, beta_k, c, ep_k, pc == 0 ? row : nullptr);
        }
      }
    }
  };
  if (threads == 1) {
    work(0, 1);
    return true;
  }
  // One operand much smaller than the other (a Linear layer's batch against its weight): each thread runs a
  // whole single-threaded GEMM on its own stripe of C, splitting the large operand and packing the small one
  // again, with no barriers between the threads.
  const bool column_stripes = 4 * m <= n && n >= 2 * NR * threads, row_stripes = 4 * n <= m && m >= 2 * MR * threads;
  // every thread takes its packing buffers first; if any cannot, all leave before writing C (a barrier apart)
  std::atomic<bool> failed{false};
#pragma omp parallel num_threads(threads)
  {
    if (!reserve_packing()) failed = true;
#pragma omp barrier
    const int nth = omp_get_num_threads(), tid = omp_get_thread_num();
    if (failed) {
      // (all threads leave: nothing was written)
    } else if (column_stripes || row_stripes) {
      const int64_t extent = column_stripes ? n : m, unit = column_stripes ? NR : MR;
      const int64_t per = ((extent + nth - 1) / nth + unit - 1) / unit * unit;
      const int64_t lo = std::min(extent, tid * per), hi = std::min(extent, lo + per);
      if (lo < hi) {
        if (column_stripes)
          sgemm_packed(m, hi - lo, k, alpha, a, {b.data + lo * b.cs, b.rs, b.cs}, beta, {c.data + lo * c.cs, c.rs, c.cs},
                       ep, row ? row + lo : nullptr);
        else
          sgemm_packed(hi - lo, n, k, alpha, {a.data + lo * a.rs, a.rs, a.cs}, b, beta, {c.data + lo * c.rs, c.rs, c.cs},
                       ep, row);
      }
    } else {
      work(tid, nth);
    }
  }
  return !failed;
}

}  // namespace fl::blas
