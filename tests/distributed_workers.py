"""The rank side of tests/test_distributed.py: `python distributed_workers.py SCENARIO OUT_DIR`, started several
times (by the test, the launcher or mpiexec). Each rank writes what it computed to OUT_DIR/rank{R}.npz; the test
compares against numpy."""
import datetime
import functools
import os
import signal
import sys
import time

import numpy as np

import flowlike as torch
import flowlike.distributed as dist

torch.set_num_threads(1)


def rank_input(rank, shape=(2, 3), dtype=np.float32):
    """The data rank `rank` contributes (the test recomputes it)."""
    return (np.random.default_rng(100 + rank).standard_normal(shape) * 4).astype(dtype)


def collectives(out):
    r, n = dist.get_rank(), dist.get_world_size()
    x = rank_input(r)
    res = {}
    for op in ("SUM", "AVG", "MIN", "MAX", "PRODUCT"):
        t = torch.from_numpy(x.copy())
        dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
        res[f"all_reduce_{op}"] = t.numpy()
    t = torch.from_numpy(rank_input(r, dtype=np.int64))
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    res["all_reduce_int64_MAX"] = t.numpy()
    t = torch.from_numpy(x.copy()).to(torch.bfloat16)
    dist.all_reduce(t)
    res["all_reduce_bf16_SUM"] = t.float().numpy()
    t = torch.from_numpy(x.copy()).t()  # a non-contiguous view, reduced in place
    dist.all_reduce(t)
    res["all_reduce_noncontig"] = t.numpy().copy()

    t = torch.from_numpy(x.copy())
    work = dist.all_reduce(t, async_op=True)
    work.wait()
    res["all_reduce_async"] = t.numpy()
    assert work.is_completed()

    t = torch.from_numpy(x.copy())
    dist.broadcast(t, src=n - 1)
    res["broadcast"] = t.numpy()

    t = torch.from_numpy(x.copy())
    dist.reduce(t, dst=1, op=dist.ReduceOp.SUM)
    res["reduce"] = t.numpy()

    gathered = [torch.zeros(2, 3) for _ in range(n)]
    dist.all_gather(gathered, torch.from_numpy(x.copy()))
    res["all_gather"] = np.stack([g.numpy() for g in gathered])
    into = torch.zeros(n * 2, 3)
    dist.all_gather_into_tensor(into, torch.from_numpy(x.copy()))
    res["all_gather_into_tensor"] = into.numpy()
    into = torch.zeros(n * 2, 3, dtype=torch.bfloat16)  # a staged output (numpy has no bfloat16)
    dist.all_gather_into_tensor(into, torch.from_numpy(x.copy()).to(torch.bfloat16))
    res["all_gather_into_tensor_bf16"] = into.float().numpy()

    chunks = [torch.from_numpy(x.copy()) * (i + 1) for i in range(n)]
    t = torch.zeros(2, 3)
    dist.reduce_scatter(t, chunks)
    res["reduce_scatter"] = t.numpy()
    t = torch.zeros(2, 3)
    dist.reduce_scatter_tensor(t, torch.cat(chunks), op=dist.ReduceOp.MAX)
    res["reduce_scatter_tensor_MAX"] = t.numpy()

    targets = [torch.zeros(2, 3) for _ in range(n)] if r == 0 else None
    dist.gather(torch.from_numpy(x.copy()), targets, dst=0)
    if r == 0:
        res["gather"] = np.stack([g.numpy() for g in targets])
    t = torch.zeros(2, 3)
    dist.scatter(t, chunks if r == n - 1 else None, src=n - 1)
    res["scatter"] = t.numpy()

    send = [torch.full((r + 1,), float(10 * r + j)) for j in range(n)]   # rank r sends r+1 values to each rank
    recv = [torch.zeros(j + 1) for j in range(n)]
    dist.all_to_all(recv, send)
    res["all_to_all"] = np.concatenate([v.numpy() for v in recv])
    single_in = torch.arange(float(n * 2)) + 100 * r
    single_out = torch.zeros(n * 2)
    dist.all_to_all_single(single_out, single_in)
    res["all_to_all_single"] = single_out.numpy()

    # a ring of point-to-point messages: isend to the right, irecv from the left; recv from any source
    right, left = (r + 1) % n, (r - 1) % n
    got = torch.zeros(2, 3)
    works = dist.batch_isend_irecv([dist.P2POp(dist.isend, torch.from_numpy(x.copy()), right),
                                    dist.P2POp(dist.irecv, got, left)])
    for w in works:
        w.wait()
    res["ring"] = got.numpy()
    if r == 0:
        senders = []
        for _ in range(n - 1):
            t = torch.zeros(1)
            senders.append(dist.recv(t))
            res[f"recv_from_{senders[-1]}"] = t.numpy()
    else:
        dist.send(torch.tensor([float(r * r)]), dst=0)
    dist.barrier()

    objects = [None] * n
    dist.all_gather_object(objects, {"rank": r, "name": f"r{r}"})
    assert objects == [{"rank": i, "name": f"r{i}"} for i in range(n)], objects
    lst = [f"from {r}", r] if r == 1 else [None, None]
    dist.broadcast_object_list(lst, src=1)
    assert lst == ["from 1", 1], lst

    sub = dist.new_group([0, n - 1])
    if r in (0, n - 1):
        t = torch.tensor([float(r + 1)])
        dist.all_reduce(t, group=sub)
        res["subgroup"] = t.numpy()
        assert dist.get_world_size(sub) == 2 and dist.get_rank(sub) == (0 if r == 0 else 1)
    else:
        assert sub is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(sub) == -1

    if n == 3:  # a 1 x 3 mesh: the row is the world, each column a single rank
        mesh = dist.init_device_mesh("cpu", (1, 3), mesh_dim_names=("dp", "tp"))
        t = torch.tensor([float(r + 1)])
        dist.all_reduce(t, group=mesh.get_group("tp"))
        res["mesh_tp"] = t.numpy()
        dist.all_reduce(t, group=mesh.get_group("dp"))
        res["mesh_dp"] = t.numpy()
        assert mesh.get_local_rank("tp") == r and mesh.get_coordinate() == [0, r] and mesh["tp"].size() == 3
    else:  # a 2 x 1 mesh
        mesh = dist.init_device_mesh("cpu", (2, 1), mesh_dim_names=("dp", "tp"))
        t = torch.tensor([float(r + 1)])
        dist.all_reduce(t, group=mesh.get_group("dp"))
        res["mesh_dp"] = t.numpy()
        assert mesh["dp"].mesh.tolist() == [0, 1] and mesh.get_local_rank("tp") == 0

    try:  # shapes that differ across ranks: every rank gets the error
        dist.all_reduce(torch.zeros(r + 1))
        res["mismatch_error"] = np.array(0)
    except RuntimeError as e:
        res["mismatch_error"] = np.array(1)
        assert "[1]" in str(e) and "[2]" in str(e), str(e)
    t = torch.ones(1)
    dist.all_reduce(t)  # the group still works after that error
    res["after_mismatch"] = t.numpy()
    np.savez(os.path.join(out, f"rank{r}.npz"), **res)


