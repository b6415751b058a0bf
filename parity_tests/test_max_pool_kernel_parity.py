"""The max-pool forward kernel (csrc/ops/pool.cpp: whole windows in vectorized blocks, strided or gathered, the
windows meeting the padding one by one) against PyTorch: values and indices equal exactly, including ties (the first
maximum's index), NaN (the last NaN's index), -inf, integer and reduced-precision dtypes, rows longer than a block,
1-D to 3-D, dilation, ceil mode, non-contiguous and empty input."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402

from helpers import check_both  # noqa: E402

RNG = np.random.default_rng(11)


def check(fn_name, x, transform=None, **kw):
    """The dual run (helpers.check_both, exact) of F.<fn_name>(..., return_indices=True) over the same values."""
    def body(lib, t):
        return getattr(lib.nn.functional, fn_name)(t if transform is None else transform(t), return_indices=True, **kw)
    check_both(body, x, exact=True)


CASES = [  # (function, input shape, kwargs): widths past the 16-output block, strides 1, 2, 3, edges with padding
    ("max_pool2d", (2, 3, 40, 70), dict(kernel_size=2, stride=2)),
    ("max_pool2d", (2, 3, 40, 70), dict(kernel_size=3, stride=2, padding=1)),
    ("max_pool2d", (1, 2, 37, 53), dict(kernel_size=3, stride=1, padding=1)),
    ("max_pool2d", (1, 2, 37, 53), dict(kernel_size=(2, 4), stride=3, padding=(1, 2), dilation=(2, 1))),
    ("max_pool2d", (2, 2, 35, 51), dict(kernel_size=3, stride=2, ceil_mode=True)),
    ("max_pool2d", (32, 16, 6, 6), dict(kernel_size=2)),  # the small CNN's second pooling: 3x3 planes
    ("max_pool2d", (3, 13, 13), dict(kernel_size=3, stride=2, padding=1)),  # no batch dim
    ("max_pool1d", (2, 3, 100), dict(kernel_size=4, stride=2, padding=2, dilation=1)),
    ("max_pool1d", (2, 3, 100), dict(kernel_size=3, stride=1, dilation=3, ceil_mode=True)),
    ("max_pool3d", (1, 2, 6, 9, 40), dict(kernel_size=2, stride=2)),
    ("max_pool3d", (1, 2, 7, 9, 40), dict(kernel_size=3, stride=(1, 2, 2), padding=1)),
]


@pytest.mark.parametrize("fn,shape,kw", CASES)
def test_random_values(fn, shape, kw):
    check(fn, RNG.standard_normal(shape).astype(np.float32), **kw)


@pytest.mark.parametrize("fn,shape,kw", CASES)
def test_ties_take_the_first_maximum(fn, shape, kw):
    check(fn, RNG.integers(-2, 3, shape).astype(np.float32), **kw)


@pytest.mark.parametrize("fn,shape,kw", CASES[:4] + CASES[-2:])
def test_nan_and_infinities(fn, shape, kw):
    x = RNG.standard_normal(shape).astype(np.float32)
    x.flat[RNG.choice(x.size, x.size // 7, replace=False)] = np.nan
    x.flat[RNG.choice(x.size, x.size // 7, replace=False)] = -np.inf
    x.flat[RNG.choice(x.size, x.size // 11, replace=False)] = np.inf
    check(fn, x, **kw)


def test_all_minus_infinity_keeps_the_first_tap():
    check("max_pool2d", np.full((1, 1, 9, 40), -np.inf, np.float32), kernel_size=3, stride=2, padding=1)


@pytest.mark.parametrize("dtype", ["float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8"])
def test_dtypes(dtype):
    x = RNG.integers(0, 9, (2, 3, 20, 36)).astype(np.float32)
    xt_dtype = getattr(torch, dtype)
    check("max_pool2d", x, transform=lambda t: t.to(getattr(fl, dtype) if isinstance(t, fl.Tensor) else xt_dtype),
          kernel_size=3, stride=2, padding=1)


def test_non_contiguous_input():
    x = RNG.standard_normal((2, 40, 34, 3)).astype(np.float32)
    check("max_pool2d", x, transform=lambda t: t.permute(0, 3, 1, 2), kernel_size=2, stride=2)
    check("max_pool2d", x, transform=lambda t: t.permute(0, 3, 1, 2)[..., ::2], kernel_size=3, stride=1, padding=1)


def test_empty_batch():
    check("max_pool2d", np.zeros((0, 3, 20, 20), np.float32), kernel_size=2)
