"""scaled_dot_product_attention with dropout_p > 0 under create_graph: the differentiable (composite) gradients
replay the fused kernel's dropout mask, so they equal the fused backward's, and the second derivative exists."""
import pytest

import flowlike as fl


@pytest.mark.parametrize("shape_q,shape_kv,kw", [
    ((2, 3, 5, 4), (2, 3, 6, 4), {}),
    ((2, 4, 5, 4), (2, 2, 6, 4), {"enable_gqa": True}),
    ((3, 5, 4), (3, 5, 4), {"is_causal": True}),
    ((2, 1, 3, 5, 4), (1, 4, 3, 6, 4), {}),  # broadcast batch dims
])
def test_composite_gradients_replay_the_dropout_mask(shape_q, shape_kv, kw):
    def grads(create_graph):
        fl.manual_seed(3)
        q = fl.randn(shape_q, dtype=fl.float64).requires_grad_()
        k = fl.randn(shape_kv, dtype=fl.float64).requires_grad_()
        v = fl.randn(shape_kv, dtype=fl.float64).requires_grad_()
        fl.manual_seed(7)
        o = fl.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=0.4, **kw)
        return o, fl.autograd.grad((o * o).sum(), [q, k, v], create_graph=create_graph), (q, k, v)

    o1, fused, _ = grads(False)
    o2, composite, leaves = grads(True)
    assert (o1 - o2).abs().max().item() == 0
    for a, b in zip(fused, composite):
        assert a.shape == b.shape
        assert (a - b).abs().max().item() < 1e-12
    sum((g * g).sum() for g in composite).backward()  # double backward through the dropout
    assert all(t.grad is not None and bool(fl.isfinite(t.grad).all()) for t in leaves)
