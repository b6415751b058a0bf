"""scaled_dot_product_attention (`torch.nn.functional`): one fused C++ kernel, forward and backward,
that never materializes more than a tile of the attention matrix (csrc/ops/attention.h)."""
from .. import _C

__all__ = ["scaled_dot_product_attention"]


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(query @ key^T * scale + mask) @ value over the last two dims.

    attn_mask: bool (True takes part) or float (added), broadcastable to (..., L, S); is_causal
    keeps key j for query i when j <= i (top-left aligned); dropout_p drops attention weights
    with flowlike's generator; enable_gqa lets key/value have fewer heads (dim -3) than query.
    """
    return _C._scaled_dot_product_attention(query, key, value, attn_mask, float(dropout_p), bool(is_causal),
                                            None if scale is None else float(scale), bool(enable_gqa), None)
