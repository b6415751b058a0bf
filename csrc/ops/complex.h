// The complex-number ops: the conjugate bit (Note [The conjugate bit] in core/dispatch.h), the real/complex
// views and the constructors. Pointwise math on complex tensors runs through the pointwise lists
// (pointwise_complex.h).
#pragma once
#include "../core/dispatch.h"

// conj: a view with the conjugate bit flipped (self itself for a real tensor); resolve_conj: a tensor without
// the bit (self when it has none); conj_physical: the conjugate values in new memory.
FL_DECLARE_OP(conj, ::fl::Tensor(const ::fl::Tensor&))
FL_DECLARE_OP(resolve_conj, ::fl::Tensor(const ::fl::Tensor&))
FL_DECLARE_OP(conj_physical, ::fl::Tensor(const ::fl::Tensor&))
// view_as_real: (..., 2) real view of a complex tensor; view_as_complex: the inverse.
FL_DECLARE_OP(view_as_real, ::fl::Tensor(const ::fl::Tensor&))
FL_DECLARE_OP(view_as_complex, ::fl::Tensor(const ::fl::Tensor&))
// real: a view of the real parts (self for a real tensor); imag: of the imaginary parts.
FL_DECLARE_OP(real, ::fl::Tensor(const ::fl::Tensor&))
FL_DECLARE_OP(imag, ::fl::Tensor(const ::fl::Tensor&))
// complex(real, imag) -> real + i imag, broadcasting.
FL_DECLARE_OP(complex, ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&))