def load_train_gpt():
    """examples/train_gpt.py, imported with flowlike as its torch."""
    import importlib.util
    from flowlike.compat import mock_torch
    path = os.path.join(os.path.dirname(__file__), "..", "examples", "train_gpt.py")
    spec = importlib.util.spec_from_file_location("train_gpt_example", path)
    module = importlib.util.module_from_spec(spec)
    with mock_torch():
        spec.loader.exec_module(module)
    return module


GPT = dict(vocab=40, d_model=32, context=16)


def gpt_batches(steps, batch, seed=0):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, GPT["vocab"], (steps, batch, GPT["context"] + 1))
    return data[..., :-1], data[..., 1:]


def gpt_train(model, xs, ys, sl=slice(None), opt=None):
    """SGD steps with momentum on batches xs[step][sl]; returns the losses. (Not Adam: it divides by the gradient's
    magnitude, which turns rounding noise in gradients that are zero in exact arithmetic, such as the attention
    key biases', into full-size steps, so no two summation orders would agree to 1e-6.)"""
    opt = opt or torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    losses = []
    for x, y in zip(xs, ys):
        logits = model(torch.from_numpy(x[sl].copy()))
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, GPT["vocab"]),
                                                 torch.from_numpy(y[sl].copy()).reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def gpt_step_graph(model, opt):
    """An nn.Graph of one training step (forward, backward, the DDP all-reduce, the optimizer's update)."""
    class Step(torch.nn.Graph):
        def __init__(self):
            super().__init__()
            self.model = model
            self.opt = opt
            self.add_optimizer(opt)

        def build(self, x, y):
            loss = torch.nn.functional.cross_entropy(self.model(x).reshape(-1, GPT["vocab"]), y.reshape(-1))
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            return loss
    return Step()


