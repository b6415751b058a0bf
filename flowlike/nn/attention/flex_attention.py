"""torch.nn.attention.flex_attention on flowlike: not implemented. Its names exist so that libraries can test
`isinstance(mask, BlockMask)` (never true here); building a block mask or calling flex_attention raises
NotImplementedError. Use scaled_dot_product_attention (transformers' attn_implementation="sdpa" or "eager")."""

__all__ = ["BlockMask", "create_block_mask", "flex_attention", "AuxRequest"]

_DEFAULT_SPARSE_BLOCK_SIZE = 128


def _unsupported(what):
    return NotImplementedError(f"{what}: flowlike has no flex_attention; use scaled_dot_product_attention")


class BlockMask:
    """flex_attention's block-sparse mask, for isinstance checks; constructing one raises."""

    def __new__(cls, *args, **kwargs):
        raise _unsupported("BlockMask")


class AuxRequest:
    """flex_attention's request for auxiliary outputs; constructing one raises."""

    def __new__(cls, *args, **kwargs):
        raise _unsupported("AuxRequest")


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device="cuda", BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,
                      _compile=False):
    """Not available on flowlike (see the module docstring)."""
    raise _unsupported("create_block_mask")


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None, enable_gqa=False,
                   return_lse=False, kernel_options=None, *, return_aux=None):
    """Not available on flowlike (see the module docstring)."""
    raise _unsupported("flex_attention")
