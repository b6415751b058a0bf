"""In-place writes under autograd, run with the same body on torch and flowlike: writes into views rebase the
base's history (CopySlices), copy_/fill_/setitem/index_put_/masked_fill_ are differentiable, and clone,
contiguous and dtype conversions pass gradients through."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
from helpers import assert_raises_same, check_both, leaf  # noqa: E402

A = np.random.default_rng(5).standard_normal((4, 3))
B = np.random.default_rng(6).standard_normal((3,))


BODIES = {
    "view_mul_": lambda lib, a, b: (lambda y: (y[1].mul_(b), y)[1])(a * 2),
    "slice_add_": lambda lib, a, b: (lambda y: (y[:, 1:].add_(a[:, :2]), y)[1])(a * 3 + 1),
    "transpose_view_sub_": lambda lib, a, b: (lambda y: (y.t()[0].sub_(b.sum()), y)[1])(a + 1),
    "setitem_tensor": lambda lib, a, b: (lambda y: (y.__setitem__((0, slice(None)), b * 3), y)[1])(a * 1.5),
    "setitem_number": lambda lib, a, b: (lambda y: (y.__setitem__((slice(None), 2), 7.0), y)[1])(a.sin()),
    "setitem_mask": lambda lib, a, b: (lambda y: (y.__setitem__(y > 0, 0.0), y)[1])(a * b),
    "setitem_advanced": lambda lib, a, b: (lambda y: (y.__setitem__(lib.tensor([0, 2]), b * b), y)[1])(a * 2),
    "buffer_filled_from_grad": lambda lib, a, b: (lambda buf: (buf.__setitem__(slice(1, 3), a[:2] * b), buf)[1])(
        lib.zeros(5, 3, dtype=lib.float64)),
    "copy_into_view": lambda lib, a, b: (lambda y: (y[2].copy_(b.exp()), y)[1])(a - 1),
    "fill_view": lambda lib, a, b: (lambda y: (y[:, 0].fill_(2.0), y * y)[1])(a * a),
    "zero_": lambda lib, a, b: (lambda y: (y[3].zero_(), y)[1])(a * 3),
    "masked_fill_": lambda lib, a, b: (lambda y: y.masked_fill_(y < 0, 1.0))(a * b),
    "index_put_accumulate": lambda lib, a, b: (lambda y: y.index_put_((lib.tensor([0, 0, 3]),), b.expand(3, 3),
                                                                      accumulate=True))(a * 2),
    "view_then_base_used": lambda lib, a, b: (lambda y: (y.view(-1)[:3].mul_(b), y.sum(0) * y[0])[1])(a + 0),
    "scatter": lambda lib, a, b: a.scatter(0, lib.tensor([[0, 1, 2], [3, 0, 1]]), b.expand(2, 3) * 2),
    "scatter_value": lambda lib, a, b: a.scatter(1, lib.tensor([[0], [2], [1], [0]]), 5.0) * b,
    "scatter_add": lambda lib, a, b: a.scatter_add(0, lib.tensor([[0, 0, 2]]), b.unsqueeze(0)),
    "index_add": lambda lib, a, b: a.index_add(1, lib.tensor([2, 0, 2]), a * b, alpha=3),
    "index_fill": lambda lib, a, b: a.index_fill(1, lib.tensor([1]), -2.0) * b,
    "index_copy": lambda lib, a, b: a.index_copy(0, lib.tensor([3, 1]), b.expand(2, 3) * 4),
    "masked_fill": lambda lib, a, b: a.masked_fill(a > 0.3, 0.5) * b,
    "masked_scatter": lambda lib, a, b: a.masked_scatter(a < 0, (b * 2).repeat(4)),
    "index_put": lambda lib, a, b: a.index_put((lib.tensor([0, 2]),), b * 7),
    "tril_": lambda lib, a, b: (a * 2).tril_() * b,
    "triu_diagonal": lambda lib, a, b: (a * b).triu_(-1) ** 2,
    "tril_of_view": lambda lib, a, b: (lambda y: (y[1:].tril_(1), y)[1])(a + 1),
    # a view taken while its base needed no grad sees the base's later differentiable write
    "view_of_plain_base": lambda lib, a, b: (lambda base: (lambda v: (base.copy_(a * 2), v * b)[1])(base[1]))(
        lib.zeros(4, 3, dtype=lib.float64)),
    "view_of_plain_base_setitem": lambda lib, a, b: (lambda base: (lambda v: (base.__setitem__(slice(0, 2), a[:2]),
                                                                                v.sum(0) * b)[1])(base[:, 1:]))(
        lib.ones(4, 3, dtype=lib.float64)),
    "clone": lambda lib, a, b: a.clone() * b,
    "contiguous": lambda lib, a, b: a.t().contiguous() * 2,
    "to_float32": lambda lib, a, b: a.float() * 2,
    "to_dtype": lambda lib, a, b: a.to(lib.float32).to(lib.float64) ** 2,
}


@pytest.mark.parametrize("name", sorted(BODIES))
def test_values_and_grads_match(name):
    check_both(BODIES[name], A, B, dtype="float64", grad=True, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("case", ["leaf_mul_", "leaf_view_add_", "leaf_setitem", "leaf_copy_", "leaf_fill_",
                                  "leaf_tril_", "leaf_triu_"])
def test_leaf_errors_match(case):
    def run(lib):
        a = leaf(lib, A)
        return {"leaf_mul_": lambda: a.mul_(2), "leaf_view_add_": lambda: a[0].add_(1),
                "leaf_setitem": lambda: a.__setitem__(0, 1.0), "leaf_copy_": lambda: a.copy_(a * 2),
                "leaf_fill_": lambda: a.fill_(0), "leaf_tril_": lambda: a.tril_(), "leaf_triu_": lambda: a.triu_(1)}[case]
    want, _ = assert_raises_same(lambda lib: run(lib)())
    assert type(want) is RuntimeError


def test_no_grad_writes_into_leaf_are_allowed():
    a = leaf(fl, A)
    with fl.no_grad():
        a[0] = 1.0
        a.mul_(2)
    assert a.is_leaf and a.requires_grad
    assert a[0, 0].item() == 2.0


def test_inplace_writes_name_their_nodes_as_torch():
    def nodes(lib):
        a = leaf(lib, A)
        p = lib.full((4, 3), 0.5, dtype=lib.float64)
        idx = lib.tensor([[0, 1, 2]])
        writes = [lambda y: y.fill_(1.0), lambda y: y.fill_(a[0, 0]), lambda y: y.zero_(), lambda y: y.uniform_(),
                  lambda y: y.normal_(), lambda y: y.random_(0, 5), lambda y: y.bernoulli_(p), lambda y: y.copy_(a),
                  lambda y: y.index_put_((lib.tensor([1]),), a[0]), lambda y: y.masked_fill_(a > 0, a[0, 1]),
                  lambda y: y.scatter_(0, idx, a), lambda y: y.scatter_add_(0, idx, a),
                  lambda y: y.scatter_reduce_(0, idx, a, "amax"), lambda y: y.index_add_(0, lib.tensor([2]), a[:1]),
                  lambda y: y.index_copy_(0, lib.tensor([2]), a[:1]), lambda y: y.index_fill_(1, lib.tensor([0]), a[0, 0]),
                  lambda y: y.masked_scatter_(a > 0, a), lambda y: y.masked_fill_(a > 0, 2.0),
                  lambda y: y.scatter_(0, idx, 2.0), lambda y: y.index_fill_(1, lib.tensor([0]), 2.0)]
        return [w(a * 1).grad_fn.name() for w in writes]

    assert nodes(fl) == nodes(torch)


def test_scatter_with_reduce_records_and_fails_in_backward_as_torch():
    # torch has no derivative for scatter_(reduce=): the write is recorded, its backward raises RuntimeError
    def run(lib):
        y = leaf(lib, A) * 1
        with __import__("warnings").catch_warnings():
            __import__("warnings").simplefilter("ignore")
            y.scatter_(0, lib.tensor([[0, 1, 2]]), leaf(lib, A), reduce="add")
        y.sum().backward()

    want, got = assert_raises_same(lambda lib: run(lib))
    assert "derivative for aten::scatter_ is not implemented" in str(got)
