"""The standard DDP communication hooks (torch.distributed.algorithms.ddp_comm_hooks.default_hooks): averaging in
full precision, or in float16/bfloat16 to halve the bytes sent. state is the process group (None: the world)."""
from ... import distributed_c10d as dist

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook"]


def _allreduce_fut(process_group, tensor):
    group = process_group if process_group is not None else dist.group.WORLD
    tensor.div_(group.size())
    return dist.all_reduce(tensor, group=group, async_op=True).get_future().then(lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket):
    """The bucket's gradients averaged over the ranks (what DDP does without a hook)."""
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket):
    group = process_group if process_group is not None else dist.group.WORLD
    buffer = bucket.buffer()
    compressed = buffer.to(dtype).div_(group.size())

    def decompress(fut):
        buffer.copy_(fut.value()[0])
        return buffer
    return dist.all_reduce(compressed, group=group, async_op=True).get_future().then(decompress)


def fp16_compress_hook(process_group, bucket):
    """Averages the gradients sent as float16, written back in the gradients' dtype."""
    from .... import float16
    return _compress_hook(float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """Averages the gradients sent as bfloat16, written back in the gradients' dtype."""
    from .... import bfloat16
    return _compress_hook(bfloat16, process_group, bucket)
