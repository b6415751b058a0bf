// The row engine (see Note [Reductions as rows]) and the one-signature reductions:
// sum, nansum, mean, nanmean, prod, amax, amin, all, any, count_nonzero, logsumexp.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "complex.h"
#include "pointwise.h"
#include "tensor_ops.h"
#include "reduce.h"

namespace fl {

// ---- the row engine -----------------------------------------------------------------------
namespace { IntList reduced_sizes(const IntList& sizes, const std::vector<bool>& mask, bool keepdim); }

std::vector<bool> reduce_mask(const IntList& dims, int64_t ndim, const char* op) {
  std::vector<bool> mask(static_cast<size_t>(ndim), dims.empty());
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, ndim);
    if (ndim == 0) continue;  // a 0-dim tensor accepts dim 0 / -1 and has nothing to reduce
    FL_CHECK(!mask[w], Error, "dim ", w, " appears multiple times in the list of dims");
    mask[w] = true;
  }
  (void)op;
  return mask;
}

Tensor row_major(const Tensor& t) {
  if (t->contiguous) return t;
  Tensor out = empty(t->sizes, t->dtype);
  copy_into(out, t);
  return out;
}

Tensor reshaped(const Tensor& t, const IntList& sizes) {
  return make_view(t, sizes, contiguous_strides(sizes), t->offset);
}

RowView to_rows(const Tensor& t, const std::vector<bool>& mask, bool keepdim) {
  RowView rv;
  IntList kept, reduced;
  for (int64_t d = 0; d < t->dim(); ++d) (mask[d] ? reduced : kept).push_back(d);
  rv.perm = kept;
  rv.perm.insert(rv.perm.end(), reduced.begin(), reduced.end());
  IntList sizes, strides;
  for (int64_t d : rv.perm) { sizes.push_back(t->sizes[d]); strides.push_back(t->strides[d]); }
  rv.perm_sizes = sizes;
  for (int64_t d : kept) rv.outer *= t->sizes[d];
  for (int64_t d : reduced) rv.inner *= t->sizes[d];
  rv.out_sizes = reduced_sizes(t->sizes, mask, keepdim);
  Tensor v = make_view(t, sizes, strides, t->offset);
  rv.rows = row_major(v);
  return rv;
}

RowView rows_along(const Tensor& t, int64_t dim, const char* op) {
  int64_t d = wrap_dim(dim, t->dim(), op);
  std::vector<bool> mask(static_cast<size_t>(t->dim()), false);
  if (t->dim() > 0) mask[d] = true;
  return to_rows(t, mask, true);
}

Tensor from_rows(const Tensor& r, const RowView& rv) {
  // r is contiguous in the permuted order; view it back in the input's order.
  IntList pstrides = contiguous_strides(rv.perm_sizes);
  IntList sizes(rv.perm.size()), strides(rv.perm.size());
  for (size_t i = 0; i < rv.perm.size(); ++i) { sizes[rv.perm[i]] = rv.perm_sizes[i]; strides[rv.perm[i]] = pstrides[i]; }
  return row_major(make_view(r, sizes, strides, r->offset));
}

