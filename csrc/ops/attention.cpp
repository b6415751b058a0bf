// Fused scaled dot-product attention on the CPU, forward and backward, flash-attention style.
//
// Forward: one task per (batch, query head, block of kBQ queries). It walks the key blocks (only
// those a causal mask leaves visible), computes the (kBQ x kBK) score tile with one GEMM, masks it,
// folds it into a running max / sum per row (online softmax) and accumulates P @ V with a second
// GEMM. Only the tile and the per-row logsumexp are kept; the logsumexp is saved for backward.
// Backward: one task per (batch, key head) that owns dK and dV of that head and dQ of the query
// heads mapped to it (GQA), recomputing each tile's probabilities from the saved logsumexp.
// Dropout draws a keep decision per (batch, head, query, key) from a counter-based hash of the
// generator's (seed, offset), so backward regenerates exactly the forward's mask.
// The kernels read q, k, v (and backward's output and its gradient) where they lie, through a Layout: a
// query split out of a (B, L, 3 H E) projection and viewed as (B, H, L, E) is not copied first. The output and
// the gradients follow their input's layout as PyTorch's do: a (B, L, H, E) query gives an output whose
// transpose(1, 2) is contiguous, so the `.transpose(1, 2).contiguous()` that follows attention copies nothing.
#include "attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "../kernels/blas.h"
#include "reduce.h"
#include "softmax.h"
#include "views.h"

namespace fl {
namespace {

// Queries per block (kBQ: the most) and keys per tile.
constexpr int64_t kBQ = 128, kBK = 64;
// A causal mask leaves query block i0 only the keys before i0 + its rows, so causal calls take smaller query
// blocks: the tiles then stop nearer the diagonal (a 64-token sequence in blocks of 32 computes 75% of the scores,
// in one block all of them), against smaller GEMMs and more passes over K and V. Measured best (fwd + bwd, 2 threads):
// 32 up to 256 tokens (64 tokens: 0.86x the time of one block; 256: 0.86x), 64 beyond (1024: 0.97x).
inline int64_t query_block(int64_t L, bool causal) { return !causal ? kBQ : L <= 256 ? 32 : 64; }

// Where the rows of one operand lie: row l of head h of batch b (the batch dims flattened) starts at
// batch[b] + h * head + l * row; the last dim is dense.
struct Layout {
  std::vector<int64_t> batch;
  int64_t head = 0, row = 0;
  int64_t at(int64_t b, int64_t h, int64_t l) const { return batch[b] + h * head + l * row; }
};

// Shapes and options of one call, the operands' layouts included.
struct Geo {
  int64_t B = 1, Hq = 1, Hk = 1, L = 0, S = 0, E = 0, Ev = 0;
  IntList lead;  // the batch dims B is the product of
  bool heads = false;  // whether dim -3 is a head dim (inputs of 3 or more dims)
  double scale = 1;
  bool causal = false;
  int64_t bq = kBQ;  // queries per block
  // mask, expanded to (lead..., Hq, L, S) with zero strides where it broadcasts
  const char* mask = nullptr;
  bool mask_bool = false;
  IntList mstrides;
  // backward only: where dS goes when the (float) mask needs a gradient, (B, Hq, L, S) dense
  void* grad_mask = nullptr;
  // dropout
  double p = 0;
  uint64_t seed = 0, offset = 0;
  // query, key, value, output; backward: the output's gradient and the inputs' gradients
  Layout lq, lk, lv, lo, lgo, lgq, lgk, lgv;

