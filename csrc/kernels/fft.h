// The FFT engine behind torch.fft, stft and istft (ops/fft.cpp).
//
// Buffers are interleaved complex (re, im pairs of T) or real T; every offset and stride is counted in T elements.
// A call transforms a batch of 1-D sequences of length n: sequence b starts at in + in_off[b] and steps by in_stride
// (likewise for out). Callers order the batch so that neighbouring sequences lie close in memory: the engine gathers
// up to 16 of them at a time into split re/im buffers laid out [n][lanes] and runs every radix pass over the lanes as
// its innermost, contiguous loop (vector code for any batch geometry: rows, columns, strided views), one group of
// lanes per OpenMP thread.
//
// Plans are cached per length and type: a mixed-radix Stockham factorization (4, 2, 3, 5, then any odd factor) with
// its twiddles, or Bluestein's chirp-z for lengths with a prime factor above 64 (a convolution of 5-smooth length).
// Unnormalized: `scale` multiplies every output (the norm modes are a choice of scale).
#pragma once
#include <cstdint>
#include <vector>

namespace fl::fft {

// Complex to complex; inverse uses exp(+2 pi i jk / n). in and out may be the same buffer with the same geometry.
template <typename T>
void c2c(const T* in, T* out, int64_t n, int64_t in_stride, int64_t out_stride, const std::vector<int64_t>& in_off,
         const std::vector<int64_t>& out_off, bool inverse, T scale);

// Real to complex (forward): writes n / 2 + 1 outputs (onesided) or all n (the upper half as the conjugates).
// Two real sequences ride as the real and imaginary parts of one complex transform.
template <typename T>
void r2c(const T* in, T* out, int64_t n, int64_t in_stride, int64_t out_stride, const std::vector<int64_t>& in_off,
         const std::vector<int64_t>& out_off, bool onesided, T scale);

// Complex (n / 2 + 1 Hermitian half) to real (inverse): the imaginary parts of the zero frequency and, for even n,
// of the Nyquist frequency are ignored, as in every real-output FFT library.
template <typename T>
void c2r(const T* in, T* out, int64_t n, int64_t in_stride, int64_t out_stride, const std::vector<int64_t>& in_off,
         const std::vector<int64_t>& out_off, T scale);

}  // namespace fl::fft