namespace {

// ---- summation: cascaded blocks of independent lanes (vectorizes, torch-like accuracy) ----
template <typename T, typename Acc, int L>
static inline __attribute__((always_inline)) Acc block_sum(const T* x, int64_t n) {
  Acc lane[L] = {};
  int64_t i = 0;
  for (; i + L <= n; i += L)
    for (int j = 0; j < L; ++j) lane[j] += static_cast<Acc>(x[i + j]);
  Acc tail = 0;
  for (; i < n; ++i) tail += static_cast<Acc>(x[i]);
  for (int w = L / 2; w > 0; w /= 2)
    for (int j = 0; j < w; ++j) lane[j] += lane[j + w];
  return lane[0] + tail;
}

constexpr int64_t kBlock = 4096;

// Hot paths built for the baseline, AVX2 and AVX-512, picked at load time by CPU features.
__attribute__((target_clones("avx512f", "avx2", "default"))) float cascade_f32(const float* x, int64_t n) {
  if (n <= kBlock) return block_sum<float, float, 64>(x, n);
  int64_t h = (n / 2) & ~int64_t(63);
  return cascade_f32(x, h) + cascade_f32(x + h, n - h);
}
__attribute__((target_clones("avx512f", "avx2", "default"))) double cascade_f64(const double* x, int64_t n) {
  if (n <= kBlock) return block_sum<double, double, 16>(x, n);
  int64_t h = (n / 2) & ~int64_t(63);
  return cascade_f64(x, h) + cascade_f64(x + h, n - h);
}

// No peeling to an aligned boundary: a sum must not depend on where its data lies in memory, or the
// same values (a numpy buffer and its copy, an eager run and a graph replay) would sum differently.
float sum_f32(const float* x, int64_t n) { return cascade_f32(x, n); }
double sum_f64(const double* x, int64_t n) { return cascade_f64(x, n); }
template <typename T>
float sum_half(const T* x, int64_t n) {
  if (n <= kBlock) return block_sum<T, float, 16>(x, n);
  int64_t h = (n / 2) & ~int64_t(63);
  return sum_half(x, h) + sum_half(x + h, n - h);
}

// GCC does not vectorize a lane array with a NaN flag on its own, so this uses vector types.
template <typename T, bool MX>
static inline __attribute__((always_inline)) T extreme_lanes(const T* x, int64_t n) {
  typedef T V __attribute__((vector_size(32)));
  constexpr int W = 32 / sizeof(T), U = 4;
  V acc[U];
  decltype(acc[0] != acc[0]) nan[U];  // all-ones lanes where a NaN was seen
  for (int u = 0; u < U; ++u) { acc[u] = V{} + x[0]; nan[u] = acc[u] != acc[u]; }
  int64_t i = 0;
  for (; i + W * U <= n; i += W * U)
    for (int u = 0; u < U; ++u) {
      V v;
      std::memcpy(&v, x + i + u * W, sizeof(V));
      nan[u] |= v != v;
      acc[u] = MX ? (v > acc[u] ? v : acc[u]) : (v < acc[u] ? v : acc[u]);
    }
  T m = x[0];
  bool any_nan = false;
  for (int u = 0; u < U; ++u)
    for (int j = 0; j < W; ++j) {
      any_nan |= nan[u][j] != 0;
      m = MX ? (acc[u][j] > m ? acc[u][j] : m) : (acc[u][j] < m ? acc[u][j] : m);
    }
  for (; i < n; ++i) { T v = x[i]; any_nan |= v != v; m = MX ? (v > m ? v : m) : (v < m ? v : m); }
  return any_nan ? std::numeric_limits<T>::quiet_NaN() : m;
}

}  // namespace

__attribute__((target_clones("avx512f", "avx2", "default"))) float extreme_f32(const float* x, int64_t n, bool is_max) {
  return is_max ? extreme_lanes<float, true>(x, n) : extreme_lanes<float, false>(x, n);
}
__attribute__((target_clones("avx512f", "avx2", "default"))) double extreme_f64(const double* x, int64_t n, bool is_max) {
  return is_max ? extreme_lanes<double, true>(x, n) : extreme_lanes<double, false>(x, n);
}

namespace {

template <typename T> using acc_t = std::conditional_t<std::is_integral_v<T>, int64_t, opmath_t<T>>;

template <typename T>
acc_t<T> sum_range(const T* x, int64_t n) {
  if constexpr (std::is_same_v<T, float>) return sum_f32(x, n);
  else if constexpr (std::is_same_v<T, double>) return sum_f64(x, n);
  else if constexpr (std::is_floating_point_v<acc_t<T>>) return sum_half(x, n);
  else {
    uint64_t s = 0;  // wraps on overflow like torch's int64 sums
    for (int64_t i = 0; i < n; ++i) s += static_cast<uint64_t>(static_cast<int64_t>(x[i]));
    return static_cast<int64_t>(s);
  }
}

template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<opmath_t<T>>) return std::isnan(static_cast<opmath_t<T>>(v));
  else return false;
}

const char* kind_name(ReduceKind k) {
  static const char* names[] = {
#define FL_X(name) #name,
      FL_REDUCE_OPS(FL_X)
#undef FL_X
  };
  return names[static_cast<int>(k)];
}