def ddp(out, mode="eager"):
    r, n = dist.get_rank(), dist.get_world_size()
    example = load_train_gpt()
    torch.manual_seed(1234 + r)  # different initial weights on each rank: DDP broadcasts rank 0's
    model = example.build_model(torch, GPT["vocab"], d_model=GPT["d_model"], heads=2, layers=2,
                                context=GPT["context"])
    xs, ys = gpt_batches(steps=5, batch=4 * n)
    per = 4
    ddp_model = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.01)  # several buckets
    assert len(ddp_model._buckets) > 2
    res = {"initial." + k: v.detach().numpy().copy() for k, v in ddp_model.module.state_dict().items()}
    sl = slice(r * per, (r + 1) * per)
    if mode == "graph":  # steps 0 and 4 eager, 1-3 as a graph (captured at 1, replayed at 2 and 3): the modes alternate
        opt = torch.optim.SGD(ddp_model.parameters(), lr=0.5, momentum=0.9)
        step = gpt_step_graph(ddp_model, opt)
        losses = gpt_train(ddp_model, xs[:1], ys[:1], sl, opt)
        losses += [step(torch.from_numpy(x[sl].copy()), torch.from_numpy(y[sl].copy())).item()
                   for x, y in zip(xs[1:4], ys[1:4])]
        losses += gpt_train(ddp_model, xs[4:], ys[4:], sl, opt)
        res["program_all_reduces"] = np.array(repr(step).count("_c10d_all_reduce_("))
        res["buckets"] = np.array(len(ddp_model._buckets))
    elif mode == "compile":  # torch.compile(DDP(model)): the wrapped model compiles, DDP's hooks stay eager
        compiled = torch.compile(ddp_model)
        losses = gpt_train(compiled, xs, ys, sl)
        res["compiled_programs"] = np.array(len(compiled._compiled.all_plans()))
        res["compile_breaks"] = np.array([str(b.reason) for b in compiled._compiled.all_breaks()])
    else:
        losses = gpt_train(ddp_model, xs, ys, sl)
    res["losses"] = np.array(losses)
    for k, v in ddp_model.state_dict().items():
        res["final." + k] = v.detach().numpy().copy()
    np.savez(os.path.join(out, f"rank{r}.npz"), **res)


def ddp_graph(out):
    ddp(out, mode="graph")


def ddp_compile(out):
    ddp(out, mode="compile")


def ddp_features(out):
    r = dist.get_rank()
    res = {}
    torch.manual_seed(r)

    class TwoHeads(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = torch.nn.Linear(3, 4)
            self.used = torch.nn.Linear(4, 1)
            self.unused = torch.nn.Linear(4, 1)

        def forward(self, x):
            return self.used(torch.relu(self.body(x)))

    x = torch.from_numpy(rank_input(r, (5, 3)))
    # no_sync: two local backwards, then a synced one: the grads are the average of each rank's three-batch sums
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Sequential(torch.nn.Linear(3, 2)))
    res["initial_weight"] = model.module[0].weight.detach().numpy().copy()
    with model.no_sync():
        model(x).sum().backward()
        model(x * 2).sum().backward()
        res["no_sync_local_grad"] = model.module[0].weight.grad.numpy().copy()
    model(x * 3).sum().backward()
    res["synced_grad"] = model.module[0].weight.grad.numpy().copy()

    unused = torch.nn.parallel.DistributedDataParallel(TwoHeads(), find_unused_parameters=True)
    unused(x).sum().backward()
    res["unused_grad_is_none"] = np.array(unused.module.unused.weight.grad is None)
    res["used_grad"] = unused.module.used.weight.grad.numpy().copy()
    res["unused_body_input"] = unused.module.body.weight.detach().numpy().copy()

    strict = torch.nn.parallel.DistributedDataParallel(TwoHeads())
    strict(x).sum().backward()
    try:
        strict(x)
        res["strict_error"] = np.array("")
    except RuntimeError as e:
        res["strict_error"] = np.array(str(e))
    res["state_dict_keys"] = np.array(sorted(strict.state_dict().keys()))

    from flowlike.distributed.algorithms.ddp_comm_hooks import default_hooks
    compressed = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(3, 2))
    compressed.register_comm_hook(None, default_hooks.fp16_compress_hook)
    compressed(x).sum().backward()
    res["fp16_hook_grad"] = compressed.module.weight.grad.numpy().copy()

    def scaled_locally(factor, bucket):  # a hook that does not communicate: the local gradients times factor
        fut = torch.futures.Future()
        fut.set_result(bucket.buffer().mul_(factor))
        return fut
    local = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(3, 2))
    local.register_comm_hook(10.0, scaled_locally)
    local(x).sum().backward()
    res["local_hook_grad"] = local.module.weight.grad.numpy().copy()
    np.savez(os.path.join(out, f"rank{r}.npz"), **res)


