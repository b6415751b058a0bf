"""The float8 dtypes (e4m3fn, e5m2, e4m3fnuz, e5m2fnuz, e8m0fnu) against torch 2.13's CPU build: conversions bit
for bit (every code to float, a dense float32 sweep and float64 values back, casts with every dtype), the ops
torch runs on them and the errors of those it refuses, promotion, repr, finfo, torch.save/load, safetensors,
dlpack and torch._scaled_mm."""
import copy
import pickle
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402

from helpers import assert_same_error, outcome, run_both  # noqa: E402

NAMES = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"]
OTHERS = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]


def lib_of(t):
    return torch if isinstance(t, torch.Tensor) else fl


def codes(lib, name, values=None):
    """A lib tensor of float8 type `name` holding the given codes (all 256 by default)."""
    values = np.arange(256) if values is None else np.asarray(values)
    return lib.from_numpy(values.astype(np.uint8)).view(getattr(lib, name))


def comparable(t):
    """A numpy array to compare a tensor of either library by: the bytes of a float8 tensor, the float32 widening
    of bfloat16, the values otherwise."""
    lib = lib_of(t)
    t = t.detach()
    name = str(t.dtype).split(".")[-1]
    if name.startswith("float8"):
        return t.contiguous().view(lib.uint8).numpy()
    return (t.float() if name == "bfloat16" else t).numpy()


def assert_same_result(got, want):
    """Results of the same body with flowlike and torch are the same: tensors by dtype, shape and values (float8
    bit for bit, NaN equal to NaN), numbers and containers item by item."""
    if isinstance(want, torch.Tensor):
        assert isinstance(got, fl.Tensor), f"torch gave a tensor, flowlike {type(got).__name__}"
        assert str(got.dtype) == str(want.dtype) and tuple(got.shape) == tuple(want.shape)
        np.testing.assert_array_equal(comparable(got), comparable(want))
    elif isinstance(want, torch.dtype):
        assert str(got) == str(want)
    elif isinstance(want, torch.Size):
        assert isinstance(got, fl.Size) and tuple(got) == tuple(want)
    elif isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            assert_same_result(g, w)
    elif isinstance(want, float) and want != want:
        assert got != got
    else:
        assert got == want and type(got) is type(want), (got, want)


def check(body):
    """body(lib) with both libraries: the same result, or the same class of exception."""
    want, got = outcome(lambda: body(torch)), outcome(lambda: body(fl))
    if want is not None:
        assert_same_error(want, got)
        return
    if got is not None:
        raise AssertionError(f"torch ran, flowlike raised {type(got).__name__}: {got}")
    assert_same_result(body(fl), body(torch))


# ---- conversions ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_every_code_widens_as_torch(name):
    def body(lib):
        c = codes(lib, name)
        return c.float().view(lib.int32).numpy(), c.double().view(lib.int64).numpy(), c.half().view(lib.int16).numpy()
    for w, g in zip(*run_both(body)):
        np.testing.assert_array_equal(g, w)  # bit for bit, NaN payloads included


def float32_sweep():
    """Every float32 with its low 8 bits zero (so every tie of the 2- and 3-bit mantissas and e8m0's exponent
    rounding, the subnormals, both zeros, the overflow boundaries, inf and nan), and for every top 16 bits the
    values one above and below the half-way points of the low bits."""
    dense = np.arange(1 << 24, dtype=np.uint32) << np.uint32(8)
    near = (np.arange(1 << 16, dtype=np.uint32) << np.uint32(16))[:, None] | np.array(
        [1, 0x7fff, 0x8000, 0x8001, 0xffff], dtype=np.uint32)
    return np.concatenate([dense, near.ravel()]).view(np.float32)


@pytest.fixture(scope="module")
def sweep():
    return float32_sweep()


@pytest.mark.parametrize("name", NAMES)
def test_float32_rounds_to_float8_as_torch(name, sweep):
    def body(lib):
        return lib.from_numpy(sweep).to(getattr(lib, name)).view(lib.uint8).numpy()
    want, got = run_both(body)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, (f"{bad.size} of {sweep.size} values differ, e.g. float32 bits "
                           f"{[hex(b) for b in sweep[bad[:5]].view(np.uint32)]}: torch {want[bad[:5]]}, "
                           f"flowlike {got[bad[:5]]}")