// The result dtype, and the dtype the input is converted to before the kernel runs.
void reduce_dtypes(ReduceKind k, ScalarType in, ScalarType req, ScalarType* out, ScalarType* compute) {
  const bool given = req != ScalarType::NumTypes;
  switch (k) {
    case ReduceKind::sum: case ReduceKind::nansum: case ReduceKind::prod:
      *out = given ? req : (is_integral(in, true) ? ScalarType::Int64 : in);
      *compute = *out;
      return;
    case ReduceKind::mean: case ReduceKind::nanmean:
      *out = given ? req : in;
      if (is_float8(*out)) throw_unsupported_dtype("sum_cpu", *out);  // torch's CPU build sums no float8 type
      FL_CHECK(is_floating(*out) || is_complex(*out), Error, kind_name(k), "(): could not infer output dtype. ",
               given ? "Optional dtype" : "Input dtype", " must be either a floating point or complex dtype. Got: ",
               c10_type_name(*out));
      *compute = *out;
      return;
    case ReduceKind::amax: case ReduceKind::amin:
      *out = *compute = in;
      return;
    case ReduceKind::all: case ReduceKind::any:
      *out = in == ScalarType::UInt8 ? ScalarType::UInt8 : ScalarType::Bool;
      *compute = in;
      return;
    case ReduceKind::count_nonzero:
      *out = ScalarType::Int64;
      *compute = in;
      return;
    case ReduceKind::logsumexp:
      *out = *compute = is_floating(in) ? in : default_dtype();
      return;
  }
}

template <typename T, typename Out>
void run_kind(ReduceKind k, const RowView& rv, Out* out) {
  using A = acc_t<T>;
  // Sequential (non-cascaded) accumulations of floats run in double, to stay accurate on long rows.
  using W = std::conditional_t<std::is_floating_point_v<A>, double, A>;
  const T* x = rv.rows->data<T>();
  const int64_t inner = rv.inner;
  auto row = [&](int64_t o) { return x + o * inner; };
  auto add = [](A a, A b) { return a + b; };
  auto put = [&](int64_t o, A v) { out[o] = static_cast<Out>(v); };
  switch (k) {
    case ReduceKind::sum:
      run_rows<A>(rv.outer, inner, [&](int64_t o, int64_t b, int64_t e) { return sum_range(row(o) + b, e - b); }, add, put);
      break;
    case ReduceKind::nansum:
      run_rows<W>(rv.outer, inner, [&](int64_t o, int64_t b, int64_t e) {
        W s = 0;
        for (int64_t i = b; i < e; ++i) { W v = static_cast<W>(row(o)[i]); if (!is_nan(v)) s += v; }
        return s;
      }, [](W a, W b) { return a + b; }, [&](int64_t o, W v) { out[o] = static_cast<Out>(v); });
      break;
    case ReduceKind::mean:
      run_rows<A>(rv.outer, inner, [&](int64_t o, int64_t b, int64_t e) { return sum_range(row(o) + b, e - b); }, add,
                  [&](int64_t o, A v) { out[o] = static_cast<Out>(v / static_cast<A>(inner)); });
      break;
    case ReduceKind::nanmean: {
      using P = std::pair<W, int64_t>;
      run_rows<P>(rv.outer, inner, [&](int64_t o, int64_t b, int64_t e) {
        P p{0, 0};
        for (int64_t i = b; i < e; ++i) { W v = static_cast<W>(row(o)[i]); if (!is_nan(v)) { p.first += v; ++p.second; } }
        return p;
      }, [](P a, P b) { return P{a.first + b.first, a.second + b.second}; },
      [&](int64_t o, P p) { out[o] = static_cast<Out>(p.first / static_cast<W>(p.second)); });
      break;
    }
    case ReduceKind::prod:
      run_rows<A>(rv.outer, inner, [&](int64_t o, int64_t b, int64_t e) {
        A p = 1;
        if constexpr (std::is_integral_v<A>) {
          uint64_t u = 1;  // wraps like torch
          for (int64_t i = b; i < e; ++i) u *= static_cast<uint64_t>(static_cast<int64_t>(row(o)[i]));
          p = static_cast<A>(u);
        } else {
          for (int64_t i = b; i < e; ++i) p *= static_cast<A>(row(o)[i]);
        }
        return p;
      }, [](A a, A b) { return a * b; }, put);
      break;
    case ReduceKind::amax: case ReduceKind::amin: {
      const bool mx = k == ReduceKind::amax;
      using M = opmath_t<T>;
      run_rows<M>(rv.outer, inner, [&](int64_t o, int64_t b, int64_t e) {
        return extreme(row(o) + b, e - b, mx);
      }, [mx](M a, M b) { return is_nan(a) ? a : is_nan(b) ? b : mx ? (b > a ? b : a) : (b < a ? b : a); },
      [&](int64_t o, M v) { out[o] = static_cast<Out>(v); });
      break;
    }
    case ReduceKind::all: case ReduceKind::any: case ReduceKind::count_nonzero: {
      using M = opmath_t<T>;
      run_rows<int64_t>(rv.outer, inner, [&](int64_t o, int64_t b, int64_t e) {
        int64_t c = 0;
        for (int64_t i = b; i < e; ++i) c += static_cast<M>(row(o)[i]) != M(0);
        return c;
      }, [](int64_t a, int64_t b) { return a + b; }, [&](int64_t o, int64_t c) {
        out[o] = static_cast<Out>(k == ReduceKind::count_nonzero ? c : k == ReduceKind::any ? c > 0 : c == inner);
      });
      break;
    }
    case ReduceKind::logsumexp:
      if constexpr (std::is_floating_point_v<W>) {
        using P = std::pair<W, W>;  // (max, sum of exp(x - max))
        const W ninf = -std::numeric_limits<W>::infinity();
        run_rows<P>(rv.outer, inner, [&](int64_t o, int64_t b, int64_t e) {
          W m = ninf;
          for (int64_t i = b; i < e; ++i) { W v = static_cast<W>(row(o)[i]); if (v > m || std::isnan(v)) m = v; }
          if (std::isnan(m)) return P{m, W(1)};
          W shift = std::isinf(m) ? W(0) : m;  // all -inf (or an inf): avoid inf - inf
          W s = 0;
          for (int64_t i = b; i < e; ++i) s += std::exp(static_cast<W>(row(o)[i]) - shift);
          return P{shift, s};
        }, [](P a, P b) {
          if (std::isnan(a.first) || std::isnan(b.first)) return P{std::numeric_limits<W>::quiet_NaN(), W(1)};
          W m = std::max(a.first, b.first);
          return P{m, a.second * std::exp(a.first - m) + b.second * std::exp(b.first - m)};
        }, [&](int64_t o, P p) { out[o] = static_cast<Out>(p.first + std::log(p.second)); });
      }
      break;
  }
}

