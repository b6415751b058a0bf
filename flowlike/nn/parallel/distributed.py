"""DistributedDataParallel: data parallel training over a process group (torch.nn.parallel.DistributedDataParallel).

Note [DDP buckets and hooks]
The trainable parameters are cut into buckets of about bucket_cap_mb (the first one 1 MiB, so that communication
starts early), in reverse registration order: backward produces the last layers' gradients first. A post-accumulate
hook on each parameter counts it ready; when a bucket is complete its gradients are flattened into one buffer and
an all-reduce of that buffer starts (non-blocking) while backward goes on. Buckets start strictly in bucket order
on every rank (MPI needs the same collective order everywhere), so a bucket completed early waits for its
predecessors. When the last bucket has started, the hook waits for all of them and writes the averaged gradients
back into each .grad: when backward returns, every rank holds the same gradients.

With find_unused_parameters, forward walks the autograd graph from the outputs to the parameters (through
AccumulateGrad.variable) and marks the parameters it cannot reach ready at once, contributing zeros; a map of the
parameters used anywhere is all-reduced with the last bucket, and a parameter used on no rank keeps grad None.
"""
import contextlib

import numpy as np

from ... import _C
from ...distributed import distributed_c10d as c10d
from ...distributed.algorithms.join import Join, Joinable, JoinHook
from ...graph.compile import disable as _compiler_disable
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024


class _Bucket:
    def __init__(self, params):
        self.params = params
        self.pending = len(params)
        self.future = None  # of the averaged flat gradients