def ddp_graph_features(out):
    """DistributedDataParallel's options inside nn.Graph steps, each against the same steps run eagerly."""
    import contextlib
    from flowlike.distributed.algorithms.ddp_comm_hooks import default_hooks
    r = dist.get_rank()
    x = torch.from_numpy(rank_input(r, (6, 3)))

    class Net(torch.nn.Module):
        def __init__(self, skip):
            super().__init__()
            self.body, self.norm = torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4)  # a buffer DDP broadcasts
            self.used, self.unused = torch.nn.Linear(4, 1), torch.nn.Linear(4, 1)
            self.skip = skip

        def forward(self, x):
            h = torch.relu(self.norm(self.body(x)))
            return self.used(h) if self.skip else self.used(h) + self.unused(h)

    class Backward(torch.nn.Graph):  # no optimizer: gradients accumulate over calls, as eager backwards do
        def __init__(self, model):
            super().__init__()
            self.model = model

        def build(self, x):
            loss = self.model(x).square().mean()
            loss.backward()
            return loss

    def eager_step(model, x):
        loss = model(x).square().mean()
        loss.backward()
        return loss

    res = {}
    for case, options in [("plain", {}), ("unused", {"find_unused_parameters": True}), ("fp16_hook", {})]:
        for mode in ("eager", "graph"):
            torch.manual_seed(r)  # different weights per rank: DDP broadcasts rank 0's
            model = torch.nn.parallel.DistributedDataParallel(Net(skip=case == "unused"), **options)
            if case == "fp16_hook":
                model.register_comm_hook(None, default_hooks.fp16_compress_hook)
            graph = Backward(model) if mode == "graph" else None
            step = graph if graph is not None else functools.partial(eager_step, model)
            losses = []
            for i, scale in enumerate([1.0, 2.0, 3.0, 1.5]):  # two local steps in no_sync(), then two synced
                with model.no_sync() if i < 2 else contextlib.nullcontext():
                    losses.append(step(x * scale).item())
            prefix = f"{case}.{mode}."
            res[prefix + "losses"] = np.array(losses)
            for name, p in model.module.named_parameters():
                res[prefix + name + ".grad"] = np.array(np.nan) if p.grad is None else p.grad.numpy().copy()
            res[prefix + "running_mean"] = model.module.norm.running_mean.numpy().copy()
            if graph is not None:
                res[prefix + "plans"] = np.array(len(graph._plans))
    np.savez(os.path.join(out, f"rank{r}.npz"), **res)


JOIN_STEPS = (3, 5)  # batches of rank 0 and rank 1


class CountingMLP(torch.nn.Module):
    """An MLP with a buffer its forward advances, so that DDP's buffer broadcast matters."""

    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
        self.register_buffer("calls", torch.zeros(1))

    def forward(self, x):
        self.calls.add_(1)
        return self.net(x)


def join_batches(rank):
    rng = np.random.default_rng(10 + rank)
    return [rng.standard_normal((4, 3)).astype(np.float32) for _ in range(JOIN_STEPS[rank])]


def ddp_join(out):
    """Uneven inputs: rank 0 has 3 batches, rank 1 has 5; both inside model.join(). Then the same with
    throw_on_early_termination, which must raise on both ranks."""
    r = dist.get_rank()
    res = {}
    for divide in (True, False):
        torch.manual_seed(r)
        model = torch.nn.parallel.DistributedDataParallel(CountingMLP())
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        with model.join(divide_by_initial_world_size=divide):
            for x in join_batches(r):
                opt.zero_grad()
                model(torch.from_numpy(x)).square().mean().backward()
                opt.step()
        for k, v in model.module.state_dict().items():
            res[f"{divide}.{k}"] = v.numpy().copy()
    model = torch.nn.parallel.DistributedDataParallel(CountingMLP())
    try:
        with model.join(throw_on_early_termination=True):
            for x in join_batches(r):
                model(torch.from_numpy(x)).sum().backward()
        res["throw"] = np.array("")
    except RuntimeError as e:
        res["throw"] = np.array(str(e))
    np.savez(os.path.join(out, f"rank{r}.npz"), **res)