// Note [Column reductions]
// A row-major input whose reduced dims form one run followed by kept dims is O matrices of
// R x K, each reduced over R. Permuting it to rows would transpose the whole input; instead each
// thread owns a band of columns and streams down the rows, accumulating a band-wide vector (it
// vectorizes over columns). Sums first add each block of rows into a block accumulator, for accuracy;
// a task sums one band of one block (so a bias gradient's single band of 1024 x 512 still spreads over
// the threads), and the blocks are then added in row order, so the result does not depend on the thread
// count (codegen/cpp.py's column groups compute the same sums).
bool column_kind(ReduceKind k) {
  return k == ReduceKind::sum || k == ReduceKind::mean || k == ReduceKind::prod || k == ReduceKind::amax ||
         k == ReduceKind::amin;
}

template <typename T>
void run_columns(ReduceKind k, const T* x_all, int64_t O, int64_t R, int64_t K, T* out_all) {
  using A = acc_t<T>;
  constexpr int64_t kBand = 512, kRowBlock = 128;
  const int64_t nbands = (K + kBand - 1) / kBand, nblocks = (R + kRowBlock - 1) / kRowBlock;
  const bool big = O * R * K >= kParallelGrain && !omp_in_parallel();
  if (k == ReduceKind::sum || k == ReduceKind::mean) {
    std::vector<A> blocks(static_cast<size_t>(O * nblocks * K));  // per matrix and block of rows: its column sums
#pragma omp parallel for schedule(static) if (big && O * nblocks * nbands > 1)
    for (int64_t task = 0; task < O * nblocks * nbands; ++task) {
      const int64_t c0 = (task % nbands) * kBand, w = std::min(kBand, K - c0), ob = task / nbands;
      const int64_t r0 = (ob % nblocks) * kRowBlock;
      const T* x = x_all + (ob / nblocks) * R * K + c0;
      A* blk = blocks.data() + ob * K + c0;
      for (int64_t j = 0; j < w; ++j) blk[j] = 0;
      for (int64_t r = r0; r < std::min(R, r0 + kRowBlock); ++r)
        for (int64_t j = 0; j < w; ++j) blk[j] += static_cast<A>(x[r * K + j]);
    }
    std::vector<A> acc(static_cast<size_t>(K));
    for (int64_t o = 0; o < O; ++o) {
      std::fill(acc.begin(), acc.end(), A(0));
      for (int64_t b = 0; b < nblocks; ++b)
        for (int64_t j = 0; j < K; ++j) acc[j] += blocks[(o * nblocks + b) * K + j];
      for (int64_t j = 0; j < K; ++j)
        out_all[o * K + j] = static_cast<T>(k == ReduceKind::mean ? acc[j] / static_cast<A>(R) : acc[j]);
    }
    return;
  }
  // prod, amax, amin: a thread per band of columns
#pragma omp parallel for schedule(static) if (big && O * nbands > 1)
  for (int64_t task = 0; task < O * nbands; ++task) {
    const int64_t band = task % nbands;
    const T* x = x_all + (task / nbands) * R * K;
    T* out = out_all + (task / nbands) * K;
    const int64_t c0 = band * kBand, w = std::min(kBand, K - c0);
    A acc[kBand];
    switch (k) {
      case ReduceKind::prod:
        for (int64_t j = 0; j < w; ++j) acc[j] = 1;
        for (int64_t r = 0; r < R; ++r)
          for (int64_t j = 0; j < w; ++j) {
            if constexpr (std::is_integral_v<A>)  // wraps like torch, without signed overflow
              acc[j] = static_cast<A>(static_cast<uint64_t>(acc[j]) * static_cast<uint64_t>(static_cast<A>(x[r * K + c0 + j])));
            else
              acc[j] *= static_cast<A>(x[r * K + c0 + j]);
          }
        break;
      default: {  // amax / amin: a NaN sticks once seen
        const bool mx = k == ReduceKind::amax;
        for (int64_t j = 0; j < w; ++j) acc[j] = static_cast<A>(x[c0 + j]);
        for (int64_t r = 1; r < R; ++r) {
          const T* xr = x + r * K + c0;
          for (int64_t j = 0; j < w; ++j) {
            A v = static_cast<A>(xr[j]);
            acc[j] = (is_nan(v) || (mx ? v > acc[j] : v < acc[j])) ? v : acc[j];
          }
        }
      }
    }
    for (int64_t j = 0; j < w; ++j) out[c0 + j] = static_cast<T>(acc[j]);
  }
}

