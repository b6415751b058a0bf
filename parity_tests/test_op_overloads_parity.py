"""Overloaded op faces (csrc/python/bind_ops.cpp, Note [Overloads]) and numpy's axis=/keepdims= spellings of the
reductions, against real PyTorch: which overload a call binds to (values, dtypes, gradients) and the TypeError,
with its first line, when none binds."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import flowlike as fl  # noqa: E402,F401
from helpers import assert_raises_same, check_both  # noqa: E402

A = np.arange(6, dtype=np.float32).reshape(2, 3)

BINDS = {
    "fill_number": lambda m, x: x.clone().fill_(2.5),
    "fill_int": lambda m, x: x.clone().fill_(3),
    "fill_bool": lambda m, x: x.clone().fill_(True),
    "fill_0dim_tensor": lambda m, x: x.clone().fill_(m.tensor(4.0)),
    "fill_keyword": lambda m, x: x.clone().fill_(value=m.tensor(1.5, dtype=m.float64)),
    "view_spread": lambda m, x: x.view(3, 2),
    "view_tuple": lambda m, x: x.view((6,)),
    "view_keyword": lambda m, x: x.view(size=[-1]),
    "view_dtype": lambda m, x: x.view(m.int32),
    "view_dtype_keyword": lambda m, x: x.view(dtype=m.int16),
    "reshape_spread": lambda m, x: x.reshape(3, -1),
    "reshape_function": lambda m, x: m.reshape(x, (6,)),
    "permute_spread": lambda m, x: x.permute(1, 0),
    "permute_function": lambda m, x: m.permute(x, dims=[1, 0]),
}


@pytest.mark.parametrize("name", sorted(BINDS))
def test_overload_chosen(name):
    check_both(BINDS[name], A, exact=True, strides=True)


def test_fill_tensor_overload_carries_the_gradient():
    check_both(lambda m, x, v: x.clone().fill_(v.sum()) * 2, A, np.float32(3), grad=True)


ERRORS = {
    "fill_str": lambda m, x: x.fill_("a"),
    "fill_str_keyword": lambda m, x: x.fill_(value="a"),
    "fill_two": lambda m, x: x.fill_(1, 2),
    "fill_none": lambda m, x: x.fill_(),
    "fill_unknown_keyword": lambda m, x: x.fill_(m.tensor(1.0), foo=3),
    "view_str": lambda m, x: x.view("a"),
    "view_float": lambda m, x: x.view(1.5),
    "view_none": lambda m, x: x.view(None),
    "view_float_list": lambda m, x: x.view([1.5]),
    "view_wrong_keyword": lambda m, x: x.view(shape=3),
    "view_tuple_and_int": lambda m, x: x.view((3,), 2),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_no_overload_binds(name):
    assert_raises_same(ERRORS[name], A, match_message=True)


def test_the_one_plausible_overload_raises_its_own_error():
    # two spread-out arguments fit only view(size): its own error, as torch's (TypeError)
    assert_raises_same(lambda m, x: x.view(3, "a"), A)
    assert_raises_same(lambda m, x: x.fill_(m.tensor([1.0, 2.0])), A, match_message=True)


REDUCTIONS = ["sum", "nansum", "mean", "nanmean", "prod", "amax", "amin", "all", "any", "logsumexp", "max", "min",
              "argmax", "argmin", "var", "std", "var_mean", "std_mean"]


@pytest.mark.parametrize("name", REDUCTIONS)
def test_numpy_axis_keepdims(name):
    check_both(lambda m, x: getattr(m, name)(x, axis=1, keepdims=True), A, rtol=1e-5)
    check_both(lambda m, x: getattr(m, name)(x, axis=0), A, rtol=1e-5)
    if name not in ("var_mean", "std_mean"):
        check_both(lambda m, x: getattr(x, name)(axis=1, keepdims=True), A, rtol=1e-5)


def test_numpy_names_only_where_torch_names_are_absent():
    assert_raises_same(lambda m, x: m.sum(x, 0, axis=1), A, match_message=True)
    assert_raises_same(lambda m, x: m.sum(x, dim=0, axis=1), A, match_message=True)
    assert_raises_same(lambda m, x: m.mean(x, 0, keepdim=True, keepdims=True), A, match_message=True)
