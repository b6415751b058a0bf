"""One rank of parity_tests/test_distributed_parity.py: `python ddp_worker.py FRAMEWORK DIR` trains the GPT-mini of
examples/train_gpt.py with DistributedDataParallel (flowlike on MPI, or torch on gloo) from DIR/init.npz, on
this rank's half of each batch, and writes the losses and final weights to DIR/FRAMEWORK_rank{R}.npz."""
import importlib
import os
import sys

import numpy as np

framework, out = sys.argv[1], sys.argv[2]
lib = importlib.import_module(framework)
lib.set_num_threads(1)
HERE = os.path.dirname(os.path.abspath(__file__))


def build(vocab, context):
    import importlib.util
    spec = importlib.util.spec_from_file_location("train_gpt_example",
                                                  os.path.join(HERE, "..", "examples", "train_gpt.py"))
    module = importlib.util.module_from_spec(spec)
    if framework == "flowlike":
        from flowlike.compat import mock_torch
        with mock_torch():
            spec.loader.exec_module(module)
    else:
        spec.loader.exec_module(module)
    return module.build_model(lib, vocab, d_model=32, heads=2, layers=2, context=context)


dist = lib.distributed
dist.init_process_group("gloo")
rank = dist.get_rank()
init = dict(np.load(os.path.join(out, "init.npz")))
data = np.load(os.path.join(out, "data.npy"))
model = build(40, 16)
model.load_state_dict({k: lib.from_numpy(v) for k, v in init.items()})
ddp = lib.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.01)
opt = lib.optim.SGD(ddp.parameters(), lr=0.5, momentum=0.9)
losses = []
half = data.shape[1] // 2
for batch in data:
    mine = lib.from_numpy(batch[rank * half:(rank + 1) * half].copy())
    logits = ddp(mine[:, :-1])
    loss = lib.nn.functional.cross_entropy(logits.reshape(-1, 40), mine[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())
np.savez(os.path.join(out, f"{framework}_rank{rank}.npz"), losses=np.array(losses),
         **{k: v.detach().numpy() for k, v in ddp.module.state_dict().items()})
dist.barrier()  # both ranks are done before either tears its group down
dist.destroy_process_group()
