// The kernels of the copy and fill ops (strided copy with dtype conversion and broadcasting), and item.
#include <cmath>
#include <cstring>

#include "copy.h"
#include "loops.h"
#include "overlap.h"

namespace fl {

namespace {
// A copy whose output runs along a dim the input strides over (x.t().contiguous()), walked in square tiles of
// the two dims: element by element along the output, every input read would miss the cache.
template <typename T>
void copy_tiles(const ElementwiseIter& it) {
  constexpr int64_t B = 32;
  const int64_t n0 = it.shape[0], n1 = it.shape[1], t0 = (n0 + B - 1) / B, per = t0 * ((n1 + B - 1) / B);
  const int64_t tiles = it.numel / (n0 * n1) * per;
  const int64_t ds0 = it.strides[0][0], ds1 = it.strides[0][1], ss0 = it.strides[1][0], ss1 = it.strides[1][1];
#pragma omp parallel for schedule(static) if (it.numel >= kParallelGrain && !omp_in_parallel())
  for (int64_t t = 0; t < tiles; ++t) {
    char* d = it.base[0];
    const char* s = it.base[1];
    int64_t rest = t / per;
    for (int k = 2; k < it.ndim; ++k) {
      const int64_t i = rest % it.shape[k];
      rest /= it.shape[k];
      d += i * it.strides[0][k];
      s += i * it.strides[1][k];
    }
    const int64_t i0 = t % per % t0 * B, j0 = t % per / t0 * B;
    const int64_t e0 = std::min(n0, i0 + B), e1 = std::min(n1, j0 + B);
    for (int64_t j = j0; j < e1; ++j)
      for (int64_t i = i0; i < e0; ++i)
        *reinterpret_cast<T*>(d + i * ds0 + j * ds1) = *reinterpret_cast<const T*>(s + i * ss0 + j * ss1);
  }
}

// Runs copy_tiles when the input's unit-stride dim is the output's second (the iterator orders dims by the
// output's layout); false otherwise.
bool copied_in_tiles(const ElementwiseIter& it) {
  const int64_t size = it.itemsize[0];
  if (it.ndim < 2 || it.strides[0][0] != size || it.strides[1][1] != size || it.strides[1][0] == size ||
      it.strides[1][0] == 0 || it.shape[0] < 8 || it.shape[1] < 8)
    return false;
  switch (size) {
    case 1: copy_tiles<uint8_t>(it); return true;
    case 2: copy_tiles<uint16_t>(it); return true;
    case 4: copy_tiles<uint32_t>(it); return true;
    case 8: copy_tiles<uint64_t>(it); return true;
    default: return false;
  }
}
}  // namespace

void copy_kernel(const Tensor& dst, const Tensor& src) {
  if (dst->numel == 0) return;
  broadcast_shapes(dst->sizes, src->sizes, "copy_");
  FL_CHECK(src->dim() <= dst->dim() && broadcast_shapes(dst->sizes, src->sizes) == dst->sizes, Error,
           "copy_: source of shape ", shape_str(src->sizes), " cannot be broadcast to destination of shape ",
           shape_str(dst->sizes));
  check_no_partial_overlap(dst, src);
  // the values move, not the memory: between a conjugate and a plain complex tensor they are conjugated
  const bool flip = dst->conj != src->conj && is_complex(dst->dtype) && is_complex(src->dtype);
  if (flip) {
    ElementwiseIter it({dst.get(), src.get()}, "copy_");
    FL_DISPATCH_COMPLEX(dst->dtype, "copy_", {
      using out_t = scalar_t;
      FL_DISPATCH_COMPLEX(src->dtype, "copy_", {
        it.for_each([](char** p, const int64_t* s, int64_t n) {
          for (int64_t i = 0; i < n; ++i)
            *reinterpret_cast<out_t*>(p[0] + i * s[0]) = conj(convert<out_t>(*reinterpret_cast<const scalar_t*>(p[1] + i * s[1])));
        });
      });
    });
    return;
  }
  if (dst->dtype == src->dtype && dst->contiguous && src->contiguous && dst->sizes == src->sizes) {
    size_t nbytes = dst->numel * dst->itemsize();
    char* d = dst->data_ptr();
    const char* s = src->data_ptr();
    if (d == s) return;
    if (nbytes < size_t(kParallelGrain) * 16 || omp_get_max_threads() == 1) {
      std::memmove(d, s, nbytes);
    } else {
      int nt = omp_get_max_threads();
#pragma omp parallel for num_threads(nt)
      for (int t = 0; t < nt; ++t) {
        size_t chunk = (nbytes + nt - 1) / nt, b = t * chunk, e = std::min(nbytes, b + chunk);
        if (b < e) std::memcpy(d + b, s + b, e - b);
      }
    }
    return;
  }
  ElementwiseIter it({dst.get(), src.get()}, "copy_");
  if (dst->dtype == src->dtype && copied_in_tiles(it)) return;
  FL_DISPATCH_STORAGE(dst->dtype, "copy_", {
    using out_t = scalar_t;
    FL_DISPATCH_STORAGE(src->dtype, "copy_", {
      it.for_each([](char** p, const int64_t* s, int64_t n) {
        if (s[0] == sizeof(out_t) && s[1] == sizeof(scalar_t)) {
          // contiguous runs (the inner dim of a permuted tensor made contiguous): memmove or a
          // vectorizable conversion instead of the strided element loop
          if constexpr (std::is_same_v<out_t, scalar_t>) {
            std::memmove(p[0], p[1], n * sizeof(out_t));
          } else {
            out_t* o = reinterpret_cast<out_t*>(p[0]);
            const scalar_t* in = reinterpret_cast<const scalar_t*>(p[1]);
            for (int64_t i = 0; i < n; ++i) o[i] = convert<out_t>(in[i]);
          }
          return;
        }
        for (int64_t i = 0; i < n; ++i)
          *reinterpret_cast<out_t*>(p[0] + i * s[0]) = convert<out_t>(*reinterpret_cast<const scalar_t*>(p[1] + i * s[1]));
      });
    });
  });
}

namespace {
[[noreturn]] void throw_overflow(ScalarType dtype) {
  static const char* names[] = {"bool",      "uint8_t",        "int8_t", "int16_t", "int", "int64_t",
                                "c10::Half", "c10::BFloat16", "float",  "double"};
  const int i = static_cast<int>(dtype);
  throw Error(str_cat("value cannot be converted to type ", i < 10 ? names[i] : str_cat("c10::", c10_type_name(dtype)),
                      " without overflow"));
}
}  // namespace

void check_fits(const Scalar& value, ScalarType dtype) {
  if (value.is_complex() && value.im != 0 && !is_complex(dtype)) throw_overflow(dtype);
}

void check_fill_value(const Scalar& value, ScalarType dtype) {
  check_fits(value, dtype);
  if (!is_float8(dtype)) return;
  // c10's checked_convert: a finite value outside [lowest, max] overflows, and so does an infinity where the
  // format has none (e5m2 only); NaN passes
  const double v = value.to_double();
  const bool has_inf = dtype == ScalarType::Float8_e5m2;
  double lowest, max;
  switch (dtype) {
    case ScalarType::Float8_e4m3fn: max = 448.0; lowest = -max; break;
    case ScalarType::Float8_e4m3fnuz: max = 240.0; lowest = -max; break;
    case ScalarType::Float8_e8m0fnu: max = std::ldexp(1.0, 127); lowest = std::ldexp(1.0, -127); break;
    default: max = 57344.0; lowest = -max; break;  // e5m2, e5m2fnuz
  }
  if (std::isinf(v) ? !has_inf : (v < lowest || v > max)) throw_overflow(dtype);
}

void fill_kernel(const Tensor& t, Scalar value) {
  check_fits(value, t->dtype);
  if (t->numel == 0) return;
  ElementwiseIter it({t.get()}, "fill_");
  FL_DISPATCH_STORAGE(t->dtype, "fill_", {
    const scalar_t v = conj_if(value.to<scalar_t>(), t->conj);  // a conjugate view holds the value's conjugate
    it.for_each([v](char** p, const int64_t* s, int64_t n) {
      if (s[0] == sizeof(scalar_t)) {
        scalar_t* o = reinterpret_cast<scalar_t*>(p[0]);
        for (int64_t i = 0; i < n; ++i) o[i] = v;
      } else {
        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<scalar_t*>(p[0] + i * s[0]) = v;
      }
    });
  });
}

Scalar item(const Tensor& t) {
  FL_CHECK(t->numel == 1, Error, "a Tensor with ", t->numel, " elements cannot be converted to Scalar");
  Scalar r;
  FL_DISPATCH_STORAGE(t->dtype, "item", {
    r = scalar_of(conj_if(*t->data<scalar_t>(), t->conj));
  });
  return r;
}

// ---- ElementwiseIter ------------------------------------------------------------------------
ElementwiseIter::ElementwiseIter(std::initializer_list<const TensorImpl*> ops, const char* opname) {
  nops = static_cast<int>(ops.size());
  const TensorImpl* out = *ops.begin();
  int nd = static_cast<int>(out->dim());
  FL_CHECK(nd <= kMaxDims, Error, opname, ": tensors with more than ", kMaxDims, " dimensions are not supported");
  numel = out->numel;
  int k = 0;
  for (const TensorImpl* t : ops) {
    base[k] = t->data_ptr();
    itemsize[k] = static_cast<int64_t>(t->itemsize());
    int lead = nd - static_cast<int>(t->dim());
    for (int d = 0; d < nd; ++d) {  // stored innermost first
      int src = nd - 1 - d - lead;
      int64_t sz = src >= 0 ? t->sizes[src] : 1;
      strides[k][d] = (src >= 0 && sz != 1) ? t->strides[src] * itemsize[k] : 0;
    }
    ++k;
  }
  for (int d = 0; d < nd; ++d) shape[d] = out->sizes[nd - 1 - d];
  // Order dims by the output's strides (smallest first) so that permuted outputs are written
  // in memory order; insertion sort keeps the natural order among equals.
  for (int i = 1; i < nd; ++i) {
    for (int j = i; j > 0; --j) {
      int64_t a = strides[0][j - 1], b = strides[0][j];
      if (b == 0 || a <= b) break;
      std::swap(shape[j - 1], shape[j]);
      for (int o = 0; o < nops; ++o) std::swap(strides[o][j - 1], strides[o][j]);
    }
  }
  // Drop size-1 dims and merge dims that are contiguous in every operand.
  int w = 0;
  for (int d = 0; d < nd; ++d) {
    if (shape[d] == 1) continue;
    if (w > 0) {
      bool merge = true;
      for (int o = 0; o < nops; ++o)
        if (strides[o][d] != strides[o][w - 1] * shape[w - 1]) { merge = false; break; }
      if (merge) { shape[w - 1] *= shape[d]; continue; }
    }
    shape[w] = shape[d];
    for (int o = 0; o < nops; ++o) strides[o][w] = strides[o][d];
    ++w;
  }
  ndim = w;
  if (ndim == 0 && numel == 1) {
    ndim = 0;
  } else if (ndim == 0) {  // numel == 0 with every dim size 1 cannot happen; keep one dim for safety
    ndim = 1; shape[0] = numel;
    for (int o = 0; o < nops; ++o) strides[o][0] = itemsize[o];
  }
}

void accumulate_kernel(const Tensor& dst, const Tensor& src) {
  Tensor s = src->dtype == dst->dtype ? src : empty_like(src, dst->dtype);
  if (s != src) copy_kernel(s, src);
  ElementwiseIter it({dst.get(), s.get()}, "accumulate");
  FL_DISPATCH_ALL_AND_COMPLEX(dst->dtype, "accumulate", {
    it.for_each([](char** p, const int64_t* st, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        auto* o = reinterpret_cast<scalar_t*>(p[0] + i * st[0]);
        *o = static_cast<scalar_t>(static_cast<opmath_t<scalar_t>>(*o) +
                                   static_cast<opmath_t<scalar_t>>(*reinterpret_cast<const scalar_t*>(p[1] + i * st[1])));
      }
    }, int64_t(1) << 62);  // one thread: shared elements add up in order
  });
}

}  // namespace fl