@pytest.mark.parametrize("name", NAMES)
def test_float64_rounds_through_float32_as_torch(name, sweep):
    # doubles just off float32 values: torch rounds them to float first (double rounding), as flowlike must
    base = sweep[::97].astype(np.float64)
    values = np.concatenate([base, base * (1 + 2.0 ** -35), base * (1 - 2.0 ** -35), base * (1 + 2.0 ** -25)])
    want, got = run_both(lambda lib: lib.from_numpy(values).to(getattr(lib, name)).view(lib.uint8).numpy())
    np.testing.assert_array_equal(got, want)


def source_values(other):
    """Values of dtype `other` (numpy, or float32 for bfloat16) to cast to float8: specials and the formats'
    boundaries for the floating types, the range for the integer ones."""
    if other == "bool":
        return np.array([True, False, True])
    if other.startswith(("int", "uint")):
        info = np.iinfo(np.dtype(other))
        return np.array([0, 1, -1, 2, 3, 7, 100, 127, -128, 255, 300, 1000, 30000, 60000, -60000, info.min, info.max],
                        dtype=np.int64).clip(info.min, info.max).astype(other)
    if other in ("float16", "bfloat16"):  # as bits, so that both libraries start from the same values
        bits = source_values("float32").view(np.uint32) >> np.uint32(16)
        if other == "float16":
            bits = source_values("float32").astype(np.float16).view(np.uint16)
        return bits.astype(np.uint16).view(np.int16)
    real = np.array([0.0, -0.0, 1.0, -1.0, 0.3, 2.5, -3.75, 255.0, 300.0, 448.0, 449.0, 464.0, 480.0, 57344.0, 61440.0,
                     65504.0, 1e6, -1e6, 1e-3, 2.0 ** -9, 2.0 ** -10, 2.0 ** -17, 3e-5, np.inf, -np.inf, np.nan])
    if other.startswith("complex"):
        return (real + 1j * real[::-1]).astype(other)
    return real.astype("float32" if other == "bfloat16" else other)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("other", OTHERS + NAMES)
def test_casts_between_float8_and_every_dtype_match_torch(name, other):
    def from_float8(lib):
        return codes(lib, name).to(getattr(lib, other))

    def to_float8(lib):
        if other in NAMES:
            t = codes(lib, other)
        elif other in ("float16", "bfloat16"):
            t = lib.from_numpy(source_values(other)).view(getattr(lib, other))
        else:
            t = lib.from_numpy(source_values(other)).to(getattr(lib, other))
        return t.to(getattr(lib, name))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # complex -> real discards the imaginary part, in both libraries
        check(from_float8)
        check(to_float8)


@pytest.mark.parametrize("name", NAMES)
def test_copy_into_and_from_float8_matches_torch(name):
    def body(lib):
        d = getattr(lib, name)
        x = lib.from_numpy(source_values("float32"))
        into = lib.empty(x.shape, dtype=d).copy_(x)
        out = lib.empty(x.shape, dtype=lib.float64).copy_(into)
        strided = lib.empty(4, 6, dtype=d)
        strided.t().copy_(lib.arange(24.0).reshape(6, 4))
        return into, out, strided
    check(body)


# ---- ops --------------------------------------------------------------------------------------------------------

def _name(d):
    return str(d).split(".")[-1]


def _x(lib, d):
    return lib.tensor([1.0, 2.0, -0.5, 3.0, 0.0, 448.0]).to(d)


def _ints(lib, d, shape):
    """Small integers (exact in every format, their products summing exactly in float32) of dtype d."""
    return lib.from_numpy(np.random.default_rng(len(shape)).integers(-3, 4, shape).astype(np.float32)).to(d)


def _m(lib):
    return lib.tensor([True, False, True, False, True, False])


