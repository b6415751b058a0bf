"""SyncBatchNorm (torch.nn.SyncBatchNorm): batch normalization whose statistics cover the batch of every rank of a
process group, for data-parallel training with small per-rank batches."""
from ...autograd import Function
from .normalization import _BatchNorm

__all__ = ["SyncBatchNorm"]


class _GatherStats(Function):
    """(world, 3, C) from every rank's (3, C) statistics; backward sums the gradients of every rank's copy and hands
    each rank the gradient of its own statistics, so the input gradient counts every rank's loss, as torch's."""

    @staticmethod
    def forward(ctx, stats, group):
        from ... import distributed as dist, empty
        ctx.group = group
        world = dist.get_world_size(group)
        out = empty((world,) + tuple(stats.shape), dtype=stats.dtype)
        dist.all_gather_into_tensor(out, stats.contiguous(), group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        from ... import distributed as dist
        grad = grad.contiguous().clone()
        dist.all_reduce(grad, group=ctx.group)
        return grad[dist.get_rank(ctx.group)], None


class SyncBatchNorm(_BatchNorm):
    """Batch normalization over the (N, C, ...) inputs of all ranks of process_group (default: the world): in
    training, the mean and variance are those of the union of the ranks' batches; in eval, or outside a process
    group, it is BatchNorm. convert_sync_batchnorm turns a model's BatchNorm layers into SyncBatchNorm."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input):
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        from ... import distributed as dist
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        synced = self.training and dist.is_initialized() and dist.get_world_size(self.process_group) > 1
        if not synced:
            return super().forward(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked.item())
        dims = [0] + list(range(2, input.dim()))
        shape = [1, -1] + [1] * (input.dim() - 2)
        count = input.numel() // input.size(1)
        mean = input.mean(dims)
        m2 = (input - mean.view(shape)).square().sum(dims)  # this rank's centred sum of squares
        from ... import full_like, stack
        stats = _GatherStats.apply(stack([full_like(mean, float(count)), mean, m2]), self.process_group)
        counts, means, m2s = stats[:, 0], stats[:, 1], stats[:, 2]
        total = counts.sum(0)
        global_mean = (counts * means).sum(0) / total
        global_m2 = (m2s + counts * (means - global_mean).square()).sum(0)  # Chan et al.'s merge of the ranks
        var = global_m2 / total
        if self.track_running_stats and self.running_mean is not None:
            from ... import no_grad
            with no_grad():
                self.running_mean.mul_(1 - factor).add_(global_mean.detach() * factor)
                n = total[0].item()
                self.running_var.mul_(1 - factor).add_(global_m2.detach() / max(n - 1, 1) * factor)
        out = (input - global_mean.view(shape)) / (var.view(shape) + self.eps).sqrt()
        if self.weight is not None:
            out = out * self.weight.view(shape)
        if self.bias is not None:
            out = out + self.bias.view(shape)
        return out

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """module with every BatchNorm*D layer replaced by a SyncBatchNorm holding the same parameters and
        running statistics (module itself when it is such a layer)."""
        from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d
        output = module
        if isinstance(module, (BatchNorm1d, BatchNorm2d, BatchNorm3d)):
            output = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                   module.track_running_stats, process_group)
            if module.affine:
                output.weight = module.weight
                output.bias = module.bias
            output.running_mean = module.running_mean
            output.running_var = module.running_var
            output.num_batches_tracked = module.num_batches_tracked
            output.training = module.training
        for name, child in module.named_children():
            output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return output
