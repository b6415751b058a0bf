"""scaled_dot_product_attention (`torch.nn.functional`): one fused C++ kernel, forward and backward,
that never materializes more than a tile of the attention matrix (csrc/ops/attention.h); and
multi_head_attention_forward, the computation of nn.MultiheadAttention, built on it."""
import math

from .. import _C, _creation
from .. import _dtype as D
from .._linalg_products import baddbmm
from ._functional_activation import softmax
from ._functional_linear import linear
from ._functional_vision import dropout, pad
from .. import _autocast

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]


@_autocast.lower_precision
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(query @ key^T * scale + mask) @ value over the last two dims.

    attn_mask: bool (True takes part) or float (added), broadcastable to (..., L, S); is_causal
    keeps key j for query i when j <= i (top-left aligned); dropout_p drops attention weights
    with flowlike's generator; enable_gqa lets key/value have fewer heads (dim -3) than query.
    """
    # the op's results are (output, logsumexp, dropout seed and offset); a NaN scale is the default 1/sqrt(E)
    return _C._scaled_dot_product_attention(query, key, value, attn_mask, float(dropout_p), bool(is_causal),
                                            math.nan if scale is None else float(scale), bool(enable_gqa), None)[0]


def _canonical_mask(mask, mask_name, target_type):
    """An additive float mask: a bool mask (True = masked out) becomes -inf/0 of target_type; float masks pass."""
    if mask is None:
        return None
    if mask.dtype == D.bool:
        return _creation.zeros(mask.shape, dtype=target_type).masked_fill(mask, float("-inf"))
    if not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the inputs are batched ((L, N, E)) or not ((L, E)); AssertionError for inconsistent ranks."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D "
                                 f"but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                     f"but found {attn_mask.dim()}-D tensor instead")
            if attn_mask.dim() == 3 and attn_mask.shape != (num_heads, query.shape[0], key.shape[0]):
                raise AssertionError(f"Expected `attn_mask` shape to be {(num_heads, query.shape[0], key.shape[0])} "
                                     f"but got {attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query "
                         "tensor")


def _in_projection(query, key, value, e, in_proj_weight, in_proj_bias, separate, q_proj_weight, k_proj_weight,
                   v_proj_weight):
    """q, k, v projected, as torch's _in_projection_packed: self-attention (query is key is value) is one GEMM
    over the packed weight, key is value one for key and value; each part is then made contiguous."""
    if separate:
        bq, bk, bv = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
        return linear(query, q_proj_weight, bq), linear(key, k_proj_weight, bk), linear(value, v_proj_weight, bv)
    if key is value:
        if query is key:
            proj = linear(query, in_proj_weight, in_proj_bias)
            return tuple(proj.unflatten(-1, (3, e)).movedim(-2, 0).contiguous())
        wq, wkv = in_proj_weight.split([e, 2 * e])
        bq, bkv = (None, None) if in_proj_bias is None else in_proj_bias.split([e, 2 * e])
        kv = linear(key, wkv, bkv).unflatten(-1, (2, e)).movedim(-2, 0).contiguous()
        return linear(query, wq, bq), kv[0], kv[1]
    wq, wk, wv = in_proj_weight.chunk(3)
    bq, bk, bv = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
    return linear(query, wq, bq), linear(key, wk, bk), linear(value, wv, bv)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """Multi-head attention over query (L, N, E) or (L, E), key and value (S, N, E) or (S, E), as
    torch.nn.functional.multi_head_attention_forward; returns (output, weights or None).

    Masks: bool (True = masked out) or float (added); attn_mask (L, S) or (N * num_heads, L, S),
    key_padding_mask (N, S). bias_k/bias_v (1, 1, E) append one learned key/value position, add_zero_attn
    one of zeros (both pad the masks with a position that takes part). is_causal is a hint that attn_mask
    is causal, which it then need not be given when need_weights is False and there is no key_padding_mask.
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the fused kernel's causal masking replaces the mask
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", query.dtype)
        if key_padding_mask is not None:
            is_causal = False  # the merged mask is no longer causal
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")

    q, k, v = _in_projection(query, key, value, embed_dim, in_proj_weight, in_proj_bias, use_separate_proj_weight,
                             q_proj_weight, k_proj_weight, v_proj_weight)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if attn_mask.shape != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if attn_mask.shape != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    # A learned key/value position appended along the sequence.
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = _C.cat([k, bias_k.repeat(1, bsz, 1)])
        v = _C.cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    # (L, N, E) -> (N * H, L, hd)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    for name, static, t in (("static_k", static_k, k), ("static_v", static_v, v)):
        if static is not None:
            if static.size(0) != bsz * num_heads:
                raise AssertionError(f"expecting {name}.size(0) of {bsz * num_heads}, but got {static.size(0)}")
            if static.size(2) != head_dim:
                raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {static.size(2)}")
    k = static_k if static_k is not None else k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    v = static_v if static_v is not None else v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)

    # A key/value position of zeros appended along the sequence.
    if add_zero_attn:
        zeros = _creation.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype)
        k = _C.cat([k, zeros], dim=1)
        v = _C.cat([v, zeros.to(v.dtype)], dim=1)
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    src_len = k.size(1)

    if key_padding_mask is not None:
        if key_padding_mask.shape != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{key_padding_mask.shape}")
        key_padding_mask = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1) \
            .reshape(bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0

    if need_weights:
        q_scaled = q * math.sqrt(1.0 / float(head_dim))
        if attn_mask is not None:
            weights = baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            weights = q_scaled @ k.transpose(-2, -1)
        weights = softmax(weights, dim=-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = weights @ v
        out = linear(out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim), out_proj_weight, out_proj_bias)
        out = out.reshape(tgt_len, bsz, out.size(1))
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights

    if attn_mask is not None:
        # (1, L, S) or (N * H, L, S) -> broadcastable to (N, H, L, S)
        attn_mask = attn_mask.unsqueeze(0) if attn_mask.size(0) == 1 else \
            attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = linear(out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim), out_proj_weight, out_proj_bias)
    out = out.reshape(tgt_len, bsz, out.size(1))
    if not is_batched:
        out = out.squeeze(1)
    return out, None
