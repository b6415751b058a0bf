"""torch.testing.assert_close and torch.special: flowlike's against torch 2.13 (messages, exception types, values)."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402

from helpers import assert_same, convert, outcome, run_both, to_flowlike  # noqa: E402


def T(values, dtype="float32"):
    """A torch tensor; `convert` builds the same one in flowlike."""
    return torch.tensor(values, dtype=getattr(torch, dtype))


NAN, INF = math.nan, math.inf
CASES = [
    (T([1.0, 2.0, 3.0]), T([1.0, 2.1, 3.0]), {}),
    (T([1.0, 2.0, 3.0]), T([1.0, 2.0 + 1e-6, 3.0]), {}),
    (T([1, 2, 3], "int64"), T([1, 5, 3], "int64"), {}),
    (T([1, 2, 3], "int32"), T([1, 5, 3], "int32"), {}),
    (T([True, False], "bool"), T([True, True], "bool"), {}),
    (T([1.0, 2.0]), T([1.0, 2.0], "float64"), {}),
    (T([1.0, 2.0]), T([1.0, 2.0, 3.0]), {}),
    (T([[1.0, 2.0], [3.0, 4.0]]), T([[1.0, 2.0], [3.0, 5.0]]), {}),
    (T([1.0, 2.0, 3.0], "float16"), T([1.0, 2.1, 3.0], "float16"), {}),
    (T([1.0, 2.0, 3.0], "float16"), T([1.0, 2.001, 3.0], "float16"), {}),
    (T([1.0, 2.0, 3.0], "bfloat16"), T([1.0, 2.01, 3.0], "bfloat16"), {}),
    (T([1.0, 2.0], "float64"), T([1.0, 2.0 + 1e-6], "float64"), {}),
    (T([NAN, 1.0]), T([NAN, 1.0]), {}),
    (T([NAN, 1.0]), T([NAN, 1.0]), {"equal_nan": True}),
    (T([INF]), T([INF]), {}),
    (T([INF]), T([-INF]), {}),
    (T([0.0]), T([1.0]), {}),
    (T([0.0]), T([1e-6]), {}),
    (T([1], "int64"), T([1.5]), {"check_dtype": False}),
    (T([1.0]), T([1.0], "float64"), {"check_dtype": False}),
    (T([1.0]), T([1.1]), {"rtol": 0.2, "atol": 0.0}),
    (T([1.0]), T([1.1]), {"rtol": 0.2}),
    (T([1.0]), T([1.1]), {"msg": "custom"}),
    (T(1.0), T(1.5), {}),
    (T([10, 20], "int64"), T([11, 20], "int64"), {"rtol": 0.2, "atol": 0}),
    (T([10, 20], "int64"), T([13, 20], "int64"), {"rtol": 0.2, "atol": 0}),
    (T([1, 2], "uint8"), T([3, 2], "uint8"), {}),
    (T([]), T([]), {}),
    (1.0, 1.1, {}), (1, 2, {}), (1.0, 1, {}), (1.0, 1, {"check_dtype": False}), (True, False, {}),
    (1.0, NAN, {}), (NAN, NAN, {"equal_nan": True}), (0.0, 1e-8, {}), (None, None, {}), (None, 1, {}),
    ([1, 2], [1, 2, 3], {}), ({"a": 1.0}, {"b": 1.0}), ({"a": [1.0, 2.0]}, {"a": [1.0, 2.5]}, {}),
    ([T(1.0), T(2.0)], [T(1.0), T(3.0)], {}),
    (T([1.0, 2.0]), [1.0, 2.0], {}), ("a", "b", {}), (T([1.0]), 1.0, {}),
]
CASES = [c if len(c) == 3 else (*c, {}) for c in CASES]


@pytest.mark.parametrize("actual,expected,kwargs", CASES, ids=[str(i) for i in range(len(CASES))])
def test_assert_close_matches_torch(actual, expected, kwargs):
    want, got = run_both(lambda m: outcome(lambda: m.testing.assert_close(convert(m, actual), convert(m, expected),
                                                                         **kwargs)))
    assert type(got) is type(want)
    # type names differ only in the module of the classes compared
    assert str(got).replace("flowlike.Tensor", "torch.Tensor") == str(want)


SPECIAL_UNARY = ["expit", "logit", "erf", "erfc", "erfinv", "expm1", "exp2", "log1p", "digamma", "psi", "gammaln",
                 "round", "sinc", "entr", "ndtr", "ndtri"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", SPECIAL_UNARY)
def test_special_unary_matches_torch(name, dtype):
    x = torch.tensor([-3.0, -1.5, -0.5, 0.0, 0.2, 0.5, 0.9, 1.0, 2.5, NAN, INF], dtype=getattr(torch, dtype))
    if name in ("erfinv", "ndtri", "logit"):
        x = torch.tensor([0.0, 0.01, 0.3, 0.5, 0.99, 1.0], dtype=getattr(torch, dtype))
    assert_same(getattr(fl.special, name)(to_flowlike(x)), getattr(torch.special, name)(x), rtol=1e-5, atol=1e-6)


def test_special_binary_and_int_inputs_match_torch():
    x = torch.tensor([0.0, 0.0, 1.0, 2.0, -1.0])
    y = torch.tensor([-1.0, NAN, 0.5, 3.0, 0.25])
    for name in ("xlogy", "xlog1py"):
        assert_same(getattr(fl.special, name)(to_flowlike(x), to_flowlike(y)), getattr(torch.special, name)(x, y))
    ints = torch.tensor([0, 1, 2, 3])
    for name in ("sinc", "entr", "ndtr", "expit"):
        assert_same(getattr(fl.special, name)(to_flowlike(ints)), getattr(torch.special, name)(ints))
    assert_same(fl.special.multigammaln(to_flowlike(torch.tensor([2.5, 4.0])), 3),
                torch.special.multigammaln(torch.tensor([2.5, 4.0]), 3))


@pytest.mark.parametrize("kwargs", [dict(low=3, high=2), dict(low=math.nan), dict(low=300, high=400),
                                    dict(requires_grad=True), dict(noncontiguous=True, memory_format=1)])
def test_make_tensor_argument_errors_match_torch(kwargs):
    want, got = run_both(lambda m: outcome(lambda: m.testing.make_tensor(3, dtype=m.uint8, device="cpu", **kwargs)))
    assert (type(got), str(got)) == (type(want), str(want))


def test_memory_formats():
    """Code passing memory formats runs: the names print as torch's, and every format gives torch's values."""
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    for name in ("contiguous_format", "preserve_format", "channels_last", "channels_last_3d"):
        assert repr(getattr(fl, name)) == repr(getattr(torch, name))
        assert isinstance(getattr(fl, name), fl.memory_format)
    for name in ("contiguous_format", "preserve_format", "channels_last"):
        f, t = fl.from_numpy(x), torch.from_numpy(x)
        got = [f.contiguous(memory_format=getattr(fl, name)), f.to(memory_format=getattr(fl, name)),
               f.clone(memory_format=getattr(fl, name)), fl.empty_like(f, memory_format=getattr(fl, name)).fill_(1)]
        want = [t.contiguous(memory_format=getattr(torch, name)), t.to(memory_format=getattr(torch, name)),
                t.clone(memory_format=getattr(torch, name)), torch.empty_like(t, memory_format=getattr(torch, name)).fill_(1)]
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w.numpy())