OPS = {
    # creation
    "empty": lambda lib, d: lib.empty(2, 3, dtype=d).shape,
    "zeros": lambda lib, d: lib.zeros(2, 3, dtype=d),
    "ones": lambda lib, d: lib.ones(3, dtype=d),
    "full": lambda lib, d: lib.full((2,), 3.0, dtype=d),
    "full_zero": lambda lib, d: lib.full((2,), 0.0, dtype=d),
    "full_negative": lambda lib, d: lib.full((2,), -3.0, dtype=d),
    "full_overflow": lambda lib, d: lib.full((2,), 1000.0, dtype=d),
    "full_inf": lambda lib, d: lib.full((2,), float("inf"), dtype=d),
    "full_nan": lambda lib, d: lib.full((2,), float("nan"), dtype=d),
    "fill_huge": lambda lib, d: lib.empty(2, dtype=d).fill_(1e6),
    "fill_tensor": lambda lib, d: lib.empty(2, dtype=d).fill_(lib.tensor(1e6)),
    "tensor": lambda lib, d: lib.tensor([1.0, 300.0, 1e6, -0.0], dtype=d),
    "tensor_ints": lambda lib, d: lib.tensor([1, 2, 1000], dtype=d),
    "tensor_scalar": lambda lib, d: lib.tensor(2.5, dtype=d),
    "eye": lambda lib, d: lib.eye(3, dtype=d),
    "zeros_like": lambda lib, d: lib.zeros_like(_x(lib, d)),
    "ones_like": lambda lib, d: lib.ones_like(_x(lib, d)),
    "full_like": lambda lib, d: lib.full_like(_x(lib, d), 2),
    "new_zeros": lambda lib, d: _x(lib, d).new_zeros(2),
    "new_full": lambda lib, d: _x(lib, d).new_full((2,), 1000.0),
    "randn": lambda lib, d: lib.randn(2, dtype=d),
    "rand": lambda lib, d: lib.rand(2, dtype=d),
    "arange": lambda lib, d: lib.arange(3, dtype=d),
    "linspace": lambda lib, d: lib.linspace(0, 1, 3, dtype=d),
    # reading values
    "item": lambda lib, d: _x(lib, d)[1].item(),
    "item_code0": lambda lib, d: codes(lib, _name(d), [0]).item(),
    "tolist": lambda lib, d: _x(lib, d).tolist(),
    "tolist_codes": lambda lib, d: codes(lib, _name(d)).tolist(),
    "float_of": lambda lib, d: float(_x(lib, d)[3]),
    "int_of": lambda lib, d: int(_x(lib, d)[3]),
    "bool_of": lambda lib, d: bool(_x(lib, d)[3]),
    "numpy": lambda lib, d: _x(lib, d).numpy(),
    "bool": lambda lib, d: codes(lib, _name(d)).bool(),
    # copies and views
    "clone": lambda lib, d: _x(lib, d).clone(),
    "contiguous": lambda lib, d: _x(lib, d).reshape(2, 3).t().contiguous(),
    "reshape": lambda lib, d: _x(lib, d).reshape(3, 2),
    "permute": lambda lib, d: _x(lib, d).reshape(1, 2, 3).permute(2, 0, 1).contiguous(),
    "narrow": lambda lib, d: _x(lib, d).narrow(0, 1, 3),
    "unsqueeze": lambda lib, d: _x(lib, d).unsqueeze(0),
    "flatten": lambda lib, d: _x(lib, d).reshape(2, 3).flatten(),
    "unfold": lambda lib, d: _x(lib, d).unfold(0, 2, 1),
    "as_strided": lambda lib, d: _x(lib, d).as_strided((2,), (2,)),
    "expand": lambda lib, d: _x(lib, d)[None].expand(2, 6).contiguous(),
    "split": lambda lib, d: _x(lib, d).split(4),
    "unbind": lambda lib, d: _x(lib, d).unbind(),
    "view_uint8": lambda lib, d: _x(lib, d).view(lib.uint8),
    "view_int8": lambda lib, d: _x(lib, d).view(lib.int8),
    "view_other_float8": lambda lib, d: _x(lib, d).view(lib.float8_e5m2),
    "diagonal": lambda lib, d: _x(lib, d)[:4].reshape(2, 2).diagonal(),
    "repeat": lambda lib, d: _x(lib, d).repeat(2),
    "tile": lambda lib, d: _x(lib, d).tile(2),
    "roll": lambda lib, d: _x(lib, d).roll(1),
    "flip": lambda lib, d: _x(lib, d).flip(0),
    "deepcopy": lambda lib, d: copy.deepcopy(_x(lib, d)),
    # indexing
    "index_int": lambda lib, d: _x(lib, d)[2],
    "index_slice": lambda lib, d: _x(lib, d)[1::2],
    "index_tensor": lambda lib, d: _x(lib, d)[lib.tensor([0, 2, 5])],
    "index_bool": lambda lib, d: _x(lib, d)[_m(lib)],
    "index_select": lambda lib, d: _x(lib, d).index_select(0, lib.tensor([3, 0])),
    "masked_select": lambda lib, d: _x(lib, d).masked_select(_m(lib)),
    "setitem_number": lambda lib, d: _setitem(_x(lib, d), 0, 5.0),
    "setitem_huge": lambda lib, d: _setitem(_x(lib, d), 0, 1e6),
    "setitem_slice": lambda lib, d: _setitem(_x(lib, d), slice(1, 3), _x(lib, d)[:2]),
    "setitem_tensor_index": lambda lib, d: _setitem(_x(lib, d), lib.tensor([0]), 5.0),
    "index_put": lambda lib, d: _x(lib, d).index_put_((lib.tensor([1]),), lib.tensor([7.0]).to(d)),
    "gather": lambda lib, d: _x(lib, d).gather(0, lib.tensor([1, 0])),
    "scatter": lambda lib, d: _x(lib, d).scatter(0, lib.tensor([1, 0]), _x(lib, d)),
    "take": lambda lib, d: _x(lib, d).take(lib.tensor([0])),
    "masked_fill": lambda lib, d: _x(lib, d).masked_fill(_m(lib), 1.0),
    "index_fill": lambda lib, d: _x(lib, d).index_fill(0, lib.tensor([0]), 2.0),
    "index_copy": lambda lib, d: _x(lib, d).index_copy(0, lib.tensor([0]), _x(lib, d)[:1]),
    "nonzero": lambda lib, d: _x(lib, d).nonzero(),
    # joining, where
    "cat": lambda lib, d: lib.cat([_x(lib, d), _x(lib, d)[:2]]),
    "cat_mixed": lambda lib, d: lib.cat([_x(lib, d), _x(lib, d).float()]),
    "stack": lambda lib, d: lib.stack([_x(lib, d), _x(lib, d)]),
    "where": lambda lib, d: lib.where(_m(lib), _x(lib, d), _x(lib, d)[[5, 4, 3, 2, 1, 0]]),
    "where_scalar": lambda lib, d: lib.where(_m(lib), _x(lib, d), 0.0),
    "where_huge_scalar": lambda lib, d: lib.where(_m(lib), _x(lib, d), 1e6),
    "where_mixed": lambda lib, d: lib.where(_m(lib), _x(lib, d), _x(lib, d).float()),
    # comparison and tests
    "eq": lambda lib, d: _x(lib, d) == _x(lib, d)[[1, 1, 2, 3, 4, 0]],
    "ne": lambda lib, d: _x(lib, d) != _x(lib, d)[[1, 1, 2, 3, 4, 0]],
    "eq_number": lambda lib, d: _x(lib, d) == 2.0,
    "eq_huge_number": lambda lib, d: _x(lib, d) == 1e6,
    "ne_int_number": lambda lib, d: _x(lib, d) != 2,
    "eq_0d_float32": lambda lib, d: _x(lib, d) == lib.tensor(1.0),
    "eq_nan": lambda lib, d: codes(lib, _name(d)) == codes(lib, _name(d)),
    "eq_float32": lambda lib, d: _x(lib, d) == _x(lib, d).float(),
    "eq_int64": lambda lib, d: _x(lib, d) == lib.ones(6, dtype=lib.int64),
    "eq_bool": lambda lib, d: _x(lib, d) == _m(lib),
    "eq_e5m2": lambda lib, d: _x(lib, d) == _x(lib, lib.float8_e5m2),
    "eq_out": lambda lib, d: lib.eq(_x(lib, d), _x(lib, d), out=lib.empty(6)),
    "lt": lambda lib, d: _x(lib, d) < _x(lib, d),
    "gt_number": lambda lib, d: _x(lib, d) > 1,
    "equal": lambda lib, d: lib.equal(_x(lib, d), _x(lib, d)),
    "allclose": lambda lib, d: lib.allclose(_x(lib, d), _x(lib, d)),
    "isnan": lambda lib, d: codes(lib, _name(d)).isnan(),
    "isinf": lambda lib, d: codes(lib, _name(d)).isinf(),
    "isfinite": lambda lib, d: codes(lib, _name(d)).isfinite(),
    "isneginf": lambda lib, d: _x(lib, d).isneginf(),
    "signbit": lambda lib, d: _x(lib, d).signbit(),
    "any": lambda lib, d: _x(lib, d).any(),
    "all": lambda lib, d: _x(lib, d).all(),
    "all_codes": lambda lib, d: [codes(lib, _name(d), [c]).all().item() for c in range(256)],
    "any_dim": lambda lib, d: codes(lib, _name(d)).reshape(16, 16).any(dim=1),
    "setitem_mask": lambda lib, d: _setitem(_x(lib, d), _m(lib), 5.0),
    "logspace": lambda lib, d: lib.logspace(0, 1, 3, dtype=d),
    "to_complex": lambda lib, d: d.to_complex(),
    # arithmetic: torch has abs and the product of two tensors, nothing else
    "abs": lambda lib, d: codes(lib, _name(d)).abs(),
    "abs_out": lambda lib, d: lib.abs(_x(lib, d), out=lib.empty(6, dtype=d)),
    "neg": lambda lib, d: -_x(lib, d),
    "mul": lambda lib, d: codes(lib, _name(d)) * codes(lib, _name(d), np.arange(255, -1, -1)),
    "mul_broadcast": lambda lib, d: _x(lib, d).reshape(6, 1) * _x(lib, d).reshape(1, 6),
    "mul_first_one_element": lambda lib, d: _x(lib, d)[:1] * _x(lib, d),
    "mul_second_one_element": lambda lib, d: _x(lib, d) * _x(lib, d)[:1],
    "mul_number": lambda lib, d: _x(lib, d) * 2,
    "mul_out_float32": lambda lib, d: lib.mul(_x(lib, d), _x(lib, d), out=lib.empty(6)),
    "mul_": lambda lib, d: _x(lib, d).mul_(_x(lib, d)),
    "mul_float32": lambda lib, d: _x(lib, d) * _x(lib, d).float(),
    "mul_e5m2": lambda lib, d: _x(lib, d) * _x(lib, lib.float8_e5m2),
    "matmul": lambda lib, d: _ints(lib, d, (4, 6)) @ _ints(lib, d, (6, 3)),
    "matmul_batched": lambda lib, d: _ints(lib, d, (2, 4, 6)) @ _ints(lib, d, (6, 3)),
    "matmul_vector": lambda lib, d: _ints(lib, d, (4, 6)) @ _ints(lib, d, (6,)),
    "mm_transposed": lambda lib, d: lib.mm(_ints(lib, d, (6, 4)).t(), _ints(lib, d, (6, 3))),
    "matmul_row_vector": lambda lib, d: _ints(lib, d, (6,)) @ _ints(lib, d, (6, 3)),
    "matmul_dot": lambda lib, d: _ints(lib, d, (6,)) @ _ints(lib, d, (6,)),
    "matmul_batched_vector": lambda lib, d: _ints(lib, d, (2, 4, 6)) @ _ints(lib, d, (6,)),
    "matmul_broadcast": lambda lib, d: _ints(lib, d, (2, 4, 6)) @ _ints(lib, d, (2, 6, 3)),
    "mv": lambda lib, d: lib.mv(_ints(lib, d, (4, 6)), _ints(lib, d, (6,))),
    "bmm": lambda lib, d: lib.bmm(_ints(lib, d, (2, 4, 6)), _ints(lib, d, (2, 6, 3))),
    "masked_scatter": lambda lib, d: _x(lib, d).masked_scatter(_m(lib), _x(lib, d)),
    "add": lambda lib, d: _x(lib, d) + _x(lib, d),
    "add_number": lambda lib, d: _x(lib, d) + 1,
    "sub": lambda lib, d: _x(lib, d) - _x(lib, d),
    "div": lambda lib, d: _x(lib, d) / _x(lib, d),
    "exp": lambda lib, d: _x(lib, d).exp(),
    "sqrt": lambda lib, d: _x(lib, d).sqrt(),
    "sign": lambda lib, d: _x(lib, d).sign(),
    "relu": lambda lib, d: lib.relu(_x(lib, d)),
    "clamp": lambda lib, d: _x(lib, d).clamp(0, 1),
    "maximum": lambda lib, d: lib.maximum(_x(lib, d), _x(lib, d)),
    "sum": lambda lib, d: _x(lib, d).sum(),
    "sum_dtype": lambda lib, d: _x(lib, d).sum(dtype=lib.float32),
    "mean": lambda lib, d: _x(lib, d).mean(),
    "max": lambda lib, d: _x(lib, d).max(),
    "argmax": lambda lib, d: _x(lib, d).argmax(),
    "sort": lambda lib, d: _x(lib, d).sort(),
    "cumsum": lambda lib, d: _x(lib, d).cumsum(0),
    "unique": lambda lib, d: _x(lib, d).unique(),
    "tril": lambda lib, d: _x(lib, d)[:4].reshape(2, 2).tril(),
    # padding moves values: torch has the constant (range-checked value) and circular forms
    "pad_constant": lambda lib, d: lib.nn.functional.pad(_x(lib, d).reshape(1, 2, 3), (1, 2), value=2.0),
    "pad_constant_zero": lambda lib, d: lib.nn.functional.pad(_x(lib, d).reshape(1, 2, 3), (1, 1)),
    "pad_constant_overflow": lambda lib, d: lib.nn.functional.pad(_x(lib, d).reshape(1, 2, 3), (1, 1), value=1e6),
    "pad_circular": lambda lib, d: lib.nn.functional.pad(_x(lib, d).reshape(1, 2, 3), (1, 1), mode="circular"),
    "pad_reflect": lambda lib, d: lib.nn.functional.pad(_x(lib, d).reshape(1, 2, 3), (1, 1), mode="reflect"),
    "pad_replicate": lambda lib, d: lib.nn.functional.pad(_x(lib, d).reshape(1, 2, 3), (1, 1), mode="replicate"),
    # promotion and metadata
    "result_type_float32": lambda lib, d: lib.result_type(_x(lib, d), _x(lib, d).float()),
    "result_type_number": lambda lib, d: lib.result_type(_x(lib, d), 1.0),
    "promote_self": lambda lib, d: lib.promote_types(d, d),
    "promote_float32": lambda lib, d: lib.promote_types(d, lib.float32),
    "promote_int64": lambda lib, d: lib.promote_types(lib.int64, d),
    "promote_bool": lambda lib, d: lib.promote_types(d, lib.bool),
    "promote_e5m2": lambda lib, d: lib.promote_types(d, lib.float8_e5m2),
    "can_cast_to_float32": lambda lib, d: lib.can_cast(d, lib.float32),
    "can_cast_from_float32": lambda lib, d: lib.can_cast(lib.float32, d),
    "can_cast_to_int32": lambda lib, d: lib.can_cast(d, lib.int32),
    "dtype_properties": lambda lib, d: (str(d), d.itemsize, d.is_floating_point, d.is_complex, d.is_signed),
    "tensor_metadata": lambda lib, d: (_x(lib, d).element_size(), _x(lib, d).is_floating_point(), _x(lib, d).nbytes,
                                       _x(lib, d).itemsize, _x(lib, d).type()),
    "requires_grad": lambda lib, d: _x(lib, d).requires_grad_().requires_grad,
}


