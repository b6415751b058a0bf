"""flowlike.distributed and DistributedDataParallel, with real processes: each test starts its ranks
(tests/distributed_workers.py) as independent processes (env://), through the launcher, or through mpiexec, and
checks what they computed against numpy or a single-process run."""
import os
import shutil
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

import flowlike as torch
import flowlike.distributed as dist

pytest.importorskip("mpi4py")

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "distributed_workers.py")
sys.path.insert(0, HERE)
import distributed_workers as workers  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker_env(**extra):
    return dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=os.pathsep.join(
        p for p in [os.path.dirname(HERE), os.environ.get("PYTHONPATH")] if p), **extra)


def spawn(scenario, world_size, out, timeout=90, **env):
    """Starts world_size ranks of a scenario as independent processes (env://); returns their CompletedProcess-like
    (returncode, output) pairs."""
    port = free_port()
    procs = [subprocess.Popen([sys.executable, WORKER, scenario, str(out)], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True,
                              env=worker_env(RANK=str(r), WORLD_SIZE=str(world_size), MASTER_ADDR="127.0.0.1",
                                             MASTER_PORT=str(port), **env))
             for r in range(world_size)]
    results = []
    try:
        for p in procs:
            output, _ = p.communicate(timeout=timeout)
            results.append((p.returncode, output))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return results


def check_ok(results):
    for r, (code, output) in enumerate(results):
        assert code == 0, f"rank {r} failed:\n{output}"


def load(out, r):
    return dict(np.load(os.path.join(out, f"rank{r}.npz")))


# ---- without processes ----------------------------------------------------------------------------------------

def test_collective_before_init_raises_torchs_error():
    assert dist.is_available() and not dist.is_initialized()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.all_reduce(torch.ones(1))
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.get_rank()
    with pytest.raises(ValueError, match="Invalid backend"):
        dist.Backend("carrier-pigeon")
    assert dist.Backend("GLOO") == "gloo" and dist.ReduceOp.SUM != dist.ReduceOp.AVG


def test_init_from_env_reports_missing_variables(monkeypatch):
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match="environment variable RANK expected"):
        dist.init_process_group("gloo")
    with pytest.raises(RuntimeError, match="NCCL"):
        dist.init_process_group("nccl", rank=0, world_size=1)
    assert not dist.is_initialized()


# ---- collectives against numpy --------------------------------------------------------------------------------

@pytest.fixture(scope="module", params=[2, 3], ids=["2ranks", "3ranks"])
def collective_results(request, tmp_path_factory):
    n = request.param
    out = tmp_path_factory.mktemp(f"collectives{n}")
    check_ok(spawn("collectives", n, out))
    return n, [load(out, r) for r in range(n)]


def inputs(n, dtype=np.float32):
    return np.stack([workers.rank_input(r, dtype=dtype) for r in range(n)])


@pytest.mark.parametrize("op,reference", [("SUM", np.sum), ("AVG", np.mean), ("MIN", np.min), ("MAX", np.max),
                                          ("PRODUCT", np.prod)])
def test_all_reduce(collective_results, op, reference):
    n, res = collective_results
    expected = reference(inputs(n).astype(np.float64), axis=0)
    for r in range(n):
        np.testing.assert_allclose(res[r][f"all_reduce_{op}"], expected, rtol=1e-5, atol=1e-5)


