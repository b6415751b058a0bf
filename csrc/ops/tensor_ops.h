// The ops every other op, binding and backward formula builds on: factories, constants, copies,
// casts, fills and aliases. The core's helpers of the same names (fl::empty, fl::clone,
// fl::copy_into, ... in core/tensor.h) call these ops, so a tensor made or written anywhere passes
// the dispatcher (Note [Dispatch order]) and a graph capture sees it.
//
// Ops named with a leading underscore write or allocate without autograd or version bumps (what
// kernels do to fresh outputs); the user-facing in-place forms (copy_, fill_, zero_) bump the version
// counter and record their history.
#pragma once
#include "../core/dispatch.h"

// -- factories --
FL_DECLARE_OP(empty, ::fl::Tensor(const ::fl::IntList&, ::fl::ScalarType))
FL_DECLARE_OP(empty_strided, ::fl::Tensor(const ::fl::IntList&, const ::fl::IntList&, ::fl::ScalarType))
// dense, keeping `self`'s memory layout when it is dense (torch's preserve_format)
FL_DECLARE_OP(empty_like, ::fl::Tensor(const ::fl::Tensor&, ::fl::ScalarType))
// a 0-dim tensor; `wrapped` marks a Python number taking part in type promotion as a scalar
FL_DECLARE_OP(scalar_tensor, ::fl::Tensor(::fl::Scalar, ::fl::ScalarType, bool))
// A tensor built from host data (a Python list, a numpy array): returns it unchanged, and a graph
// capture records its contents as a constant of the program.
FL_DECLARE_OP(lift_fresh, ::fl::Tensor(const ::fl::Tensor&))
// -- copies and casts --
FL_DECLARE_OP(clone, ::fl::Tensor(const ::fl::Tensor&))
FL_DECLARE_OP(contiguous, ::fl::Tensor(const ::fl::Tensor&))
FL_DECLARE_OP(_to_copy, ::fl::Tensor(const ::fl::Tensor&, ::fl::ScalarType, bool))
FL_DECLARE_OP(_copy_into, void(const ::fl::Tensor&, const ::fl::Tensor&))
// self += src in order (self may be a view whose elements share memory); no autograd.
FL_DECLARE_OP(_accumulate_into, void(const ::fl::Tensor&, const ::fl::Tensor&))
FL_DECLARE_OP(copy_, ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&))
// -- fills --
FL_DECLARE_OP(_fill, void(const ::fl::Tensor&, ::fl::Scalar))
FL_DECLARE_OP(fill_, ::fl::Tensor(const ::fl::Tensor&, ::fl::Scalar))
FL_DECLARE_OP(fill_tensor_, ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&))
FL_DECLARE_OP(zero_, ::fl::Tensor(const ::fl::Tensor&))
// -- geometry in place --
// contiguous strides for `size`, the storage grown (keeping its contents) when too small
FL_DECLARE_OP(resize_, ::fl::Tensor(const ::fl::Tensor&, const ::fl::IntList&))
// self becomes an alias of `source`'s storage with the given geometry (its own version counter kept)
FL_DECLARE_OP(set_, ::fl::Tensor(const ::fl::Tensor&, const ::fl::Tensor&, int64_t, const ::fl::IntList&, const ::fl::IntList&))
// -- aliases --
// shares memory and version counter, not autograd history (torch's detach)
FL_DECLARE_OP(detach, ::fl::Tensor(const ::fl::Tensor&))