def _setitem(t, index, value):
    t[index] = value
    return t


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("op", sorted(OPS))
def test_op_matches_torch(op, name):
    check(lambda lib: OPS[op](lib, getattr(lib, name)))


# ---- repr, finfo ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_repr_matches_torch(name):
    rng = np.random.default_rng(0)
    cases = [np.array([1.0, 2.0, -0.5, 3.0]), np.array([1e-3, 100.0, 448.0]), np.array([np.nan, np.inf, 1.0]),
             np.array([[1.0, 0.0], [7.0, -2.0]]), np.zeros(0), np.array(2.5), rng.standard_normal(2000) * 10,
             rng.standard_normal((3, 4)) * 1e-3]
    for values in cases:
        want, got = run_both(lambda lib: repr(lib.from_numpy(values).to(getattr(lib, name))))
        assert got == want
    for code_set in ([0, 1], [0, 0], [127, 128, 255], list(range(0, 256, 5))):
        want, got = run_both(lambda lib: repr(codes(lib, name, code_set)))
        assert got == want
    want, got = run_both(lambda lib: repr(lib.ones(2, dtype=getattr(lib, name), requires_grad=True)))
    assert got == want


@pytest.mark.parametrize("name", NAMES)
def test_finfo_matches_torch(name):
    fields = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")
    want, got = run_both(lambda lib: lib.finfo(getattr(lib, name)))
    assert [getattr(got, f) for f in fields] == [getattr(want, f) for f in fields]


