"""float32 GEMM (csrc/kernels/sgemm.cpp) against a float64 numpy reference: shapes around every blocking
edge (micro-tile 12x32 / 6x16, depth blocks of 256, column blocks of 512, row blocks), operand layouts
(contiguous, transposed, strided in both dimensions), alpha/beta, batches, and one and two threads."""
import numpy as np
import pytest

import flowlike as torch

rng = np.random.default_rng(0)

SHAPES = [(1, 1, 1), (1, 37, 5), (13, 1, 7), (5, 3, 1), (12, 32, 16), (13, 33, 17), (11, 31, 300), (64, 64, 64),
          (100, 37, 53), (97, 513, 257), (250, 130, 784), (7, 600, 20), (300, 10, 512)]


def operand(a, layout):
    """A flowlike tensor equal to `a` in the given memory layout."""
    if layout == "contiguous":
        return torch.from_numpy(np.ascontiguousarray(a))
    if layout == "transposed":
        return torch.from_numpy(np.ascontiguousarray(a.T)).t()
    # Both strides differ from 1: every other row and column of a larger array.
    big = np.zeros((2 * a.shape[0], 2 * a.shape[1]), dtype=a.dtype)
    big[::2, ::2] = a
    return torch.from_numpy(big)[::2, ::2]


def close(got, want):
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4 * scale)


@pytest.fixture(params=[1, 2])
def threads(request):
    before = torch.get_num_threads()
    torch.set_num_threads(request.param)
    yield request.param
    torch.set_num_threads(before)


@pytest.mark.parametrize("m,n,k", SHAPES)
@pytest.mark.parametrize("la", ["contiguous", "transposed", "strided"])
@pytest.mark.parametrize("lb", ["contiguous", "transposed", "strided"])
def test_mm_layouts(threads, m, n, k, la, lb):
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    got = torch.mm(operand(a, la), operand(b, lb))
    assert got.shape == (m, n) and got.dtype == torch.float32
    close(got, a.astype(np.float64) @ b.astype(np.float64))


@pytest.mark.parametrize("m,n,k", [(13, 33, 17), (97, 513, 257), (250, 130, 784)])
def test_addmm_alpha_beta(threads, m, n, k):
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    c = rng.standard_normal((m, n), dtype=np.float32)
    bias = rng.standard_normal(n, dtype=np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    close(torch.addmm(torch.from_numpy(c), torch.from_numpy(a), torch.from_numpy(b), beta=0.5, alpha=-2.0),
          0.5 * c + -2.0 * ref)
    close(torch.addmm(torch.from_numpy(bias), torch.from_numpy(a), operand(b, "transposed")), bias + ref)
    # beta=0: the addend is not read, so its NaNs do not reach the result; alpha=0: the same for the factors.
    nan = np.full((m, n), np.nan, dtype=np.float32)
    close(torch.addmm(torch.from_numpy(nan), torch.from_numpy(a), torch.from_numpy(b), beta=0), ref)
    close(torch.addmm(torch.from_numpy(c), torch.from_numpy(np.full_like(a, np.nan)), torch.from_numpy(b), beta=2.0,
                      alpha=0), 2.0 * c)


@pytest.mark.parametrize("batch,m,n,k", [(32, 128, 128, 128), (3, 97, 513, 257), (5, 13, 33, 17), (64, 64, 32, 64)])
def test_bmm_baddbmm(threads, batch, m, n, k):
    a = rng.standard_normal((batch, m, k), dtype=np.float32)
    b = rng.standard_normal((batch, n, k), dtype=np.float32)
    ref = a.astype(np.float64) @ np.swapaxes(b, 1, 2).astype(np.float64)
    fb = torch.from_numpy(b).transpose(1, 2)
    close(torch.bmm(torch.from_numpy(a), fb), ref)
    c = rng.standard_normal((batch, m, n), dtype=np.float32)
    close(torch.baddbmm(torch.from_numpy(c), torch.from_numpy(a), fb, beta=2.0, alpha=0.5), 2.0 * c + 0.5 * ref)


@pytest.mark.parametrize("isa", ["avx2", "none"])
def test_narrower_kernels(isa):
    """The AVX2 micro-kernel and the OpenBLAS fallback (FLOWLIKE_SGEMM_ISA caps the kernel) agree too."""
    import os
    import subprocess
    import sys

    code = """
import numpy as np, flowlike as torch
rng = np.random.default_rng(1)
for m, n, k in [(13, 33, 17), (97, 513, 257), (250, 130, 784), (1, 37, 5)]:
    for t in (1, 2):
        torch.set_num_threads(t)
        a = rng.standard_normal((m, k), dtype=np.float32); b = rng.standard_normal((n, k), dtype=np.float32)
        got = torch.mm(torch.from_numpy(a), torch.from_numpy(b).t()).numpy()
        want = a.astype(np.float64) @ b.T.astype(np.float64)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(want).max()))
print("ok")
"""
    env = dict(os.environ, FLOWLIKE_SGEMM_ISA=isa)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
