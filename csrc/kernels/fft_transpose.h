// The FFT engine's vector transposes between the batch's memory layout and the lanes of a group (fft.cpp): W lanes of
// T at once, W one vector (16 or 8 floats, 8 or 4 doubles; nl outside those falls back to scalar loops).
#pragma once
#include <cstdint>

namespace fl::fft::detail {

// Whether the functions below handle nl lanes of T.
template <typename T>
bool tiled_lanes(int64_t nl) {
  return nl == 64 / static_cast<int64_t>(sizeof(T)) || nl == 32 / static_cast<int64_t>(sizeof(T));
}

// nl contiguous complex rows src[l] -> r0, i0 [n][nl] (imaginary parts times sign), and back (times scale, iscale).
void gather_rows(const float* const* src, int64_t n, int64_t nl, float* r0, float* i0, float sign);
void gather_rows(const double* const* src, int64_t n, int64_t nl, double* r0, double* i0, double sign);
void scatter_rows(float* const* dst, int64_t n, int64_t nl, const float* rr, const float* ri, float scale,
                  float iscale);
void scatter_rows(double* const* dst, int64_t n, int64_t nl, const double* rr, const double* ri, double scale,
                  double iscale);
// nl neighbouring complex columns starting at base (point k at base + k stride) -> r0, i0, and back.
void gather_cols(const float* base, int64_t stride, int64_t n, int64_t nl, float* r0, float* i0, float sign);
void gather_cols(const double* base, int64_t stride, int64_t n, int64_t nl, double* r0, double* i0, double sign);
void scatter_cols(float* base, int64_t stride, int64_t n, int64_t nl, const float* rr, const float* ri, float scale,
                  float iscale);
void scatter_cols(double* base, int64_t stride, int64_t n, int64_t nl, const double* rr, const double* ri,
                  double scale, double iscale);
// r2c: two contiguous real rows per lane (sa[l] the real, sb[l] the imaginary part) -> r0, i0; and the separated
// spectra of both rows, points [0, nout), written to da[l], db[l] times half (half the norm scale).
void gather_real(const float* const* sa, const float* const* sb, int64_t n, int64_t nl, float* r0, float* i0);
void gather_real(const double* const* sa, const double* const* sb, int64_t n, int64_t nl, double* r0, double* i0);
void scatter_real(float* const* da, float* const* db, int64_t n, int64_t nout, int64_t nl, const float* zr,
                  const float* zi, float half);
void scatter_real(double* const* da, double* const* db, int64_t n, int64_t nout, int64_t nl, const double* zr,
                  const double* zi, double half);

}  // namespace fl::fft::detail
