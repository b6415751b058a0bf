"""Matrix and tensor products side by side with PyTorch: values, dtypes, shapes, gradients, errors."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
from helpers import assert_same, check_both, outcome_type, resolve, run_both, to_flowlike  # noqa: E402

RNG = np.random.default_rng(7)


def rand(*shape, dtype=torch.float32):
    t = torch.from_numpy(RNG.standard_normal(shape))
    return t.to(dtype) if dtype.is_floating_point else (t * 4).round().to(dtype)


def check(fn_name, *args, grad=False, rtol=1.3e-5, atol=1e-5, **kw):
    """The dual run (helpers.check_both) of the function at torch path `fn_name` on the same inputs; with grad,
    the gradients of every floating input too."""
    check_both(lambda lib, *a: resolve(lib, fn_name)(*a, **kw), *args, grad=grad, rtol=rtol, atol=atol)


MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
                 ((5, 2, 3), (3,)), ((3,), (5, 3, 4)), ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)),
                 ((2, 1, 2, 3), (4, 3, 2)), ((1, 5, 2, 3), (7, 1, 3, 4)), ((0, 3), (3, 4)), ((2, 0), (0, 4)),
                 ((4, 2, 3, 5), (5,))]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_shapes_values_and_grads(sa, sb):
    check("matmul", rand(*sa), rand(*sb), grad=True)


@pytest.mark.parametrize("dtype", [torch.float64, torch.int64, torch.int32, torch.float16, torch.bfloat16])
def test_matmul_dtypes(dtype):
    tol = {torch.float16: 2e-2, torch.bfloat16: 1e-1}.get(dtype, 1e-6)
    check("matmul", rand(4, 6, dtype=dtype), rand(6, 5, dtype=dtype), rtol=tol, atol=tol)
    check("bmm", rand(3, 4, 6, dtype=dtype), rand(3, 6, 5, dtype=dtype), rtol=tol, atol=tol)


def test_half_matmul_accumulates_in_float32():
    # 4096 products of 1 + 1/1024 each: a float16 accumulator would stall at 2048.
    a = torch.full((1, 4096), 1.0, dtype=torch.float16)
    check("mm", a, a.t().contiguous(), rtol=1e-3, atol=0)


def test_non_contiguous_operands():
    a, b = rand(6, 4), rand(5, 6)
    check("mm", a.t(), b.t(), grad=True)  # both transposed: BLAS reads them without a copy
    check("mm", rand(4, 12)[:, ::3], rand(8, 5)[::2], grad=True)  # strided: copied first
    check("bmm", rand(4, 3, 2).transpose(1, 2), rand(3, 4, 5).transpose(0, 1), grad=True)
    check("matmul", rand(3, 4).expand(2, 3, 4), rand(4, 2))


@pytest.mark.parametrize("name,shapes,kw", [
    ("mm", [(3, 4), (4, 5)], {}), ("bmm", [(2, 3, 4), (2, 4, 5)], {}), ("mv", [(3, 4), (4,)], {}),
    ("dot", [(5,), (5,)], {}), ("vdot", [(5,), (5,)], {}), ("inner", [(2, 3, 4), (5, 4)], {}),
    ("inner", [(), (3, 2)], {}), ("outer", [(3,), (4,)], {}), ("ger", [(3,), (4,)], {}),
    ("addmm", [(5,), (3, 4), (4, 5)], {}), ("addmm", [(3, 5), (3, 4), (4, 5)], {"beta": 0.5, "alpha": 2}),
    ("addmv", [(3,), (3, 4), (4,)], {"beta": 2, "alpha": -1}), ("addr", [(3, 4), (3,), (4,)], {"alpha": 3}),
    ("addbmm", [(3, 5), (2, 3, 4), (2, 4, 5)], {"beta": 0.5}), ("baddbmm", [(2, 3, 5), (2, 3, 4), (2, 4, 5)],
                                                                  {"alpha": 0.25}),
    ("kron", [(2, 3), (4, 1, 2)], {}), ("tensordot", [(3, 4, 5), (4, 5, 6)], {}),
    ("tensordot", [(3, 4, 5), (5, 3, 2)], {"dims": ([0, 2], [1, 0])}), ("tensordot", [(3, 4), (5, 6)], {"dims": 0}),
])
def test_products(name, shapes, kw):
    check(name, *[rand(*s) for s in shapes], grad=True, **kw)


@pytest.mark.parametrize("use_gelu", [False, True])
@pytest.mark.parametrize("shapes,kw", [
    ([(5,), (3, 4), (4, 5)], {}), ([(3, 5), (3, 4), (4, 5)], {"beta": 0.5, "alpha": 2}),
    ([(3, 1), (3, 4), (4, 5)], {"alpha": -1}), ([(), (70, 33), (33, 45)], {"beta": 0}),
    ([(5,), (0, 4), (4, 5)], {}), ([(5,), (3, 0), (0, 5)], {}),
])
def test_addmm_activation(shapes, kw, use_gelu):
    # torch._addmm_activation: relu, or erf-gelu on CPU. torch has no derivative for it (flowlike's gradients
    # are checked against the unfused ops in tests/test_fused_epilogue.py)
    check("_addmm_activation", *[rand(*s) for s in shapes], use_gelu=use_gelu, **kw)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32])
@pytest.mark.parametrize("use_gelu", [False, True])
def test_addmm_activation_dtypes_and_layouts(dtype, use_gelu):
    tol = {torch.float16: 2e-2, torch.bfloat16: 1e-1}.get(dtype, 1e-6)
    check("_addmm_activation", rand(5, dtype=dtype), rand(4, 6, dtype=dtype), rand(6, 5, dtype=dtype),
          use_gelu=use_gelu, rtol=tol, atol=tol)  # integer gelu: both raise
    a, b = rand(6, 4), rand(5, 6)
    check("_addmm_activation", rand(5), a.t(), b.t(), use_gelu=use_gelu)  # transposed operands
    check("_addmm_activation", rand(5), rand(4, 12)[:, ::2], rand(6, 10)[:, ::2], use_gelu=use_gelu)  # strided


@pytest.mark.parametrize("shapes,dtypes", [
    ([(4,), (3, 4), (3, 5)], None), ([(4, 4), (3, 4), (4, 5)], None), ([(5,), (3, 4, 1), (4, 5)], None),
    ([(5,), (3, 4), (4, 5)], ("float32", "float64", "float32")), ([(5,), (3, 4), (4, 5)], ("float32", "float32", "float64")),
])
def test_addmm_activation_errors(shapes, dtypes):
    ts = [rand(*s) for s in shapes]
    if dtypes:
        ts = [t.to(getattr(torch, d)) for t, d in zip(ts, dtypes)]
    fs = [to_flowlike(t) for t in ts]
    want = outcome_type(lambda: torch._addmm_activation(*ts))
    assert want is not None and outcome_type(lambda: fl._addmm_activation(*fs)) is want


def test_beta_zero_ignores_nan_input():
    nan = torch.full((3, 5), float("nan"))
    check("addmm", nan, rand(3, 4), rand(4, 5), beta=0)


@pytest.mark.parametrize("n", [2, 3, 5])
def test_multi_dot(n):
    sizes = [int(s) for s in RNG.integers(1, 6, size=n + 1)]
    mats = [rand(sizes[i], sizes[i + 1]) for i in range(n)]
    want = torch.linalg.multi_dot(mats)
    assert_same(fl.linalg.multi_dot([to_flowlike(m) for m in mats]), want, rtol=1e-5)
    vecs = [rand(sizes[1])] + mats[1:-1] + [rand(sizes[n - 1])] if n > 2 else None
    if vecs:
        assert_same(fl.linalg.multi_dot([to_flowlike(m) for m in vecs]), torch.linalg.multi_dot(vecs), rtol=1e-5)


EINSUM = [("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]), ("ii->i", [(4, 4)]), ("ii", [(4, 4)]),
          ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 6)]),
          ("i,i->", [(5,), (5,)]), ("i,j->ij", [(3,), (4,)]), ("ijk->kji", [(2, 3, 4)]),
          ("bhqd,bhkd->bhqk", [(2, 3, 5, 4), (2, 3, 6, 4)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
          ("...i,...i", [(3, 4), (4,)]), ("iij->j", [(3, 3, 2)]), ("ab,cd->abcd", [(2, 3), (4, 5)]),
          ("a...,b...->ab...", [(2, 3), (4, 3)]), ("ij->", [(3, 4)]), ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
          ("i j , j k -> i k", [(2, 3), (3, 2)]), ("ba,ab->", [(3, 3), (3, 3)]), ("i...->...", [(2, 3, 4)])]


@pytest.mark.parametrize("eq,shapes", EINSUM)
def test_einsum(eq, shapes):
    ts = [rand(*s) for s in shapes]
    want = torch.einsum(eq, *[t.clone().requires_grad_() for t in ts])
    fs = [to_flowlike(t).requires_grad_() for t in ts]
    got = fl.einsum(eq, *fs)
    assert_same(got, want, rtol=1e-5)
    tts = [t.clone().requires_grad_() for t in ts]
    torch.einsum(eq, *tts).sum().backward()
    got.sum().backward()
    for f, t in zip(fs, tts):
        assert_same(f.grad, t.grad, rtol=1e-5)
    assert_same(fl.einsum(eq, fs), torch.einsum(eq, ts), rtol=1e-5)  # operands as one list


def test_double_backward_through_mm():
    a, b = rand(3, 4), rand(4, 2)
    ta, tb = a.clone().requires_grad_(), b.clone().requires_grad_()
    fa, fb = to_flowlike(a).requires_grad_(), to_flowlike(b).requires_grad_()
    (tga,) = torch.autograd.grad((ta @ tb).pow(2).sum(), ta, create_graph=True)
    (fga,) = fl.autograd.grad((fa @ fb).pow(2).sum(), fa, create_graph=True)
    assert_same(fga, tga, rtol=1e-5)
    tga.sum().backward()
    fga.sum().backward()
    assert_same(fb.grad, tb.grad, rtol=1e-5)


def test_matmul_operator_and_methods():
    a, b = rand(2, 3), rand(3, 4)
    fa, fb = to_flowlike(a), to_flowlike(b)
    assert_same(fa @ fb, a @ b)
    assert_same(fa.matmul(fb), a.matmul(b))
    assert_same(fa.mm(fb), a.mm(b))
    c = rand(2, 4)
    fc = to_flowlike(c)
    fc.addmm_(fa, fb, beta=0.5)
    assert_same(fc, c.addmm_(a, b, beta=0.5))


@pytest.mark.parametrize("name,shapes,dtypes", [
    ("mm", [(2, 3), (4, 5)], None), ("mm", [(2, 3, 1), (3, 4)], None), ("mm", [(2, 3), (3, 4)], ("float32", "float64")),
    ("bmm", [(2, 3, 4), (3, 4, 5)], None), ("bmm", [(3, 4), (4, 5)], None), ("matmul", [(), (3,)], None),
    ("matmul", [(2, 3), (4,)], None), ("matmul", [(2, 2, 3), (3, 2, 4)], None), ("dot", [(3,), (4,)], None),
    ("dot", [(3, 1), (3,)], None), ("mv", [(3, 4), (3,)], None), ("outer", [(3, 1), (3,)], None),
    ("addmm", [(4, 4), (3, 4), (4, 5)], None), ("einsum", None, None), ("tensordot", [(3, 4), (5, 6)], None),
    ("mm", [(2, 3), (3, 4)], ("bool", "bool")),
])
def test_errors_match(name, shapes, dtypes):
    if name == "einsum":
        cases = [("ij,jk->ik", [(3, 4), (5, 6)]), ("ij->ij", [(3,)]), ("ij,jk", [(2, 3)]), ("i$", [(2,)]),
                 ("ij->ii", [(2, 2)]), ("ij->k", [(2, 2)])]
        for eq, ss in cases:
            ts = [rand(*s) for s in ss]
            fs = [to_flowlike(t) for t in ts]
            assert outcome_type(lambda: fl.einsum(eq, *fs)) is outcome_type(lambda: torch.einsum(eq, *ts)), eq
        return
    ts = [rand(*s) for s in shapes]
    if dtypes:
        ts = [t.to(getattr(torch, d)) for t, d in zip(ts, dtypes)]
    if name == "tensordot":
        kw = {"dims": 1}
    else:
        kw = {}
    fs = [to_flowlike(t) for t in ts]
    want = outcome_type(lambda: getattr(torch, name)(*ts, **kw))
    assert want is not None
    assert outcome_type(lambda: getattr(fl, name)(*fs, **kw)) is want


def test_non_tensor_argument_is_a_type_error():
    assert outcome_type(lambda: fl.mm(fl.ones(2, 2), 3)) is outcome_type(lambda: torch.mm(torch.ones(2, 2), 3))
    assert outcome_type(lambda: fl.ones(2, 2) @ 3) is outcome_type(lambda: torch.ones(2, 2) @ 3)


@pytest.mark.parametrize("name,shapes", [("mm", [(3, 4), (4, 5)]), ("bmm", [(2, 3, 4), (2, 4, 5)]),
                                         ("addmm", [(5,), (3, 4), (4, 5)]), ("baddbmm", [(5,), (2, 3, 4), (2, 4, 5)])])
@pytest.mark.parametrize("grad_operand", [0, 1])
@pytest.mark.parametrize("changed", [0, 1])
def test_products_save_only_the_operand_a_gradient_needs(name, shapes, grad_operand, changed):
    # as torch: an operand is saved (and version-checked at backward) only when the other operand requires grad, so
    # an in-place change of an operand no gradient needs leaves backward working
    def body(lib):
        ts = [lib.from_numpy(RNG.standard_normal(s)) for s in shapes]
        first = len(ts) - 2  # the two product operands follow the addend
        ts[first + grad_operand].requires_grad_()
        y = getattr(lib, name)(*ts)
        with lib.no_grad():
            ts[first + changed].add_(1)
        return outcome_type(lambda: y.sum().backward())

    want, got = run_both(body)
    assert got is want
    assert (want is None) == (changed == grad_operand)  # the case itself discriminates
