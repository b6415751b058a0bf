// grid_sampler, its backward and the double backward of its grid gradient (F.grid_sample): bilinear
// and nearest over 4-D and 5-D inputs, bicubic over 4-D, with zeros / border / reflection padding.
// The coordinate arithmetic follows PyTorch's GridSampler.h so results and gradients agree with it,
// including at the borders.
#include <omp.h>

#include <climits>
#include <cmath>

#include "../core/dispatch.h"
#include "../kernels/loops.h"
#include "vision.h"

namespace fl {
namespace {

template <typename T>
T unnormalize(T c, int64_t size, bool align, T* grad = nullptr) {
  if (align) {
    if (grad) *grad = static_cast<T>(size - 1) / 2;
    return ((c + 1) / 2) * (size - 1);
  }
  if (grad) *grad = static_cast<T>(size) / 2;
  return ((c + 1) * size - 1) / 2;
}

template <typename T>
T clip(T in, int64_t lim, T* grad = nullptr) {
  if (in <= T(0)) { if (grad) *grad = 0; return T(0); }
  const T hi = static_cast<T>(lim - 1);
  if (in >= hi) { if (grad) *grad = 0; return hi; }
  if (grad) *grad = 1;
  return in;
}

// Reflects `in` into [twice_low / 2, twice_high / 2]; grad gets d(result)/d(in).
template <typename T>
T reflect(T in, int64_t twice_low, int64_t twice_high, T* grad = nullptr) {
  if (twice_low == twice_high) { if (grad) *grad = 0; return T(0); }
  const T lo = static_cast<T>(twice_low) / 2, span = static_cast<T>(twice_high - twice_low) / 2;
  in -= lo;
  T sign = 1;
  if (in < 0) { sign = -1; in = -in; }
  const T extra = std::fmod(in, span);
  const int64_t flips = static_cast<int64_t>(std::floor(in / span));
  if (flips % 2 == 0) { if (grad) *grad = sign; return extra + lo; }
  if (grad) *grad = -sign;
  return span - extra + lo;
}

template <typename T>
T safe_downgrade(T x) {
  if (!std::isfinite(static_cast<double>(x)) || x > T(INT_MAX - 1) || x < T(INT_MIN)) return T(-100);
  return x;
}

// Padding applied to an unnormalized coordinate; grad (optional) gets its derivative.
template <typename T>
T compute_coordinates(T c, int64_t size, GridPadding pad, bool align, T* grad = nullptr) {
  T g = 1;
  if (pad == GridPadding::Border) {
    c = clip(c, size, &g);
  } else if (pad == GridPadding::Reflection) {
    T gr, gc;
    c = align ? reflect(c, 0, 2 * (size - 1), &gr) : reflect(c, -1, 2 * size - 1, &gr);
    c = clip(c, size, &gc);
    g = gr * gc;
  }
  if (grad) *grad = g;
  return safe_downgrade(c);
}

template <typename T>
T source_index(T c, int64_t size, GridPadding pad, bool align, T* grad = nullptr) {
  T gu, gp;
  c = compute_coordinates(unnormalize(c, size, align, &gu), size, pad, align, &gp);
  if (grad) *grad = gu * gp;
  return c;
}

template <typename T>
void cubic_coefficients_grad(T* c, T t) {
  const T A = T(-0.75);
  T x = -1 - t;
  c[0] = (-3 * A * x - 10 * A) * x - 8 * A;
  x = -t;
  c[1] = (-3 * (A + 2) * x - 2 * (A + 3)) * x;
  x = 1 - t;
  c[2] = (3 * (A + 2) * x - 2 * (A + 3)) * x;
  x = 2 - t;
  c[3] = (3 * A * x - 10 * A) * x + 8 * A;
}

// The derivatives of cubic_coefficients_grad's four polynomials in t (the cubic weights' second derivatives are
// their negatives, as the weights' first derivatives are the negated cubic_coefficients_grad).
template <typename T>
void cubic_coefficients_grad2(T* c, T t) {
  const T A = T(-0.75);
  c[0] = 6 * A * (-1 - t) + 10 * A;
  c[1] = -6 * (A + 2) * t + 2 * (A + 3);
  c[2] = -6 * (A + 2) * (1 - t) + 2 * (A + 3);
  c[3] = -6 * A * (2 - t) + 10 * A;
}

// The geometry: input [N, C, S...] and grid [N, P..., D] (component 0 is x, the last spatial dim).
struct GridGeom {
  int64_t N, C, D, P = 1, in_spatial = 1;
  int64_t isz[3];  // input spatial sizes, outermost first
  IntList out_sizes;
  GridInterp interp;
  GridPadding pad;
  bool align;
};

GridGeom make_geom(const Tensor& input, const Tensor& grid, int64_t interp, int64_t padding, bool align) {
  FL_CHECK(input->dtype == grid->dtype, Error, "grid_sampler(): expected input and grid to have same dtype, but input has ",
           c10_type_name(input->dtype), " and grid has ", c10_type_name(grid->dtype));
  FL_CHECK((input->dim() == 4 || input->dim() == 5) && input->dim() == grid->dim(), Error,
           "grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but got input with sizes ",
           shape_str(input->sizes), " and grid with sizes ", shape_str(grid->sizes));
  FL_CHECK(input->sizes[0] == grid->sizes[0], Error,
           "grid_sampler(): expected grid and input to have same batch size, but got input with sizes ",
           shape_str(input->sizes), " and grid with sizes ", shape_str(grid->sizes));
  const int64_t D = input->dim() - 2;
  FL_CHECK(grid->sizes.back() == D, Error, "grid_sampler(): expected grid to have size ", D, " in last dimension, but got "
           "grid with sizes ", shape_str(grid->sizes));
  for (int64_t d = 2; d < input->dim(); ++d)
    FL_CHECK(input->sizes[d] > 0, Error, "grid_sampler(): expected input to have non-empty spatial dimensions, but input "
             "has sizes ", shape_str(input->sizes), " with dimension ", d, " being empty");
  FL_CHECK(interp >= 0 && interp <= 2 && padding >= 0 && padding <= 2, Error, "grid_sampler(): invalid mode");
  FL_CHECK(!(D == 3 && interp == static_cast<int64_t>(GridInterp::Bicubic)), Error,
           "grid_sampler(): bicubic interpolation only supports 4D input");
  GridGeom g{input->sizes[0], input->sizes[1], D};
  for (int64_t s = 0; s < D; ++s) {
    g.isz[s] = input->sizes[2 + s];
    g.in_spatial *= g.isz[s];
    g.P *= grid->sizes[1 + s];
  }
  g.out_sizes = {g.N, g.C};
  for (int64_t s = 0; s < D; ++s) g.out_sizes.push_back(grid->sizes[1 + s]);
  g.interp = static_cast<GridInterp>(interp);
  g.pad = static_cast<GridPadding>(padding);
  g.align = align;
  return g;
}

// One sample point: its corners (flat input offsets, -1 when outside) and their weights, plus for
// the backward the derivative of each weight along each coordinate.
template <typename T, int D>
struct Corners {
  static constexpr int K = 1 << D;
  int64_t off[K];
  T w[K];
  T dw[K][D];  // d w / d coordinate s (s outermost first)
  T cgrad[D];  // d coordinate / d grid value
  T c[D], f[D];  // the coordinates and their floors (for the second derivatives)
};

// d^2 w[k] / d coordinate s d coordinate t (s != t; w is linear in each coordinate alone).
template <typename T, int D>
T corner_d2(const Corners<T, D>& cr, int k, int s, int t) {
  T d = 1;
  for (int r = 0; r < D; ++r) {
    const bool bit = (k >> (D - 1 - r)) & 1;
    if (r == s || r == t) d *= bit ? T(1) : T(-1);
    else d *= bit ? cr.c[r] - cr.f[r] : (cr.f[r] + 1) - cr.c[r];
  }
  return d;
}

template <typename T, int D>
void linear_corners(const GridGeom& g, const T* gp, bool nearest, bool with_grad, Corners<T, D>& cr) {
  T c[D], f[D];
  for (int s = 0; s < D; ++s) {
    c[s] = source_index(gp[D - 1 - s], g.isz[s], g.pad, g.align, &cr.cgrad[s]);
    f[s] = nearest ? std::nearbyint(c[s]) : std::floor(c[s]);
    cr.c[s] = c[s];
    cr.f[s] = f[s];
  }
  const int nk = nearest ? 1 : Corners<T, D>::K;
  for (int k = 0; k < nk; ++k) {
    // bit 0 of k steps x (the last spatial dim), bit 1 y, bit 2 z: PyTorch's nw, ne, sw, se order
    int64_t off = 0;
    bool inside = true;
    T part[D];
    for (int s = 0; s < D; ++s) {
      const int bit = (k >> (D - 1 - s)) & 1;
      const int64_t i = static_cast<int64_t>(f[s]) + bit;
      inside = inside && i >= 0 && i < g.isz[s];
      off = off * g.isz[s] + i;
      part[s] = bit ? c[s] - f[s] : (f[s] + 1) - c[s];
    }
    cr.off[k] = inside ? off : -1;
    if (nearest) { cr.w[0] = 1; return; }
    T w = part[D - 1];  // x * y (* z), PyTorch's product order
    for (int s = D - 2; s >= 0; --s) w *= part[s];
    cr.w[k] = w;
    if (!with_grad) continue;
    for (int s = 0; s < D; ++s) {
      T d = ((k >> (D - 1 - s)) & 1) ? T(1) : T(-1);
      for (int t = D - 1; t >= 0; --t) if (t != s) d *= part[t];
      cr.dw[k][s] = d;
    }
  }
}

// Bicubic (4-D only): the 4x4 neighbourhood, each tap read through the padding rule.
template <typename T>
struct Cubic {
  int64_t off[16];  // -1 outside
  T wx[4], wy[4], gx[4], gy[4];
  T cgrad[2];
};

template <typename T>
void cubic_taps(const GridGeom& g, const T* gp, Cubic<T>& cb) {
  const int64_t H = g.isz[0], W = g.isz[1];
  const T ix = unnormalize(gp[0], W, g.align, &cb.cgrad[1]);
  const T iy = unnormalize(gp[1], H, g.align, &cb.cgrad[0]);
  const T fx = std::floor(ix), fy = std::floor(iy);
  cubic_coefficients(cb.wx, ix - fx);
  cubic_coefficients(cb.wy, iy - fy);
  cubic_coefficients_grad(cb.gx, ix - fx);
  cubic_coefficients_grad(cb.gy, iy - fy);
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 4; ++i) {
      const T x = compute_coordinates(fx - 1 + i, W, g.pad, g.align), y = compute_coordinates(fy - 1 + j, H, g.pad, g.align);
      const int64_t xi = static_cast<int64_t>(x), yi = static_cast<int64_t>(y);
      cb.off[j * 4 + i] = (xi >= 0 && xi < W && yi >= 0 && yi < H) ? yi * W + xi : -1;
    }
}

template <typename T, int D>
void forward_impl(const GridGeom& g, const T* in, const T* grid, T* out) {
  const int64_t total = g.N * g.P;
#pragma omp parallel for if (total * g.C >= kParallelGrain / 4) schedule(static)
  for (int64_t np = 0; np < total; ++np) {
    const int64_t n = np / g.P, p = np % g.P;
    const T* gp = grid + np * D;
    const T* inn = in + n * g.C * g.in_spatial;
    T* o = out + n * g.C * g.P + p;
    if (g.interp == GridInterp::Bicubic) {
      if constexpr (D == 2) {
        Cubic<T> cb;
        cubic_taps(g, gp, cb);
        for (int64_t c = 0; c < g.C; ++c) {
          const T* ic = inn + c * g.in_spatial;
          T rows[4];
          for (int j = 0; j < 4; ++j) {
            T v[4];
            for (int i = 0; i < 4; ++i) v[i] = cb.off[j * 4 + i] >= 0 ? ic[cb.off[j * 4 + i]] : T(0);
            rows[j] = v[0] * cb.wx[0] + v[1] * cb.wx[1] + v[2] * cb.wx[2] + v[3] * cb.wx[3];
          }
          o[c * g.P] = rows[0] * cb.wy[0] + rows[1] * cb.wy[1] + rows[2] * cb.wy[2] + rows[3] * cb.wy[3];
        }
      }
      continue;
    }
    const bool nearest = g.interp == GridInterp::Nearest;
    Corners<T, D> cr;
    linear_corners<T, D>(g, gp, nearest, false, cr);
    const int nk = nearest ? 1 : Corners<T, D>::K;
    for (int64_t c = 0; c < g.C; ++c) {
      const T* ic = inn + c * g.in_spatial;
      T acc = 0;
      for (int k = 0; k < nk; ++k)
        if (cr.off[k] >= 0) acc += ic[cr.off[k]] * cr.w[k];
      o[c * g.P] = acc;
    }
  }
}

template <typename T, int D>
void backward_impl(const GridGeom& g, const T* go, const T* in, const T* grid, T* gin, T* ggrid) {
  // Points of one batch element scatter into the same input gradient: parallel over the batch.
#pragma omp parallel for if (g.N > 1 && g.N * g.P * g.C >= kParallelGrain / 4) schedule(static)
  for (int64_t n = 0; n < g.N; ++n) {
    const T* inn = in + n * g.C * g.in_spatial;
    T* ginn = gin ? gin + n * g.C * g.in_spatial : nullptr;
    for (int64_t p = 0; p < g.P; ++p) {
      const int64_t np = n * g.P + p;
      const T* gp = grid + np * D;
      const T* gop = go + n * g.C * g.P + p;
      T* gg = ggrid + np * D;
      if (g.interp == GridInterp::Bicubic) {
        if constexpr (D == 2) {
          Cubic<T> cb;
          cubic_taps(g, gp, cb);
          T gx = 0, gy = 0;
          for (int64_t c = 0; c < g.C; ++c) {
            const T gout = gop[c * g.P];
            const T* ic = inn + c * g.in_spatial;
            for (int j = 0; j < 4; ++j)
              for (int i = 0; i < 4; ++i) {
                const int64_t off = cb.off[j * 4 + i];
                if (off < 0) continue;
                if (ginn) ginn[c * g.in_spatial + off] += gout * cb.wx[i] * cb.wy[j];
                const T v = ic[off];
                gx -= v * cb.gx[i] * cb.wy[j] * gout;
                gy -= v * cb.gy[j] * cb.wx[i] * gout;
              }
          }
          gg[0] = cb.cgrad[1] * gx;
          gg[1] = cb.cgrad[0] * gy;
        }
        continue;
      }
      const bool nearest = g.interp == GridInterp::Nearest;
      Corners<T, D> cr;
      linear_corners<T, D>(g, gp, nearest, true, cr);
      T gc[D] = {};
      const int nk = nearest ? 1 : Corners<T, D>::K;
      for (int64_t c = 0; c < g.C; ++c) {
        const T gout = gop[c * g.P];
        const T* ic = inn + c * g.in_spatial;
        for (int k = 0; k < nk; ++k) {
          if (cr.off[k] < 0) continue;
          if (ginn) ginn[c * g.in_spatial + cr.off[k]] += cr.w[k] * gout;
          if (!nearest) {
            const T v = ic[cr.off[k]] * gout;
            for (int s = 0; s < D; ++s) gc[s] += v * cr.dw[k][s];
          }
        }
      }
      for (int s = 0; s < D; ++s) gg[D - 1 - s] = nearest ? T(0) : cr.cgrad[s] * gc[s];
    }
  }
}

// The derivatives of L = <gg_grid, grad_grid> where grad_grid[p] = cgrad * sum_c g[c, p] * sum_k input[c, k] dw_k:
// for g (sampling with the weights u . dw), for input (their scatter times g), for grid (the weights' second
// derivatives; the padding's coordinate derivative cgrad is piecewise constant, so it contributes nothing).
template <typename T, int D>
void double_backward_impl(const GridGeom& g, const T* go, const T* in, const T* grid, const T* ggg, T* dgo, T* din,
                          T* dgrid) {
#pragma omp parallel for if (g.N > 1 && g.N * g.P * g.C >= kParallelGrain / 4) schedule(static)
  for (int64_t n = 0; n < g.N; ++n) {
    const T* inn = in + n * g.C * g.in_spatial;
    T* dinn = din + n * g.C * g.in_spatial;
    for (int64_t p = 0; p < g.P; ++p) {
      const int64_t np = n * g.P + p;
      const T* gp = grid + np * D;
      const T* gop = go + n * g.C * g.P + p;
      T* dgop = dgo + n * g.C * g.P + p;
      if (g.interp == GridInterp::Bicubic) {
        if constexpr (D == 2) {
          Cubic<T> cb;
          cubic_taps(g, gp, cb);
          const T ux = ggg[np * 2] * cb.cgrad[1], uy = ggg[np * 2 + 1] * cb.cgrad[0];
          const T tx = unnormalize(gp[0], g.isz[1], g.align), ty = unnormalize(gp[1], g.isz[0], g.align);
          T hx[4], hy[4];
          cubic_coefficients_grad2(hx, tx - std::floor(tx));
          cubic_coefficients_grad2(hy, ty - std::floor(ty));
          T w1[16], wx2[16], wy2[16];  // the tap weights of dL/dg and of dL/d(x, y) per unit g * input
          for (int j = 0; j < 4; ++j)
            for (int i = 0; i < 4; ++i) {
              const T dx = -cb.gx[i], dy = -cb.gy[j];  // the weights' first derivatives
              w1[j * 4 + i] = ux * dx * cb.wy[j] + uy * cb.wx[i] * dy;
              wx2[j * 4 + i] = -ux * hx[i] * cb.wy[j] + uy * dx * dy;
              wy2[j * 4 + i] = ux * dx * dy - uy * cb.wx[i] * hy[j];
            }
          T ax = 0, ay = 0;
          for (int64_t c = 0; c < g.C; ++c) {
            const T gout = gop[c * g.P];
            const T* ic = inn + c * g.in_spatial;
            T acc = 0;
            for (int k = 0; k < 16; ++k) {
              const int64_t off = cb.off[k];
              if (off < 0) continue;
              const T v = ic[off];
              acc += v * w1[k];
              dinn[c * g.in_spatial + off] += gout * w1[k];
              ax += gout * v * wx2[k];
              ay += gout * v * wy2[k];
            }
            dgop[c * g.P] = acc;
          }
          dgrid[np * 2] = cb.cgrad[1] * ax;
          dgrid[np * 2 + 1] = cb.cgrad[0] * ay;
        }
        continue;
      }
      Corners<T, D> cr;
      linear_corners<T, D>(g, gp, false, true, cr);
      constexpr int K = Corners<T, D>::K;
      T u[D], w1[K], h[K][D];
      for (int s = 0; s < D; ++s) u[s] = ggg[np * D + D - 1 - s] * cr.cgrad[s];
      for (int k = 0; k < K; ++k) {
        w1[k] = 0;
        for (int s = 0; s < D; ++s) w1[k] += u[s] * cr.dw[k][s];
        for (int t = 0; t < D; ++t) {
          h[k][t] = 0;
          for (int s = 0; s < D; ++s)
            if (s != t) h[k][t] += u[s] * corner_d2<T, D>(cr, k, s, t);
        }
      }
      T dc[D] = {};
      for (int64_t c = 0; c < g.C; ++c) {
        const T gout = gop[c * g.P];
        const T* ic = inn + c * g.in_spatial;
        T acc = 0;
        for (int k = 0; k < K; ++k) {
          if (cr.off[k] < 0) continue;
          const T v = ic[cr.off[k]];
          acc += v * w1[k];
          dinn[c * g.in_spatial + cr.off[k]] += gout * w1[k];
          for (int t = 0; t < D; ++t) dc[t] += gout * v * h[k][t];
        }
        dgop[c * g.P] = acc;
      }
      for (int t = 0; t < D; ++t) dgrid[np * D + D - 1 - t] = cr.cgrad[t] * dc[t];
    }
  }
}

Tensor as_compute(const Tensor& t) {
  if (t->dtype == ScalarType::Float16 || t->dtype == ScalarType::BFloat16) return contiguous(to_dtype(t, ScalarType::Float32));
  return contiguous(t);
}

}  // namespace

