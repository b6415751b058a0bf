"""The torch names transformers touches beyond the ops, against torch 2.13: the meta device, float8 and uint16-64
dtypes, torch.library custom ops, DTensor placements' shard arithmetic, distributions.constraints,
torch.nn.attention, and the CPU-build answers of torch.cuda and torch.xpu."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402

from helpers import LIBS, assert_raises_same, run_both, to_flowlike  # noqa: E402

import flowlike.distributed.tensor.placement_types as fl_placements  # noqa: E402
import torch.distributed.tensor.placement_types as torch_placements  # noqa: E402

EXOTIC = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu", "uint16", "uint32",
          "uint64"]


@pytest.mark.parametrize("name", EXOTIC)
def test_exotic_dtype_properties_and_limits_match_torch(name):
    want, got = run_both(lambda lib: getattr(lib, name))
    assert repr(got) == repr(want)
    assert (got.itemsize, got.is_floating_point, got.is_complex, got.is_signed) == (
        want.itemsize, want.is_floating_point, want.is_complex, want.is_signed)
    info = "finfo" if want.is_floating_point else "iinfo"
    fields = ["bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"] if info == "finfo" else [
        "bits", "min", "max"]
    want_info, got_info = getattr(torch, info)(want), getattr(fl, info)(got)
    assert [getattr(got_info, f) for f in fields] == [getattr(want_info, f) for f in fields]


def test_meta_factories_views_and_reprs_match_torch():
    def body(lib):
        with lib.device("meta"):
            x = lib.zeros(2, 3, requires_grad=True)
            lin = lib.nn.Linear(3, 4)
            in_context = lib.tensor([]).device
        pos = lib.arange(5, device="meta").expand((2, -1))
        return (str(x.device), x.is_meta, tuple(x.shape), repr(x), repr(lin.bias), str(in_context),
                str(pos.device), tuple(pos.shape), str(lib.empty_like(x).device),
                str(lib.empty_like(x, device="cpu").device), str(lib.get_default_device()),
                str(x[1:].device), str(lib.nn.Parameter(x).device))
    want, got = run_both(body)
    assert got == want


@pytest.mark.parametrize("read", ["item", "item_of_one", "tolist", "numpy", "cpu", "to_cpu", "module_to_cpu"])
def test_reading_a_meta_tensor_raises_as_torch(read):
    def body(lib):
        x = lib.empty(2, 3, device="meta")
        if read == "item_of_one":
            return x[0, 0].item()
        if read == "to_cpu":
            return x.to("cpu")
        if read == "module_to_cpu":
            with lib.device("meta"):
                return lib.nn.Linear(2, 2).to("cpu")
        return getattr(x, read)()
    assert_raises_same(body, match_message=True)


def test_meta_module_built_then_materialized_as_torch():
    def body(lib):
        lib.manual_seed(3)
        untouched = lib.rand(2).numpy()
        lib.manual_seed(3)
        with lib.device("meta"):
            m = lib.nn.Linear(3, 2)  # its init draws no random numbers on meta
        after_meta = lib.rand(2).numpy()
        m.to_empty(device="cpu")
        lib.nn.init.ones_(m.weight)
        lib.nn.init.zeros_(m.bias)
        return [str(p.device) for p in m.parameters()], m(lib.ones(1, 3)).detach().numpy(), bool(
            (untouched == after_meta).all())
    want, got = run_both(body)
    assert got[0] == want[0]
    np.testing.assert_array_equal(got[1], want[1])
    assert got[2] and want[2]


def test_custom_op_with_autograd_matches_torch():
    def body(lib):
        ns = "flparity_" + lib.__name__

        @lib.library.custom_op(f"{ns}::scaled_sq", mutates_args=())
        def scaled_sq(x: lib.Tensor, scale: float) -> lib.Tensor:
            return x * x * scale

        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.scale = inputs[1]

        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * ctx.scale * grad, None

        lib.library.register_autograd(f"{ns}::scaled_sq", backward, setup_context=setup_context)
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        y = getattr(getattr(lib.ops, ns), "scaled_sq")(x, 0.5)
        y.sum().backward()
        return y.detach().numpy(), x.grad.numpy()
    want, got = run_both(body)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w)


def test_custom_op_without_autograd_refuses_backward_as_torch():
    def body(lib):
        op = lib.library.custom_op(f"flparity_nograd_{lib.__name__}::double", lambda x: x * 2, mutates_args=(),
                                   schema="(Tensor x) -> Tensor")
        y = op(lib.ones(2, requires_grad=True))
        return y.requires_grad, y.grad_fn is None
    want, got = run_both(body)
    assert got == want
    _, error = assert_raises_same(lambda lib: lib.library.custom_op(
        f"flparity_nobwd_{lib.__name__}::double", lambda x: x * 2, mutates_args=(), schema="(Tensor x) -> Tensor")(
            lib.ones(2, requires_grad=True)).sum().backward())
    assert "no autograd formula was registered" in str(error)


@pytest.mark.parametrize("size,chunks", [(10, 3), (7, 4), (3, 5), (8, 2), (0, 3)])
def test_shard_local_size_and_offset_match_torch(size, chunks):
    for rank in range(chunks):
        want = torch_placements.Shard.local_shard_size_and_offset(size, chunks, rank)
        got = fl_placements.Shard.local_shard_size_and_offset(size, chunks, rank)
        assert tuple(got) == tuple(want), (size, chunks, rank)


def test_placement_reprs_and_equality_match_torch():
    for lib_placements in (torch_placements, fl_placements):
        assert lib_placements.Shard(1) == lib_placements.Shard(1) != lib_placements.Shard(0)
    assert repr(fl_placements.Shard(1)) == repr(torch_placements.Shard(1))
    assert repr(fl_placements.Replicate()) == repr(torch_placements.Replicate())


MATRICES = {"pd": [[2.0, 0.5], [0.5, 1.0]], "psd": [[1.0, 1.0], [1.0, 1.0]], "indefinite": [[1.0, 2.0], [2.0, 1.0]],
            "asymmetric": [[1.0, 2.0], [0.0, 1.0]], "batch": [[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [1.0, 0.0]]]}


@pytest.mark.parametrize("name", list(MATRICES))
@pytest.mark.parametrize("constraint", ["positive_definite", "positive_semidefinite", "symmetric", "square",
                                        "real", "positive", "nonnegative", "unit_interval", "boolean"])
def test_constraints_match_torch(name, constraint):
    values = torch.tensor(MATRICES[name])
    want = getattr(torch.distributions.constraints, constraint).check(values)
    got = getattr(fl.distributions.constraints, constraint).check(to_flowlike(values))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert repr(getattr(fl.distributions.constraints, constraint)) == repr(
        getattr(torch.distributions.constraints, constraint))


def test_sdpa_kernel_backends_and_errors_match_torch():
    from torch.nn.attention import SDPBackend as TB
    from flowlike.nn.attention import SDPBackend as FB
    assert {name: int(b) for name, b in FB.__members__.items()} == {
        name: int(b) for name, b in TB.__members__.items()}
    q = np.random.RandomState(0).standard_normal((1, 2, 4, 8)).astype(np.float32)

    def body(lib):
        from importlib import import_module
        attention = import_module(lib.__name__ + ".nn.attention")
        t = lib.from_numpy(q.copy())
        with attention.sdpa_kernel([attention.SDPBackend.MATH]):
            return lib.nn.functional.scaled_dot_product_attention(t, t, t, is_causal=True).numpy()
    want, got = run_both(body)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert_raises_same(lambda lib: __import__(lib.__name__ + ".nn.attention", fromlist=["x"]).sdpa_kernel(
        "math").__enter__(), match_message=True)


@pytest.mark.parametrize("name", ["Stream", "Event", "CUDAGraph", "graph_of_none"])
def test_cuda_classes_refuse_as_a_cpu_build(name):
    def body(lib):
        return lib.cuda.graph(None) if name == "graph_of_none" else getattr(lib.cuda, name)()
    assert_raises_same(body, match_message=True)


def test_cuda_stream_context_of_none_and_xpu_answers_match_torch():
    def body(lib):
        with lib.cuda.stream(None):
            inside = 1
        return inside, lib.xpu.is_available(), lib.xpu.device_count(), lib.xpu.is_initialized()
    want, got = run_both(body)
    assert got == want
    assert_raises_same(lambda lib: lib.xpu.current_device(), match_message=True)


AUTOCAST_OPS = {
    "linear": lambda lib, a, b, c: lib.nn.functional.linear(a, b, c[0]),
    "matmul_operator": lambda lib, a, b, c: a @ b.T,
    "matmul": lambda lib, a, b, c: lib.matmul(a, b.T),
    "mm": lambda lib, a, b, c: a.mm(b.T),
    "bmm": lambda lib, a, b, c: lib.bmm(a.unsqueeze(0), b.T.unsqueeze(0)),
    "addmm": lambda lib, a, b, c: lib.addmm(c, a, b.T),
    "baddbmm": lambda lib, a, b, c: lib.baddbmm(c.unsqueeze(0), a.unsqueeze(0), b.T.unsqueeze(0)),
    "conv1d": lambda lib, a, b, c: lib.nn.functional.conv1d(a.unsqueeze(0), b[:2, :3].unsqueeze(-1)),
    "conv2d": lambda lib, a, b, c: lib.nn.functional.conv2d(a.reshape(1, 1, 3, 4), b[:2].reshape(2, 1, 2, 2)),
    "sdpa": lambda lib, a, b, c: lib.nn.functional.scaled_dot_product_attention(a[None], a[None], a[None]),
    "cross_entropy_fp32": lambda lib, a, b, c: lib.nn.functional.cross_entropy(a.bfloat16(), lib.tensor([0, 1, 2])),
    "mse_loss_fp32": lambda lib, a, b, c: lib.nn.functional.mse_loss(a.bfloat16(), a.half()),
    "prod_fp32": lambda lib, a, b, c: a.bfloat16().prod(1),
    "cdist_fp32": lambda lib, a, b, c: lib.cdist(a.bfloat16(), a.bfloat16()),
    "float64_untouched": lambda lib, a, b, c: a.double() @ b.double().T,
    "add_untouched": lambda lib, a, b, c: a + 1,
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("op", list(AUTOCAST_OPS))
def test_cpu_autocast_casts_as_torch(op, dtype):
    rng = np.random.RandomState(0)
    arrays = [rng.standard_normal(shape).astype(np.float32) for shape in ((3, 4), (5, 4), (5,))]

    def body(lib):
        a, b, c = (lib.from_numpy(x.copy()) for x in arrays)
        with lib.autocast("cpu", dtype=getattr(lib, dtype)):
            out = AUTOCAST_OPS[op](lib, a, b, c)
        return str(out.dtype), out.float().numpy()
    want, got = run_both(body)
    assert got[0] == want[0]
    np.testing.assert_allclose(got[1], want[1], rtol=2e-2, atol=2e-2)


def test_cpu_autocast_training_step_matches_torch():
    """A Linear-GELU-Linear model under bfloat16 autocast: the output and loss dtypes, the loss, and float32
    gradients of the float32 parameters, from identical weights."""
    torch.manual_seed(0)
    t_model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4))
    f_model = fl.nn.Sequential(fl.nn.Linear(8, 16), fl.nn.GELU(), fl.nn.Linear(16, 4))
    f_model.load_state_dict({k: to_flowlike(v) for k, v in t_model.state_dict().items()})
    x = np.random.RandomState(1).standard_normal((6, 8)).astype(np.float32)
    y = np.array([0, 1, 2, 3, 0, 1])
    results = []
    for lib, model in ((torch, t_model), (fl, f_model)):
        with lib.autocast("cpu", dtype=lib.bfloat16):
            out = model(lib.from_numpy(x.copy()))
            loss = lib.nn.functional.cross_entropy(out, lib.from_numpy(y.copy()))
        loss.backward()
        results.append((str(out.dtype), str(loss.dtype), loss.item(),
                        [(str(p.grad.dtype), p.grad.numpy()) for p in model.parameters()]))
    want, got = results
    assert got[:2] == want[:2] == ("torch.bfloat16", "torch.float32")
    assert abs(got[2] - want[2]) < 2e-2
    for (gd, g), (wd, w) in zip(got[3], want[3]):
        assert gd == wd == "torch.float32"
        np.testing.assert_allclose(g, w, rtol=5e-2, atol=2e-2)


def test_autocast_state_nesting_decorator_and_warnings_match_torch():
    def body(lib):
        states = []
        with lib.autocast("cpu"):
            states.append((lib.is_autocast_enabled("cpu"), str(lib.get_autocast_dtype("cpu"))))
            with lib.autocast("cpu", enabled=False):
                states.append((lib.is_autocast_enabled("cpu"), str((lib.ones(2, 2) @ lib.ones(2, 2)).dtype)))
            states.append(lib.is_autocast_enabled("cpu"))

        @lib.autocast("cpu", dtype=lib.float16)
        def f(t):
            return str((t @ t).dtype), lib.is_autocast_cpu_enabled(), str(lib.get_autocast_cpu_dtype())
        states.append(f(lib.ones(2, 2)))
        states.append((lib.is_autocast_enabled("cpu"), lib.is_autocast_enabled(), str(lib.get_autocast_dtype("cuda"))))
        with pytest.warns(UserWarning, match="target dtype is not supported"):
            with lib.autocast("cpu", dtype=lib.float32):
                states.append(lib.is_autocast_enabled("cpu"))
        with pytest.warns(UserWarning, match="CUDA is not available"):
            with lib.amp.autocast("cuda"):
                states.append(lib.is_autocast_enabled("cuda"))
        return states
    want, got = run_both(body)
    assert got == want
    assert_raises_same(lambda lib: lib.autocast(3), match_message=True)
    assert_raises_same(lambda lib: lib.autocast("nodevice"), match_message=True)
