"""nn ops against real PyTorch: values, dtypes, shapes, gradients, error types, stability; gumbel_softmax's
invariants."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
import flowlike.nn.functional as F  # noqa: E402

from helpers import LIBS, assert_grads_same, assert_same, convert, outcome_type, to_flowlike  # noqa: E402

TF = torch.nn.functional


@pytest.fixture(autouse=True)
def _seeded():
    """Each test draws its random inputs from the same seed, whatever ran before it."""
    torch.manual_seed(0)


def pair(*shape, dtype=torch.float32, scale=1.0, requires_grad=False):
    """A random torch tensor and its flowlike copy."""
    a = torch.randn(shape, dtype=torch.float64).mul(scale).to(dtype)
    return tuple(convert(lib, a, requires_grad=requires_grad) for lib in LIBS)


TOL = {torch.float32: dict(rtol=1e-5, atol=1e-6), torch.float64: dict(rtol=1e-10, atol=1e-12),
       torch.float16: dict(rtol=2e-3, atol=2e-3), torch.bfloat16: dict(rtol=2e-2, atol=2e-2)}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_family(dtype, name, dim):
    a, b = pair(4, 6, 50, dtype=dtype, scale=4, requires_grad=True)
    ya, yb = getattr(TF, name)(a, dim=dim), getattr(F, name)(b, dim=dim)
    assert_same(yb, ya, **TOL[dtype])
    assert_grads_same(yb, ya, [b], [a], **TOL[dtype])


def test_softmax_dtype_arg_toplevel_and_methods():
    a, b = pair(3, 7, dtype=torch.float16)
    assert_same(F.softmax(b, 1, dtype=fl.float32), TF.softmax(a, 1, dtype=torch.float32))
    assert_same(fl.log_softmax(b, 0, dtype=fl.float64), torch.log_softmax(a, 0, dtype=torch.float64), atol=1e-12)
    assert_same(b.float().softmax(-1), a.float().softmax(-1))
    assert_same(b.float().log_softmax(dim=0), a.float().log_softmax(dim=0))


@pytest.mark.parametrize("ndim", [0, 1, 2, 3, 4])
def test_softmax_legacy_implicit_dim(ndim):
    a, b = pair(*([3] * ndim))
    with pytest.warns(UserWarning):
        yb = F.softmax(b)
    with pytest.warns(UserWarning):
        ya = TF.softmax(a)
    assert_same(yb, ya)


def test_softmax_large_logits():
    a = torch.tensor([[1e4, 1e4 - 3, -1e4, 0.0], [3e38, -3e38, 0.0, 1.0], [-float("inf"), 0.0, 1.0, 2.0]])
    b = to_flowlike(a)
    for name in ("softmax", "log_softmax"):
        assert_same(getattr(F, name)(b, 1), getattr(TF, name)(a, 1))
    big = torch.randn(64, 1000) * 1e3
    assert_same(F.softmax(to_flowlike(big), 1), TF.softmax(big, 1), rtol=1e-5, atol=1e-7)


def test_softmax_errors():
    for fn in (lambda m, x: m.softmax(x, 3), lambda m, x: m.softmax(x.long(), 0)):
        a, b = pair(2, 3)
        assert outcome_type(lambda: fn(TF, a)) is outcome_type(lambda: fn(F, b)) is not None


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(dtype, affine):
    a, b = pair(8, 5, 40, dtype=dtype, scale=3, requires_grad=True)
    wa, wb = pair(5, 40, dtype=dtype, requires_grad=True) if affine else (None, None)
    ba, bb = pair(5, 40, dtype=dtype, requires_grad=True) if affine else (None, None)
    ya, yb = TF.layer_norm(a, (5, 40), wa, ba, 1e-3), F.layer_norm(b, (5, 40), wb, bb, 1e-3)
    tol = TOL[dtype] if dtype != torch.float32 else dict(rtol=1e-4, atol=1e-5)
    assert_same(yb, ya, **tol)
    # bfloat16 weight/bias gradients sum 8 rows rounded to 8 bits: a few units in the last place apart
    assert_grads_same(yb, ya, [b] + ([wb, bb] if affine else []), [a] + ([wa, ba] if affine else []),
                      **{torch.float32: dict(rtol=1e-3, atol=1e-3), torch.bfloat16: dict(rtol=5e-2, atol=5e-2)}.get(
                          dtype, TOL[dtype]))


@pytest.mark.parametrize("eps", [None, 1e-3])
def test_rms_norm(eps):
    a, b = pair(6, 33, requires_grad=True)
    wa, wb = pair(33, requires_grad=True)
    ya, yb = TF.rms_norm(a, [33], wa, eps), F.rms_norm(b, [33], wb, eps)
    assert_same(yb, ya, rtol=1e-5, atol=1e-5)
    assert_grads_same(yb, ya, [b, wb], [a, wa], rtol=1e-4, atol=1e-4)
    assert_same(fl.rms_norm(b.detach(), [33]), torch.rms_norm(a.detach(), [33]), rtol=1e-5, atol=1e-5)


def test_norm_errors():
    a, b = pair(2, 3)
    cases = [lambda m, x: m.layer_norm(x, [4]), lambda m, x: m.layer_norm(x, [3], weight=x[0, :2]),
             lambda m, x: m.group_norm(x.reshape(1, 2, 3), 4),
             lambda m, x: m.batch_norm(x[:1], None, None, training=True),
             lambda m, x: m.local_response_norm(x, 2),
             # a tensor for normalized_shape: torch's parser refuses it (flowlike iterated it: a hang for a huge one)
             lambda m, x: m.layer_norm(x, x.new_tensor([3]).long()), lambda m, x: m.rms_norm(x, x[0].long())]
    for fn in cases:
        assert outcome_type(lambda: fn(TF, a)) is outcome_type(lambda: fn(F, b)) is not None


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm(training):
    a, b = pair(6, 4, 5, 3, requires_grad=True)
    wa, wb = pair(4, requires_grad=True)
    ba, bb = pair(4, requires_grad=True)
    rma, rmb = pair(4)
    rva = torch.rand(4) + 0.5
    rvb = to_flowlike(rva)
    ya = TF.batch_norm(a, rma, rva, wa, ba, training, 0.2, 1e-4)
    yb = F.batch_norm(b, rmb, rvb, wb, bb, training, 0.2, 1e-4)
    assert_same(yb, ya, rtol=1e-4, atol=1e-5)
    assert_same(rmb, rma, atol=1e-6)
    assert_same(rvb, rva, atol=1e-6)
    assert_grads_same(yb, ya, [b, wb, bb], [a, wa, ba], rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("shape", [(7, 4), (6, 4, 5), (3, 4, 5, 3), (2, 4, 3, 2, 2)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_shapes_dtypes(shape, dtype, training):
    a, b = pair(*shape, dtype=dtype, scale=3.0, requires_grad=True)
    with torch.no_grad():
        a += 5.0  # an offset mean: the statistics must not cancel catastrophically
    b = to_flowlike(a.detach()).requires_grad_(True)
    wa, wb = pair(4, dtype=dtype, requires_grad=True)
    rma, rmb = pair(4, dtype=dtype)
    rva = torch.rand(4, dtype=dtype) + 0.5
    rvb = to_flowlike(rva)
    ya = TF.batch_norm(a, rma, rva, wa, None, training, 0.3, 1e-3)
    yb = F.batch_norm(b, rmb, rvb, wb, None, training, 0.3, 1e-3)
    tol = dict(rtol=2e-2, atol=2e-2) if dtype == torch.bfloat16 else dict(rtol=1e-4, atol=1e-5)
    assert_same(yb, ya, **tol)
    assert_same(rmb, rma, **(tol if dtype == torch.bfloat16 else dict(atol=1e-5)))
    assert_same(rvb, rva, **(tol if dtype == torch.bfloat16 else dict(rtol=1e-5, atol=1e-5)))
    assert yb.grad_fn.name() == ya.grad_fn.name()
    # bfloat16: torch rounds xhat to bfloat16 before the weight-gradient sum, flowlike sums in float32
    assert_grads_same(yb, ya, [b, wb], [a, wa],
                      **dict(rtol=2e-2, atol=6e-2) if dtype == torch.bfloat16 else dict(rtol=1e-3, atol=1e-4))


def test_batch_norm_edges():
    """Empty batches and channels, strided running statistics, and the errors of F.batch_norm."""
    for m, fn in ((torch, TF), (fl, F)):
        rm, rv = m.full((3,), 2.0), m.full((3,), 3.0)
        assert fn.batch_norm(m.zeros(0, 3, 4), rm, rv, training=True).shape == (0, 3, 4)
        assert rm.tolist() == [2.0] * 3 and rv.tolist() == [3.0] * 3  # an empty batch leaves them alone
        assert fn.batch_norm(m.zeros(2, 0, 4), m.zeros(0), m.ones(0), training=True).shape == (2, 0, 4)
    a, b = pair(5, 3)
    rma, rva = torch.zeros(6), torch.ones(6)
    rmb, rvb = to_flowlike(rma), to_flowlike(rva)
    TF.batch_norm(a, rma[::2], rva[::2], training=True, momentum=0.5)
    F.batch_norm(b, rmb[::2], rvb[::2], training=True, momentum=0.5)
    assert_same(rmb, rma, atol=1e-6)
    assert_same(rvb, rva, rtol=1e-6, atol=1e-6)
    cases = [lambda m, x: m.batch_norm(x[0], m.zeros(3), m.ones(3), training=True),
             lambda m, x: m.batch_norm(x, None, None, training=False),
             lambda m, x: m.batch_norm(x, None, None, weight=x[0, :2], training=True),
             lambda m, x: m.batch_norm(x.long(), None, None, training=True)]
    for fn in cases:
        assert outcome_type(lambda: fn(TF, a)) is outcome_type(lambda: fn(F, b)) is not None


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_double_backward(training):
    a, b = pair(5, 3, 4, dtype=torch.float64, requires_grad=True)
    wa, wb = pair(3, dtype=torch.float64, requires_grad=True)
    ba, bb = pair(3, dtype=torch.float64, requires_grad=True)
    rma, rmb = pair(3, dtype=torch.float64)
    rva = torch.rand(3, dtype=torch.float64) + 0.5
    rvb = to_flowlike(rva)
    g_in = torch.randn(5, 3, 4, dtype=torch.float64)

    def run(m, fn, x, w, bias, rm, rv, g):
        y = fn.batch_norm(x, rm, rv, w, bias, training, 0.1, 1e-5)
        grads = m.autograd.grad((y * g).sum(), [x, w, bias], create_graph=True)
        sum(gr.pow(2).sum() for gr in grads).backward()
        return grads

    grads_a = run(torch, TF, a, wa, ba, rma, rva, g_in)
    grads_b = run(fl, F, b, wb, bb, rmb, rvb, to_flowlike(g_in))
    for gb_, ga_ in zip(grads_b, grads_a):
        assert_same(gb_, ga_, rtol=1e-9, atol=1e-10)
    for xb, xa in ((b, a), (wb, wa)):
        assert_same(xb.grad, xa.grad, rtol=1e-8, atol=1e-9)


def test_instance_group_lrn_normalize():
    a, b = pair(3, 6, 5, 4, requires_grad=True)
    wa, wb = pair(6, requires_grad=True)
    ba, bb = pair(6, requires_grad=True)
    ya, yb = TF.group_norm(a, 3, wa, ba), F.group_norm(b, 3, wb, bb)
    assert_same(yb, ya, rtol=1e-4, atol=1e-5)
    assert_grads_same(yb, ya, [b, wb, bb], [a, wa, ba], rtol=1e-3, atol=1e-4)
    rma, rmb = pair(6)
    rva = torch.rand(6) + 0.5
    rvb = to_flowlike(rva)
    assert_same(F.instance_norm(b.detach(), rmb, rvb, wb.detach(), bb.detach()),
                TF.instance_norm(a.detach(), rma, rva, wa.detach(), ba.detach()), rtol=1e-4, atol=1e-5)
    assert_same(rmb, rma, atol=1e-6)
    assert_same(rvb, rva, atol=1e-6)
    assert_same(F.local_response_norm(b.detach(), 3), TF.local_response_norm(a.detach(), 3), rtol=1e-5, atol=1e-6)
    assert_same(F.normalize(b.detach(), p=1.5, dim=2), TF.normalize(a.detach(), p=1.5, dim=2), rtol=1e-5, atol=1e-6)


ACTIVATIONS = [
    ("relu", {}), ("relu6", {}), ("leaky_relu", {"negative_slope": 0.2}), ("elu", {"alpha": 0.7}), ("selu", {}),
    ("celu", {"alpha": 1.3}), ("gelu", {}), ("gelu", {"approximate": "tanh"}), ("silu", {}), ("mish", {}),
    ("hardswish", {}), ("hardsigmoid", {}), ("hardtanh", {"min_val": -0.5, "max_val": 2.0}), ("hardshrink", {}),
    ("softshrink", {"lambd": 0.25}), ("softplus", {"beta": 2.0, "threshold": 5.0}), ("softsign", {}),
    ("tanhshrink", {}), ("threshold", {"threshold": 0.1, "value": -3.0}), ("glu", {"dim": 1}), ("logsigmoid", {}),
    ("sigmoid", {}), ("tanh", {}),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("name,kw", ACTIVATIONS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(ACTIVATIONS)])
def test_activations(dtype, name, kw):
    a, b = pair(6, 10, dtype=dtype, scale=3, requires_grad=True)
    ya, yb = getattr(TF, name)(a, **kw), getattr(F, name)(b, **kw)
    assert_same(yb, ya, **TOL[dtype])
    # PyTorch's celu gradient uses 1 / alpha rounded to float32 (derivatives.yaml: 1.0/alpha.toFloat())
    assert_grads_same(yb, ya, [b], [a],
                      **dict(rtol=1e-6, atol=1e-7) if name == "celu" and dtype == torch.float64 else TOL[dtype])


@pytest.mark.parametrize("name", ["relu", "relu6", "leaky_relu", "elu", "selu", "celu", "silu", "mish", "hardswish",
                                  "hardsigmoid", "hardtanh", "rrelu"])
def test_inplace_flag_and_underscore_forms(name):
    a, b = pair(4, 5)
    ra, rb = getattr(TF, name)(a, inplace=True), getattr(F, name)(b, inplace=True)
    assert rb is b
    assert_same(b, a)
    if hasattr(TF, name + "_"):
        a2, b2 = pair(4, 5)
        getattr(TF, name + "_")(a2)
        getattr(F, name + "_")(b2)
        assert_same(b2, a2)


def test_toplevel_and_method_forms():
    a, b = pair(3, 4)
    for name in ("relu", "selu", "celu", "hardshrink"):
        assert_same(getattr(fl, name)(b), getattr(torch, name)(a))
    assert_same(fl.threshold(b, 0.1, 2.0), torch.threshold(a, 0.1, 2.0))
    assert_same(b.relu(), a.relu())
    assert_same(fl.layer_norm(b, [4]), torch.layer_norm(a, [4]), rtol=1e-5, atol=1e-6)
    assert_same(fl.group_norm(b.reshape(3, 4, 1), 2), torch.group_norm(a.reshape(3, 4, 1), 2), rtol=1e-5, atol=1e-6)


def test_prelu_and_rrelu():
    a, b = pair(2, 3, 4, requires_grad=True)
    wa = torch.tensor([0.1, 0.2, 0.3], requires_grad=True)
    wb = to_flowlike(wa.detach()).requires_grad_()
    ya, yb = TF.prelu(a, wa), F.prelu(b, wb)
    assert_same(yb, ya)
    assert_grads_same(yb, ya, [b, wb], [a, wa], rtol=1e-5, atol=1e-5)
    assert_same(F.rrelu(b.detach()), TF.rrelu(a.detach()))
    assert outcome_type(lambda: TF.prelu(a, wa[:2])) is outcome_type(lambda: F.prelu(b, wb[:2])) is RuntimeError


def test_activation_errors():
    a, b = pair(2, 3)
    cases = [lambda m, x: m.gelu(x, approximate="bad"), lambda m, x: m.glu(x, 1), lambda m, x: m.gelu(x.long()),
             lambda m, x: m.hardtanh(x, 2.0, 1.0), lambda m, x: m.softshrink(x, -1.0)]
    for fn in cases:
        assert outcome_type(lambda: fn(TF, a)) is outcome_type(lambda: fn(F, b)) is not None


def sdpa_inputs(b, hq, hk, L, S, e, ev, dtype=torch.float32):
    q, fq = pair(b, hq, L, e, dtype=dtype, requires_grad=True)
    k, fk = pair(b, hk, S, e, dtype=dtype, requires_grad=True)
    v, fv = pair(b, hk, S, ev, dtype=dtype, requires_grad=True)
    return (q, k, v), (fq, fk, fv)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("L,S", [(1, 1), (64, 64), (100, 37), (37, 150), (300, 290)])  # causal blocks of 32 and 64
@pytest.mark.parametrize("causal", [False, True])
def test_sdpa(dtype, L, S, causal):
    ta, fa = sdpa_inputs(2, 3, 3, L, S, 16, 8, dtype)
    ya = TF.scaled_dot_product_attention(*ta, is_causal=causal)
    yb = F.scaled_dot_product_attention(*fa, is_causal=causal)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == torch.float32 else TOL[dtype]
    assert_same(yb, ya, **tol)
    assert_grads_same(yb, ya, fa, ta, **tol)


@pytest.mark.parametrize("kind", ["bool", "float", "bool_all_false_row"])
def test_sdpa_masks_and_gqa(kind):
    ta, fa = sdpa_inputs(2, 4, 2, 20, 30, 8, 8, torch.float64)
    if kind == "float":
        m = torch.randn(2, 1, 20, 30, dtype=torch.float64)
    else:
        m = torch.rand(20, 30) > 0.4
        if kind == "bool_all_false_row":
            m[3] = False
    ya = TF.scaled_dot_product_attention(*ta, attn_mask=m, scale=0.3, enable_gqa=True)
    yb = F.scaled_dot_product_attention(*fa, attn_mask=to_flowlike(m), scale=0.3, enable_gqa=True)
    assert_same(yb, ya, **TOL[torch.float64])
    assert_grads_same(yb, ya, fa, ta, **TOL[torch.float64])


@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_reads_heads_split_out_of_a_projection_and_lays_out_its_results_as_torch(causal):
    # q, k, v as a GPT block makes them: one (B, L, 3 C) projection split and viewed as (B, H, L, E)
    x, fx = pair(2, 40, 3 * 24, requires_grad=True)

    def heads(lib, t):
        return [z.view(2, 40, 3, 8).transpose(1, 2) for z in t.split(24, dim=2)]
    ya = TF.scaled_dot_product_attention(*heads(torch, x), is_causal=causal)
    yb = F.scaled_dot_product_attention(*heads(fl, fx), is_causal=causal)
    assert yb.stride() == ya.stride()  # (B, L, H, E) in memory: transpose(1, 2) is contiguous
    assert yb.transpose(1, 2).is_contiguous()
    assert_same(yb, ya, rtol=1e-4, atol=1e-5)
    assert_grads_same(yb, ya, [fx], [x], rtol=1e-4, atol=1e-5)


def test_sdpa_half_and_3d():
    ta, fa = sdpa_inputs(1, 2, 2, 10, 12, 8, 8, torch.bfloat16)
    assert_same(F.scaled_dot_product_attention(*fa), TF.scaled_dot_product_attention(*ta), **TOL[torch.bfloat16])
    q, fq = pair(3, 7, 4)
    assert_same(F.scaled_dot_product_attention(fq, fq, fq, is_causal=True),
                TF.scaled_dot_product_attention(q, q, q, is_causal=True), rtol=1e-5, atol=1e-6)


def test_sdpa_errors():
    (q, k, v), (fq, fk, fv) = sdpa_inputs(1, 4, 2, 5, 6, 8, 8)
    cases = [lambda m, q, k, v: m.scaled_dot_product_attention(q, k, v),
             lambda m, q, k, v: m.scaled_dot_product_attention(q, k[..., :4], v, enable_gqa=True),
             lambda m, q, k, v: m.scaled_dot_product_attention(q, k.double(), v, enable_gqa=True)]
    for fn in cases:
        assert outcome_type(lambda: fn(TF, q, k, v)) is outcome_type(lambda: fn(F, fq, fk, fv)) is not None


def test_sdpa_dropout_statistics():
    ta, fa = sdpa_inputs(1, 1, 1, 32, 32, 8, 8)
    fl.manual_seed(1)
    yb = F.scaled_dot_product_attention(*fa, dropout_p=0.3)
    ref = TF.scaled_dot_product_attention(*ta)
    assert tuple(yb.shape) == tuple(ref.shape) and yb.dtype == fl.float32
    fl.manual_seed(1)
    assert np.array_equal(F.scaled_dot_product_attention(*fa, dropout_p=0.3).detach().numpy(), yb.detach().numpy())


def test_integer_inputs():
    a = torch.tensor([[-3, -1, 0, 2, 7]])
    b = to_flowlike(a)
    for fn in (lambda m, x: m.relu(x), lambda m, x: m.relu6(x), lambda m, x: m.hardtanh(x),
               lambda m, x: m.threshold(x, 1, 5)):
        assert_same(fn(F, b), fn(TF, a))
    for fn in (lambda m, x: m.leaky_relu(x), lambda m, x: m.layer_norm(x, [5]), lambda m, x: m.softmax(x, 1)):
        assert outcome_type(lambda: fn(TF, a)) is outcome_type(lambda: fn(F, b)) is NotImplementedError


def test_inplace_activation_in_autograd_graph():
    a, b = pair(4, 6, dtype=torch.float64, requires_grad=True)
    ya, yb = a * 1.5, b * 1.5
    TF.elu_(ya)
    F.elu_(yb)
    assert_same(yb, ya)
    assert_grads_same(yb, ya, [b], [a], **TOL[torch.float64])
    assert outcome_type(lambda: TF.relu_(a)) is outcome_type(lambda: F.relu_(b)) is RuntimeError


def test_sdpa_broadcast_batch_dims():
    q, fq = pair(2, 3, 5, 8, dtype=torch.float64, requires_grad=True)
    k, fk = pair(1, 3, 6, 8, dtype=torch.float64, requires_grad=True)
    v, fv = pair(1, 3, 6, 4, dtype=torch.float64, requires_grad=True)
    ya, yb = TF.scaled_dot_product_attention(q, k, v), F.scaled_dot_product_attention(fq, fk, fv)
    assert_same(yb, ya, **TOL[torch.float64])
    assert_grads_same(yb, ya, [fq, fk, fv], [q, k, v], **TOL[torch.float64])
    assert outcome_type(lambda: TF.scaled_dot_product_attention(q, k, v, dropout_p=1.5)) is \
        outcome_type(lambda: F.scaled_dot_product_attention(fq, fk, fv, dropout_p=1.5))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_double_backward(name):
    a, b = pair(3, 5, dtype=torch.float64, requires_grad=True)
    wa = torch.randn(3, 5, dtype=torch.float64)
    ga, = torch.autograd.grad((getattr(TF, name)(a, 1) * wa).sum(), a, create_graph=True)
    gb, = fl.autograd.grad((getattr(F, name)(b, 1) * to_flowlike(wa)).sum(), b, create_graph=True)
    assert_same(gb, ga, **TOL[torch.float64])
    (ga * ga).sum().backward()
    (gb * gb).sum().backward()
    assert_same(b.grad, a.grad, **TOL[torch.float64])


# hardsigmoid: PyTorch has no double backward; glu: a composite whose narrow views' backward is not
# differentiable in flowlike's core yet
DOUBLE = [(n, kw) for n, kw in ACTIVATIONS if n not in ("hardsigmoid", "glu")]


@pytest.mark.parametrize("name,kw", DOUBLE, ids=[f"{n}-{i}" for i, (n, _) in enumerate(DOUBLE)])
def test_activation_double_backward(name, kw):
    a, b = pair(5, 8, dtype=torch.float64, scale=2.5, requires_grad=True)
    w = torch.randn(getattr(TF, name)(a, **kw).shape, dtype=torch.float64)
    ga, = torch.autograd.grad((getattr(TF, name)(a, **kw) * w).sum(), a, create_graph=True)
    gb, = fl.autograd.grad((getattr(F, name)(b, **kw) * to_flowlike(w)).sum(), b, create_graph=True)
    assert_same(gb, ga, **(dict(rtol=1e-6, atol=1e-7) if name == "celu" else TOL[torch.float64]))
    if not ga.requires_grad:  # piecewise-linear: PyTorch's gradient is constant in the input
        return
    (ga * ga).sum().backward()
    (gb * gb).sum().backward()
    tol = dict(rtol=1e-6, atol=1e-7) if name == "celu" else dict(rtol=1e-9, atol=1e-9)  # see test_activations
    assert_same(b.grad, a.grad, **tol)


@pytest.mark.parametrize("rms", [False, True])
def test_norm_double_backward(rms):
    a, b = pair(4, 3, 6, dtype=torch.float64, requires_grad=True)
    wa, wb = pair(3, 6, dtype=torch.float64, requires_grad=True)
    ba, bb = pair(3, 6, dtype=torch.float64, requires_grad=True)
    ga_in = torch.randn(4, 3, 6, dtype=torch.float64)

    def run(m, fn, x, w, bias, g):
        y = fn.rms_norm(x, [3, 6], w, 1e-5) if rms else fn.layer_norm(x, [3, 6], w, bias)
        inputs = [x, w] if rms else [x, w, bias]
        grads = m.autograd.grad((y * g).sum(), inputs, create_graph=True)
        sum(gr.pow(2).sum() for gr in grads).backward()
        return grads

    grads_a = run(torch, TF, a, wa, ba, ga_in)
    grads_b = run(fl, F, b, wb, bb, to_flowlike(ga_in))
    for gb_, ga_ in zip(grads_b, grads_a):
        assert_same(gb_, ga_, **TOL[torch.float64])
    for xb, xa in ((b, a), (wb, wa)):
        assert_same(xb.grad, xa.grad, rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("causal_like", [False, True])
def test_sdpa_float_mask_gradient(causal_like):
    ta, fa = sdpa_inputs(2, 4, 2, 70, 90, 8, 8, torch.float64)
    m = torch.randn(4, 70, 90, dtype=torch.float64)
    if causal_like:
        m = m.masked_fill(torch.ones(70, 90, dtype=torch.bool).triu(1), float("-inf"))
    m.requires_grad_()
    fm = to_flowlike(m.detach()).requires_grad_()
    ya = TF.scaled_dot_product_attention(*ta, attn_mask=m, enable_gqa=True)
    yb = F.scaled_dot_product_attention(*fa, attn_mask=fm, enable_gqa=True)
    assert_same(yb, ya, **TOL[torch.float64])
    assert_grads_same(yb, ya, list(fa) + [fm], list(ta) + [m], **TOL[torch.float64])


# ---- gumbel_softmax ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("hard", [False, True])
def test_gumbel_softmax_invariants(hard):
    """Soft samples are distributions along dim; hard ones are one-hot at the soft sample's argmax; the gradient is
    the soft sample's (straight-through), checked against torch's formula on the same noise-free path; frequent
    logits win more often."""
    fl.manual_seed(0)
    logits = fl.tensor(np.log(np.array([[0.05, 0.15, 0.8]] * 4000, np.float32)), requires_grad=True)
    y = fl.nn.functional.gumbel_softmax(logits, tau=0.5, hard=hard, dim=-1)
    assert tuple(y.shape) == (4000, 3)
    np.testing.assert_allclose(y.detach().sum(-1).numpy(), 1.0, rtol=1e-5)
    if hard:
        assert set(np.unique(y.detach().numpy())) <= {0.0, 1.0}
    freq = y.detach().numpy().argmax(-1)
    counts = np.bincount(freq, minlength=3) / 4000
    np.testing.assert_allclose(counts, [0.05, 0.15, 0.8], atol=0.03)  # Gumbel-max: argmax ~ softmax(logits)
    w = fl.tensor(np.random.RandomState(9).randn(4000, 3).astype(np.float32))
    (y * w).sum().backward()
    # the gradient of sum(w * y_soft) with y_soft = softmax((logits + g) / tau): recover y_soft from the output of
    # an identical seeded soft draw and compare with the analytic softmax Jacobian
    fl.manual_seed(0)
    y_soft = fl.nn.functional.gumbel_softmax(logits.detach(), tau=0.5, hard=False).numpy()
    wn = w.numpy()
    expected = y_soft * (wn - (wn * y_soft).sum(-1, keepdims=True)) / 0.5
    np.testing.assert_allclose(logits.grad.numpy(), expected, rtol=1e-4, atol=1e-5)
    if hard:
        assert np.array_equal(y.detach().numpy().argmax(-1), y_soft.argmax(-1))
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        fl.nn.functional.gumbel_softmax(logits.detach(), eps=1e-5)
