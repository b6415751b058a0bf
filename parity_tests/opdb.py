"""The op database: one declarative entry per op, from which the parity suites are generated
(test_opdb_parity.py, test_pointwise_parity.py) and the coverage table is printed (coverage.py).

An entry names the op by its torch path ("sum", "nn.functional.softmax", "linalg.inv"), says how to call
it (`call(lib, *inputs)`, the same body for torch and flowlike), gives sample inputs per dtype (torch tensors
covering broadcasting, non-contiguous, zero-size and zero-dim cases; calls may transpose or slice them to get
non-contiguous views on both sides), the dtypes it is checked on, its tolerance, whether gradients are
compared, and inputs on which both libraries must raise the same exception type.
"""
from dataclasses import dataclass, field
from typing import Callable

from helpers import LIBS, assert_same_error, check_both, outcome, resolve


FLOATS = ["float32", "float64", "float16", "bfloat16"]
INTS = ["int64", "int32", "int16", "int8", "uint8"]
ALL = FLOATS + INTS + ["bool"]

# ---- pointwise ops: name -> (dtypes, input domain, rtol) -------------------------------------------------------
UNARY = {
    "neg": (FLOATS + INTS, "any", 0), "abs": (ALL, "any", 0), "sign": (ALL, "any", 0), "square": (FLOATS + INTS, "any", 0),
    "exp": (FLOATS + INTS, "small", 2e-6), "exp2": (FLOATS, "small", 2e-6), "expm1": (FLOATS, "small", 2e-6),
    "log": (FLOATS + INTS, "positive", 2e-6), "log2": (FLOATS, "positive", 2e-6), "log10": (FLOATS, "positive", 2e-6),
    "log1p": (FLOATS, "positive", 2e-6), "sqrt": (FLOATS + INTS, "positive", 2e-6), "rsqrt": (FLOATS, "positive", 2e-6),
    "reciprocal": (FLOATS, "positive", 2e-6), "sin": (FLOATS, "any", 2e-6), "cos": (FLOATS, "any", 2e-6),
    "tan": (FLOATS, "small", 2e-5), "asin": (FLOATS, "unit", 2e-6), "acos": (FLOATS, "unit", 2e-6),
    "atan": (FLOATS, "any", 2e-6), "sinh": (FLOATS, "small", 2e-6), "cosh": (FLOATS, "small", 2e-6),
    "tanh": (FLOATS, "any", 2e-6), "asinh": (FLOATS, "any", 2e-6), "acosh": (FLOATS, "above1", 2e-6),
    "atanh": (FLOATS, "unit", 2e-6), "sigmoid": (FLOATS + INTS, "any", 2e-6), "erf": (FLOATS, "any", 2e-6),
    "erfc": (FLOATS, "any", 2e-6), "erfinv": (["float32", "float64"], "unit", 2e-5), "lgamma": (FLOATS, "positive", 2e-5),
    "digamma": (["float32", "float64"], "positive", 2e-5), "floor": (FLOATS + INTS, "any", 0),
    "ceil": (FLOATS + INTS, "any", 0), "trunc": (FLOATS + INTS, "any", 0), "frac": (FLOATS, "any", 1e-6),
    "bitwise_not": (INTS + ["bool"], "any", 0), "logical_not": (ALL, "any", 0), "isnan": (ALL, "any", 0),
    "isinf": (ALL, "any", 0), "isfinite": (ALL, "any", 0), "isposinf": (FLOATS + INTS, "any", 0),
    "isneginf": (FLOATS + INTS, "any", 0), "signbit": (FLOATS + INTS, "any", 0),
}

BINARY = {
    "add": (ALL, "any"), "sub": (FLOATS + INTS, "any"), "mul": (ALL, "any"), "div": (FLOATS + INTS, "nonzero"),
    "remainder": (FLOATS + INTS, "nonzero"), "fmod": (FLOATS + INTS, "nonzero"), "pow": (FLOATS, "positive"),
    "maximum": (ALL, "any"), "minimum": (ALL, "any"), "fmax": (FLOATS, "any"), "fmin": (FLOATS, "any"),
    "atan2": (FLOATS, "any"), "hypot": (["float32", "float64"], "any"), "logaddexp": (FLOATS, "any"),
    "logaddexp2": (FLOATS, "any"), "xlogy": (FLOATS, "positive"), "copysign": (FLOATS, "any"),
    "heaviside": (FLOATS + INTS, "any"), "bitwise_and": (INTS + ["bool"], "any"), "bitwise_or": (INTS + ["bool"], "any"),
    "bitwise_xor": (INTS + ["bool"], "any"), "eq": (ALL, "any"), "ne": (ALL, "any"), "lt": (ALL, "any"),
    "le": (ALL, "any"), "gt": (ALL, "any"), "ge": (ALL, "any"), "logical_and": (ALL, "any"),
    "logical_or": (ALL, "any"), "logical_xor": (ALL, "any"),
}

_DOMAINS = {"any": (-4, 4), "small": (-3, 3), "positive": (0.5, 4), "unit": (-0.9, 0.9), "above1": (1.1, 4),
            "nonzero": (1, 5), "prob": (0.05, 0.95)}


def sample(torch, dtype, domain, shape, seed):
    """A torch tensor of `dtype` with values in `domain`, reproducible from `seed`."""
    g = torch.Generator().manual_seed(seed)
    dt = getattr(torch, dtype)
    if dtype == "bool":
        return torch.rand(shape, generator=g) > 0.5
    lo, hi = _DOMAINS[domain]
    if not dt.is_floating_point:
        lo = 0 if dtype == "uint8" else lo
        return torch.randint(int(lo), int(hi) + 1, shape, generator=g).to(dt)
    return (torch.rand(shape, generator=g, dtype=torch.float64) * (hi - lo) + lo).to(dt)


def tolerance(dtype, rtol=1.3e-6):
    if dtype in ("float16", "bfloat16"):
        return dict(rtol=1e-2, atol=1e-2)
    return dict(rtol=max(rtol, 1.3e-6), atol=1e-6 if dtype != "float64" else 1e-10)


# ---- the other ops: OpInfo entries ----------------------------------------------------------------------------

@dataclass
class OpInfo:
    """One op of the database. `samples(torch, dtype)` returns [(label, [inputs...])]; `call(lib, *inputs)` runs it;
    `errors` are bodies `err(lib)` on which torch and flowlike must raise the same exception type."""
    name: str
    family: str
    call: Callable
    samples: Callable
    dtypes: tuple = ("float32", "float64")
    grad: bool = True
    rtol: float = 1e-5
    atol: float = 1e-6
    errors: tuple = field(default_factory=tuple)
    variant: str = ""  # tells apart several entries of one op (other arguments, layouts)
    # for gradcheck: the inputs the op is differentiable in (None: all; the others enter as constants, e.g. the
    # detached order of zeta), and whether torch has a second derivative to check against (CTC has none)
    grad_inputs: tuple = None
    gradgrad: bool = True

    @property
    def id(self):
        return self.name + (f"-{self.variant}" if self.variant else "")

    def resolve(self, lib):
        """The op's function in lib (flowlike or torch), or None when lib lacks it."""
        return resolve(lib, self.name)