# ---- files ------------------------------------------------------------------------------------------------------

def _float8_state(lib):
    return {name: codes(lib, name).reshape(16, 16)[::2, 1:] for name in NAMES}


def _assert_state_equal(got, want):
    assert sorted(got) == sorted(want)
    for k in want:
        assert_same_result(got[k], want[k])


def test_torch_saved_float8_tensors_load_in_flowlike_and_back(tmp_path):
    want = _float8_state(torch)
    torch.save(want, tmp_path / "t.pt")
    got = fl.load(tmp_path / "t.pt", weights_only=True)
    _assert_state_equal(got, want)
    fl.save(got, tmp_path / "f.pt")  # (torch 2.13 cannot read float8 tensors back from its legacy format)
    _assert_state_equal(got, torch.load(tmp_path / "f.pt", weights_only=True))


def test_float8_tensors_pickle_and_deepcopy_in_flowlike():
    state = _float8_state(fl)
    for k, v in pickle.loads(pickle.dumps(state)).items():
        np.testing.assert_array_equal(comparable(v), comparable(state[k]))
        assert v.dtype == state[k].dtype
    for k, v in copy.deepcopy(state).items():
        np.testing.assert_array_equal(comparable(v), comparable(state[k]))


def test_safetensors_float8_files_move_between_torch_and_flowlike(tmp_path):
    pytest.importorskip("safetensors")
    from safetensors.torch import load_file, save_file
    from flowlike.compat import mock_torch
    want = {k: v.contiguous() for k, v in _float8_state(torch).items()}
    save_file(want, str(tmp_path / "t.safetensors"))
    with mock_torch():  # safetensors.torch runs on flowlike
        from safetensors.torch import load_file as fl_load, save_file as fl_save
        got = fl_load(str(tmp_path / "t.safetensors"))
        fl_save(got, str(tmp_path / "f.safetensors"))
    _assert_state_equal(got, want)
    _assert_state_equal(load_file(str(tmp_path / "f.safetensors")), want)
    # flowlike's own reader and writer (flowlike.serialization), same files
    from flowlike.serialization import _load_safetensors, _save_safetensors
    _assert_state_equal(_load_safetensors(str(tmp_path / "t.safetensors")), want)
    _save_safetensors(got, str(tmp_path / "g.safetensors"))
    _assert_state_equal(load_file(str(tmp_path / "g.safetensors")), want)


