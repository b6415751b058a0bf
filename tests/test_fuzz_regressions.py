"""Crashes the fuzzer (tests/fuzz) found, each kept as a plain regression test: every one of these killed the
process with a segmentation fault before its fix."""
import pytest

import flowlike as fl


@pytest.mark.parametrize("p", [1.2, 2.0, 3.0, float("inf"), 0.0])
@pytest.mark.parametrize("dim", [0, -1, (0,), None])
def test_norm_backward_of_a_0dim_tensor(p, dim):
    # the reduced-dims mask of the backward was indexed by dim 0 of a shape with no dims
    x = fl.tensor(0.7, dtype=fl.float64, requires_grad=True)
    n = fl.linalg.vector_norm(x, p, dim=dim, keepdim=True)
    n.sum().backward()
    assert x.grad.shape == ()
    assert abs(x.grad.item() - (0.0 if p == 0 else 1.0)) < 1e-12
    y = fl.tensor(0.7, dtype=fl.float64, requires_grad=True)
    fl.nn.functional.normalize(y, p=1.2, dim=0).sum().backward()
    assert y.grad.shape == ()


@pytest.mark.parametrize("call", [
    lambda: fl.all(None, None, True), lambda: fl.amax(None, None, True), lambda: fl.argmax(None),
    lambda: fl.any(None), lambda: fl.amin(None, (), True), lambda: fl.argmin(None, None, True),
    lambda: fl.frobenius_norm(None, None, True), lambda: fl.index_select(None, 0, fl.tensor([0])),
    lambda: fl.index_select(fl.ones(3), 0, None), lambda: fl.gather(fl.ones(3), 0, None),
    lambda: fl.as_strided(None, (2,), (1,)), lambda: fl.Generator().set_state(None),
    lambda: fl.take_along_dim(fl.ones(3), None, 0), lambda: fl.where(None, 1.0, 2.0),
    lambda: fl.masked_scatter(fl.ones(2), None, fl.ones(2)),
    lambda: fl.median(None), lambda: fl.nanmedian(None, None, True), lambda: fl.ones(1, 0).masked_fill(None, -2),
])
def test_none_for_a_required_tensor_is_a_type_error(call):
    # None reached the kernels as an empty tensor handle and was dereferenced
    with pytest.raises(TypeError, match="must be Tensor, not NoneType"):
        call()


@pytest.mark.parametrize("call", [lambda: fl.eq(1, fl.ones(2)), lambda: fl.fmod(1, 2), lambda: fl.gcd(fl.ones(2).long(), 2),
                                  lambda: fl.Tensor.__radd__(2, fl.ones(2)), lambda: fl.ldexp(1, fl.ones(2))])
def test_numbers_where_torch_takes_tensors(call):
    with pytest.raises(TypeError):
        call()


def test_numbers_where_torch_takes_them():
    assert fl.add(2, 3).item() == 5
    assert fl.pow(2, fl.tensor([3.0])).item() == 8.0
    assert fl.remainder(7, fl.tensor([4])).item() == 3
