// The FFT engine's plans (fft_plan.cpp), shared with its batch drivers (fft.cpp) and vector transposes
// (fft_transpose.cpp): a plan transforms `nl` lanes at once, held as split real / imaginary buffers laid out
// [point][lane] (kernels/fft.h says why).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#define FL_FFT_INLINE static inline __attribute__((always_inline))
// Hot loops are built for AVX-512, AVX2+FMA and the baseline, picked at load time (DESIGN.md: portable binaries).
#define FL_FFT_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))

namespace fl::fft::detail {

template <typename T>
struct Pass {
  int64_t radix, m;          // this pass splits a length radix * m into radix interleaved length-m transforms
  std::vector<T> wr, wi;     // twiddles exp(-2 pi i p j / (radix m)), [p][j - 1], p < m, 1 <= j < radix
  std::vector<T> cr, ci;     // odd radices above 3: cos / sin(2 pi t / radix), t < radix
};

template <typename T>
struct Plan {
  int64_t n = 0;
  std::vector<Pass<T>> passes;
  // Bluestein: a length-M convolution, M 5-smooth (M = 0 for a mixed-radix plan)
  int64_t M = 0;
  std::shared_ptr<const Plan<T>> sub;
  std::vector<T> chirp_r, chirp_i;  // exp(-i pi j^2 / n), j < n
  std::vector<T> kern_r, kern_i;    // forward FFT of the wrapped conjugate chirp, divided by M
  int64_t work_len() const { return M ? M : n; }
};


// The plan of length n (cached per length and type, shared by every thread).
template <typename T>
std::shared_ptr<const Plan<T>> get_plan(int64_t n);

// Forward transform of the nl lanes in buffer 0 (re[0], im[0]), using buffer 1 (each of plan.work_len() * nl
// elements); returns the buffer that holds the result.
int run_plan(const Plan<float>& pl, int64_t nl, float* const* re, float* const* im);
int run_plan(const Plan<double>& pl, int64_t nl, double* const* re, double* const* im);

}  // namespace fl::fft::detail
