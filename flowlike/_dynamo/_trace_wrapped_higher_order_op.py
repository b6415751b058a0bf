"""torch._dynamo._trace_wrapped_higher_order_op: TransformGetItemToIndex, the mode under which `A[q_idx]` with a
0-d index tensor stays a tensor index inside vmap (transformers builds attention masks that way)."""

__all__ = ["TransformGetItemToIndex"]


class TransformGetItemToIndex:
    """Context manager: in torch it keeps `A[i]` with a 0-d tensor i from reading i on the host, which vmap's
    batched tensors forbid. flowlike's vmap calls the function once per sample on ordinary tensors, where indexing
    with a 0-d tensor already gives the same values, so there is nothing to transform."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
