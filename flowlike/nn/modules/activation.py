"""Activation modules (thin wrappers over nn.functional with torch's constructor arguments and reprs) and
MultiheadAttention."""
import math

from ... import _creation
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module

__all__ = ["ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Hardswish", "Hardsigmoid",
           "Hardtanh", "Hardshrink", "Softshrink", "Softplus", "Softsign", "Tanhshrink", "Threshold", "GLU",
           "LogSigmoid", "PReLU", "RReLU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Softmin", "MultiheadAttention"]


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
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError("MultiheadAttention(add_bias_kv/add_zero_attn) is not supported by flowlike yet")
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
        self.bias_k = self.bias_v = None
        self.add_zero_attn = False
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

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        unbatched = query.dim() == 2
        if unbatched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif self.batch_first:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        tgt_len, bsz, embed = query.shape
        src_len = key.shape[0]
        e, h, hd = self.embed_dim, self.num_heads, self.head_dim
        if embed != e:
            raise AssertionError(f"was expecting embedding dimension of {e}, but got {embed}")
        b = self.in_proj_bias
        bq, bk, bv = (b[:e], b[e:2 * e], b[2 * e:]) if b is not None else (None, None, None)
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            wq, wk, wv = w[:e], w[e:2 * e], w[2 * e:]
        else:
            wq, wk, wv = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        q, k, v = F.linear(query, wq, bq), F.linear(key, wk, bk), F.linear(value, wv, bv)
        # (L, N, E) -> (N, H, L, hd)
        q = q.reshape(tgt_len, bsz, h, hd).permute(1, 2, 0, 3)
        k = k.reshape(src_len, bsz, h, hd).permute(1, 2, 0, 3)
        v = v.reshape(src_len, bsz, h, hd).permute(1, 2, 0, 3)
        mask = _merge_masks(attn_mask, key_padding_mask, bsz, h, tgt_len, src_len, q.dtype)
        dropout_p = self.dropout if self.training else 0.0
        if need_weights:
            scores = (q * (1.0 / math.sqrt(hd))) @ k.transpose(-2, -1)
            if is_causal and mask is None:
                mask = _creation.full((tgt_len, src_len), float("-inf"), dtype=q.dtype).triu(1)
            if mask is not None:
                scores = scores + mask
            weights = F.softmax(scores, dim=-1)
            out = F.dropout(weights, dropout_p, True) @ v if dropout_p else weights @ v
        else:
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p,
                                                 is_causal=is_causal and mask is None)
            weights = None
        out = F.linear(out.permute(2, 0, 1, 3).reshape(tgt_len, bsz, e), self.out_proj.weight, self.out_proj.bias)
        if weights is not None and average_attn_weights:
            weights = weights.mean(1)
        if unbatched:
            out = out.squeeze(1)
            weights = weights.squeeze(0) if weights is not None else None
        elif self.batch_first:
            out = out.transpose(0, 1)
        return out, weights


def _merge_masks(attn_mask, key_padding_mask, bsz, heads, tgt_len, src_len, dtype):
    """One additive float mask broadcastable to (N, H, L, S) from a bool/float attn_mask and key_padding_mask
    (True = masked out, as torch's nn.MultiheadAttention means it)."""
    def additive(m):
        if m.dtype == _creation.tensor(True).dtype:
            return _creation.zeros(m.shape, dtype=dtype).masked_fill(m, float("-inf"))
        return m.to(dtype)
    mask = None
    if attn_mask is not None:
        mask = additive(attn_mask)
        if mask.dim() == 3:  # (N*H, L, S)
            mask = mask.reshape(bsz, heads, tgt_len, src_len)
    if key_padding_mask is not None:
        kpm = additive(key_padding_mask).reshape(bsz, 1, 1, src_len)
        mask = kpm if mask is None else mask + kpm
    return mask