// The output sizes for a reduction over `mask`.
IntList reduced_sizes(const IntList& sizes, const std::vector<bool>& mask, bool keepdim) {
  IntList out;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!mask[d]) out.push_back(sizes[d]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

// sum and mean of complex values: the real and imaginary parts reduce as the (..., 2) real view's columns.
Tensor reduce_complex(ReduceKind k, const Tensor& self, const IntList& dims, bool keepdim, ScalarType dtype) {
  const char* name = kind_name(k);
  if (k == ReduceKind::all || k == ReduceKind::any || k == ReduceKind::count_nonzero)
    return reduce_cpu(k, ops::ne(self, wrap_scalar(Scalar(int64_t(0))), Scalar(int64_t(1)), nullptr), dims, keepdim, dtype);
  FL_CHECK(k != ReduceKind::nansum && k != ReduceKind::nanmean, Error, "nansum on CPU does not support complex inputs");
  if (k != ReduceKind::sum && k != ReduceKind::mean && k != ReduceKind::prod) throw_unsupported_dtype(name, self->dtype);
  const ScalarType out_t = dtype == ScalarType::NumTypes ? self->dtype : dtype;
  if (!is_complex(out_t)) return reduce_cpu(k, to_dtype(self, out_t), dims, keepdim, ScalarType::NumTypes);  // real parts
  Tensor x = self->dtype == out_t ? self : to_dtype(self, out_t);
  if (k == ReduceKind::prod) {  // complex products, row by row
    RowView rv = to_rows(x, reduce_mask(dims, x->dim(), name), keepdim);
    Tensor out = empty(rv.out_sizes, out_t);
    FL_DISPATCH_COMPLEX(out_t, name, {
      const scalar_t* p = rv.rows->data<scalar_t>();
      scalar_t* o = out->data<scalar_t>();
      for (int64_t r = 0; r < rv.outer; ++r) {
        scalar_t acc(1);
        for (int64_t i = 0; i < rv.inner; ++i) acc = acc * p[r * rv.inner + i];
        o[r] = acc;
      }
    });
    return out;
  }
  reduce_mask(dims, self->dim(), name);  // validates the dims
  IntList d = dims;
  if (d.empty()) for (int64_t i = 0; i < self->dim(); ++i) d.push_back(i);
  for (int64_t& v : d) v = wrap_dim(v, std::max<int64_t>(self->dim(), 1), name);
  if (self->dim() == 0) d.clear();
  Tensor pairs = ops::view_as_real(x);
  Tensor r = d.empty() ? ops::clone(pairs) : reduce_cpu(k, pairs, d, keepdim, ScalarType::NumTypes);
  return ops::view_as_complex(ops::contiguous(r));
}

}  // namespace