Tensor grid_sampler_cpu(const Tensor& input, const Tensor& grid, int64_t interp, int64_t padding,
                        bool align) {
  GridGeom g = make_geom(input, grid, interp, padding, align);
  FL_CHECK(is_floating(input->dtype), Error, "\"grid_sampler_2d_cpu\" not implemented for '", c10_type_name(input->dtype), "'");
  Tensor x = as_compute(input), gr = as_compute(grid);
  Tensor out = empty(g.out_sizes, x->dtype);
  if (out->numel != 0) {
    auto run = [&](auto tag) {
      using T = decltype(tag);
      if (g.D == 2) forward_impl<T, 2>(g, x->data<const T>(), gr->data<const T>(), out->data<T>());
      else forward_impl<T, 3>(g, x->data<const T>(), gr->data<const T>(), out->data<T>());
    };
    if (x->dtype == ScalarType::Float64) run(double()); else run(float());
  }
  return out->dtype == input->dtype ? out : to_dtype(out, input->dtype);
}

TensorList grid_sampler_backward_cpu(const Tensor& grad, const Tensor& input, const Tensor& grid,
                                     int64_t interp, int64_t padding, bool align, bool input_grad) {
  GridGeom g = make_geom(input, grid, interp, padding, align);
  FL_CHECK(grad->sizes == g.out_sizes, Error, "grid_sampler_backward: expected grad_output of size ",
           shape_str(g.out_sizes), " but got ", shape_str(grad->sizes));
  Tensor x = as_compute(input), gr = as_compute(grid), go = as_compute(grad);
  Tensor gin;
  if (input_grad) {
    gin = empty(x->sizes, x->dtype);
    fill(gin, Scalar(int64_t(0)));
  }
  Tensor ggrid = empty(gr->sizes, gr->dtype);
  fill(ggrid, Scalar(int64_t(0)));
  if (grad->numel != 0) {
    auto run = [&](auto tag) {
      using T = decltype(tag);
      T* gi = gin ? gin->data<T>() : nullptr;
      if (g.D == 2) backward_impl<T, 2>(g, go->data<const T>(), x->data<const T>(), gr->data<const T>(), gi, ggrid->data<T>());
      else backward_impl<T, 3>(g, go->data<const T>(), x->data<const T>(), gr->data<const T>(), gi, ggrid->data<T>());
    };
    if (x->dtype == ScalarType::Float64) run(double()); else run(float());
  }
  if (gin && gin->dtype != input->dtype) gin = to_dtype(gin, input->dtype);
  if (ggrid->dtype != grid->dtype) ggrid = to_dtype(ggrid, grid->dtype);
  return {gin, ggrid};
}

