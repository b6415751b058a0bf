"""Activation modules (thin wrappers over nn.functional with torch's constructor arguments and reprs) and
MultiheadAttention."""
from ... import _creation
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module

__all__ = ["ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Hardswish", "Hardsigmoid",
           "Hardtanh", "Hardshrink", "Softshrink", "Softplus", "Softsign", "Tanhshrink", "Threshold", "GLU",
           "LogSigmoid", "PReLU", "RReLU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Softmin", "Softmax2d",
           "MultiheadAttention"]


def _inplace(m):
    return "inplace=True" if m.inplace else ""


def _activation(name, fn, params=(), repr_fn=None, doc=""):
    """A module class calling fn(input, *params) whose constructor takes params = [(name, default), ...]."""
    names = [p for p, _ in params]

    def __init__(self, *args, **kwargs):
        Module.__init__(self)
        values = dict(params)
        values.update(zip(names, args))
        for k, v in kwargs.items():
            if k not in values:
                raise TypeError(f"{name}.__init__() got an unexpected keyword argument '{k}'")
            values[k] = v
        for k in names:
            setattr(self, k, values[k])

    def forward(self, input):
        return fn(self, input)

    def extra_repr(self):
        return repr_fn(self) if repr_fn else ""
    return type(name, (Module,), {"__init__": __init__, "forward": forward, "extra_repr": extra_repr,
                                  "__doc__": doc or f"Applies {name} elementwise.", "__constants__": names})


_IP = [("inplace", False)]
ReLU = _activation("ReLU", lambda m, x: F.relu(x, m.inplace), _IP, _inplace)
ReLU6 = _activation("ReLU6", lambda m, x: F.relu6(x, m.inplace), _IP, _inplace)
SELU = _activation("SELU", lambda m, x: F.selu(x, m.inplace), _IP, _inplace)
SiLU = _activation("SiLU", lambda m, x: F.silu(x, m.inplace), _IP, _inplace)
Mish = _activation("Mish", lambda m, x: F.mish(x, m.inplace), _IP, _inplace)
Hardswish = _activation("Hardswish", lambda m, x: F.hardswish(x, m.inplace), _IP, _inplace)
Hardsigmoid = _activation("Hardsigmoid", lambda m, x: F.hardsigmoid(x, m.inplace), _IP, _inplace)
LeakyReLU = _activation("LeakyReLU", lambda m, x: F.leaky_relu(x, m.negative_slope, m.inplace),
                        [("negative_slope", 0.01)] + _IP,
                        lambda m: f"negative_slope={m.negative_slope}" + (", inplace=True" if m.inplace else ""))
ELU = _activation("ELU", lambda m, x: F.elu(x, m.alpha, m.inplace), [("alpha", 1.0)] + _IP,
                  lambda m: f"alpha={m.alpha}" + (", inplace=True" if m.inplace else ""))
CELU = _activation("CELU", lambda m, x: F.celu(x, m.alpha, m.inplace), [("alpha", 1.0)] + _IP,
                   lambda m: f"alpha={m.alpha}" + (", inplace=True" if m.inplace else ""))
GELU = _activation("GELU", lambda m, x: F.gelu(x, approximate=m.approximate), [("approximate", "none")],
                   lambda m: f"approximate={m.approximate!r}")
Hardtanh = _activation("Hardtanh", lambda m, x: F.hardtanh(x, m.min_val, m.max_val, m.inplace),
                       [("min_val", -1.0), ("max_val", 1.0)] + _IP,
                       lambda m: f"min_val={m.min_val}, max_val={m.max_val}" + (", inplace=True" if m.inplace else ""))
Hardshrink = _activation("Hardshrink", lambda m, x: F.hardshrink(x, m.lambd), [("lambd", 0.5)], lambda m: f"{m.lambd}")
Softshrink = _activation("Softshrink", lambda m, x: F.softshrink(x, m.lambd), [("lambd", 0.5)], lambda m: str(m.lambd))
Softplus = _activation("Softplus", lambda m, x: F.softplus(x, m.beta, m.threshold), [("beta", 1.0), ("threshold", 20.0)],
                       lambda m: f"beta={m.beta}, threshold={m.threshold}")