def sync_batchnorm(out):
    """A conv net with BatchNorm converted to SyncBatchNorm, on this rank's half of a batch; the test compares with
    BatchNorm on the whole batch."""
    r = dist.get_rank()
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3), torch.nn.BatchNorm2d(3), torch.nn.ReLU())
    net = torch.nn.SyncBatchNorm.convert_sync_batchnorm(net)
    assert isinstance(net[1], torch.nn.SyncBatchNorm)
    x = torch.from_numpy(rank_input(0, (6, 2, 5, 5))[3 * r:3 * r + 3].copy()).requires_grad_()
    y = net(x)
    (y * torch.arange(y.numel()).reshape(y.shape).float().div(100)).sum().backward()
    np.savez(os.path.join(out, f"rank{r}.npz"), y=y.detach().numpy(), x_grad=x.grad.numpy(),
             w_grad=net[1].weight.grad.numpy(), conv_grad=net[0].weight.grad.numpy(),
             running_mean=net[1].running_mean.numpy(), running_var=net[1].running_var.numpy())


def dies(out):
    """Rank 1 is killed, rank 0 waits for it in a collective."""
    r = dist.get_rank()
    dist.all_reduce(torch.ones(1))
    if r == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    _wait_for_the_gone(out, r)


def raises(out):
    """Rank 1 ends on an uncaught exception, rank 0 waits for it in a collective."""
    r = dist.get_rank()
    dist.all_reduce(torch.ones(1))
    if r == 1:
        raise RuntimeError("rank 1 fails")
    _wait_for_the_gone(out, r)


def finishes(out):
    """Rank 1 ends its program normally, rank 0 still waits for it in a collective."""
    r = dist.get_rank()
    dist.all_reduce(torch.ones(1))
    if r == 1:
        return
    _wait_for_the_gone(out, r)


def _wait_for_the_gone(out, r):
    start = time.monotonic()
    try:
        dist.all_reduce(torch.ones(1))
    except dist.DistBackendError as e:
        with open(os.path.join(out, f"rank{r}.txt"), "w") as f:
            f.write(f"{time.monotonic() - start:.2f} {e}")
        raise


def stalls(out):
    r = dist.get_rank()
    if r == 1:
        time.sleep(6)
        return
    try:
        dist.all_reduce(torch.ones(1))
    except dist.DistBackendError as e:
        with open(os.path.join(out, f"rank{r}.txt"), "w") as f:
            f.write(str(e))
        raise


def recorded_failure(out):
    """Rank 1's @record-decorated main raises: the launcher reports that exception."""
    from flowlike.distributed.elastic.multiprocessing.errors import record

    @record
    def main():
        if dist.get_rank() == 1:
            raise ValueError("bad batch 7")
    main()


def env(out):
    r = dist.get_rank()
    t = torch.tensor([float(r + 1)])
    dist.all_reduce(t)
    keys = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
            "TORCHELASTIC_RUN_ID", "OMP_NUM_THREADS")
    np.savez(os.path.join(out, f"rank{r}.npz"), sum=t.numpy(), rank=np.array(r), world=np.array(dist.get_world_size()),
             **{k: np.array(os.environ.get(k, "")) for k in keys})
    if os.environ.get("FAIL_RANK") == str(r):
        sys.exit(3)


if __name__ == "__main__":
    scenario, out_dir = sys.argv[1], sys.argv[2]
    timeout = datetime.timedelta(seconds=float(os.environ.get("DIST_TEST_TIMEOUT", "60")))
    if os.environ.get("DIST_STORE") == "tcp":  # as scripts that make their own TCPStore and pass store=
        rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), world_size, rank == 0,
                              timeout=timeout)
        dist.init_process_group("gloo", store=store, rank=rank, world_size=world_size, timeout=timeout)
        store.set(f"done/{rank}", "1")  # the store still serves after the group started
        store.wait([f"done/{r}" for r in range(world_size)])
    else:
        dist.init_process_group("gloo", init_method=os.environ.get("DIST_INIT_METHOD"), timeout=timeout)
    globals()[scenario](out_dir)
    dist.destroy_process_group()


def spawned(rank, world_size, port, out, fail_rank=-1):
    """A torch.multiprocessing.spawn target, as the DDP tutorials write it."""
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    if rank == fail_rank:
        raise ValueError(f"rank {rank} gives up")
    t = torch.tensor([float(rank + 1)])
    dist.all_reduce(t)
    np.save(os.path.join(out, f"spawned{rank}.npy"), t.numpy())
    dist.destroy_process_group()