TensorList grid_sampler_double_backward_cpu(const Tensor& grad, const Tensor& input, const Tensor& grid,
                                            const Tensor& gg_grid, int64_t interp, int64_t padding, bool align) {
  GridGeom g = make_geom(input, grid, interp, padding, align);
  FL_CHECK(grad->sizes == g.out_sizes && gg_grid->sizes == grid->sizes, Error,
           "grid_sampler_double_backward: expected grad_output of size ", shape_str(g.out_sizes), " and gg_grid of size ",
           shape_str(grid->sizes), " but got ", shape_str(grad->sizes), " and ", shape_str(gg_grid->sizes));
  Tensor x = as_compute(input), gr = as_compute(grid), go = as_compute(grad), ggg = as_compute(gg_grid);
  TensorList r = {empty(go->sizes, x->dtype), empty(x->sizes, x->dtype), empty(gr->sizes, x->dtype)};
  for (Tensor& t : r) fill(t, Scalar(int64_t(0)));
  // nearest interpolation's grid gradient is zero: so are its derivatives
  if (grad->numel != 0 && g.interp != GridInterp::Nearest) {
    auto run = [&](auto tag) {
      using T = decltype(tag);
      auto impl = g.D == 2 ? double_backward_impl<T, 2> : double_backward_impl<T, 3>;
      impl(g, go->data<const T>(), x->data<const T>(), gr->data<const T>(), ggg->data<const T>(), r[0]->data<T>(),
           r[1]->data<T>(), r[2]->data<T>());
    };
    if (x->dtype == ScalarType::Float64) run(double()); else run(float());
  }
  const Tensor* like[3] = {&grad, &input, &grid};
  for (int i = 0; i < 3; ++i)
    if (r[i]->dtype != (*like[i])->dtype) r[i] = to_dtype(r[i], (*like[i])->dtype);
  return r;
}

}  // namespace fl
