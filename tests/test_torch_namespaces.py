"""The torch namespaces libraries such as transformers touch at import: exotic dtype names, CPU-build answers of
torch.cuda and torch.xpu, torch.nn.attention, DTensor placements and shard arithmetic, FSDP/DCP/flex_attention
names that refuse to build what flowlike lacks, functional collectives, distributions.constraints."""
import itertools

import numpy as np
import pytest

import flowlike as fl
from flowlike.distributed import _functional_collectives as funcol
from flowlike.distributed import fsdp
from flowlike.distributed.checkpoint import hf_storage
from flowlike.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor
from flowlike.distributed.tensor._utils import compute_local_shape_and_global_offset
from flowlike.distributed.tensor.placement_types import _StridedShard
from flowlike.nn.attention import SDPBackend, flex_attention, sdpa_kernel


def fp_max(exponent_bits, mantissa_bits, bias, top_mantissa_taken=0):
    """The largest finite value of a binary float format (top_mantissa_taken: codes of the top binade used for
    NaN/Inf, as the fn formats)."""
    top_exponent = 2 ** exponent_bits - 1 - bias - (0 if top_mantissa_taken else 1)
    mantissa = (2 ** mantissa_bits - 1 - top_mantissa_taken) / 2 ** mantissa_bits
    return (1 + mantissa) * 2.0 ** top_exponent


def test_float8_limits_follow_from_their_formats():
    assert fl.finfo(fl.float8_e4m3fn).max == fp_max(4, 3, 7, top_mantissa_taken=1)
    assert fl.finfo(fl.float8_e5m2).max == fp_max(5, 2, 15)
    assert fl.finfo(fl.float8_e4m3fn).eps == 2.0 ** -3 and fl.finfo(fl.float8_e5m2).eps == 2.0 ** -2
    assert fl.finfo(fl.float8_e4m3fn).tiny == 2.0 ** (1 - 7) and fl.finfo(fl.float8_e5m2).tiny == 2.0 ** (1 - 15)
    for d in (fl.uint16, fl.uint32, fl.uint64):
        info = fl.iinfo(d)
        assert (info.min, info.max, info.bits) == (0, 2 ** (8 * d.itemsize) - 1, 8 * d.itemsize)
        assert not d.is_signed and not d.is_floating_point
    # storable: a tensor holds the formats' codes (448 is e4m3fn's largest, 0x7e; e5m2 keeps the top of fp16)
    assert fl.tensor([448.0, -2.0], dtype=fl.float8_e4m3fn).view(fl.uint8).tolist() == [0x7E, 0xC0]
    assert fl.tensor([57344.0], dtype=fl.float8_e5m2).view(fl.uint8).tolist() == [0x7B]


def test_cuda_and_xpu_answer_as_a_build_without_them():
    for cls in (fl.cuda.Stream, fl.cuda.Event, fl.cuda.CUDAGraph, fl.cuda.graph):
        with pytest.raises(RuntimeError):
            cls()
    with fl.cuda.stream(None) as s:
        assert s is None
    with pytest.raises(RuntimeError, match="not compiled with CUDA"):
        fl.cuda.StreamContext(object())
    assert (fl.xpu.is_available(), fl.xpu.device_count()) == (False, 0)
    with pytest.raises(AssertionError, match="XPU"):
        fl.xpu.synchronize()


def test_sdpa_kernel_checks_its_backends():
    q = fl.randn(1, 2, 3, 4)
    want = fl.nn.functional.scaled_dot_product_attention(q, q, q)
    with sdpa_kernel([SDPBackend.MATH, SDPBackend.FLASH_ATTENTION]):
        assert fl.equal(fl.nn.functional.scaled_dot_product_attention(q, q, q), want)
    with pytest.raises(AssertionError, match="SDPBackend"):
        with sdpa_kernel("math"):
            pass


