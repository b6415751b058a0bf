// The torch.fft primitives, as torch's aten::_fft_c2c / _fft_r2c / _fft_c2r: transforms over a list of dims of
// float32/float64 (real) or complex64/complex128 tensors, on the engine of kernels/fft.h. `normalization` is torch's
// fft_norm_mode: 0 none, 1 divide by sqrt(signal numel), 2 divide by signal numel (the signal being the transformed
// dims: the input's for c2c and r2c, the output's for c2r). flowlike/fft.py builds every torch.fft function, stft and
// istft on these three (n/s resizing, dtype promotion, norm strings, the Hermitian variants).
#pragma once
#include "../core/dispatch.h"

// The ops declared in fft.yaml (generated: csrc/ops/gen_ops.py).
#include "fl_generated/fft.h"
