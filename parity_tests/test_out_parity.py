"""out= arguments and in-place forms of the ops written in Python (flowlike/_out.py) against torch: a wrongly
shaped out is resized (with torch's deprecation warning when it had elements) and returned, the dtype rules
(cast where torch casts, an error where it refuses), no autograd through out=, and in-place results that must keep
self's shape and dtype."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers import check_both  # noqa: E402

X = np.random.default_rng(11).uniform(-0.9, 0.9, (4, 3)).astype(np.float32)

# composites (Python code on the C++ ops) that take out=, each called on a (4, 3) float32 x
COMPOSITES = {
    "lerp": lambda m, x, o: m.lerp(x, x * 2, 0.25, out=o),
    "addcmul": lambda m, x, o: m.addcmul(x, x, x, value=0.5, out=o),
    "addcdiv": lambda m, x, o: m.addcdiv(x, x, x.abs() + 1, value=2, out=o),
    "clamp": lambda m, x, o: m.clamp(x, -0.5, 0.5, out=o),
    "nan_to_num": lambda m, x, o: m.nan_to_num(m.log(x), out=o),
    "logit": lambda m, x, o: m.logit(x.sigmoid(), eps=1e-3, out=o),
    "deg2rad": lambda m, x, o: m.deg2rad(x, out=o),
    "sinc": lambda m, x, o: m.sinc(x, out=o),
    "ldexp": lambda m, x, o: m.ldexp(x, m.tensor([2]), out=o),
    "special.xlog1py": lambda m, x, o: m.special.xlog1py(x, x.abs(), out=o),
    "special.ndtr": lambda m, x, o: m.special.ndtr(x, out=o),
    "special.chebyshev_polynomial_t": lambda m, x, o: m.special.chebyshev_polynomial_t(x, 3, out=o),
    "conj_physical": lambda m, x, o: m.conj_physical(x, out=o),
    "matmul": lambda m, x, o: m.matmul(x, x.t(), out=o),
    "mm": lambda m, x, o: m.mm(x.t(), x, out=o),
    "addmm": lambda m, x, o: m.addmm(x[:3], x[:3], x[:3], beta=0.5, out=o),
    "outer": lambda m, x, o: m.outer(x[0], x[1], out=o),
    "kron": lambda m, x, o: m.kron(x, x[:2], out=o),
    "tensordot": lambda m, x, o: m.tensordot(x, x, dims=([0], [0]), out=o),
}
OUTS = {"non_empty_wrong_shape": lambda m: m.zeros(7), "empty": lambda m: m.empty(0),
        "wrong_rank": lambda m: m.zeros(2, 2, 2)}


def _resize_warnings(caught):
    # torch appends where in its C++ the warning was raised
    return [str(w.message).split(" (Triggered internally")[0] for w in caught if "resized" in str(w.message)]


def _call(name, lib, x, out):
    """(result is out, result, the resize warnings) of a composite writing into `out`."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = COMPOSITES[name](lib, x, out)
    return result is out, result, _resize_warnings(caught)


@pytest.mark.parametrize("kind", sorted(OUTS))
@pytest.mark.parametrize("name", sorted(COMPOSITES))
def test_wrongly_shaped_out_is_resized_with_torchs_warning(name, kind):
    want, got = check_both(lambda lib, x: _call(name, lib, x, OUTS[kind](lib)), X, rtol=1e-5, atol=1e-6)
    is_out, _, messages = want
    assert is_out
    # torch warns exactly when out had elements
    assert len(messages) == (kind != "empty") and all("was resized since it had shape" in m for m in messages)


@pytest.mark.parametrize("dtype", ["int64", "float64", "float16", "bool"])
@pytest.mark.parametrize("name", sorted(COMPOSITES))
def test_out_dtype_is_cast_or_refused_as_torch(name, dtype):
    check_both(lambda lib, x: _call(name, lib, x, lib.empty(0, dtype=getattr(lib, dtype))), X, rtol=1e-3, atol=1e-3)


# torch lets these (composites of out= ops in torch too) copy with history instead; flowlike refuses all alike
TORCH_GRAD_THROUGH_OUT = {"conj_physical", "special.chebyshev_polynomial_t", "special.ndtr", "tensordot"}


@pytest.mark.parametrize("name", sorted(set(COMPOSITES) - TORCH_GRAD_THROUGH_OUT))
def test_out_refuses_inputs_that_require_grad(name):
    want, _ = check_both(lambda lib, x: COMPOSITES[name](lib, x, lib.empty(0)), X, grad=True)
    assert isinstance(want, RuntimeError)


