"""torch.distributed._functional_collectives: collectives that return a new tensor instead of writing in place.
flowlike's collectives complete before they return, so a result never waits: wait_tensor hands it back as is."""
from ..autograd import Function
from . import distributed_c10d as c10d

__all__ = ["wait_tensor", "all_reduce", "all_gather_tensor", "all_to_all_single", "all_to_all_single_autograd"]


def wait_tensor(tensor):
    """The finished result of a functional collective (flowlike's results are finished when returned)."""
    return tensor


def all_reduce(self, reduceOp, group):
    """A new tensor: the reduction (reduceOp, e.g. "sum") of `self` over the group."""
    out = self.clone()
    c10d.all_reduce(out, op=getattr(c10d.ReduceOp, reduceOp.upper()), group=group)
    return out


def all_gather_tensor(self, gather_dim, group):
    """A new tensor: every rank's `self` concatenated along gather_dim, in rank order."""
    from .. import cat
    parts = [self.new_empty(self.shape) for _ in range(c10d.get_world_size(group))]
    c10d.all_gather(parts, self.contiguous(), group=group)
    return cat(parts, dim=gather_dim)


def all_to_all_single(self, output_split_sizes, input_split_sizes, group):
    """A new tensor: chunk j of `self` (dim 0, input_split_sizes) goes to rank j; output chunk j comes from rank j."""
    rows = sum(output_split_sizes) if output_split_sizes else self.shape[0]
    out = self.new_empty((rows,) + tuple(self.shape[1:]))
    c10d.all_to_all_single(out, self.contiguous(), output_split_sizes, input_split_sizes, group=group)
    return out


class _AllToAllSingle(Function):
    @staticmethod
    def forward(ctx, x, output_split_sizes, input_split_sizes, group):
        ctx.splits, ctx.group = (output_split_sizes, input_split_sizes), group
        return all_to_all_single(x, output_split_sizes, input_split_sizes, group)

    @staticmethod
    def backward(ctx, grad):
        # The gradient travels back the way the rows came: the splits swap.
        output_split_sizes, input_split_sizes = ctx.splits
        return all_to_all_single(grad, input_split_sizes, output_split_sizes, ctx.group), None, None, None


def all_to_all_single_autograd(self, output_split_sizes, input_split_sizes, group):
    """all_to_all_single whose backward sends the gradient rows back to the ranks they came from."""
    return _AllToAllSingle.apply(self, output_split_sizes, input_split_sizes, group)