def _one(shape, domain="any", seed=0):
    return lambda torch, dt: [("", [sample(torch, dt, domain, shape, seed)])]


def _shapes(*shapes, domain="any"):
    """Samples of one input per shape (labels: the shape)."""
    return lambda torch, dt: [(str(s), [sample(torch, dt, domain, s, i)]) for i, s in enumerate(shapes)]


def _pair(sa, sb, domain="any"):
    return lambda torch, dt: [("", [sample(torch, dt, domain, sa, 1), sample(torch, dt, domain, sb, 2)])]


def _f(name):
    """Calls lib.nn.functional.<name>."""
    return lambda lib, *a, **k: getattr(lib.nn.functional, name)(*a, **k)


def _classes(torch, n, c, seed=3):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, c, n, generator=g)


X3 = (3, 4, 5)
IMG = (2, 3, 8, 8)

DATABASE = [
    # reductions and scans (the reduced dims are moved so the input is also read non-contiguously)
    OpInfo("sum", "reduce", lambda m, x: m.sum(x, (0, 2)), _one(X3)),
    OpInfo("sum", "reduce", lambda m, x: x.transpose(0, 2).sum(1, keepdim=True), _one(X3), variant="keepdim"),
    OpInfo("mean", "reduce", lambda m, x: m.mean(x, -1), _one(X3)),
    OpInfo("prod", "reduce", lambda m, x: m.prod(x, 1), _one(X3, "unit")),
    OpInfo("amax", "reduce", lambda m, x: m.amax(x, (1, 2)), _one(X3)),
    OpInfo("max", "reduce", lambda m, x: m.max(x, 1).values, _one(X3), variant="dim"),
    OpInfo("std", "reduce", lambda m, x: m.std(x, 1), _one(X3)),
    OpInfo("var_mean", "reduce", lambda m, x: m.var_mean(x, (0, 1), correction=0)[0], _one(X3)),
    OpInfo("logsumexp", "reduce", lambda m, x: m.logsumexp(x * 40, 2), _one(X3)),
    OpInfo("norm", "reduce", lambda m, x: m.norm(x, 3, 1), _one(X3)),
    OpInfo("argmax", "reduce", lambda m, x: m.argmax(x, 1), _one(X3), grad=False),
    OpInfo("cumsum", "reduce", lambda m, x: m.cumsum(x, 1), _one(X3)),
    OpInfo("cumprod", "reduce", lambda m, x: m.cumprod(x, 2), _one(X3, "unit")),
    OpInfo("logcumsumexp", "reduce", lambda m, x: m.logcumsumexp(x, 0), _one(X3)),
    OpInfo("sort", "reduce", lambda m, x: m.sort(x, 1, descending=True).values, _one(X3)),
    OpInfo("topk", "reduce", lambda m, x: m.topk(x, 2, -1).values, _one(X3)),
    OpInfo("median", "reduce", lambda m, x: m.median(x, 2).values, _one(X3)),
    OpInfo("all", "reduce", lambda m, x: m.all(x > 0, 1), _one(X3), grad=False),
    OpInfo("sum", "reduce", lambda m, x: m.sum(x, 0), _one((0, 3)), variant="empty"),
    # views and shape ops
    OpInfo("reshape", "shape", lambda m, x: m.reshape(x.t(), (2, -1)), _one((4, 6))),
    OpInfo("permute", "shape", lambda m, x: m.permute(x, (2, 0, 1)) * 1, _one(X3)),
    OpInfo("flatten", "shape", lambda m, x: m.flatten(x, 1), _one(X3)),
    OpInfo("cat", "shape", lambda m, x, y: m.cat([x, y.t()], 0), _pair((3, 4), (4, 2))),
    OpInfo("stack", "shape", lambda m, x, y: m.stack([x, y], 1), _pair((3, 4), (3, 4))),
    OpInfo("split", "shape", lambda m, x: m.split(x, 2, 1)[1], _one((3, 5))),
    OpInfo("flip", "shape", lambda m, x: m.flip(x, (0, 2)), _one(X3)),
    OpInfo("roll", "shape", lambda m, x: m.roll(x, (1, -2), (0, 2)), _one(X3)),
    OpInfo("tril", "shape", lambda m, x: m.tril(x, -1), _one((4, 5))),
    OpInfo("diagonal", "shape", lambda m, x: m.diagonal(x, 1, 0, 2), _one(X3)),
    OpInfo("Tensor.expand", "shape", lambda m, x: x.unsqueeze(0).expand(2, 4, 5) * 1, _one((4, 5))),
    OpInfo("Tensor.repeat", "shape", lambda m, x: x.repeat(2, 1, 3), _one((4, 5))),
    OpInfo("gather", "index", lambda m, x: m.gather(x, 1, m.tensor([[0, 2], [1, 1], [3, 0]])), _one((3, 4))),
    OpInfo("index_select", "index", lambda m, x: m.index_select(x, 0, m.tensor([2, 0, 2])), _one((3, 4))),
    OpInfo("Tensor.__getitem__", "index", lambda m, x: x[m.tensor([0, 2]), 1:], _one((3, 4)), variant="advanced"),
    OpInfo("where", "index", lambda m, x, y: m.where(x > 0, x, y), _pair((3, 4), (4,))),
    OpInfo("masked_fill", "index", lambda m, x: x.masked_fill(x < 0, 0.5), _one((3, 4))),
    # products
    OpInfo("matmul", "linalg", lambda m, x, y: m.matmul(x, y), _pair((2, 3, 4), (4, 5))),
    OpInfo("matmul", "linalg", lambda m, x, y: m.matmul(x, y.transpose(-1, -2)), _pair((2, 1, 3, 4), (5, 6, 4)), variant="broadcast"),
    OpInfo("bmm", "linalg", lambda m, x, y: m.bmm(x, y), _pair((2, 3, 4), (2, 4, 5))),
    OpInfo("einsum", "linalg", lambda m, x, y: m.einsum("bij,bkj->bik", x, y), _pair((2, 3, 4), (2, 5, 4))),
    OpInfo("tensordot", "linalg", lambda m, x, y: m.tensordot(x, y, 2), _pair((3, 4, 5), (4, 5, 2))),
    OpInfo("addmm", "linalg", lambda m, x, y: m.addmm(y[0], x, y, beta=0.5), _pair((3, 4), (4, 4))),
    # torch has no derivative for _addmm_activation (tests/test_fused_epilogue.py checks flowlike's)
    OpInfo("_addmm_activation", "linalg", lambda m, x, y: m._addmm_activation(y[0], x, y.mT, beta=0.5, alpha=2),
           _pair((3, 4), (5, 4)), grad=False,
           errors=(lambda m: m._addmm_activation(m.ones(3), m.ones(2, 3), m.ones(2, 3)),)),
    OpInfo("_addmm_activation", "linalg", lambda m, x, y: m._addmm_activation(y[0, :3], x, y, use_gelu=True),
           _pair((6, 4), (4, 3)), variant="gelu", grad=False),
    OpInfo("linalg.inv", "linalg", lambda m, x: m.linalg.inv(x + 4 * m.eye(4, dtype=x.dtype)), _one((2, 4, 4))),
    OpInfo("linalg.det", "linalg", lambda m, x: m.linalg.det(x), _one((2, 3, 3))),
    OpInfo("linalg.solve", "linalg", lambda m, x, y: m.linalg.solve(x + 4 * m.eye(3, dtype=x.dtype), y),
           _pair((3, 3), (3, 2))),
    OpInfo("linalg.cholesky", "linalg", lambda m, x: m.linalg.cholesky(x @ x.mT + m.eye(3, dtype=x.dtype)), _one((2, 3, 3))),
    OpInfo("linalg.vector_norm", "linalg", lambda m, x: m.linalg.vector_norm(x, 3, dim=1), _one(X3)),
    OpInfo("linalg.matrix_norm", "linalg", lambda m, x: m.linalg.matrix_norm(x), _one(X3)),
    OpInfo("linalg.eigvalsh", "linalg", lambda m, x: m.linalg.eigvalsh(x + x.mT), _one((3, 3))),
    OpInfo("linalg.svdvals", "linalg", lambda m, x: m.linalg.svdvals(x), _one((4, 3)), rtol=1e-4),
    # nn.functional: activations
    OpInfo("nn.functional.relu", "nn", _f("relu"), _shapes((3, 4), (), (0, 2))),
    OpInfo("nn.functional.leaky_relu", "nn", lambda m, x: m.nn.functional.leaky_relu(x, 0.2), _one((3, 4))),
    OpInfo("nn.functional.gelu", "nn", _f("gelu"), _one((3, 4))),
    OpInfo("nn.functional.gelu", "nn", lambda m, x: m.nn.functional.gelu(x, approximate="tanh"), _one((3, 4)), variant="tanh"),
    OpInfo("nn.functional.silu", "nn", _f("silu"), _one((3, 4))),
    OpInfo("nn.functional.elu", "nn", _f("elu"), _one((3, 4))),
    OpInfo("nn.functional.softplus", "nn", lambda m, x: m.nn.functional.softplus(x, beta=2), _one((3, 4))),
    OpInfo("nn.functional.hardswish", "nn", _f("hardswish"), _one((3, 4))),
    OpInfo("nn.functional.mish", "nn", _f("mish"), _one((3, 4))),
    OpInfo("nn.functional.glu", "nn", _f("glu"), _one((3, 4))),
    OpInfo("nn.functional.softmax", "nn", lambda m, x: m.nn.functional.softmax(x * 30, dim=-1), _shapes((3, 5), (2, 3, 4))),
    OpInfo("nn.functional.log_softmax", "nn", lambda m, x: m.nn.functional.log_softmax(x.t(), dim=0), _one((3, 5))),
    # nn.functional: normalization, linear, attention
    OpInfo("nn.functional.layer_norm", "nn", lambda m, x, w: m.nn.functional.layer_norm(x, (5,), w[0], w[1]),
           _pair((3, 4, 5), (2, 5))),
    OpInfo("nn.functional.group_norm", "nn", lambda m, x: m.nn.functional.group_norm(x, 2), _one((2, 4, 3, 3))),
    OpInfo("nn.functional.batch_norm", "nn", lambda m, x: m.nn.functional.batch_norm(x, None, None, training=True),
           _one((4, 3, 5))),
    OpInfo("nn.functional.normalize", "nn", lambda m, x: m.nn.functional.normalize(x, dim=1), _one((3, 4))),
    OpInfo("nn.functional.linear", "nn", lambda m, x, w: m.nn.functional.linear(x, w, w[:, 0]), _pair((2, 3, 4), (5, 4))),
    OpInfo("nn.functional.linear", "nn", lambda m, x, w: m.nn.functional.linear(x, w), _pair((4, 4), (5, 4)), variant="2d"),
    OpInfo("nn.functional.bilinear", "nn", lambda m, x, w: m.nn.functional.bilinear(x, x[:, :3], w.reshape(2, 4, 3)),
           _pair((5, 4), (6, 4))),
    OpInfo("nn.functional.scaled_dot_product_attention", "nn",
           lambda m, q, k: m.nn.functional.scaled_dot_product_attention(q, k, k * 2, is_causal=True), _pair((2, 2, 5, 4), (2, 2, 5, 4)),
           rtol=1e-4),
    OpInfo("nn.functional.embedding", "nn", lambda m, w: m.nn.functional.embedding(m.tensor([[0, 2], [3, 3]]), w),
           _one((4, 3))),
    OpInfo("nn.functional.dropout", "nn", lambda m, x: m.nn.functional.dropout(x, 0.5, training=False), _one((3, 4)), variant="eval"),
    # nn.functional: convolution, pooling, resampling
    OpInfo("nn.functional.conv1d", "nn", lambda m, x, w: m.nn.functional.conv1d(x, w, padding=1), _pair((2, 3, 7), (4, 3, 3)),
           rtol=1e-4),
    OpInfo("nn.functional.conv2d", "nn", lambda m, x, w: m.nn.functional.conv2d(x, w, stride=2, padding=1),
           _pair(IMG, (4, 3, 3, 3)), rtol=1e-4),
    OpInfo("nn.functional.conv2d", "nn", lambda m, x, w: m.nn.functional.conv2d(x, w, groups=3, dilation=2),
           _pair(IMG, (6, 1, 3, 3)), rtol=1e-4, variant="groups"),
    OpInfo("nn.functional.conv_transpose2d", "nn", lambda m, x, w: m.nn.functional.conv_transpose2d(x, w, stride=2),
           _pair(IMG, (3, 2, 3, 3)), rtol=1e-4),
    OpInfo("nn.functional.max_pool2d", "nn", lambda m, x: m.nn.functional.max_pool2d(x, 3, 2, 1), _one(IMG)),
    OpInfo("nn.functional.avg_pool2d", "nn", lambda m, x: m.nn.functional.avg_pool2d(x, 2, ceil_mode=True), _one(IMG)),
    OpInfo("nn.functional.adaptive_avg_pool2d", "nn", lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, (3, 5)), _one(IMG)),
    OpInfo("nn.functional.pad", "nn", lambda m, x: m.nn.functional.pad(x, (1, 2, 2, 1), mode="reflect"), _one(IMG), variant="reflect"),
    OpInfo("nn.functional.interpolate", "nn",
           lambda m, x: m.nn.functional.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False), _one(IMG), variant="bilinear"),
    OpInfo("nn.functional.unfold", "nn", lambda m, x: m.nn.functional.unfold(x, 3, padding=1), _one(IMG)),
    # nn.functional: losses
    OpInfo("nn.functional.cross_entropy", "loss",
           lambda m, x: m.nn.functional.cross_entropy(x, m.tensor([1, 0, 4]), label_smoothing=0.1), _one((3, 5))),
    OpInfo("nn.functional.nll_loss", "loss", lambda m, x: m.nn.functional.nll_loss(x, m.tensor([1, 0, 4])), _one((3, 5))),
    OpInfo("nn.functional.mse_loss", "loss", lambda m, x, y: m.nn.functional.mse_loss(x, y), _pair((3, 4), (3, 4))),
    OpInfo("nn.functional.l1_loss", "loss", lambda m, x, y: m.nn.functional.l1_loss(x, y, reduction="sum"), _pair((3, 4), (3, 4))),
    OpInfo("nn.functional.smooth_l1_loss", "loss", lambda m, x, y: m.nn.functional.smooth_l1_loss(x, y, beta=0.5),
           _pair((3, 4), (3, 4))),
    OpInfo("nn.functional.binary_cross_entropy_with_logits", "loss",
           lambda m, x, y: m.nn.functional.binary_cross_entropy_with_logits(x, y.sigmoid()), _pair((3, 4), (3, 4))),
    OpInfo("nn.functional.kl_div", "loss", lambda m, x, y: m.nn.functional.kl_div(x.log_softmax(-1), y.softmax(-1),
                                                                                  reduction="batchmean"),
           _pair((3, 4), (3, 4))),
    # torch.fft on its three primitives (_fft_c2c, _fft_r2c, _fft_c2r): complex inputs as (..., 2) real views,
    # complex outputs through view_as_real, so that gradients run through real leaves
    OpInfo("fft.fft", "fft", lambda m, x: m.view_as_real(m.fft.fft(m.view_as_complex(x), norm="ortho")),
           _one((3, 12, 2))),
    OpInfo("fft.ifftn", "fft", lambda m, x: m.view_as_real(m.fft.ifftn(m.view_as_complex(x), s=(4, 7))),
           _one((3, 5, 2))),
    OpInfo("fft.rfft", "fft", lambda m, x: m.view_as_real(m.fft.rfft(x, 9)), _one((3, 10))),
    OpInfo("fft.rfft2", "fft", lambda m, x: m.view_as_real(m.fft.rfft2(x)), _one((2, 5, 6))),
    OpInfo("fft.irfft", "fft", lambda m, x: m.fft.irfft(m.view_as_complex(x), 11), _one((3, 6, 2))),
    OpInfo("fft.irfftn", "fft", lambda m, x: m.fft.irfftn(m.view_as_complex(x), dim=(0, 1)), _one((3, 5, 2))),
    OpInfo("fft.hfft", "fft", lambda m, x: m.fft.hfft(m.view_as_complex(x), norm="forward"), _one((2, 7, 2))),
    OpInfo("fft.ihfft", "fft", lambda m, x: m.view_as_real(m.fft.ihfft(x).resolve_conj()), _one((2, 9))),
    OpInfo("stft", "fft", lambda m, x: m.view_as_real(m.stft(x, 8, 2, window=m.hann_window(8, dtype=x.dtype),
                                                             return_complex=True)), _one((2, 30))),
    OpInfo("fft.fftshift", "fft", lambda m, x: m.fft.fftshift(x), _one((4, 5))),
]