@pytest.mark.parametrize("name", sorted(COMPOSITES))
@pytest.mark.parametrize("out", [[1], (2,), 3.0], ids=["list", "tuple", "float"])
def test_out_that_is_not_a_tensor_is_a_type_error(name, out):
    want, _ = check_both(lambda lib, x: COMPOSITES[name](lib, x, out), X)
    assert isinstance(want, TypeError)


@pytest.mark.parametrize("outs", [lambda m: (m.zeros(5), m.zeros(5, dtype=m.int32)), lambda m: (m.empty(0), m.empty(0)),
                                  lambda m: (m.empty(0, dtype=m.float64), m.empty(0, dtype=m.int32))])
def test_tuple_out_of_frexp(outs):
    """Both outs resized with the warning, exact dtypes, returned."""
    def body(lib, x):
        out = outs(lib)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = lib.frexp(x, out=out)
        return [r is o for r, o in zip(result, out)], tuple(result), _resize_warnings(caught)
    check_both(body, X)


def test_tuple_out_of_histogram():
    """Both outs are resized (without a warning, as torch) and returned."""
    def body(lib, x):
        out = lib.zeros(2), lib.empty(0)
        result = lib.histogram(x, bins=5, out=out)
        return [r is o for r, o in zip(result, out)], tuple(result)
    check_both(body, X)


# factories fill out= in out's dtype; the random ones are compared on everything but their values
FACTORIES = {
    "zeros": lambda m, o: m.zeros(2, 3, out=o), "ones": lambda m, o: m.ones(4, out=o),
    "full": lambda m, o: m.full((2, 2), 1.5, out=o), "arange": lambda m, o: m.arange(1, 7, 2, out=o),
    "linspace": lambda m, o: m.linspace(0, 4, 5, out=o), "logspace": lambda m, o: m.logspace(0, 2, 3, out=o),
    "eye": lambda m, o: m.eye(3, 2, out=o), "range": lambda m, o: m.range(0, 4, out=o),
    "norm": lambda m, o: m.norm(m.arange(4.0), out=o),
    "empty": lambda m, o: m.empty(3, out=o), "rand": lambda m, o: m.rand(2, 5, out=o),
    "randn": lambda m, o: m.randn(3, out=o), "randint": lambda m, o: m.randint(5, (4,), out=o),
    "randperm": lambda m, o: m.randperm(6, out=o), "normal": lambda m, o: m.normal(0.0, 1.0, (2,), out=o),
    "bernoulli": lambda m, o: m.bernoulli(m.full((2, 2), 0.5), out=o),
}
RANDOM = {"empty", "rand", "randn", "randint", "randperm", "normal", "bernoulli"}


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("kind", sorted(OUTS))
@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_factories_fill_out_as_torch(name, kind, dtype):
    def body(lib):
        out = OUTS[kind](lib).to(getattr(lib, dtype))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = FACTORIES[name](lib, out)
        values = result is out if name in RANDOM else (result is out, out)
        return values, tuple(out.shape), str(out.dtype), _resize_warnings(caught)
    check_both(body)


@pytest.mark.parametrize("call", [lambda m, x, o: m.add(x, 1, out=o), lambda m, x, o: m.cat([x, x], out=o)])
def test_cpp_ops_warn_when_resizing_out(call):
    def body(lib, x):
        out = lib.zeros(7)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call(lib, x, out)
        return _resize_warnings(caught)
    check_both(body, X)


INPLACE = {
    "lerp_": lambda x, y: x.lerp_(y, 0.5),
    "addcmul_": lambda x, y: x.addcmul_(y, y),
    "clamp_": lambda x, y: x.clamp_(min=y),
    "logit_": lambda x, y: x.logit_(),
    "cumsum_": lambda x, y: x.cumsum_(0),
    "addmm_": lambda x, y: x.addmm_(y, y.t()),
    "index_reduce_": lambda x, y: x.index_reduce_(0, x.new_tensor([0]).long(), y[:1], "amax"),
}


@pytest.mark.parametrize("shapes", [((4, 3), (4, 3)), ((3,), (4, 3)), ((3, 3), (3, 3)), ((1, 3), (4, 3))])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_keeps_self_shape_and_dtype_as_torch(name, dtype, shapes):
    """A result that would broadcast self up, or whose dtype self cannot hold, is refused as torch refuses it."""
    x, y = (np.random.default_rng(i).uniform(0.1, 0.9, s).astype(np.float32) for i, s in enumerate(shapes))

    def body(lib, a, b):
        a = a.to(getattr(lib, dtype))
        return INPLACE[name](a, b), a
    check_both(body, x, y, rtol=1e-5, atol=1e-6)