Threshold = _activation("Threshold", lambda m, x: F.threshold(x, m.threshold, m.value, m.inplace),
                        [("threshold", None), ("value", None)] + _IP,
                        lambda m: f"threshold={m.threshold}, value={m.value}" + (", inplace=True" if m.inplace else ""))
RReLU = _activation("RReLU", lambda m, x: F.rrelu(x, m.lower, m.upper, m.training, m.inplace),
                    [("lower", 1.0 / 8), ("upper", 1.0 / 3)] + _IP,
                    lambda m: f"lower={m.lower}, upper={m.upper}" + (", inplace=True" if m.inplace else ""))
GLU = _activation("GLU", lambda m, x: F.glu(x, m.dim), [("dim", -1)], lambda m: f"dim={m.dim}")
Softsign = _activation("Softsign", lambda m, x: F.softsign(x))
Tanhshrink = _activation("Tanhshrink", lambda m, x: F.tanhshrink(x))
LogSigmoid = _activation("LogSigmoid", lambda m, x: F.logsigmoid(x))
Sigmoid = _activation("Sigmoid", lambda m, x: x.sigmoid())
Tanh = _activation("Tanh", lambda m, x: x.tanh())
Softmax = _activation("Softmax", lambda m, x: F.softmax(x, m.dim), [("dim", None)], lambda m: f"dim={m.dim}")
LogSoftmax = _activation("LogSoftmax", lambda m, x: F.log_softmax(x, m.dim), [("dim", None)], lambda m: f"dim={m.dim}")


def _softmax2d(m, x):
    if x.dim() not in (3, 4):
        raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {x.dim()}D instead")
    return F.softmax(x, -3)


Softmax2d = _activation("Softmax2d", _softmax2d)
Softmin = _activation("Softmin", lambda m, x: F.softmin(x, m.dim), [("dim", None)], lambda m: f"dim={m.dim}")


class PReLU(Module):
    """max(0, x) + weight * min(0, x) with a learned weight (one, or one per channel)."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(_creation.empty(num_parameters, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class MultiheadAttention(Module):
    """Multi-head attention with torch's parameters (in_proj_weight/bias or q/k/v_proj_weight, out_proj) and
    forward(query, key, value, key_padding_mask, need_weights, attn_mask, average_attn_weights, is_causal)."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        if embed_dim % num_heads:
            raise AssertionError("embed_dim must be divisible by num_heads")
        self.embed_dim, self.kdim, self.vdim = embed_dim, kdim or embed_dim, vdim or embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads, self.dropout, self.batch_first = num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(_creation.empty((3 * embed_dim, embed_dim), dtype=dtype))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(_creation.empty((embed_dim, embed_dim), dtype=dtype))
            self.k_proj_weight = Parameter(_creation.empty((embed_dim, self.kdim), dtype=dtype))
            self.v_proj_weight = Parameter(_creation.empty((embed_dim, self.vdim), dtype=dtype))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_creation.empty(3 * embed_dim, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        if add_bias_kv:
            self.bias_k = Parameter(_creation.empty((1, 1, embed_dim), dtype=dtype))
            self.bias_v = Parameter(_creation.empty((1, 1, embed_dim), dtype=dtype))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        """query (L, N, E), key and value (S, N, E) (batch first with batch_first; unbatched: (L, E), (S, E)) ->
        (output, attention weights averaged over heads or per head; None when need_weights is False)."""
        batched = query.dim() == 3
        if self.batch_first and batched:
            # one view per distinct tensor, as torch: self-attention (query is key is value) keeps its packed
            # input projection
            views = {}
            query, key, value = (views.setdefault(id(t), t.transpose(1, 0)) for t in (query, key, value))
        separate = not self._qkv_same_embed_dim
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
            self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, use_separate_proj_weight=separate, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and batched:
            out = out.transpose(1, 0)
        return out, weights
