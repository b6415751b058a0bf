"""DistributedDataParallel against PyTorch's: the same GPT-mini, weights and batches on 2 processes, flowlike on
MPI and torch on gloo, give the same losses and weights."""
import os
import socket
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("mpi4py")

HERE = os.path.dirname(os.path.abspath(__file__))


def run_ranks(framework, out):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = [subprocess.Popen([sys.executable, os.path.join(HERE, "ddp_worker.py"), framework, str(out)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env=dict(os.environ, RANK=str(r), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                                       MASTER_PORT=str(port), OMP_NUM_THREADS="1"))
             for r in range(2)]
    for r, p in enumerate(procs):
        output, _ = p.communicate(timeout=180)
        assert p.returncode == 0, f"{framework} rank {r}:\n{output}"


def test_ddp_training_matches_torch_ddp(tmp_path):
    sys.path.insert(0, os.path.join(HERE, "..", "examples"))
    import train_gpt
    torch.manual_seed(0)
    model = train_gpt.build_model(torch, 40, d_model=32, heads=2, layers=2, context=16)
    np.savez(tmp_path / "init.npz", **{k: v.numpy() for k, v in model.state_dict().items()})
    np.save(tmp_path / "data.npy", np.random.default_rng(0).integers(0, 40, (4, 8, 17)))
    run_ranks("torch", tmp_path)
    run_ranks("flowlike", tmp_path)
    for r in range(2):
        fl, th = np.load(tmp_path / f"flowlike_rank{r}.npz"), np.load(tmp_path / f"torch_rank{r}.npz")
        np.testing.assert_allclose(fl["losses"], th["losses"], rtol=1e-5, atol=1e-5)
        for k in th.files:
            np.testing.assert_allclose(fl[k], th[k], rtol=1e-4, atol=1e-5, err_msg=k)