@pytest.mark.parametrize("name", NAMES)
def test_dlpack_exchanges_float8_with_torch(name):
    t = codes(torch, name)
    got = fl.from_dlpack(t)
    assert_same_result(got, t)
    back = torch.from_dlpack(codes(fl, name))
    assert_same_result(codes(fl, name), back)


# ---- torch._scaled_mm --------------------------------------------------------------------------------------------

def _ints(rng, shape):
    return rng.integers(-3, 4, shape).astype(np.float32)  # exact in every format but e8m0, products sum exactly


SCALED_MM = {
    "tensorwise": lambda lib, a, b: lib._scaled_mm(a, b, lib.tensor(2.0), lib.tensor(0.5)),
    "one_element_scales": lambda lib, a, b: lib._scaled_mm(a, b, lib.ones(1), lib.ones(1) * 4),
    "out_float32": lambda lib, a, b: lib._scaled_mm(a, b, lib.tensor(0.25), lib.tensor(3.0), out_dtype=lib.float32),
    "out_bfloat16_bias": lambda lib, a, b: lib._scaled_mm(a, b, lib.tensor(1.0), lib.tensor(1.0),
                                                         bias=lib.ones(b.shape[1], dtype=lib.bfloat16) * 3,
                                                         out_dtype=lib.bfloat16),
    "out_float16": lambda lib, a, b: lib._scaled_mm(a, b, lib.tensor(1.0), lib.tensor(1.0), out_dtype=lib.float16),
    "out_int32": lambda lib, a, b: lib._scaled_mm(a, b, lib.tensor(1.0), lib.tensor(1.0), out_dtype=lib.int32),
    "scale_result": lambda lib, a, b: lib._scaled_mm(a, b, lib.tensor(1.0), lib.tensor(1.0),
                                                     scale_result=lib.tensor(4.0), out_dtype=lib.float8_e4m3fn),
    "scale_result_ignored": lambda lib, a, b: lib._scaled_mm(a, b, lib.tensor(1.0), lib.tensor(1.0),
                                                             scale_result=lib.tensor(4.0), out_dtype=lib.float32),
    "rowwise": lambda lib, a, b: lib._scaled_mm(a, b, lib.arange(1.0, a.shape[0] + 1).reshape(-1, 1),
                                                lib.arange(1.0, b.shape[1] + 1).reshape(1, -1) / 4,
                                                out_dtype=lib.float32),
    "mixed_formats": lambda lib, a, b: lib._scaled_mm(a, b.to(lib.float8_e5m2), lib.tensor(1.0), lib.tensor(1.0),
                                                      out_dtype=lib.float32),
    "float_inputs": lambda lib, a, b: lib._scaled_mm(a.float(), b, lib.tensor(1.0), lib.tensor(1.0)),
    "float64_scale": lambda lib, a, b: lib._scaled_mm(a, b, lib.tensor(1.0, dtype=lib.float64), lib.tensor(1.0)),
    "vector_scales": lambda lib, a, b: lib._scaled_mm(a, b, lib.ones(a.shape[0]), lib.ones(b.shape[1])),
    "shapes": lambda lib, a, b: lib._scaled_mm(a, a, lib.tensor(1.0), lib.tensor(1.0)),
    "not_a_matrix": lambda lib, a, b: lib._scaled_mm(a[None], b, lib.tensor(1.0), lib.tensor(1.0)),
    "bias_size": lambda lib, a, b: lib._scaled_mm(a, b, lib.tensor(1.0), lib.tensor(1.0), bias=lib.ones(2),
                                                  out_dtype=lib.float32),
}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("case", sorted(SCALED_MM))
def test_scaled_mm_matches_torch(case, name):
    rng = np.random.default_rng(1)
    a, b = _ints(rng, (5, 8)), _ints(rng, (6, 8))

    def body(lib):
        d = getattr(lib, name)
        return SCALED_MM[case](lib, lib.from_numpy(a).to(d), lib.from_numpy(b).to(d).t())
    check(body)


def test_scaled_mm_accumulates_random_values_in_float32():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((16, 64)).astype(np.float32), rng.standard_normal((32, 64)).astype(np.float32)

    def body(lib):
        d = lib.float8_e4m3fn
        return lib._scaled_mm(lib.from_numpy(a).to(d), lib.from_numpy(b).to(d).t(), lib.tensor(0.37), lib.tensor(1.9),
                              bias=lib.from_numpy(a[0, :32].copy()), out_dtype=lib.float32).numpy()
    want, got = run_both(body)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)