def test_all_reduce_dtypes_layouts_and_async(collective_results):
    n, res = collective_results
    x = inputs(n)
    for r in range(n):
        np.testing.assert_array_equal(res[r]["all_reduce_int64_MAX"], inputs(n, np.int64).max(0))
        bf16_sum = torch.from_numpy(x).to(torch.bfloat16).float().numpy().sum(0)
        np.testing.assert_allclose(res[r]["all_reduce_bf16_SUM"], bf16_sum, rtol=1e-2, atol=5e-2)
        np.testing.assert_allclose(res[r]["all_reduce_noncontig"], x.sum(0).T, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(res[r]["all_reduce_async"], x.sum(0), rtol=1e-5, atol=1e-5)


def test_broadcast_reduce_gather_scatter(collective_results):
    n, res = collective_results
    x = inputs(n)
    for r in range(n):
        np.testing.assert_array_equal(res[r]["broadcast"], x[n - 1])
        expected_reduce = x.sum(0) if r == 1 else x[r]
        np.testing.assert_allclose(res[r]["reduce"], expected_reduce, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(res[r]["all_gather"], x)
        np.testing.assert_array_equal(res[r]["all_gather_into_tensor"], x.reshape(n * 2, 3))
        np.testing.assert_array_equal(res[r]["all_gather_into_tensor_bf16"],
                                      torch.from_numpy(x.reshape(n * 2, 3)).to(torch.bfloat16).float().numpy())
        # rank r receives the sum over ranks of their chunk r, x[rank] * (r + 1)
        np.testing.assert_allclose(res[r]["reduce_scatter"], x.sum(0) * (r + 1), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(res[r]["reduce_scatter_tensor_MAX"], (x * (r + 1)).max(0), rtol=1e-6)
        np.testing.assert_array_equal(res[r]["scatter"], x[n - 1] * (r + 1))
    np.testing.assert_array_equal(res[0]["gather"], x)
    assert "gather" not in res[1]


def test_all_to_all_and_point_to_point(collective_results):
    n, res = collective_results
    x = inputs(n)
    for r in range(n):
        # from rank j, rank r receives j + 1 values 10 * j + r
        expected = np.concatenate([np.full(j + 1, 10.0 * j + r) for j in range(n)])
        np.testing.assert_array_equal(res[r]["all_to_all"], expected)
        single = np.concatenate([np.arange(n * 2.0)[2 * r:2 * r + 2] + 100 * j for j in range(n)])
        np.testing.assert_array_equal(res[r]["all_to_all_single"], single)
        np.testing.assert_array_equal(res[r]["ring"], x[(r - 1) % n])
    for j in range(1, n):
        np.testing.assert_array_equal(res[0][f"recv_from_{j}"], [j * j])


def test_groups_device_mesh_and_mismatched_shapes(collective_results):
    n, res = collective_results
    for r in range(n):
        if n == 3:  # the tp rows hold all ranks, the dp columns one rank each
            np.testing.assert_array_equal(res[r]["mesh_tp"], [6.0])
            np.testing.assert_array_equal(res[r]["mesh_dp"], [6.0])
        else:
            np.testing.assert_array_equal(res[r]["mesh_dp"], [3.0])
    np.testing.assert_array_equal(res[0]["subgroup"], [1.0 + n])
    np.testing.assert_array_equal(res[n - 1]["subgroup"], [1.0 + n])
    for r in range(n):
        assert res[r]["mismatch_error"] == 1
        np.testing.assert_array_equal(res[r]["after_mismatch"], [n])


# ---- DistributedDataParallel ----------------------------------------------------------------------------------

@pytest.mark.parametrize("scenario", ["ddp", "ddp_graph", "ddp_compile"])
def test_ddp_gpt_equals_single_process_training_on_the_combined_batch(tmp_path, scenario):
    check_ok(spawn(scenario, 2, tmp_path))
    res = [load(tmp_path, r) for r in range(2)]
    example = workers.load_train_gpt()
    torch.manual_seed(1234)  # rank 0's initial weights, which DDP broadcast
    model = example.build_model(torch, workers.GPT["vocab"], d_model=workers.GPT["d_model"], heads=2, layers=2,
                                context=workers.GPT["context"])
    for k, v in model.state_dict().items():  # both ranks started from rank 0's weights
        np.testing.assert_array_equal(res[1]["initial." + k], v.numpy())
    xs, ys = workers.gpt_batches(steps=5, batch=8)
    losses = workers.gpt_train(model, xs, ys)
    np.testing.assert_allclose((res[0]["losses"] + res[1]["losses"]) / 2, losses, rtol=0, atol=1e-6)
    for k, v in model.state_dict().items():
        for r in range(2):
            np.testing.assert_allclose(res[r]["final.module." + k], v.numpy(), rtol=0, atol=1e-6)
    for r in range(2):
        if scenario == "ddp_graph":  # the graph step's program holds one all-reduce per gradient bucket
            assert res[r]["program_all_reduces"] == res[r]["buckets"] > 2
        if scenario == "ddp_compile":  # the model ran compiled; DDP's own forward was the one graph break
            assert res[r]["compiled_programs"] == 1
            assert len(res[r]["compile_breaks"]) == 1 and "DistributedDataParallel" in res[r]["compile_breaks"][0]


def test_ddp_no_sync_unused_parameters_and_state_dict(tmp_path):
    check_ok(spawn("ddp_features", 2, tmp_path))
    res = [load(tmp_path, r) for r in range(2)]
    w = res[0]["initial_weight"]
    np.testing.assert_array_equal(res[1]["initial_weight"], w)
    xs = [workers.rank_input(r, (5, 3)) for r in range(2)]
    for r in range(2):  # no_sync: each rank's own gradient, d(sum(x W^T))/dW = column sums of x, for x and 2x
        np.testing.assert_allclose(res[r]["no_sync_local_grad"], np.tile(3 * xs[r].sum(0), (2, 1)), rtol=1e-5)
        # then the synced step adds 3x and averages the accumulated gradients over ranks
        np.testing.assert_allclose(res[r]["synced_grad"], np.tile((6 * xs[0].sum(0) + 6 * xs[1].sum(0)) / 2, (2, 1)),
                                   rtol=1e-5)
        assert res[r]["unused_grad_is_none"]
        np.testing.assert_allclose(res[r]["used_grad"], res[0]["used_grad"], rtol=1e-6)
        assert "Expected to have finished reduction in the prior iteration" in str(res[r]["strict_error"])
        assert list(res[r]["state_dict_keys"]) == sorted(
            f"module.{m}.{p}" for m in ("body", "used", "unused") for p in ("weight", "bias"))
        # communication hooks: the float16 average, and a hook that keeps each rank's own gradient times 10
        np.testing.assert_allclose(res[r]["fp16_hook_grad"], np.tile((xs[0].sum(0) + xs[1].sum(0)) / 2, (2, 1)),
                                   rtol=2e-3, atol=1e-3)
        np.testing.assert_allclose(res[r]["local_hook_grad"], np.tile(10 * xs[r].sum(0), (2, 1)), rtol=1e-5)


def test_ddp_options_in_graph_steps_equal_eager(tmp_path):
    check_ok(spawn("ddp_graph_features", 2, tmp_path))
    res = [load(tmp_path, r) for r in range(2)]
    for r in range(2):
        for case in ("plain", "unused", "fp16_hook"):
            eager = {k.split(".", 2)[2]: v for k, v in res[r].items() if k.startswith(f"{case}.eager.")}
            graph = {k.split(".", 2)[2]: v for k, v in res[r].items() if k.startswith(f"{case}.graph.")}
            assert set(graph) == set(eager) | {"plans"}
            # three programs: the first backward (no gradients yet) and the second inside no_sync(), then the synced
            # one, captured at step 3 and replayed at step 4
            assert graph["plans"] == 3
            for k, v in eager.items():
                np.testing.assert_allclose(graph[k], v, rtol=1e-6, atol=1e-7, err_msg=f"rank {r} {case} {k}")
            # the synced gradients are the same on both ranks
            np.testing.assert_allclose(res[r][f"{case}.graph.body.weight.grad"], res[0][f"{case}.graph.body.weight.grad"],
                                       rtol=1e-6)
        assert np.isnan(res[r]["unused.graph.unused.weight.grad"])  # a parameter no rank used keeps grad None
        assert not np.isnan(res[r]["plain.graph.unused.weight.grad"]).any()


def test_ddp_join_with_uneven_inputs(tmp_path):
    """Rank 0 runs out after 3 batches, rank 1 trains 5: the ranks end with the same model, equal to one process
    that trains on both batches while both train, then on rank 1's alone (its gradient halved when dividing by the
    initial world size), and the buffer counts rank 1's 5 forwards."""
    check_ok(spawn("ddp_join", 2, tmp_path))
    res = [load(tmp_path, r) for r in range(2)]
    batches = [workers.join_batches(r) for r in range(2)]
    for divide in (True, False):
        torch.manual_seed(0)  # rank 0's initial weights, which DDP broadcast
        model = workers.CountingMLP()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(workers.JOIN_STEPS[1]):
            opt.zero_grad()
            if step < workers.JOIN_STEPS[0]:
                loss = model(torch.from_numpy(np.concatenate([batches[0][step], batches[1][step]]))).square().mean()
            else:
                loss = model(torch.from_numpy(batches[1][step])).square().mean() / (2 if divide else 1)
            loss.backward()
            opt.step()
        for k, v in model.net.state_dict().items():
            for r in range(2):
                np.testing.assert_allclose(res[r][f"{divide}.net.{k}"], v.numpy(), rtol=1e-5, atol=1e-6)
        for r in range(2):
            assert res[r][f"{divide}.calls"] == [workers.JOIN_STEPS[1]]
    assert "Rank 0 exhausted all inputs" in str(res[0]["throw"])
    assert "Detected at least one rank that exhausted inputs" in str(res[1]["throw"])


def test_sync_batchnorm_equals_batchnorm_on_the_combined_batch(tmp_path):
    check_ok(spawn("sync_batchnorm", 2, tmp_path))
    res = [load(tmp_path, r) for r in range(2)]
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3), torch.nn.BatchNorm2d(3), torch.nn.ReLU())
    x = torch.from_numpy(workers.rank_input(0, (6, 2, 5, 5))).requires_grad_()
    y = net(x)
    # the loss of each rank's half, summed: SyncBatchNorm's input gradients count every rank's loss
    weights = torch.cat([torch.arange(y.numel() // 2).reshape(3, *y.shape[1:]).float().div(100)] * 2)
    (y * weights).sum().backward()
    np.testing.assert_allclose(np.concatenate([res[0]["y"], res[1]["y"]]), y.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(np.concatenate([res[0]["x_grad"], res[1]["x_grad"]]), x.grad.numpy(), rtol=1e-4,
                               atol=1e-6)
    for name, param in (("w_grad", net[1].weight), ("conv_grad", net[0].weight)):
        np.testing.assert_allclose(res[0][name] + res[1][name], param.grad.numpy(), rtol=1e-4, atol=1e-5)
    for r in range(2):
        np.testing.assert_allclose(res[r]["running_mean"], net[1].running_mean.numpy(), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(res[r]["running_var"], net[1].running_var.numpy(), rtol=1e-5, atol=1e-7)


# ---- failures -------------------------------------------------------------------------------------------------

def mpi_shm_files():
    return {f for f in os.listdir("/dev/shm") if f.startswith("mpich_shm_")} if os.path.isdir("/dev/shm") else set()


def test_killed_rank_gives_an_error_not_a_hang(tmp_path):
    shm_before = mpi_shm_files()
    results = spawn("dies", 2, tmp_path, timeout=60, DIST_TEST_TIMEOUT="60")
    assert results[1][0] == -9
    code, output = results[0]
    assert code != 0 and "DistBackendError" in output, output
    seconds, message = open(tmp_path / "rank0.txt").read().split(" ", 1)
    assert "rank 1 exited" in message
    assert float(seconds) < 10  # told by the rendezvous server, long before the 60 s timeout
    # no rank could finalize MPI; the rendezvous server removes MPI's shared-memory files once the world ended
    deadline = time.monotonic() + 10
    while mpi_shm_files() - shm_before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not mpi_shm_files() - shm_before


@pytest.mark.parametrize("scenario,rank1_code,message", [("raises", 1, "rank 1 exited"),
                                                         ("finishes", 0, "rank 1 has ended its program")])
def test_rank_that_ends_gives_the_others_an_error(tmp_path, scenario, rank1_code, message):
    results = spawn(scenario, 2, tmp_path, timeout=60, DIST_TEST_TIMEOUT="60")
    assert results[1][0] == rank1_code, results[1][1]
    assert results[0][0] != 0 and "DistBackendError" in results[0][1], results[0][1]
    seconds, text = open(tmp_path / "rank0.txt").read().split(" ", 1)
    assert message in text and float(seconds) < 10


def test_rank_that_does_not_come_times_out(tmp_path):
    results = spawn("stalls", 2, tmp_path, timeout=60, DIST_TEST_TIMEOUT="1")
    assert results[0][0] != 0
    assert "timed out after 1000ms" in open(tmp_path / "rank0.txt").read()


@pytest.mark.parametrize("method", ["tcp", "file", "store"])
def test_tcp_file_and_store_init_methods(tmp_path, method):
    if method == "store":  # init_process_group(store=TCPStore(MASTER_ADDR, MASTER_PORT, ...), rank=, world_size=)
        check_ok(spawn("env", 2, tmp_path, DIST_STORE="tcp"))
    else:
        init = f"tcp://127.0.0.1:{free_port()}" if method == "tcp" else f"file://{tmp_path / 'rendezvous'}"
        check_ok(spawn("env", 2, tmp_path, DIST_INIT_METHOD=init))
    for r in range(2):
        res = load(tmp_path, r)
        assert res["sum"] == [3.0] and res["rank"] == r
    assert not os.path.exists(tmp_path / "rendezvous")  # rank 0 removes the address file once all joined


def test_init_process_group_with_a_store_needs_rank_and_world_size():
    with pytest.raises(ValueError, match="world_size and rank must be specified if store is specified"):
        dist.init_process_group("gloo", store=dist.HashStore())


# ---- the launchers ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("launcher", [["-m", "flowlike.distributed.run"],
                                      ["-m", "flowlike.compat", "-m", "torch.distributed.run"]],
                         ids=["flowlike.distributed.run", "torch.distributed.run"])
def test_launcher_sets_torchruns_environment(tmp_path, launcher):
    proc = subprocess.run([sys.executable, *launcher, "--standalone", "--nproc-per-node", "2",
                           WORKER, "env", str(tmp_path)], capture_output=True, text=True, timeout=90,
                          env=worker_env())
    assert proc.returncode == 0, proc.stderr
    for r in range(2):
        res = load(tmp_path, r)
        assert res["sum"] == [3.0] and res["world"] == 2
        assert (str(res["RANK"]), str(res["LOCAL_RANK"]), str(res["WORLD_SIZE"])) == (str(r), str(r), "2")
        assert str(res["MASTER_ADDR"]) == "127.0.0.1" and str(res["TORCHELASTIC_RUN_ID"])


def test_launcher_reports_a_failed_worker(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "flowlike.distributed.run", "--nproc_per_node=2",
                           f"--master-port={free_port()}", WORKER, "env", str(tmp_path)], capture_output=True,
                          text=True, timeout=90, env=worker_env(FAIL_RANK="1"))
    assert proc.returncode == 3
    assert "worker rank 1" in proc.stderr and "exit code 3" in proc.stderr


def test_launcher_reports_the_exception_recorded_by_the_worker(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "flowlike.distributed.run", "--standalone", "--nproc-per-node", "2",
                           WORKER, "recorded_failure", str(tmp_path)], capture_output=True, text=True, timeout=90,
                          env=worker_env())
    assert proc.returncode == 1
    assert "rank 1: exit code 1: ValueError: bad batch 7" in proc.stderr, proc.stderr


def test_mpiexec_starts_the_group(tmp_path):
    mpiexec = shutil.which("mpiexec", path=os.path.dirname(sys.executable)) or shutil.which("mpiexec")
    if mpiexec is None:
        pytest.skip("no mpiexec")
    proc = subprocess.run([mpiexec, "-n", "2", sys.executable, WORKER, "env", str(tmp_path)], capture_output=True,
                          text=True, timeout=90, env=worker_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for r in range(2):
        res = load(tmp_path, r)
        assert res["sum"] == [3.0] and res["rank"] == r and res["world"] == 2


def test_launcher_runs_a_torchrun_script_unchanged():
    """examples/ddp_gpt.py imports torch, torch.distributed and DistributedDataParallel: the launcher runs it
    under mock_torch, and its ranks end with identical weights (the script checks with an all_gather). With --graph
    its steps are nn.Graph programs holding the all-reduces, and print the same losses."""
    script = os.path.join(os.path.dirname(HERE), "examples", "ddp_gpt.py")
    printed = []
    for flags in ([], ["--graph"]):
        proc = subprocess.run([sys.executable, "-m", "flowlike.distributed.run", "--standalone", "--nproc-per-node",
                               "2", script, "--steps", "21", "--batch-size", "4", "--context", "16", *flags],
                              capture_output=True, text=True, timeout=120, env=worker_env())
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "2 ranks, identical weights" in proc.stdout
        printed.append([line for line in proc.stdout.splitlines() if "loss" in line])
    assert len(printed[0]) == 3 and printed[1] == printed[0]


# ---- torch.multiprocessing.spawn -------------------------------------------------------------------------------

def test_multiprocessing_spawn_runs_the_ranks(tmp_path):
    import flowlike.multiprocessing as mp
    mp.spawn(workers.spawned, args=(2, free_port(), str(tmp_path)), nprocs=2)
    for r in range(2):
        assert np.load(tmp_path / f"spawned{r}.npy") == [3.0]


def test_multiprocessing_spawn_raises_the_childs_error(tmp_path):
    import flowlike.multiprocessing as mp
    with pytest.raises(mp.ProcessRaisedException, match="(?s)Process 1 terminated.*ValueError: rank 1 gives up"):
        mp.spawn(workers.spawned, args=(2, free_port(), str(tmp_path), 1), nprocs=2)


TUTORIAL = '''
import os
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP


def demo_basic(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(rank)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(10, 10), torch.nn.ReLU(), torch.nn.Linear(10, 5)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001)
    loss = torch.nn.MSELoss()(model(torch.randn(20, 10)), torch.randn(20, 5))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    weights = [torch.zeros(55) for _ in range(world_size)]
    dist.all_gather(weights, torch.nn.utils.parameters_to_vector(model.module[0].parameters())[:55])
    assert all(torch.equal(w, weights[0]) for w in weights)
    print(f"rank {rank}: {type(torch).__name__} {torch.__name__}, weights agree", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(demo_basic, args=(2, int(os.environ["TEST_PORT"])), nprocs=2, join=True)
'''


def test_ddp_tutorial_with_mp_spawn_runs_unchanged_under_mock_torch(tmp_path):
    """PyTorch's DDP tutorial shape: the spawned children import the script as their main module, with
    `import torch` meaning flowlike there too."""
    script = tmp_path / "ddp_tutorial.py"
    script.write_text(TUTORIAL)
    proc = subprocess.run([sys.executable, "-m", "flowlike.compat", str(script)], capture_output=True, text=True,
                          timeout=120, env=worker_env(TEST_PORT=str(free_port())))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for r in range(2):
        assert f"rank {r}: module flowlike, weights agree" in proc.stdout