class DistributedDataParallel(Module, Joinable):
    """Wraps module for data parallel training: every rank runs forward and backward on its own batch, and
    backward leaves on every rank the gradients averaged over the ranks (all-reduced in buckets while backward
    runs). Parameters and buffers are broadcast from rank 0 at construction; buffers again before each forward
    (broadcast_buffers). The wrapped module is `.module`, so state_dict keys start with "module.".

    process_group (or a 1-D device_mesh) picks the ranks that average; no_sync() skips the reduction (gradients
    accumulate locally), find_unused_parameters lets forward leave some parameters out of the loss, join() lets
    ranks with fewer batches than others leave their loop early. device_ids / output_device must be None (flowlike's collectives run on the CPU).
    gradient_as_bucket_view and static_graph are accepted; they are memory/speed hints that do not change
    results here."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True, init_sync=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None,
                 skip_all_reduce_unused_params=False):
        super().__init__()
        if device_ids is not None and any(d not in ("cpu", -1) for d in device_ids):
            raise ValueError("DistributedDataParallel device_ids and output_device arguments only work with "
                             "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                             f"{device_ids}, output_device {output_device}: flowlike runs DDP on the CPU")
        if process_group is not None and device_mesh is not None:
            raise RuntimeError("Cannot specify both process_group and device_mesh arguments.")
        if device_mesh is not None:
            if device_mesh.ndim != 1:
                raise RuntimeError(f"Only 1D device mesh is supported, but got {device_mesh}.")
            process_group = device_mesh.get_group(0)
        self.module = module
        self.device_mesh = device_mesh
        self.process_group = c10d._group(process_group)
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        seen = set()
        self._params = []
        for p in module.parameters():
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                self._params.append(p)
        self._verify_same_model()
        if init_sync:
            self._broadcast_state([p for p in self._params] + [b for b in module.buffers()])
        cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self.bucket_bytes_cap = cap
        self._buckets = self._make_buckets(cap)
        self._bucket_of = {}
        for bi, bucket in enumerate(self._buckets):
            for p in bucket.params:
                self._bucket_of[id(p)] = bi
        self._hooks = [p.register_post_accumulate_grad_hook(self._grad_ready) for p in self._params]
        self._armed = False          # a forward expects its backward to reduce
        self._next_bucket = 0
        self._marked = 0             # parameters marked ready in this iteration
        self._used = None            # ids of the parameters this iteration's forward reached (find_unused)
        self._comm_hook = None       # (state, hook) of register_comm_hook
        Joinable.__init__(self)      # a disabled join config until join() enables it
        self._divide_by_initial_world_size = True
        self._divisor = self.process_group.size()  # what the gradients are divided by (join() may lower it)

    # ---- construction ---------------------------------------------------------------------------------------

    def _verify_same_model(self):
        mine = [(tuple(p.shape), str(p.dtype)) for p in self._params]
        everyone = [None] * self.process_group.size()
        c10d.all_gather_object(everyone, mine, group=self.process_group)
        for r, theirs in enumerate(everyone):
            if len(theirs) != len(mine):
                raise RuntimeError(f"DDP expects same model across all ranks, but Rank {c10d.get_rank()} has "
                                   f"{len(mine)} params, while rank {r} has inconsistent {len(theirs)} params.")
            for i, (a, b) in enumerate(zip(mine, theirs)):
                if a != b:
                    raise RuntimeError(f"DDP expects same model across all ranks, but rank {r}'s parameter {i} has "
                                       f"shape {list(b[0])} {b[1]} where rank {c10d.get_rank()} has {list(a[0])} "
                                       f"{a[1]}")

    def _broadcast_state(self, tensors, src=0):
        """Copies group rank src's tensors into every rank's (one broadcast per dtype)."""
        from ... import cat, no_grad
        by_dtype = {}
        for t in tensors:
            by_dtype.setdefault(t.dtype, []).append(t)
        with no_grad():
            for group in by_dtype.values():
                flat = cat([t.detach().reshape(-1) for t in group])
                c10d.broadcast(flat, src=c10d.get_global_rank(self.process_group, src), group=self.process_group)
                offset = 0
                for t in group:
                    t.detach().copy_(flat[offset:offset + t.numel()].view(tuple(t.shape)))
                    offset += t.numel()

    def _make_buckets(self, cap):
        buckets, current, size, limit = [], [], 0, min(cap, _DEFAULT_FIRST_BUCKET_BYTES)
        for p in reversed(self._params):
            nbytes = p.numel() * p.element_size()
            if current and (size + nbytes > limit or p.dtype != current[0].dtype):
                buckets.append(_Bucket(current))
                current, size, limit = [], 0, cap
            current.append(p)
            size += nbytes
        if current:
            buckets.append(_Bucket(current))
        return buckets

    # ---- forward ----------------------------------------------------------------------------------------------

    # Under torch.compile the wrapper's own Python (buffer broadcast, arming the gradient hooks) runs eagerly and the
    # wrapped module compiles as a piece of its own, whose backward's gradients then reach the hooks as in eager
    # mode: the all-reduce stays outside the compiled programs, as torch's graph breaks at DDP put it.
    @_compiler_disable
    def forward(self, *inputs, **kwargs):
        if self._armed and self._marked > 0:
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a new one. This error "
                "indicates that your module has parameters that were not used in producing loss. You can enable "
                "unused parameter detection by passing the keyword argument `find_unused_parameters=True` to "
                "`torch.nn.parallel.DistributedDataParallel`, and by making sure all `forward` function outputs "
                "participate in calculating loss.")
        joining = self._join_config.enable
        work = Join.notify_join_context(self)
        self._divisor = self.process_group.size()
        if work is not None:
            work.wait()
            if not self._divide_by_initial_world_size:
                self._divisor = int(work.result()[0].item())  # the ranks still training
        self._sync_buffers(joined=False)
        if joining:  # tells the ranks that joined whether this iteration's backward reduces gradients
            self._global_requires_backward_grad_sync(joined=False)
        output = self.module(*inputs, **kwargs)
        self._armed = _C.is_grad_enabled() and self.require_backward_grad_sync and self.training
        if self._armed:
            self._prepare_for_backward(output)
        return output

    def _prepare_for_backward(self, output):
        self._next_bucket = 0
        self._marked = 0
        for bucket in self._buckets:
            bucket.pending, bucket.future = len(bucket.params), None
        if not self.find_unused_parameters:
            self._used = None
            return
        self._used = _reachable_leaves(output)
        for p in self._params:
            if id(p) not in self._used:
                self._mark_ready(p)

    # ---- backward ---------------------------------------------------------------------------------------------

    def _grad_ready(self, p):
        if self._armed:
            self._mark_ready(p)

    def _mark_ready(self, p):
        bucket_index = self._bucket_of[id(p)]
        self._marked += 1
        self._buckets[bucket_index].pending -= 1
        if self._buckets[bucket_index].pending < 0:
            raise RuntimeError(
                "Expected to mark a variable ready only once. This error is caused by one of the following reasons: "
                "1) Use of a module parameter outside the `forward` function, or a parameter used in several "
                "reentrant backward passes. 2) Reused parameters in multiple reentrant backward passes.")
        while self._next_bucket < len(self._buckets) and self._buckets[self._next_bucket].pending == 0:
            self._launch(self._buckets[self._next_bucket])
            self._next_bucket += 1
        if self._next_bucket == len(self._buckets):
            self._finish()
        else:
            # MPI moves non-blocking collectives forward only inside MPI calls: poke the ones in flight, so that
            # they progress while backward computes the next gradients
            for bucket in self._buckets[:self._next_bucket]:
                if bucket.future is not None:
                    bucket.future.done()

    def _launch(self, bucket):
        from ... import cat, zeros
        parts = [p.grad.detach().reshape(-1) if p.grad is not None else zeros(p.numel(), dtype=p.dtype)
                 for p in bucket.params]
        flat = cat(parts) if len(parts) > 1 else parts[0].clone()
        index = self._buckets.index(bucket)
        grad_bucket = c10d.GradBucket(index, flat, bucket.params, index == len(self._buckets) - 1)
        if self._comm_hook is None:
            flat.div_(self._divisor)
            bucket.future = c10d._all_reduce_unchecked(flat, self.process_group).get_future().then(
                lambda fut: fut.value()[0])
        else:
            state, hook = self._comm_hook
            bucket.future = hook(state, grad_bucket)

    def _finish(self):
        from ... import no_grad
        self._armed = False
        used_everywhere = None
        if self._used is not None:
            # a host array, not a tensor: which parameters a step uses is fixed by its code, so inside an nn.Graph
            # capture it is decided once, at the capture
            mask = np.array([1 if id(p) in self._used else 0 for p in self._params], dtype=np.int32)
            c10d._host_all_reduce(mask, self.process_group, "DistributedDataParallel")
            used_everywhere = {id(p) for p, m in zip(self._params, mask) if m}
        with no_grad():
            for bucket in self._buckets:
                reduced = bucket.future.wait()
                offset = 0
                for p in bucket.params:
                    chunk = reduced[offset:offset + p.numel()].view(tuple(p.shape))
                    offset += p.numel()
                    if used_everywhere is not None and id(p) not in used_everywhere:
                        continue
                    if p.grad is None:
                        p.grad = chunk.clone()
                    else:
                        p.grad.copy_(chunk)
                bucket.future = None

    # ---- uneven inputs (join) ----------------------------------------------------------------------------------

    def join(self, divide_by_initial_world_size=True, enable=True, throw_on_early_termination=False):
        """Context manager for training loops whose ranks have different numbers of batches: a rank that leaves
        its loop early shadows the others' collectives (all-reducing zero gradients) until every rank has left,
        then the last rank to leave broadcasts its final parameters. divide_by_initial_world_size=False averages
        each step's gradients over the ranks still training instead of all ranks; throw_on_early_termination
        raises on every rank as soon as one runs out of inputs."""
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs):
        """The hook a Join runs for this model once this rank has joined."""
        self._divide_by_initial_world_size = kwargs.get("divide_by_initial_world_size", True)
        return _DDPJoinHook(self)

    @property
    def join_device(self):
        from ... import device
        return device("cpu")

    @property
    def join_process_group(self):
        return self.process_group

    def _find_common_rank(self, active):
        """The largest group rank among the ranks that pass active=True (all ranks call it)."""
        from ... import int64, tensor
        mine = tensor([self.process_group.rank() if active else -1], dtype=int64)
        c10d.all_reduce(mine, op=c10d.ReduceOp.MAX, group=self.process_group)
        return int(mine.item())

    def _sync_buffers(self, joined):
        """The buffer broadcast at the start of an iteration: from rank 0, or under join from the last rank still
        training (a rank that joined shadows it)."""
        buffers = list(self.module.buffers())
        if not (self.broadcast_buffers and self.require_forward_param_sync and buffers):
            return
        src = self._find_common_rank(active=not joined) if self._join_config.enable else 0
        self._broadcast_state(buffers, src)

    def _global_requires_backward_grad_sync(self, joined):
        """Whether any rank still training reduces gradients in this iteration's backward (all ranks call it)."""
        from ... import int64, tensor
        flag = tensor([int(not joined and self.require_backward_grad_sync)], dtype=int64)
        c10d.all_reduce(flag, group=self.process_group)
        return bool(flag.item())

    def _shadow_backward(self):
        """A joined rank's part of one iteration's gradient reduction: every bucket's all-reduce, with zeros."""
        from ... import zeros
        for index, bucket in enumerate(self._buckets):
            flat = zeros(sum(p.numel() for p in bucket.params), dtype=bucket.params[0].dtype)
            if self._comm_hook is None:
                c10d._all_reduce_unchecked(flat, self.process_group).wait()
            else:
                state, hook = self._comm_hook
                hook(state, c10d.GradBucket(index, flat, bucket.params, index == len(self._buckets) - 1)).wait()
        if self.find_unused_parameters:
            c10d._host_all_reduce(np.zeros(len(self._params), dtype=np.int32), self.process_group,
                                  "DistributedDataParallel")

    def _graph_signature(self):
        """What an nn.Graph step of this module depends on besides its inputs (a plan captured inside no_sync()
        holds no all-reduce)."""
        return self.require_backward_grad_sync, self.require_forward_param_sync

    # ---- user controls ------------------------------------------------------------------------------------

    def register_comm_hook(self, state, hook):
        """Replaces the averaging of each bucket: hook(state, bucket) gets a distributed.GradBucket (its flat
        gradients in bucket.buffer()) and returns a torch.futures.Future of the tensor to write back into the
        gradients, e.g. algorithms.ddp_comm_hooks.default_hooks.fp16_compress_hook. Call it once, before training."""
        if self._comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        self._comm_hook = (state, hook)

    @contextlib.contextmanager
    def no_sync(self):
        """Within this context, backward accumulates gradients locally without reducing them; the first
        forward-backward after it reduces the accumulated gradients."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous


class _DDPJoinHook(JoinHook):
    """DistributedDataParallel under join(): a rank that joined shadows each iteration of the ranks still training
    (buffer broadcast, the backward's gradient all-reduces with zeros); at the end the last rank to join broadcasts
    its parameters and buffers, so every rank ends with the same model."""

    def __init__(self, ddp):
        self.ddp = ddp

    def main_hook(self):
        ddp = self.ddp
        ddp._sync_buffers(joined=True)
        if ddp._global_requires_backward_grad_sync(joined=True):
            ddp._shadow_backward()

    def post_hook(self, is_last_joiner):
        ddp = self.ddp
        src = ddp._find_common_rank(active=is_last_joiner)
        ddp._broadcast_state(list(ddp._params) + list(ddp.module.buffers()), src)


def _reachable_leaves(output):
    """ids of the leaf tensors that the autograd graph of output (tensors nested in tuples, lists, dicts, or
    objects with tensor attributes such as ModelOutput) reaches."""
    roots = []

    def collect(x):
        if isinstance(x, _C.Tensor):
            if x.grad_fn is not None:
                roots.append(x.grad_fn)
        elif isinstance(x, dict):
            for v in x.values():
                collect(v)
        elif isinstance(x, (list, tuple)):
            for v in x:
                collect(v)
    collect(output)
    seen, found, stack = {}, set(), roots
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen[id(node)] = node  # kept alive, so that no other node takes its id
        variable = getattr(node, "variable", None)
        if variable is not None:
            found.add(id(variable))
        stack.extend(fn for fn, _ in node.next_functions if fn is not None)
    return found