def _samples(*shapes, domains=None, seed=0):
    """One sample of several inputs (one per shape), each in its domain (default "any")."""
    domains = domains or ["any"] * len(shapes)
    return lambda torch, dt: [("", [sample(torch, dt, d, s, seed + i) for i, (s, d) in enumerate(zip(shapes, domains))])]


def _no_input(torch, dt):
    return [("", [torch.zeros((), dtype=getattr(torch, dt))])]


# the API-coverage ops: special functions, math and statistics composites, in-place torch.x_ forms, window
# functions, the ATen-signature torch.* forms of nn ops, split/copy variants
API_COVERAGE = [
    # special functions (C++ kernels in csrc/ops/pointwise_special.cpp, composites in flowlike/special.py)
    OpInfo("i0", "special", lambda m, x: m.i0(x * 3), _one(X3)),
    OpInfo("i0", "special", lambda m, x: m.i0(x), _one(X3), dtypes=("int64", "float16", "bfloat16"), grad=False,
           variant="dtypes"),
    OpInfo("special.i0e", "special", lambda m, x: m.special.i0e(x * 10), _one(X3)),
    OpInfo("special.i1", "special", lambda m, x: m.special.i1(x * 8), _one(X3)),
    OpInfo("special.i1e", "special", lambda m, x: m.special.i1e(x * 10), _one(X3)),
    OpInfo("special.modified_bessel_i0", "special", lambda m, x: m.special.modified_bessel_i0(x * 3), _one(X3),
           grad=False),
    OpInfo("special.modified_bessel_i1", "special", lambda m, x: m.special.modified_bessel_i1(x * 3), _one(X3),
           grad=False),
    OpInfo("special.erfcx", "special", lambda m, x: m.special.erfcx(x * 3), _one(X3)),
    OpInfo("special.erfcx", "special", lambda m, x: m.special.erfcx(x.abs() * 10 + 20), _one(X3), variant="tail"),
    OpInfo("special.log_ndtr", "special", lambda m, x: m.special.log_ndtr(x * 6), _one(X3)),
    OpInfo("special.ndtri", "special", lambda m, x: m.special.ndtri(x), _one(X3, "prob"), rtol=1e-4),
    OpInfo("special.zeta", "special", lambda m, x, q: m.special.zeta(x.detach().abs() * 2 + 1.5, q.abs() + 0.5),
           _pair((3, 4), (4,)), grad_inputs=(1,)),
    OpInfo("special.polygamma", "special", lambda m, x: m.special.polygamma(2, x.abs() + 0.5), _one(X3)),
    OpInfo("polygamma", "special", lambda m, x: m.polygamma(1, x), _one(X3, "positive"), variant="trigamma"),
    # negatives and the poles' neighbourhoods: torch's reflection, whose float32 sin(pi x) keeps few digits there
    OpInfo("polygamma", "special", lambda m, x: m.polygamma(1, x * 8), _one(X3), variant="trigamma_negative"),
    OpInfo("polygamma", "special", lambda m, x: m.polygamma(0, x), _one(X3, "positive"), variant="digamma"),
    OpInfo("Tensor.polygamma", "special", lambda m, x: x.polygamma(3), _one(X3, "positive")),
    OpInfo("digamma", "special", lambda m, x: m.digamma(x), _one(X3, "positive"), variant="grad"),
    OpInfo("igamma", "special", lambda m, a, x: m.igamma(a.detach().abs() * 3 + 0.1, x.abs() * 3), _pair((3, 4), (3, 4)),
           rtol=1e-4, grad_inputs=(1,), errors=(lambda m: m.igamma(m.tensor([1.0], requires_grad=True), m.tensor([1.0])).sum().backward(),)),
    OpInfo("special.gammaincc", "special", lambda m, a, x: m.special.gammaincc(a.detach().abs() * 3 + 0.1, x.abs() * 3),
           _pair((3, 4), (4,)), rtol=1e-4, grad_inputs=(1,)),
    OpInfo("special.gammainc", "special", lambda m, a, x: m.special.gammainc(a.detach() + 30, x * 5 + 30),
           _pair((3, 4), (4,)), rtol=1e-4, variant="large", grad_inputs=(1,)),
    OpInfo("mvlgamma", "special", lambda m, x: m.mvlgamma(x.abs() + 2, 3), _one(X3),
           errors=(lambda m: m.mvlgamma(m.tensor([3.0]), 0),)),
    OpInfo("mvlgamma", "special", lambda m, x: m.mvlgamma(x, 2), _one(X3), dtypes=("int64",), grad=False, variant="int"),
    OpInfo("special.multigammaln", "special", lambda m, x: m.special.multigammaln(x + 5, 4), _one(X3)),
    OpInfo("Tensor.mvlgamma_", "special", lambda m, x: (x * 1).mvlgamma_(2), _one(X3, "positive")),
    OpInfo("sinc", "special", lambda m, x: m.sinc(x * m.tensor([0.0, 1.0, 1.0, 1.0, 1.0]).to(x.dtype)), _one(X3)),
    OpInfo("special.spherical_bessel_j0", "special", lambda m, x: m.special.spherical_bessel_j0(x * 5), _one(X3),
           grad=False),
    OpInfo("special.softmax", "special", lambda m, x: m.special.softmax(x, 1), _one(X3)),
    OpInfo("special.log_softmax", "special", lambda m, x: m.special.log_softmax(x, 0), _one(X3)),
    OpInfo("special.logsumexp", "special", lambda m, x: m.special.logsumexp(x, (0, 2)), _one(X3)),
    # integer and float math
    OpInfo("gcd", "math", lambda m, a, b: m.gcd(a * 3, b * 2), _pair((3, 4), (4,)), dtypes=("int64", "int32", "int16", "int8"),
           grad=False, errors=(lambda m: m.gcd(m.tensor([4.0]), m.tensor([2.0])),)),
    OpInfo("lcm", "math", lambda m, a, b: m.lcm(a * 3, b), _pair((3, 4), (4,)), dtypes=("int64", "int32", "uint8"),
           grad=False),
    OpInfo("Tensor.gcd_", "math", lambda m, a, b: (a * 5).gcd_(b), _pair((3, 4), (4,)), dtypes=("int64",), grad=False),
    OpInfo("deg2rad", "math", lambda m, x: m.deg2rad(x * 90), _one(X3)),
    OpInfo("deg2rad", "math", lambda m, x: m.deg2rad(x), _one(X3), dtypes=("int64", "float16"), grad=False,
           variant="dtypes"),
    OpInfo("rad2deg", "math", lambda m, x: m.rad2deg(x), _one(X3)),
    OpInfo("ldexp", "math", lambda m, x, e: m.ldexp(x, e.abs().long()), _pair((3, 4), (4,))),
    OpInfo("ldexp", "math", lambda m, x: m.ldexp(x, m.tensor([-2, 0, 3, 1])), _one((3, 4)), grad=False,
           variant="negative"),
    OpInfo("frexp", "math", lambda m, x: m.frexp(x * 1000), _one(X3), dtypes=("float32", "float64", "float16", "bfloat16"),
           errors=(lambda m: m.frexp(m.tensor([1, 2])),)),
    OpInfo("frexp", "math", lambda m, x: m.frexp(m.tensor([0.0, -0.0, 1e-40, 5e-45, 3e38, float("inf"), float("nan"), 1.0,
                                                           0.9999999]).to(x.dtype)),
           _no_input, grad=False, variant="edges"),
    OpInfo("rsub", "math", lambda m, x, y: m.rsub(x, y, alpha=2), _pair((3, 4), (4,))),
    OpInfo("logit_", "math", lambda m, x: m.logit_(x * 1, 0.1), _one(X3, "prob")),
    OpInfo("nan_to_num_", "math", lambda m, x: m.nan_to_num_(m.log(x), nan=0.5), _one(X3)),
    OpInfo("exp_", "math", lambda m, x: m.exp_(x * 1), _one(X3)),
    OpInfo("clamp_", "math", lambda m, x: m.clamp_(x * 1, -0.5, 0.5), _one(X3)),
    OpInfo("arccos_", "math", lambda m, x: m.arccos_(x * 1), _one(X3, "unit")),
    OpInfo("Tensor.arctan2_", "math", lambda m, x, y: (x * 1).arctan2_(y), _pair((3, 4), (4,))),
    OpInfo("Tensor.deg2rad_", "math", lambda m, x: (x * 1).deg2rad_(), _one(X3),
           errors=(lambda m: m.tensor([1, 2]).deg2rad_(), lambda m: m.tensor([1, 2]).exp_())),
    OpInfo("i0_", "math", lambda m, x: m.i0_(x * 1), _one(X3)),
    # statistics, histograms, integration
    OpInfo("dist", "stats", lambda m, x, y: m.dist(x, y), _pair((3, 4), (4,))),
    OpInfo("dist", "stats", lambda m, x, y: m.dist(x, y, 3.5), _pair((3, 4), (3, 4)), variant="p"),
    OpInfo("renorm", "stats", lambda m, x: m.renorm(x, 2, 0, 1.5), _one(X3)),
    OpInfo("Tensor.renorm", "stats", lambda m, x: x.renorm(1, -1, 2.0), _one(X3),
           errors=(lambda m: m.renorm(m.ones(2, 2), -1, 0, 1.0), lambda m: m.renorm(m.ones(2, 2), 2, 0, -1.0))),
    OpInfo("cov", "stats", lambda m, x: m.cov(x), _one((3, 5))),
    OpInfo("cov", "stats", lambda m, x, w: m.cov(x, correction=0, fweights=m.tensor([1, 2, 1, 3, 1]), aweights=w.abs() + 0.1),
           _pair((3, 5), (5,)), variant="weights",
           errors=(lambda m: m.cov(m.ones(2, 2, 2)), lambda m: m.cov(m.ones(2, 3), fweights=m.tensor([1.0, 2.0, 3.0])))),
    OpInfo("cov", "stats", lambda m, x: m.cov(x), _one((5,)), variant="1d"),
    OpInfo("corrcoef", "stats", lambda m, x: m.corrcoef(x), _one((3, 6))),
    OpInfo("histogram", "stats", lambda m, x: m.histogram(x, 5), _one((40,)), grad=False),
    OpInfo("histogram", "stats", lambda m, x, w: m.histogram(x, 4, range=(-2.0, 3.0), weight=w.abs(), density=True),
           _pair((5, 8), (5, 8)), grad=False, variant="weighted"),
    OpInfo("histogram", "stats", lambda m, x: m.histogram(x, m.tensor([-3.0, -1.0, 0.0, 0.5, 4.0]).to(x.dtype)),
           _one((30,)), grad=False, variant="edges",
           errors=(lambda m: m.histogram(m.tensor([1, 2]), 3), lambda m: m.histogram(m.ones(3), 0))),
    OpInfo("histogram", "stats", lambda m, x: m.histogram(x * 0 + 1.5, 3), _one((4,)), grad=False, variant="flat"),
    OpInfo("histogram", "stats", lambda m, x: m.histogram(x[:0], 3), _one((4,)), grad=False, variant="empty"),
    OpInfo("histogramdd", "stats", lambda m, x: (lambda h: (h.hist,) + tuple(h.bin_edges))(m.histogramdd(x, [3, 4])),
           _one((40, 2)), grad=False),
    OpInfo("histogramdd", "stats", lambda m, x, w: m.histogramdd(x, 3, range=[-1.0, 1.0, -2.0, 2.0, 0.0, 3.0], weight=w.abs(),
                                                                 density=True).hist,
           _pair((5, 8, 3), (5, 8)), grad=False, variant="weighted"),
    OpInfo("histogramdd", "stats", lambda m, x: m.histogramdd(x, [m.tensor([-3.0, 0.0, 3.0]).to(x.dtype),
                                                                  m.tensor([-1.0, 1.0]).to(x.dtype)]).hist,
           _one((30, 2)), grad=False, variant="edges",
           errors=(lambda m: m.histogramdd(m.ones(3), 2), lambda m: m.histogramdd(m.ones(3, 2), [2, 2, 2]))),
    OpInfo("trapezoid", "stats", lambda m, y: m.trapezoid(y, dx=0.5, dim=1), _one(X3)),
    OpInfo("trapezoid", "stats", lambda m, y: m.trapezoid(y, m.tensor([0.0, 0.5, 2.0, 3.0, 3.5]).to(y.dtype)), _one(X3),
           variant="x"),
    OpInfo("trapz", "stats", lambda m, y: m.trapz(y), _one(X3)),
    OpInfo("cumulative_trapezoid", "stats", lambda m, y: m.cumulative_trapezoid(y, dim=0), _one(X3)),
    OpInfo("cumulative_trapezoid", "stats", lambda m, y, x: m.cumulative_trapezoid(y, x.cumsum(-1)), _pair(X3, (5,)),
           variant="x"),
    OpInfo("gradient", "stats", lambda m, x: m.gradient(x), _one(X3)),
    OpInfo("gradient", "stats", lambda m, x: m.gradient(x, spacing=[2.0, 0.5], dim=[0, -1], edge_order=2), _one(X3),
           variant="edge2", errors=(lambda m: m.gradient(m.ones(2, 2), edge_order=2),)),
    OpInfo("gradient", "stats", lambda m, x, c: m.gradient(x, spacing=(c.abs().cumsum(0) + 0.1,), dim=1),
           _pair(X3, (4,)), variant="coordinates"),
    OpInfo("gradient", "stats", lambda m, x, c: m.gradient(x, spacing=(c.abs().cumsum(0) + 0.1,), dim=2, edge_order=2),
           _pair(X3, (5,)), variant="coordinates2"),
    # indexing
    # (gradients through scatter_reduce, which index_reduce is written with; amin/amax ties share as torch)
    OpInfo("index_reduce", "index", lambda m, x, y: m.index_reduce(x, 0, m.tensor([0, 2, 0]), y, "prod"),
           _pair((3, 4), (3, 4)),
           errors=(lambda m: m.index_reduce(m.ones(3), 0, m.tensor([0]), m.ones(1), "sum"),)),
    OpInfo("Tensor.index_reduce", "index", lambda m, x, y: x.index_reduce(1, m.tensor([1, 1, 0]), y, "amax",
                                                                          include_self=False),
           _pair((2, 4), (2, 3))),
    OpInfo("index_reduce", "index", lambda m, x, y: m.index_reduce(x, 0, m.tensor([2, 2, 0]), y, "mean"),
           _pair((3, 4), (3, 4)), dtypes=("float32", "float64", "int64"), variant="mean"),
    OpInfo("index_reduce", "index", lambda m, x, y: m.index_reduce(x, 0, m.tensor([2, 2, 0]), y, "amin",
                                                                   include_self=False),
           _pair((3, 4), (3, 4)), variant="amin"),
    OpInfo("put", "index", lambda m, x, y: m.put(x, m.tensor([0, 5, -1]), y), _pair((3, 4), (3,)),
           errors=(lambda m: m.put(m.ones(2), m.tensor([2]), m.ones(1)),)),
    OpInfo("Tensor.put_", "index", lambda m, x, y: (x * 1).put_(m.tensor([[1, 1], [6, 0]]), y, accumulate=True),
           _pair((3, 4), (2, 2))),
    OpInfo("Tensor.put_", "index", lambda m, x, y: (x * 1).t().put_(m.tensor([[1, 1], [6, 0]]), y), _pair((3, 4), (2, 2)),
           grad=False, variant="strided"),
    OpInfo("isin", "index", lambda m, x, y: m.isin(x, y), _pair((3, 4), (5,)), dtypes=("int64", "int32", "float32"),
           grad=False),
    OpInfo("isin", "index", lambda m, x: m.isin(x, 2, invert=True), _one((3, 4)), dtypes=("int64",), grad=False,
           variant="scalar"),
    OpInfo("combinations", "shape", lambda m, x: m.combinations(x), _one((4,))),
    OpInfo("combinations", "shape", lambda m, x: m.combinations(x, 3, with_replacement=True), _one((3,)),
           variant="replacement"),
    OpInfo("combinations", "shape", lambda m, x: m.combinations(x, 3), _one((2,)), variant="empty"),
    # shape: split and copy variants, vander, unravel_index
    OpInfo("split_with_sizes", "shape", lambda m, x: m.split_with_sizes(x, [1, 3], 1), _one((3, 4))),
    OpInfo("unsafe_chunk", "shape", lambda m, x: m.unsafe_chunk(x, 2, 0), _one((3, 4))),
    OpInfo("Tensor.unsafe_split", "shape", lambda m, x: x.unsafe_split(2, 1), _one((3, 5))),
    OpInfo("permute_copy", "shape", lambda m, x: m.permute_copy(x, (2, 0, 1)), _one(X3)),
    OpInfo("diagonal_copy", "shape", lambda m, x: m.diagonal_copy(x, 1, 0, 2), _one(X3)),
    OpInfo("expand_copy", "shape", lambda m, x: m.expand_copy(x, (2, 4, 5)), _one((4, 1))),
    OpInfo("slice_copy", "shape", lambda m, x: m.slice_copy(x, 1, 1, None, 2), _one(X3)),
    OpInfo("unbind_copy", "shape", lambda m, x: m.unbind_copy(x, 1), _one(X3)),
    OpInfo("t_copy", "shape", lambda m, x: m.t_copy(x), _one((3, 4))),
    OpInfo("view_copy", "shape", lambda m, x: m.view_copy(x, (5, -1)), _one(X3)),
    OpInfo("narrow_copy", "shape", lambda m, x: m.narrow_copy(x, 2, 1, 3), _one(X3)),
    OpInfo("Tensor.sum_to_size", "shape", lambda m, x: x.sum_to_size(1, 4, 1), _one(X3)),
    # (no gradients: torch's own vander backward fails on its in-place cumprod)
    OpInfo("vander", "shape", lambda m, x: m.vander(x, 4), _one((5,)), grad=False),
    OpInfo("vander", "shape", lambda m, x: m.vander(x, increasing=True), _one((4,)), dtypes=("int32", "float32"),
           grad=False, variant="increasing"),
    OpInfo("unravel_index", "shape", lambda m, x: m.unravel_index(m.tensor([0, 5, 7, -1, 11]), (2, 3, 2)), _no_input,
           dtypes=("int64",), grad=False, errors=(lambda m: m.unravel_index(m.tensor([1.5]), (2,)),)),
    # window functions
    OpInfo("hann_window", "creation", lambda m, x: m.hann_window(10, dtype=x.dtype), _no_input, grad=False),
    OpInfo("hamming_window", "creation", lambda m, x: m.hamming_window(9, False, dtype=x.dtype), _no_input, grad=False),
    OpInfo("blackman_window", "creation", lambda m, x: m.blackman_window(7, dtype=x.dtype), _no_input, grad=False),
    OpInfo("bartlett_window", "creation", lambda m, x: m.bartlett_window(8, dtype=x.dtype), _no_input, grad=False),
    OpInfo("bartlett_window", "creation", lambda m, x: m.bartlett_window(7, False, dtype=x.dtype), _no_input, grad=False,
           variant="odd", errors=(lambda m: m.bartlett_window(-1), lambda m: m.hann_window(4, dtype=m.int64))),
    OpInfo("kaiser_window", "creation", lambda m, x: m.kaiser_window(12, True, 8.0, dtype=x.dtype), _no_input, grad=False),
    OpInfo("hann_window", "creation", lambda m, x: m.hann_window(1, dtype=x.dtype), _no_input, grad=False, variant="one"),
    # torch.* forms of nn ops (ATen signatures)
    OpInfo("dropout", "nn", lambda m, x: m.dropout(x, 0.5, False), _one((3, 4))),
    OpInfo("alpha_dropout", "nn", lambda m, x: m.alpha_dropout(x, 0.0, True), _one((3, 4))),
    OpInfo("feature_dropout", "nn", lambda m, x: m.feature_dropout(x, 0.3, False), _one((2, 3, 4))),
    # padding_idx=2: by definition no gradient reaches the row it reads, which finite differences would see
    OpInfo("embedding", "nn", lambda m, w: m.embedding(w, m.tensor([[0, 2], [3, 3]]), 2), _one((4, 3)), grad_inputs=()),
    OpInfo("bilinear", "nn", lambda m, x, w: m.bilinear(x, x[:, :3], w.reshape(2, 4, 3)), _pair((5, 4), (6, 4))),
    OpInfo("binary_cross_entropy_with_logits", "loss",
           lambda m, x, y: m.binary_cross_entropy_with_logits(x, y.sigmoid(), None, m.full_like(y[0], 1.5), 2),
           _pair((3, 4), (3, 4))),
    OpInfo("cosine_embedding_loss", "loss",
           lambda m, x, y: m.cosine_embedding_loss(x, y, m.tensor([1, -1, 1]), 0.1, 0), _pair((3, 4), (3, 4))),
    OpInfo("ctc_loss", "loss", lambda m, x: m.ctc_loss(x.log_softmax(2), m.tensor([[1, 2], [3, 1]]), [6, 5], [2, 2]),
           _one((6, 2, 4)), rtol=1e-4, gradgrad=False),
    OpInfo("hinge_embedding_loss", "loss", lambda m, x: m.hinge_embedding_loss(x, m.tensor([1, -1, 1, -1]), 0.5),
           _one((3, 4))),
    OpInfo("kl_div", "loss", lambda m, x, y: m.kl_div(x.log_softmax(-1), y.softmax(-1)), _pair((3, 4), (3, 4))),
    OpInfo("kl_div", "loss", lambda m, x, y: m.kl_div(x.log_softmax(-1), y.softmax(-1), 1), _pair((3, 4), (3, 4)),
           variant="mean"),
    OpInfo("ctc_loss", "loss", lambda m, x: m.ctc_loss(x.log_softmax(2), m.tensor([[1, 2], [3, 1]]), [6, 5], [2, 2], 0, 1),
           _one((6, 2, 4)), rtol=1e-4, variant="mean", gradgrad=False),
    OpInfo("kl_div", "loss", lambda m, x, y: m.kl_div(x, y, 2, log_target=True), _pair((3, 4), (3, 4)),
           variant="log_target"),
    OpInfo("margin_ranking_loss", "loss", lambda m, x, y: m.margin_ranking_loss(x, y, m.tensor([1, -1, 1, 1]), 0.2, 2),
           _pair((4,), (4,))),
    OpInfo("poisson_nll_loss", "loss", lambda m, x, y: m.poisson_nll_loss(x, y.abs(), True, True, 1e-8, 1),
           _pair((3, 4), (3, 4))),
    OpInfo("triplet_margin_loss", "loss", lambda m, a, p, n: m.triplet_margin_loss(a, p, n, 1.0, 2, 1e-6, True, 0),
           _samples((3, 4), (3, 4), (3, 4))),
    OpInfo("native_layer_norm", "nn", lambda m, x, w: m.native_layer_norm(x, [5], w[0], w[1], 1e-5)[0],
           _pair((3, 4, 5), (2, 5))),
    OpInfo("native_layer_norm", "nn", lambda m, x: m.native_layer_norm(x, [4, 5], None, None, 1e-5), _one(X3),
           grad=False, variant="stats"),
    OpInfo("native_batch_norm", "nn", lambda m, x: m.native_batch_norm(x, None, None, None, None, True, 0.1, 1e-5),
           _one((4, 3, 5)), grad=False),
    OpInfo("native_batch_norm", "nn", lambda m, x, w: m.native_batch_norm(x, w[0], w[1], w[2].abs(), w[3].abs(), False,
                                                                          0.1, 1e-5), _pair((4, 3, 5), (4, 3)),
           grad=False, variant="eval"),
    OpInfo("native_group_norm", "nn", lambda m, x: m.native_group_norm(x, None, None, 2, 4, 9, 2, 1e-5), _one((2, 4, 3, 3)),
           grad=False),
    OpInfo("constant_pad_nd", "nn", lambda m, x: m.constant_pad_nd(x, [1, -1, 2, 0], 0.5), _one(X3)),
    OpInfo("channel_shuffle", "nn", lambda m, x: m.channel_shuffle(x, 2), _one((2, 4, 3)),
           errors=(lambda m: m.channel_shuffle(m.ones(2, 3, 2), 2), lambda m: m.channel_shuffle(m.ones(2, 4), 2))),
    OpInfo("nn.functional.channel_shuffle", "nn", lambda m, x: m.nn.functional.channel_shuffle(x, 3), _one((2, 6, 2, 2))),
    OpInfo("grid_sampler", "nn", lambda m, x, g: m.grid_sampler(x, g.tanh(), 0, 1, False),
           _pair((1, 2, 4, 5), (1, 3, 3, 2))),
    OpInfo("affine_grid_generator", "nn", lambda m, t: m.affine_grid_generator(t, [2, 3, 4, 5], False), _one((2, 2, 3))),
    OpInfo("convolution", "nn", lambda m, x, w: m.convolution(x, w, w[:, 0, 0, 0], [2, 1], [1, 1], [1, 1], False, [0, 0], 1),
           _pair(IMG, (4, 3, 3, 3)), rtol=1e-4),
    OpInfo("convolution", "nn", lambda m, x, w: m.convolution(x, w, None, [2], [1], [1], True, [1], 1),
           _pair((2, 3, 7), (3, 2, 3)), rtol=1e-4, variant="transposed"),
    OpInfo("conv_tbc", "nn", lambda m, x, w, b: m.conv_tbc(x, w, b, 1), _samples((5, 2, 3), (3, 3, 4), (4,)),
           errors=(lambda m: m.conv_tbc(m.ones(5, 3), m.ones(3, 3, 4), m.ones(4)),
                   lambda m: m.conv_tbc(m.ones(5, 2, 3), m.ones(3, 2, 4), m.ones(4)),
                   lambda m: m.conv_tbc(m.ones(5, 2, 3), m.ones(3, 3, 4), m.ones(2)),
                   lambda m: m.conv_tbc(m.ones(1, 2, 3), m.ones(3, 3, 4), m.ones(4)))),
    OpInfo("conv_tbc", "nn", lambda m, x, w, b: m.conv_tbc(x, w, b, -1), _samples((6, 2, 3), (3, 3, 2), (2,)),
           variant="crop"),
    OpInfo("rnn_tanh_cell", "nn", lambda m, x, h, wi, wh: m.rnn_tanh_cell(x, h, wi, wh, wi[:, 0], wh[0]),
           _samples((2, 3), (2, 4), (4, 3), (4, 4))),
    OpInfo("lstm_cell", "nn", lambda m, x, h, c, wi, wh: m.lstm_cell(x, (h, c), wi, wh, wi[:, 0]),
           _samples((2, 3), (2, 2), (2, 2), (8, 3), (8, 2))),
    OpInfo("gru_cell", "nn", lambda m, x, h, wi, wh: m.gru_cell(x, h, wi, wh, wi[:, 1], wh[:, 0]),
           _samples((2, 3), (2, 2), (6, 3), (6, 2))),
    # more math, indexing and shape utilities
    OpInfo("angle", "math", lambda m, x: m.angle(x), _one(X3)),
    OpInfo("angle", "math", lambda m, x: m.angle(x), _one(X3), dtypes=("int64", "float16"), grad=False, variant="dtypes"),
    OpInfo("frobenius_norm", "linalg", lambda m, x: m.frobenius_norm(x, (0, 2)), _one(X3)),
    OpInfo("nuclear_norm", "linalg", lambda m, x: m.nuclear_norm(x), _one((4, 3)), rtol=1e-4),
    OpInfo("Tensor.fill_diagonal_", "index", lambda m, x: (x * 1).fill_diagonal_(0.5, wrap=True), _one((7, 3))),
    OpInfo("Tensor.fill_diagonal_", "index", lambda m, x: (x * 1).fill_diagonal_(2.0), _one((3, 3, 3)), variant="cube",
           errors=(lambda m: m.ones(2, 3, 3).fill_diagonal_(1.0), lambda m: m.ones(3).fill_diagonal_(1.0))),
    OpInfo("nonzero_static", "index", lambda m, x: m.nonzero_static(x > 0, size=7), _one((3, 4)), grad=False),
    OpInfo("nonzero_static", "index", lambda m, x: m.nonzero_static(x, size=2, fill_value=-5), _one((3, 4)),
           dtypes=("int64",), grad=False, variant="truncated"),
    # (no gradients: torch 2.13 gives input the gradient of the scattered positions instead of the others)
    OpInfo("as_strided_scatter", "shape", lambda m, x, y: m.as_strided_scatter(x, y, (2, 2), (1, 3), 1),
           _pair((3, 4), (2, 2)), grad=False),
] + [OpInfo(f"special.{name}", "special", lambda m, x, n=name: getattr(m.special, n)(x, m.tensor([[-1], [0], [1], [3], [6]])),
            _one((7,), "unit"), grad=False)
     for name in ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
                  "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
                  "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
                  "laguerre_polynomial_l", "legendre_polynomial_p")] + [
    # Bessel functions over all three ranges of their algorithms (series, recurrence, asymptotic); torch has no
    # gradients for them
    # (atol: torch's own airy_ai is off by up to 3e-6 just below x = -2.09, where its algorithm changes)
    OpInfo("special.airy_ai", "special", lambda m, x: m.special.airy_ai(x * 6), _one((4, 10)), grad=False, atol=1e-5),
    OpInfo("special.airy_ai", "special", lambda m, x: m.special.airy_ai(x * 20 + 4), _one((4, 10)), grad=False,
           atol=1e-5, variant="wide"),
    OpInfo("special.bessel_j0", "special", lambda m, x: m.special.bessel_j0(x * 10), _one((4, 10)), grad=False),
    OpInfo("special.bessel_j1", "special", lambda m, x: m.special.bessel_j1(x * 10), _one((4, 10)), grad=False),
    OpInfo("special.bessel_y0", "special", lambda m, x: m.special.bessel_y0(x * 10), _one((4, 10)), grad=False),
    OpInfo("special.bessel_y1", "special", lambda m, x: m.special.bessel_y1(x * 10), _one((4, 10)), grad=False),
    OpInfo("special.modified_bessel_k0", "special", lambda m, x: m.special.modified_bessel_k0(x * 10), _one((4, 10)),
           grad=False),
    OpInfo("special.modified_bessel_k1", "special", lambda m, x: m.special.modified_bessel_k1(x * 5), _one((4, 10)),
           grad=False),
    OpInfo("special.scaled_modified_bessel_k0", "special", lambda m, x: m.special.scaled_modified_bessel_k0(x * 50),
           _one((4, 10)), grad=False),
    OpInfo("special.scaled_modified_bessel_k1", "special", lambda m, x: m.special.scaled_modified_bessel_k1(x * 50),
           _one((4, 10)), grad=False),
    OpInfo("special.bessel_j0", "special", lambda m, x: m.special.bessel_j0(m.tensor([0.0, 1e-8, 2.0, 25.0, 1e3, 1e6,
                                                                                    float("inf"), float("nan")]).to(x.dtype)),
           _no_input, dtypes=("float64",), grad=False, variant="edges"),  # (torch's float32 kernel drifts at 1e6)
    OpInfo("special.legendre_polynomial_p", "special", lambda m, x: m.special.legendre_polynomial_p(x * 2, 12), _one((9,)),
           grad=False, variant="scalar_n"),
    OpInfo("special.hermite_polynomial_h", "special", lambda m, n: m.special.hermite_polynomial_h(0.3, n.abs().long()),
           _one((6,)), grad=False, variant="scalar_x"),
]
DATABASE += API_COVERAGE