  int64_t mask_base(int64_t b, int64_t h) const {
    int64_t off = 0;
    for (int64_t d = static_cast<int64_t>(lead.size()) - 1; d >= 0; --d) {
      off += (b % lead[d]) * mstrides[d];
      b /= lead[d];
    }
    return heads ? off + h * mstrides[lead.size()] : off;
  }
};

inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
// 1 / (1 - p) when element `idx` is kept, else 0.
template <typename A>
inline A keep_scale(const Geo& g, uint64_t idx) {
  const double u = (mix64(mix64(g.seed ^ 0x9E3779B97F4A7C15ULL) + g.offset + idx) >> 11) * (1.0 / 9007199254740992.0);
  return u >= g.p ? A(1.0 / (1.0 - g.p)) : A(0);
}

template <typename T>
inline T row_max_of(const T* x, int64_t n) {
  if constexpr (std::is_same_v<T, float>) return nnvec::row_max(x, n);
  T m = -std::numeric_limits<T>::infinity();
  for (int64_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}
// x[i] = exp(x[i] - shift) in place; returns the sum.
template <typename T>
inline T exp_in_place(T* x, int64_t n, T shift) {
  if constexpr (std::is_same_v<T, float>) return nnvec::exp_shift_sum(x, x, n, 1.0f, shift);
  T s = 0;
  for (int64_t i = 0; i < n; ++i) s += (x[i] = std::exp(x[i] - shift));
  return s;
}

// Adds the mask (and the causal cut) to the score tile s (rows i0.., keys j0..).
template <typename T>
FL_NN_INLINE void mask_tile(const Geo& g, int64_t mbase, T* s, int64_t i0, int64_t m, int64_t j0, int64_t nk) {
  const T ninf = -std::numeric_limits<T>::infinity();
  const int64_t si = g.mask ? g.mstrides[g.mstrides.size() - 2] : 0, sj = g.mask ? g.mstrides.back() : 0;
  for (int64_t r = 0; r < m; ++r) {
    T* sr = s + r * kBK;
    if (g.mask) {
      const char* mr = g.mask + (mbase + (i0 + r) * si + j0 * sj) * (g.mask_bool ? 1 : sizeof(T));
      if (g.mask_bool) {
        for (int64_t j = 0; j < nk; ++j) if (!reinterpret_cast<const bool*>(mr)[j * sj]) sr[j] = ninf;
      } else {
        for (int64_t j = 0; j < nk; ++j) sr[j] += reinterpret_cast<const T*>(mr)[j * sj];
      }
    }
    if (g.causal)
      for (int64_t j = std::max<int64_t>(0, i0 + r + 1 - j0); j < nk; ++j) sr[j] = ninf;
  }
}

template <typename T>
FL_NN_INLINE void forward_block(const Geo& g, const T* q, const T* k, const T* v, T* o, T* lse, int64_t b, int64_t h,
                                int64_t i0, T* s, T* mx, T* sum) {
  const int64_t hk = h / (g.Hq / g.Hk), m = std::min(g.bq, g.L - i0);
  const T* Q = q + g.lq.at(b, h, i0);
  const T* K = k + g.lk.at(b, hk, 0);
  const T* V = v + g.lv.at(b, hk, 0);
  T* O = o + g.lo.at(b, h, i0);
  const int64_t qs = g.lq.row, ks = g.lk.row, vs = g.lv.row, os = g.lo.row;
  const int64_t mbase = g.mask ? g.mask_base(b, h) : 0;
  const T ninf = -std::numeric_limits<T>::infinity();
  for (int64_t r = 0; r < m; ++r) { mx[r] = ninf; sum[r] = 0; std::fill(O + r * os, O + r * os + g.Ev, T(0)); }
  const int64_t jend = g.causal ? std::min(g.S, i0 + m) : g.S;
  for (int64_t j0 = 0; j0 < jend; j0 += kBK) {
    const int64_t nk = std::min(kBK, jend - j0);
    blas::gemm<T>(m, nk, g.E, T(g.scale), {Q, qs, 1}, {K + j0 * ks, 1, ks}, T(0), {s, kBK, 1});
    mask_tile(g, mbase, s, i0, m, j0, nk);
    for (int64_t r = 0; r < m; ++r) {
      T* sr = s + r * kBK;
      const T mn = std::max(mx[r], row_max_of(sr, nk));
      if (mn == ninf) { std::fill(sr, sr + nk, T(0)); continue; }  // nothing visible yet in this row
      const T corr = std::exp(mx[r] - mn);
      sum[r] = sum[r] * corr + exp_in_place(sr, nk, mn);
      mx[r] = mn;
      if (corr != T(1)) for (int64_t e = 0; e < g.Ev; ++e) O[r * os + e] *= corr;
      if (g.p > 0) {
        const uint64_t base = static_cast<uint64_t>(((b * g.Hq + h) * g.L + i0 + r) * g.S + j0);
        for (int64_t j = 0; j < nk; ++j) sr[j] *= keep_scale<T>(g, base + j);
      }
    }
    blas::gemm<T>(m, g.Ev, nk, T(1), {s, kBK, 1}, {V + j0 * vs, vs, 1}, T(1), {O, os, 1});
  }
  T* L = lse + (b * g.Hq + h) * g.L + i0;
  for (int64_t r = 0; r < m; ++r) {
    // a row that sees no key gives 0 (PyTorch's safe softmax); +inf makes backward's P zero there
    const T inv = sum[r] > 0 ? T(1) / sum[r] : T(0);
    for (int64_t e = 0; e < g.Ev; ++e) O[r * os + e] *= inv;
    L[r] = sum[r] > 0 ? mx[r] + std::log(sum[r]) : std::numeric_limits<T>::infinity();
  }
}

template <typename T>
FL_NN_INLINE void backward_head(const Geo& g, const T* q, const T* k, const T* v, const T* o, const T* lse, const T* go,
                                T* gq, T* gk, T* gv, int64_t b, int64_t hk, T* p, T* pd, T* dp, T* dsum) {
  const int64_t group = g.Hq / g.Hk;
  const T* K = k + g.lk.at(b, hk, 0);
  const T* V = v + g.lv.at(b, hk, 0);
  T* dK = gk + g.lgk.at(b, hk, 0);
  T* dV = gv + g.lgv.at(b, hk, 0);
  const int64_t qs = g.lq.row, ks = g.lk.row, vs = g.lv.row, os = g.lo.row, gos = g.lgo.row, gqs = g.lgq.row,
                gks = g.lgk.row, gvs = g.lgv.row;
  const T ts = T(g.scale);
  for (int64_t h = hk * group; h < (hk + 1) * group; ++h) {
    const int64_t mbase = g.mask ? g.mask_base(b, h) : 0;
    for (int64_t i0 = 0; i0 < g.L; i0 += g.bq) {
      const int64_t m = std::min(g.bq, g.L - i0), row0 = (b * g.Hq + h) * g.L + i0;
      const T* Q = q + g.lq.at(b, h, i0);
      const T* dO = go + g.lgo.at(b, h, i0);
      const T* O = o + g.lo.at(b, h, i0);
      const T* Lr = lse + row0;
      T* dQ = gq + g.lgq.at(b, h, i0);
      for (int64_t r = 0; r < m; ++r) {
        T d = 0;
        for (int64_t e = 0; e < g.Ev; ++e) d += dO[r * gos + e] * O[r * os + e];
        dsum[r] = d;
      }
      const int64_t jend = g.causal ? std::min(g.S, i0 + m) : g.S;
      for (int64_t j0 = 0; j0 < jend; j0 += kBK) {
        const int64_t nk = std::min(kBK, jend - j0);
        blas::gemm<T>(m, nk, g.E, ts, {Q, qs, 1}, {K + j0 * ks, 1, ks}, T(0), {p, kBK, 1});
        mask_tile(g, mbase, p, i0, m, j0, nk);
        for (int64_t r = 0; r < m; ++r) exp_in_place(p + r * kBK, nk, Lr[r]);
        const T* pdrop = p;
        if (g.p > 0) {
          for (int64_t r = 0; r < m; ++r) {
            const uint64_t base = static_cast<uint64_t>((row0 + r) * g.S + j0);
            for (int64_t j = 0; j < nk; ++j) pd[r * kBK + j] = p[r * kBK + j] * keep_scale<T>(g, base + j);
          }
          pdrop = pd;
        }
        // dV += P_drop^T dO ; dP = dO V^T
        blas::gemm<T>(nk, g.Ev, m, T(1), {pdrop, 1, kBK}, {dO, gos, 1}, T(1), {dV + j0 * gvs, gvs, 1});
        blas::gemm<T>(m, nk, g.Ev, T(1), {dO, gos, 1}, {V + j0 * vs, 1, vs}, T(0), {dp, kBK, 1});
        for (int64_t r = 0; r < m; ++r) {
          T* dr = dp + r * kBK;
          const T* pr = p + r * kBK;
          if (g.p > 0) {
            const T* kr = pd + r * kBK;  // P * keep_scale; dS = P * (dP * keep - D) = Pd * dP - P * D
            for (int64_t j = 0; j < nk; ++j) dr[j] = kr[j] * dr[j] - pr[j] * dsum[r];
          } else {
            for (int64_t j = 0; j < nk; ++j) dr[j] = pr[j] * (dr[j] - dsum[r]);
          }
        }
        if (g.grad_mask)  // d(scores) is d(mask): the mask is added to the scores
          for (int64_t r = 0; r < m; ++r)
            std::copy(dp + r * kBK, dp + r * kBK + nk, static_cast<T*>(g.grad_mask) + (row0 + r) * g.S + j0);
        // dQ += scale dS K ; dK += scale dS^T Q
        blas::gemm<T>(m, g.E, nk, ts, {dp, kBK, 1}, {K + j0 * ks, ks, 1}, T(1), {dQ, gqs, 1});
        blas::gemm<T>(nk, g.E, m, ts, {dp, 1, kBK}, {Q, qs, 1}, T(1), {dK + j0 * gks, gks, 1});
      }
    }
  }
}

FL_NN_CLONES void forward_block_f32(const Geo& g, const float* q, const float* k, const float* v, float* o, float* lse,
                                    int64_t b, int64_t h, int64_t i0, float* s, float* mx, float* sum) {
  forward_block<float>(g, q, k, v, o, lse, b, h, i0, s, mx, sum);
}
FL_NN_CLONES void backward_head_f32(const Geo& g, const float* q, const float* k, const float* v, const float* o,
                                    const float* lse, const float* go, float* gq, float* gk, float* gv, int64_t b,
                                    int64_t hk, float* p, float* pd, float* dp, float* dsum) {
  backward_head<float>(g, q, k, v, o, lse, go, gq, gk, gv, b, hk, p, pd, dp, dsum);
}

// The float blocks take the cloned kernels; double the portable template.
template <typename T>
void block_any(const Geo& g, const T* q, const T* k, const T* v, T* o, T* lse, int64_t b, int64_t h, int64_t i0, T* s,
               T* mx, T* sum) {
  forward_block<T>(g, q, k, v, o, lse, b, h, i0, s, mx, sum);
}
void block_any(const Geo& g, const float* q, const float* k, const float* v, float* o, float* lse, int64_t b, int64_t h,
               int64_t i0, float* s, float* mx, float* sum) {
  forward_block_f32(g, q, k, v, o, lse, b, h, i0, s, mx, sum);
}
template <typename T>
void head_any(const Geo& g, const T* q, const T* k, const T* v, const T* o, const T* lse, const T* go, T* gq, T* gk,
              T* gv, int64_t b, int64_t hk, T* p, T* pd, T* dp, T* dsum) {
  backward_head<T>(g, q, k, v, o, lse, go, gq, gk, gv, b, hk, p, pd, dp, dsum);
}
void head_any(const Geo& g, const float* q, const float* k, const float* v, const float* o, const float* lse,
              const float* go, float* gq, float* gk, float* gv, int64_t b, int64_t hk, float* p, float* pd, float* dp,
              float* dsum) {
  backward_head_f32(g, q, k, v, o, lse, go, gq, gk, gv, b, hk, p, pd, dp, dsum);
}

// One task per (batch, query head, query block); causal tasks differ in size, hence dynamic.
template <typename T>
void run_forward(const Geo& g, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor& lse,
                 int64_t nqb) {
  const int64_t tasks = g.B * g.Hq * nqb, per = kBQ * kBK + 2 * kBQ;
  // the threads' buffers are taken here: an allocation failing inside the region could not be reported
  const int nt = omp_in_parallel() ? 1 : omp_get_max_threads();
  std::vector<T> bufs(per * nt);
#pragma omp parallel num_threads(nt)
  {
    T* s = bufs.data() + per * omp_get_thread_num();
#pragma omp for schedule(dynamic)
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t bh = t / nqb, i0 = (t % nqb) * g.bq;
      block_any(g, q->data<T>(), k->data<T>(), v->data<T>(), out->data<T>(), lse->data<T>(), bh / g.Hq, bh % g.Hq, i0,
                s, s + kBQ * kBK, s + kBQ * kBK + kBQ);
    }
  }
}

// One task per (batch, key head): it owns that head's dK, dV and the dQ of its query heads.
template <typename T>
void run_backward(const Geo& g, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o, const Tensor& lse,
                  const Tensor& go, const Tensor& gq, const Tensor& gk, const Tensor& gv) {
  const int64_t tasks = g.B * g.Hk, per = 3 * kBQ * kBK + kBQ;
  const int nt = omp_in_parallel() ? 1 : omp_get_max_threads();
  std::vector<T> bufs(per * nt);  // (as run_forward's)
#pragma omp parallel num_threads(nt)
  {
    T* p = bufs.data() + per * omp_get_thread_num();
#pragma omp for schedule(dynamic)
    for (int64_t t = 0; t < tasks; ++t)
      head_any(g, q->data<T>(), k->data<T>(), v->data<T>(), o->data<T>(), lse->data<T>(), go->data<T>(), gq->data<T>(),
               gk->data<T>(), gv->data<T>(), t / g.Hk, t % g.Hk, p, p + kBQ * kBK, p + 2 * kBQ * kBK, p + 3 * kBQ * kBK);
  }
}

// OpenBLAS runs single-threaded inside our parallel regions (the tiles are small).
struct BlasSingleThread {
  BlasSingleThread() { blas::set_num_threads(1); }
  ~BlasSingleThread() { blas::set_num_threads(omp_get_max_threads()); }
};

ScalarType compute_dtype(ScalarType t) { return t == ScalarType::Float64 ? t : ScalarType::Float32; }

// Where the rows of t (lead..., [heads,] rows, last) lie.
Layout layout_of(const Tensor& t, const Geo& g) {
  const int64_t nd = t->dim();
  Layout l;
  l.row = t->strides[nd - 2];
  l.head = g.heads ? t->strides[nd - 3] : 0;
  l.batch.assign(static_cast<size_t>(g.B), 0);
  for (int64_t b = 0; b < g.B; ++b)
    for (int64_t d = static_cast<int64_t>(g.lead.size()) - 1, rest = b; d >= 0; --d) {
      l.batch[b] += (rest % g.lead[d]) * t->strides[d];
      rest /= g.lead[d];
    }
  return l;
}

// A new (lead..., [heads,] rows, last) tensor laid out as `like` is in the case that matters: heads between rows
// and the last dim in memory (a (B, L, H, E) buffer viewed as (B, H, L, E)), as PyTorch's flash attention lays
// out its output and gradients; otherwise contiguous.
Tensor empty_like_rows(const IntList& sizes, const Tensor& like, ScalarType dt, const Geo& g) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  if (!g.heads || like->sizes[nd - 3] <= 1 || like->sizes[nd - 2] <= 1 || like->strides[nd - 3] >= like->strides[nd - 2])
    return empty(sizes, dt);
  IntList swapped = sizes;
  std::swap(swapped[nd - 3], swapped[nd - 2]);
  return ops::transpose(empty(swapped, dt), nd - 3, nd - 2);
}

// `t` in the compute dtype with a dense last dim, its batch dims expanded to the broadcast ones (a view: no copy
// where t already is so), and where its rows lie.
Tensor prepared(const Tensor& t, ScalarType ct, const Geo& g, Layout& layout) {
  Tensor e = t;
  if (g.heads && !std::equal(g.lead.begin(), g.lead.end(), t->sizes.begin(), t->sizes.end() - 3)) {
    IntList full = g.lead;
    full.insert(full.end(), t->sizes.end() - 3, t->sizes.end());
    e = ops::expand(t, full);
  }
  if (e->dtype != ct) e = to_dtype(e, ct);
  if (e->sizes.back() > 1 && e->strides.back() != 1) e = row_major(e);
  layout = layout_of(e, g);
  return e;
}

// Checks the arguments as PyTorch does and fills the geometry (without mask and dropout state).
Geo geometry(const Tensor& q, const Tensor& k, const Tensor& v, bool gqa) {
  const char* op = "scaled_dot_product_attention";
  FL_CHECK(q->dtype == k->dtype && q->dtype == v->dtype, Error, op,
           ": Expected query, key, and value to have the same dtype, but got query.dtype: ", c10_type_name(q->dtype),
           " key.dtype: ", c10_type_name(k->dtype), " and value.dtype: ", c10_type_name(v->dtype), " instead.");
  FL_CHECK(is_floating(q->dtype), Error, op, ": expected a floating point dtype, got ", c10_type_name(q->dtype));
  const int64_t nd = q->dim();
  FL_CHECK(nd >= 2 && k->dim() == nd && v->dim() == nd, Error, op,
           ": Expected query, key and value to have the same number of dimensions (at least 2), but got query.dim() = ",
           nd, ", key.dim() = ", k->dim(), " and value.dim() = ", v->dim());
  Geo g;
  g.L = q->sizes[nd - 2];
  g.E = q->sizes[nd - 1];
  g.S = k->sizes[nd - 2];
  g.Ev = v->sizes[nd - 1];
  FL_CHECK(k->sizes[nd - 1] == g.E, Error, op, ": Expected key.size(-1) == query.size(-1), but got query of shape ",
           shape_str(q->sizes), " and key of shape ", shape_str(k->sizes));
  FL_CHECK(v->sizes[nd - 2] == g.S, Error, op, ": Expected key and value to have the same sequence length, but got key of shape ",
           shape_str(k->sizes), " and value of shape ", shape_str(v->sizes));
  if (nd >= 3) {
    g.heads = true;
    g.Hq = q->sizes[nd - 3];
    g.Hk = k->sizes[nd - 3];
    FL_CHECK(k->sizes[nd - 3] == v->sizes[nd - 3], Error, op, ": key and value must have the same number of heads, but got key of shape ",
             shape_str(k->sizes), " and value of shape ", shape_str(v->sizes));
    // batch dims broadcast, as in the composite PyTorch defines the op by
    auto lead = [](const Tensor& t) { return IntList(t->sizes.begin(), t->sizes.end() - 3); };
    g.lead = broadcast_shapes(broadcast_shapes(lead(q), lead(k), op), lead(v), op);
  }
  if (g.Hk != g.Hq) {
    FL_CHECK(gqa || g.Hk == 1, Error, op, ": The size of tensor a (", g.Hq, ") must match the size of tensor b (", g.Hk,
             ") at non-singleton dimension 1 (pass enable_gqa=True for grouped-query attention)");
    FL_CHECK(g.Hk > 0 && g.Hq % g.Hk == 0, Error, op, ": number of heads in key and value must divide the number of heads in query");
  }
  for (int64_t s : g.lead) g.B *= s;
  return g;
}

// Expands the mask to (lead..., Hq, L, S) (a view), in the dtype the kernel reads.
Tensor prepare_mask(Geo& g, const Tensor& mask, ScalarType qdt, ScalarType ct) {
  if (!mask) return nullptr;
  FL_CHECK(mask->dtype == ScalarType::Bool || mask->dtype == qdt, Error,
           "scaled_dot_product_attention: Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: ",
           c10_type_name(mask->dtype), " and  query.dtype: ", c10_type_name(qdt), " instead.");
  IntList full = g.lead;
  if (g.heads) full.push_back(g.Hq);
  full.push_back(g.L);
  full.push_back(g.S);
  Tensor m = mask->dtype == ScalarType::Bool || mask->dtype == ct ? mask : to_dtype(mask, ct);
  FL_CHECK(m->dim() <= static_cast<int64_t>(full.size()), Error, "scaled_dot_product_attention: attn_mask of shape ",
           shape_str(mask->sizes), " cannot be broadcast to ", shape_str(full));
  Tensor e = ops::expand(m, full);
  g.mask = e->data_ptr();
  g.mask_bool = m->dtype == ScalarType::Bool;
  g.mstrides = e->strides;
  return e;
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> sdpa_cpu(const Tensor& query, const Tensor& key, const Tensor& value,
                                            const Tensor& mask, double dropout_p, bool is_causal, double scale, bool gqa,
                                            Generator* gen) {
  Geo g = geometry(query, key, value, gqa);
  FL_CHECK(!(mask && is_causal), Error, "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True");
  FL_CHECK(dropout_p >= 0 && dropout_p <= 1, Error, "dropout probability has to be between 0 and 1, but got ", dropout_p);
  const ScalarType ct = compute_dtype(query->dtype);
  g.scale = std::isnan(scale) ? 1.0 / std::sqrt(static_cast<double>(g.E)) : scale;
  g.causal = is_causal;
  g.bq = query_block(g.L, is_causal);
  const Tensor mexp = prepare_mask(g, mask, query->dtype, ct);  // keeps the memory g.mask points into alive
  Tensor seed_offset = empty({2}, ScalarType::Int64);
  g.p = dropout_p;
  if (dropout_p > 0) {
    Generator& gr = gen ? *gen : default_generator();
    g.seed = gr.seed;
    g.offset = gr.reserve(static_cast<uint64_t>((g.B * g.Hq * g.L * g.S + 3) / 4));
  }
  seed_offset->data<int64_t>()[0] = static_cast<int64_t>(g.seed);
  seed_offset->data<int64_t>()[1] = static_cast<int64_t>(g.offset);
  Tensor q = prepared(query, ct, g, g.lq), k = prepared(key, ct, g, g.lk), v = prepared(value, ct, g, g.lv);
  IntList osizes = q->sizes;
  osizes.back() = g.Ev;
  Tensor out = empty_like_rows(osizes, q, ct, g);
  g.lo = layout_of(out, g);
  IntList lsizes(q->sizes.begin(), q->sizes.end() - 1);
  Tensor lse = empty(lsizes, ct);
  const int64_t nqb = (g.L + g.bq - 1) / g.bq;
  if (dropout_p == 1) {  // everything dropped
    fill(out, Scalar(0.0));
    fill(lse, Scalar(0.0));
  } else if (g.B * g.Hq * nqb > 0) {
    BlasSingleThread single;
    if (ct == ScalarType::Float32) run_forward<float>(g, q, k, v, out, lse, nqb);
    else run_forward<double>(g, q, k, v, out, lse, nqb);
  }
  return {out->dtype == query->dtype ? out : to_dtype(out, query->dtype), lse, seed_offset};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> sdpa_backward_cpu(const Tensor& grad, const Tensor& query,
                                                             const Tensor& key, const Tensor& value, const Tensor& mask,
                                                             const Tensor& output, const Tensor& lse_in,
                                                             const Tensor& seed_offset, double dropout_p, bool is_causal,
                                                             double scale, bool gqa, bool mask_grad) {
  Geo g = geometry(query, key, value, gqa);
  const ScalarType ct = compute_dtype(query->dtype);
  g.scale = std::isnan(scale) ? 1.0 / std::sqrt(static_cast<double>(g.E)) : scale;
  g.causal = is_causal;
  g.bq = query_block(g.L, is_causal);
  const Tensor mexp = prepare_mask(g, mask, query->dtype, ct);  // keeps the memory g.mask points into alive
  g.p = dropout_p;
  g.seed = static_cast<uint64_t>(seed_offset->data<int64_t>()[0]);
  g.offset = static_cast<uint64_t>(seed_offset->data<int64_t>()[1]);
  Tensor q = prepared(query, ct, g, g.lq), k = prepared(key, ct, g, g.lk), v = prepared(value, ct, g, g.lv);
  Tensor o = prepared(output, ct, g, g.lo), go = prepared(grad, ct, g, g.lgo), lse = row_major(lse_in);
  Tensor gq = empty_like_rows(q->sizes, q, ct, g), gk = empty_like_rows(k->sizes, k, ct, g),
         gv = empty_like_rows(v->sizes, v, ct, g), gm;
  for (const Tensor* t : {&gq, &gk, &gv}) fill(*t, Scalar(0.0));
  g.lgq = layout_of(gq, g);
  g.lgk = layout_of(gk, g);
  g.lgv = layout_of(gv, g);
  if (mask_grad) {
    FL_CHECK(mask && is_floating(mask->dtype), Error, "scaled_dot_product_attention_backward: only a float attn_mask has a gradient");
    IntList full(q->sizes.begin(), q->sizes.end() - 1);
    full.push_back(g.S);
    gm = empty(full, ct);
    fill(gm, Scalar(0.0));
    g.grad_mask = gm->data_ptr();
  }
  if (dropout_p < 1 && g.L > 0 && g.S > 0) {
    BlasSingleThread single;
    if (ct == ScalarType::Float32) run_backward<float>(g, q, k, v, o, lse, go, gq, gk, gv);
    else run_backward<double>(g, q, k, v, o, lse, go, gq, gk, gv);
  }
  auto back = [&](const Tensor& t) { return !t || t->dtype == query->dtype ? t : to_dtype(t, query->dtype); };
  return {back(gq), back(gk), back(gv), back(gm)};
}

Tensor sdpa_dropout_factors_cpu(const Tensor& seed_offset, double dropout_p, const IntList& sizes, ScalarType dtype) {
  Geo g;
  g.p = dropout_p;
  g.seed = static_cast<uint64_t>(seed_offset->data<int64_t>()[0]);
  g.offset = static_cast<uint64_t>(seed_offset->data<int64_t>()[1]);
  Tensor d = empty(sizes, ScalarType::Float64);
  double* p = d->data<double>();
  // element (b, h, i, j) of the contiguous (B, Hq, L, S) matrix has the kernels' index ((b Hq + h) L + i) S + j
  for (int64_t n = 0; n < d->numel; ++n) p[n] = keep_scale<double>(g, static_cast<uint64_t>(n));
  return dtype == ScalarType::Float64 ? d : to_dtype(d, dtype);
}

}  // namespace fl
