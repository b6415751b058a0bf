"""Every declared op has one parsed schema (csrc/core/schema.h) that agrees with its C++ signature, and the generic
binding produced from it (flowlike._C._call_op) binds arguments by the schema's names, defaults and keyword-only
marker."""
import pytest

import flowlike as fl
from flowlike import _C


def test_every_schema_parses_and_matches_its_cpp_signature():
    assert _C._schema_problems() == []


def test_parsed_schema_carries_names_defaults_and_aliasing():
    s = _C._op_schema("add")
    assert s["name"] == "add" and s["returns"] == ["Tensor"]
    names = [a["name"] for a in s["args"]]
    assert names == ["self", "other", "alpha", "out"]
    alpha, out = s["args"][2], s["args"][3]
    assert alpha["kwarg_only"] and alpha["default"] == "1"
    assert out["type"] == "Tensor?" and out["alias"] == "a" and out["writes"]
    assert _C._op_schema("copy_")["args"][0]["writes"]
    assert _C._op_schema("transpose")["args"][0]["alias"] == "a" and not _C._op_schema("transpose")["args"][0]["writes"]


def test_generic_binding_calls_through_the_dispatcher():
    x = fl.tensor([1.0, 2.0], requires_grad=True)
    y = _C._call_op("add", x, fl.tensor([10.0, 20.0]), alpha=2)
    assert y.tolist() == [21.0, 42.0] and y.grad_fn is not None  # the Autograd key ran
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]
    assert _C._call_op("transpose", fl.ones(2, 3), 0, 1).shape == (3, 2)
    values, indices = _C._call_op("sort", fl.tensor([3.0, 1.0, 2.0]), 0, False, True)
    assert values.tolist() == [1.0, 2.0, 3.0] and indices.tolist() == [1, 2, 0]


def test_generic_binding_errors_name_the_op_and_argument():
    with pytest.raises(TypeError, match=r"add\(\): argument 'other' \(position 2\) must be Tensor"):  # (as torch's parser)
        _C._call_op("add", fl.ones(2), "two")
    with pytest.raises(TypeError, match="missing required argument 'other'"):
        _C._call_op("add", fl.ones(2))
    with pytest.raises(TypeError, match=r"add\(\) takes 2 positional arguments but 3 were given"):
        _C._call_op("add", fl.ones(2), fl.ones(2), 3)  # alpha is keyword-only
    with pytest.raises(TypeError, match="got multiple values for argument 'input'"):
        _C._call_op("add", fl.ones(2), fl.ones(2), input=fl.ones(2))
    with pytest.raises(ValueError, match="no op named"):
        _C._call_op("no_such_op")