Tensor reduce_cpu(ReduceKind k, const Tensor& self, const IntList& dims, bool keepdim, ScalarType dtype) {
  if (is_complex(self->dtype) || (dtype != ScalarType::NumTypes && is_complex(dtype)))
    return reduce_complex(k, self, dims, keepdim, dtype);
  // torch's CPU build has all and any for the float8 types: they test the values' truth, as bool() does
  if (is_float8(self->dtype) && (k == ReduceKind::all || k == ReduceKind::any))
    return reduce_cpu(k, to_dtype(self, ScalarType::Bool), dims, keepdim, dtype);
  const char* name = kind_name(k);
  ScalarType out_t, compute_t;
  reduce_dtypes(k, self->dtype, dtype, &out_t, &compute_t);
  std::vector<bool> mask = reduce_mask(dims, self->dim(), name);
  if ((k == ReduceKind::amax || k == ReduceKind::amin) && self->numel == 0) {
    FL_CHECK(!dims.empty() && self->dim() > 0, Error, name, "(): Expected reduction dim to be specified for input.numel() == 0. ",
             "Specify the reduction dim with the 'dim' argument.");
    for (int64_t d = 0; d < self->dim(); ++d)
      FL_CHECK(!mask[d] || self->sizes[d] != 0, IndexError, name, "(): Expected reduction dim ", d, " to have non-zero size.");
  }
  Tensor in = self->dtype == compute_t ? self : to_dtype(self, compute_t);
  if (column_kind(k) && in->contiguous && in->numel > 0) {
    // Walk the dims of size > 1 (the others do not move through memory): kept, then one run of
    // reduced dims, then kept is an O x R x K column problem (Note [Column reductions]).
    IntList live;
    for (int64_t d = 0; d < in->dim(); ++d) if (in->sizes[d] != 1) live.push_back(d);
    size_t a = 0, b;
    int64_t O = 1, R = 1, K = 1;
    while (a < live.size() && !mask[live[a]]) O *= in->sizes[live[a++]];
    for (b = a; b < live.size() && mask[live[b]]; ++b) R *= in->sizes[live[b]];
    size_t c = b;
    while (c < live.size() && !mask[live[c]]) K *= in->sizes[live[c++]];
    if (b > a && c == live.size() && K >= 8) {
      Tensor out = empty(reduced_sizes(in->sizes, mask, keepdim), out_t);
      FL_DISPATCH_ALL(compute_t, name, run_columns<scalar_t>(k, in->data<scalar_t>(), O, R, K, out->data<scalar_t>()));
      return out;
    }
    // Reduced dims on both sides of kept ones (e.g. mean over N, H, W of NCHW): reduce the trailing
    // run as rows first, then the rest as columns; means of equal-sized groups compose exactly.
    if (b > a && c > b && c < live.size()) {
      size_t t = live.size();
      while (t > 0 && mask[live[t - 1]]) --t;
      if (t < live.size()) {
        IntList trailing(live.begin() + static_cast<int64_t>(t), live.end());
        Tensor part = reduce_cpu(k, in, trailing, true, ScalarType::NumTypes);
        return reduce_cpu(k, part, dims, keepdim, ScalarType::NumTypes);
      }
    }
  }
  RowView rv = to_rows(in, mask, keepdim);
  // Counting kinds produce int64 counts/flags, converted to the result dtype afterwards.
  const bool counts = k == ReduceKind::all || k == ReduceKind::any || k == ReduceKind::count_nonzero;
  Tensor out = empty(rv.out_sizes, counts ? ScalarType::Int64 : out_t);
  FL_DISPATCH_ALL(compute_t, name, {
    if (counts) run_kind<scalar_t, int64_t>(k, rv, out->data<int64_t>());
    else run_kind<scalar_t, scalar_t>(k, rv, out->data<scalar_t>());
  });
  if (out->dtype != out_t) out = to_dtype(out, out_t);
  return out;
}

}  // namespace fl