def by_name():
    return {op.name: op for op in DATABASE}


# ---- the check, shared by the pytest suite and the coverage command -------------------------------------------

def check(op, dtype):
    """Compares flowlike with torch on every sample of `op` in `dtype` with the parity harness (helpers.check_both):
    output dtype, shape and values, the gradients of every floating input (float32/float64, when op.grad), and
    the exception type of op.errors. Returns the list of failure descriptions (empty: the op passes)."""
    torch, fl = LIBS

    half = dtype in ("float16", "bfloat16")
    tol = dict(rtol=max(op.rtol, 1e-2) if half else op.rtol, atol=max(op.atol, 1e-2) if half else op.atol)
    failures = []
    for label, inputs in op.samples(torch, dtype):
        where = f"{op.id} [{dtype}{', ' + label if label else ''}]"
        try:
            check_both(op.call, *inputs, grad=op.grad and dtype in ("float32", "float64"), **tol,
                       grad_rtol=op.rtol * 10, grad_atol=op.atol * 10)
        except Exception as e:  # noqa: BLE001 - every failure is reported, the coverage table counts them
            failures.append(f"{where}: {type(e).__name__}: {e}")
    for err in op.errors:
        try:
            assert_same_error(outcome(lambda: err(torch)), outcome(lambda: err(fl)))
        except Exception as e:  # noqa: BLE001
            failures.append(f"{op.id} error case: {e}")
    return failures
