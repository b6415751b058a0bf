"""F.linear on 3-D input against PyTorch: a contiguous input with a bias is one addmm on the (B*T, K) view (as
torch's linear), other inputs a matmul and an add. Values, gradients, dtypes, shapes, strides; and graph mode
captures the single GEMM."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402

RNG = np.random.default_rng(5)
TOL = {"float32": 2e-5, "float64": 1e-12}  # relative to the largest magnitude of torch's result (GEMM sum order)


def close(got, want, dtype):
    np.testing.assert_allclose(got, want, rtol=TOL[dtype], atol=TOL[dtype] * max(1.0, float(np.abs(want).max(
        initial=0.0))))


def run(lib, x, w, b, dtype, transform):
    dt = getattr(lib, dtype)
    xt = transform(lib.from_numpy(x.copy()).to(dt)).requires_grad_() if transform else \
        lib.from_numpy(x.copy()).to(dt).requires_grad_()
    wt = lib.from_numpy(w.copy()).to(dt).requires_grad_()
    bt = None if b is None else lib.from_numpy(b.copy()).to(dt).requires_grad_()
    y = lib.nn.functional.linear(xt, wt, bt)
    (y * y).sum().backward()
    grads = [t.grad.numpy() for t in (xt, wt, bt) if t is not None]
    return y.detach().numpy(), tuple(y.shape), tuple(y.stride()), y.dtype == dt, grads


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,bias,transposed", [((4, 7, 33), True, False), ((4, 7, 33), False, False),
                                                   ((4, 7, 33), True, True), ((0, 5, 8), True, False),
                                                   ((3, 1, 600), True, False)])
def test_linear_3d(dtype, shape, bias, transposed):
    x = RNG.standard_normal(shape)
    w = RNG.standard_normal((19, shape[-1]))
    b = RNG.standard_normal(19) if bias else None
    # transposed: a non-contiguous input of the same shape (the matmul path)
    transform = (lambda t: t.transpose(0, 1).contiguous().transpose(0, 1)) if transposed else None
    got, want = run(fl, x, w, b, dtype, transform), run(torch, x, w, b, dtype, transform)
    close(got[0], want[0], dtype)
    assert got[1:4] == want[1:4]
    for g, h in zip(got[4], want[4]):
        close(g, h, dtype)


def test_graph_captures_one_gemm_with_the_bias():
    lin = fl.nn.Linear(16, 8)

    class G(fl.nn.Graph):
        def __init__(self):
            super().__init__()
            self.lin = lin

        def build(self, x):
            return self.lin(x)

    x = fl.from_numpy(RNG.standard_normal((2, 5, 16)).astype(np.float32))
    g = G()
    np.testing.assert_array_equal(g(x).numpy(), lin(x).detach().numpy())
    ops = [line.split("=")[-1].split("(")[0].strip() for line in str(g).splitlines() if " = " in line]
    assert "addmm" in ops and "add" not in ops and "matmul" not in ops and "mm" not in ops