@pytest.mark.parametrize("build", [lambda: DTensor(), lambda: DTensor.from_local(fl.ones(2)),
                                   lambda: distribute_tensor(fl.ones(2)), lambda: fsdp.fully_shard(fl.nn.Linear(1, 1)),
                                   lambda: fsdp.FullyShardedDataParallel(fl.nn.Linear(1, 1)),
                                   lambda: hf_storage.HuggingFaceStorageReader("x"),
                                   lambda: flex_attention.BlockMask(),
                                   lambda: flex_attention.create_block_mask(None, 1, 1, 4, 4)])
def test_what_flowlike_lacks_refuses_to_be_built(build):
    with pytest.raises(NotImplementedError, match="flowlike"):
        build()


def test_nothing_is_a_dtensor_or_fsdp_module():
    assert not isinstance(fl.ones(1), DTensor)
    assert not isinstance(fl.nn.Linear(1, 1), fsdp.FullyShardedDataParallel)
    assert fsdp.MixedPrecisionPolicy(param_dtype=fl.bfloat16).param_dtype is fl.bfloat16


class Mesh:
    """A stand-in DeviceMesh (the shard arithmetic only asks for its shape and this rank's coordinate)."""

    def __init__(self, shape, coordinate):
        self.shape, self.coordinate = shape, coordinate
        self.ndim = len(shape)

    def size(self, dim):
        return self.shape[dim]

    def get_coordinate(self):
        return self.coordinate


@pytest.mark.parametrize("global_shape,mesh_shape,placements", [
    ((10, 6), (3,), [Shard(0)]), ((7, 5), (2, 2), [Shard(0), Shard(1)]), ((9, 4), (2, 3), [Shard(0), Shard(0)]),
    ((3, 4), (4,), [Shard(0)]), ((6, 2), (2, 2), [Replicate(), Shard(0)]), ((5,), (2,), [Partial()])])
def test_local_shards_tile_the_global_tensor(global_shape, mesh_shape, placements):
    covered = np.zeros(global_shape, dtype=np.int64)
    for coordinate in itertools.product(*[range(n) for n in mesh_shape]):
        shape, offset = compute_local_shape_and_global_offset(global_shape, Mesh(mesh_shape, list(coordinate)),
                                                               placements)
        covered[tuple(slice(o, o + s) for o, s in zip(offset, shape))] += 1
    copies = int(np.prod([n for n, p in zip(mesh_shape, placements) if not isinstance(p, Shard)]))
    assert (covered == copies).all()


def test_shard_arithmetic_errors():
    with pytest.raises(ValueError):
        Shard.local_shard_size_and_offset(4, 0, 0)
    with pytest.raises(ValueError):
        Shard.local_shard_size_and_offset(4, 2, 2)
    with pytest.raises(NotImplementedError):
        compute_local_shape_and_global_offset((4,), Mesh((2,), [0]), [_StridedShard(0, split_factor=2)])
    with pytest.raises(ValueError):
        compute_local_shape_and_global_offset((4,), Mesh((2,), [0]), [Shard(0), Shard(0)])
    assert compute_local_shape_and_global_offset((4, 2), Mesh((2,), None), [Shard(0)]) == ((0, 0), ())


def test_functional_wait_tensor_returns_the_finished_tensor():
    t = fl.ones(3)
    assert funcol.wait_tensor(t) is t


def test_constraints_agree_with_eigenvalues():
    rng = np.random.RandomState(0)
    for _ in range(20):
        a = rng.standard_normal((3, 3))
        sym = (a + a.T) / 2
        eig = np.linalg.eigvalsh(sym)
        t = fl.from_numpy(sym)
        assert bool(fl.distributions.constraints.positive_definite.check(t)) == bool((eig > 0).all())
        assert bool(fl.distributions.constraints.positive_semidefinite.check(t)) == bool((eig >= 0).all())
        assert not bool(fl.distributions.constraints.symmetric.check(fl.from_numpy(a)))
    with pytest.raises(AttributeError, match="not provided by flowlike yet"):
        fl.distributions.NoSuchFamily
