"""What the fuzzer (tests/fuzz) found, each kept as a plain regression test: crashes (segmentation faults, heap
corruption), hangs, and exceptions of a class torch does not raise for the same mistake."""
import os
import warnings

import pytest

import flowlike as fl


@pytest.mark.parametrize("p", [1.2, 2.0, 3.0, float("inf"), 0.0])
@pytest.mark.parametrize("dim", [0, -1, (0,), None])
def test_norm_backward_of_a_0dim_tensor(p, dim):
    # the reduced-dims mask of the backward was indexed by dim 0 of a shape with no dims
    x = fl.tensor(0.7, dtype=fl.float64, requires_grad=True)
    n = fl.linalg.vector_norm(x, p, dim=dim, keepdim=True)
    n.sum().backward()
    assert x.grad.shape == ()
    assert abs(x.grad.item() - (0.0 if p == 0 else 1.0)) < 1e-12
    y = fl.tensor(0.7, dtype=fl.float64, requires_grad=True)
    fl.nn.functional.normalize(y, p=1.2, dim=0).sum().backward()
    assert y.grad.shape == ()


@pytest.mark.parametrize("call", [
    lambda: fl.all(None, None, True), lambda: fl.amax(None, None, True), lambda: fl.argmax(None),
    lambda: fl.any(None), lambda: fl.amin(None, (), True), lambda: fl.argmin(None, None, True),
    lambda: fl.frobenius_norm(None, None, True), lambda: fl.index_select(None, 0, fl.tensor([0])),
    lambda: fl.index_select(fl.ones(3), 0, None), lambda: fl.gather(fl.ones(3), 0, None),
    lambda: fl.as_strided(None, (2,), (1,)), lambda: fl.Generator().set_state(None),
    lambda: fl.take_along_dim(fl.ones(3), None, 0),
    lambda: fl.masked_scatter(fl.ones(2), None, fl.ones(2)),
    lambda: fl.index_put(None, [3, -1], fl.ones(2)),
    lambda: fl.median(None), lambda: fl.nanmedian(None, None, True),
])  # (masked_fill(None, -2) and where(None, 1.0, 2.0) fit none of torch's overloads: test_index_faces_parity.py)
def test_none_for_a_required_tensor_is_a_type_error(call):
    # None reached the kernels as an empty tensor handle and was dereferenced
    with pytest.raises(TypeError, match="must be Tensor, not NoneType"):
        call()


@pytest.mark.parametrize("call", [lambda: fl.eq(1, fl.ones(2)), lambda: fl.fmod(1, 2), lambda: fl.gcd(fl.ones(2).long(), 2),
                                  lambda: fl.Tensor.__radd__(2, fl.ones(2)), lambda: fl.ldexp(1, fl.ones(2))])
def test_numbers_where_torch_takes_tensors(call):
    with pytest.raises(TypeError):
        call()


def test_numbers_where_torch_takes_them():
    assert fl.add(2, 3).item() == 5
    assert fl.pow(2, fl.tensor([3.0])).item() == 8.0
    assert fl.remainder(7, fl.tensor([4])).item() == 3


@pytest.mark.parametrize("step", [lambda y: y + 1, lambda y: y * 1.0001, lambda y: (y * 2).sin()])
def test_a_deep_graph_is_freed_without_recursion(step):
    # each node held the last reference to the next: freeing a chain this long overflowed the stack
    x = fl.ones(3, requires_grad=True)
    y = x
    for _ in range(400_000):
        y = step(y)
    del y  # the whole graph goes here


def test_a_deep_graph_backward_then_free():
    x = fl.ones(2, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y + 1
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]
    del y


def test_mvlgamma_of_a_huge_dimension_does_not_loop():
    # p terms used to be a Python loop of p tensor ops (p = 2**31: hours, or a graph too deep to free)
    assert fl.mvlgamma(fl.empty(4, 0, 7, 5, dtype=fl.float16), 2 ** 31 - 1).shape == (4, 0, 7, 5)
    x = fl.tensor([2.5, 3.0, 10.0], dtype=fl.float64, requires_grad=True)
    y = fl.mvlgamma(x, 3)
    assert abs(y[0].item() - 1.8810) < 1e-3
    y.sum().backward()
    assert abs(x.grad[2].item() - 6.5901) < 1e-3


@pytest.mark.parametrize("call", [
    lambda leaf: fl.ne(fl.randn(7, 1, 7), fl.randn(7, 1, 7), out=leaf.permute(2, 1, 0)),
    lambda leaf: fl.cat([fl.ones(3), fl.ones(2)], out=leaf.reshape(-1)[:3]),
])
def test_out_that_is_a_view_of_a_leaf_requiring_grad_is_not_resized(call):
    # the view was resized past its base; the as_strided backward then wrote the gradient outside the leaf's
    # memory (heap corruption, found by the fuzzer as "double free or corruption")
    leaf = fl.zeros(7, 1, 2, requires_grad=True)
    with pytest.raises(RuntimeError):
        r = call(leaf)
        (r.float() * 0.5).sum().backward()


def test_scatter_of_none_is_a_type_error():
    with pytest.raises(TypeError):
        fl.scatter(None, -4, fl.tensor(1), 2.0, reduce="prod")


@pytest.mark.parametrize("call", [lambda: fl.ones(3).sum(float("inf")), lambda: fl.randperm(float("inf")),
                                  lambda: fl.ones(4).split_with_sizes([float("inf")])])
def test_a_float_where_torch_takes_an_int_is_a_type_error(call):
    with pytest.raises(TypeError):  # was int(inf): OverflowError
        call()


def test_polygamma_of_a_huge_order_does_not_hang():
    # math.factorial(2**63 - 1) ran for ever
    assert fl.isinf(fl.polygamma(2 ** 63 - 1, fl.ones(2))).all()
    assert fl.polygamma(100000, fl.ones(2)).tolist() == [float("-inf")] * 2


def test_sort_of_an_empty_tensor_with_a_huge_dim_does_not_visit_its_rows():
    # (0, 2**40): 2**40 empty rows were visited one by one (a hang)
    x = fl.zeros(0, 1).expand(0, 2 ** 40)
    assert fl.msort(x).shape == (0, 2 ** 40)
    assert fl.sort(x, 1).values.shape == (0, 2 ** 40)


def test_split_and_empty_permuted_take_ints():
    with pytest.raises(TypeError):
        fl.ones(4).split([float("-inf"), 2])
    with pytest.raises(TypeError):
        fl.empty_permuted((0, 2), (fl.tensor([0.5]), 1))
    assert [t.shape[0] for t in fl.ones(4).split([fl.tensor(2), 2])] == [2, 2]


def test_svd_of_a_non_finite_matrix_fails_instead_of_hanging():
    # OpenBLAS's gesdd looped for ever on an inf: run in a child process so a regression fails instead of hanging
    import subprocess
    import sys
    code = ("import flowlike as fl\n"
            "x = fl.randn(7, 5, 5); x[2, 0, 0] = float('inf'); x[3, 1, 1] = float('nan')\n"
            "for f in (fl.linalg.svd, fl.linalg.svdvals, fl.linalg.pinv, fl.linalg.matrix_rank):\n"
            "    try:\n        f(x)\n        print('no error')\n"
            "    except RuntimeError as e:\n        print(type(e).__name__, 'non-finite' in str(e))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       cwd=os.path.dirname(os.path.abspath(__file__)))
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split("\n")[:4] == ["LinAlgError True"] * 4


def test_is_set_to_and_resize_check_their_arguments():
    with pytest.raises(TypeError):  # was a null dereference
        fl.ones(2, 3).is_set_to(None)
    with pytest.raises(TypeError):  # was a tuple repeated 2**31 times (MemoryError)
        fl.ones(()).resize((4, 6), 2 ** 31)


@pytest.mark.parametrize("scan", [lambda x: fl.cummax(x, 0)[0], lambda x: fl.cummin(x, 0)[0],
                                  lambda x: fl.cumsum(x, 0), lambda x: fl.cumprod(x, 0),
                                  lambda x: fl.logcumsumexp(x, 0)])
def test_scans_over_an_empty_dim_of_a_huge_tensor_return_at_once(scan):
    # (0, 2**40): 2**40 empty rows were each visited (a hang of hours); an empty row has nothing to scan
    x = fl.empty(0, 2 ** 40, requires_grad=True)
    r = scan(x)
    r.sum().backward()
    assert tuple(r.shape) == (0, 2 ** 40) and tuple(x.grad.shape) == (0, 2 ** 40)


def test_affine_grid_generator_refuses_a_tensor_size_as_torch():
    # a float tensor holding inf reached int() (OverflowError); torch's parser refuses any tensor for `size`
    with pytest.raises(TypeError, match="size"):
        fl.affine_grid_generator(fl.ones(1, 2, 3), fl.tensor([1.0, float("inf"), 2.0, 2.0]), True)


_OOM_CASES = {
    # 65537 rows of 256 KiB copied from a stride-0 view: the address-space limit runs out partway, and a
    # std::bad_alloc from the caching allocator's bookkeeping escaped a destructor (std::terminate)
    "unbind_copy": {"target": "fl.unbind_copy", "args": [("tensor", (65537, 32769), "int64", "huge", True, 0, False)],
                    "kwargs": {}, "backward": None},
}


@pytest.mark.parametrize("name", sorted(_OOM_CASES))
def test_running_out_of_memory_is_a_runtime_error_not_an_abort(name):
    # each in a process of its own under the fuzz worker's 3 GiB address-space limit (its memory runs out)
    import subprocess
    import sys
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz")
    script = ("import resource, sys\n"
              "resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))\n"
              "import flowlike as fl\n"
              "from fuzz_cases import run_case\n"
              f"status, detail = run_case(fl, {_OOM_CASES[name]!r})\n"
              "print(status, detail[0] if status == 'raised' else '', detail[1][:80] if status == 'raised' else '')\n")
    r = subprocess.run([sys.executable, "-c", script], cwd=here, capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert r.returncode == 0, r.stderr[-2000:]
    status, _, rest = r.stdout.strip().partition(" ")
    assert status == "ok" or (status == "raised" and rest.split()[0] in ("RuntimeError", "MemoryError")), r.stdout


@pytest.mark.parametrize("call", [
    lambda: fl.native_channel_shuffle(fl.ones(2, 4, 3), float("inf")),
    lambda: fl.nn.functional.channel_shuffle(fl.ones(2, 4, 3), 2.0),
    lambda: fl.nn.functional.affine_grid(fl.ones(1, 2, 3), [1, 1, float("inf"), 2], align_corners=False),
    lambda: fl.nn.functional.affine_grid(fl.ones(1, 2, 3), [1, 1, 2 ** 70, 2], align_corners=False),
    lambda: fl.nn.functional.interpolate(fl.ones(1, 1, 4), size=float("inf")),
    lambda: fl.nn.functional.layer_norm(fl.ones(2, 3), [float("inf")]),
    lambda: fl.nn.functional.layer_norm(fl.ones(2, 3), [2 ** 70]),
    lambda: fl.nn.functional.embedding(fl.tensor([0]), fl.ones(3, 2), padding_idx=2.0),
    lambda: fl.tensor_split(fl.ones(4), [float("inf")]),
    lambda: fl.tensor_split(fl.ones(4), [2 ** 70]),
    lambda: fl.argmax(fl.ones(3), float("inf")),
    lambda: fl.median(fl.ones(3), 2.0),
    lambda: fl.max(fl.ones(3), float("inf")),
    lambda: fl.repeat_interleave(fl.ones(3), float("inf")),
])
def test_a_float_or_overflowing_int_argument_is_a_type_error_as_torch(call):
    # int() of inf raised OverflowError (and int(2.0) passed silently); torch's argument parser raises TypeError
    with pytest.raises(TypeError):
        call()


@pytest.mark.parametrize("call", [
    lambda: fl.native_channel_shuffle(fl.ones(2, 4, 3), 2 ** 70),
    lambda: fl.argmax(fl.ones(3), 2 ** 70),
    lambda: fl.repeat_interleave(fl.ones(3), 2 ** 70),
    lambda: fl.split(fl.ones(3), 2 ** 70),
])
def test_an_int_argument_past_int64_is_a_value_error_as_torch(call):
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        call()


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_matrix_exp_of_non_finite_entries_is_nan(value):
    # log2(inf) reached math.ceil (OverflowError); torch gives nan for inf and nan entries
    r = fl.linalg.matrix_exp(fl.full((2, 2), value))
    assert bool(r.isnan().all())


@pytest.mark.parametrize("call", [
    lambda: fl.eye(2147483647, 7, dtype=(6, 4)),
    lambda: fl.arange(3, dtype=(1,)),
    lambda: fl.combinations(fl.arange(17), 4294967297, [-1, 2 ** 63 - 1]),
])
def test_a_factory_argument_of_the_wrong_type_is_a_type_error(call):
    # a tuple dtype reached numpy (112 GiB: MemoryError) or .is_floating_point (AttributeError); torch's parser
    # refuses it first; with_replacement must be a bool
    with pytest.raises(TypeError):
        call()


def test_int_of_inf_is_an_overflow_error_as_torch():
    with pytest.raises(OverflowError, match="infinity"):
        int(fl.tensor([float("inf")], dtype=fl.float16))


@pytest.mark.parametrize("call,error", [
    # a 0-dim target of a (0, C) batch reached the kernel unchecked (segmentation fault); a float target too
    (lambda: fl.nn.functional.nll_loss(fl.randn(0, 1, requires_grad=True), fl.tensor(0)), IndexError),
    (lambda: fl.nn.functional.nll_loss(fl.randn(2, 3), fl.tensor([0.0, 1.0])), RuntimeError),
    # block counts past int64 overflowed in im2col (segmentation fault); torch checks the lengths first
    (lambda: fl.nn.functional.unfold(fl.randn(1, 2, 0, 0), (2 ** 62, 2), (2 ** 63 - 1, 6), (2 ** 62, 1),
                                     (2 ** 63 - 1, 6)), RuntimeError),
    (lambda: fl.nn.functional.unfold(fl.randn(2, 4, 4), [2]), RuntimeError),
    # int(inf) of an integer hardtanh bound (OverflowError); torch cannot convert it to int64 either
    (lambda: fl.nn.functional.hardtanh_(fl.zeros(3, dtype=fl.int64), 4, float("inf")), RuntimeError),
])
def test_long_fuzz_crashes_and_classes(call, error):
    with pytest.raises(error):
        call()


@pytest.mark.parametrize("softmax", [lambda x: fl.special.softmax(x, -1), lambda x: fl.log_softmax(x, 0),
                                     lambda x: x.softmax(1), lambda x: fl.nn.functional.softmax(x, -1)])
def test_softmax_of_an_empty_tensor_with_huge_dims_returns_at_once(softmax):
    # (2**62, 0): the kernel visited each of the 2**62 empty rows (a hang)
    r = softmax(fl.empty(1, 0).expand(2 ** 62, 0))
    assert tuple(r.shape) == (2 ** 62, 0)


@pytest.mark.parametrize("call", [
    lambda x: x.chunk(2 ** 31), lambda x: fl.chunk(x, 2 ** 62, 0), lambda x: x.split(2 ** 31),
    lambda x: x.unbind(), lambda x: fl.tensor_split(x, 2 ** 40), lambda x: fl.chunk(x[:0], 2 ** 40),
])
def test_splitting_into_more_views_than_memory_holds_raises_at_once(call):
    # chunk of (2**62, 0) into 2**31 built 2**31 views one by one (a hang); torch's vector of 2**31 tensors fails
    # to allocate (RuntimeError: std::bad_alloc) or runs the machine out of memory
    with pytest.raises(RuntimeError, match="do not fit in memory"):
        call(fl.empty(1, 0).expand(2 ** 62, 0))


def test_splitting_into_many_empty_views_still_works():
    x = fl.empty(1, 0).expand(2 ** 62, 0)
    parts = x.chunk(4)
    assert [tuple(p.shape) for p in parts] == [(2 ** 60, 0)] * 4
    assert len(fl.chunk(x[:0], 1000)) == 1000 and len(x[:1000].unbind()) == 1000


@pytest.mark.parametrize("args,error", [((2 ** 64, 2 ** 64), OverflowError), ((2 ** 63,), RuntimeError),
                                        ((0, 2 ** 63, 2 ** 62), RuntimeError), ((-2 ** 64, 0), OverflowError),
                                        ((0.5, 2 ** 63), RuntimeError)])
def test_arange_past_int64_raises(args, error):
    # numpy wrapped the values silently (arange(2**63) was empty, arange(0, 2**63, 2**62) two values); 2**64 raised
    # OverflowError from numpy. torch: RuntimeError, but Python's OverflowError for ints past [-2**63, 2**64), which
    # its Scalar arguments refuse (as flowlike's number arguments do)
    with pytest.raises(error):
        fl.arange(*args)


def test_layer_norm_with_a_huge_tensor_for_normalized_shape_raises_at_once():
    # (2**31 + 1,) stride-0 view as normalized_shape: flowlike iterated its elements (a hang); torch's TypeError
    x = fl.zeros(1, 1, dtype=fl.int64).expand(2, 2 ** 30 + 1)
    with pytest.raises(TypeError, match="must be tuple of ints, not Tensor"):
        fl.nn.functional.layer_norm(x, x.reshape(-1)[1:])


def test_destroying_a_deep_graph_with_memory_exhausted_does_not_crash():
    # found as a 100,000-step polynomial recurrence on inputs requiring grad (the special polynomials record no
    # history now, as torch's): memory ran out, and destroying the deep graph while none was left could not grow
    # the destructor's queue (Note [Deep graphs]), which fell back to recursion (SIGSEGV). Here a chain of
    # products exhausts it.
    import subprocess
    import sys
    code = (
        "import resource; resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))\n"
        "import flowlike as fl\n"
        "fl.set_num_threads(1)\n"
        "x = fl.ones(257, 33, requires_grad=True)\n"
        "y = x\n"
        "try:\n"
        "    for _ in range(200000):\n"
        "        y = y * x\n"
        "    print('ok')\n"
        "except RuntimeError:\n"
        "    print('raised')\n"
        "del y\n"
        "print('freed')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["raised", "freed"]


@pytest.mark.parametrize("call,error", [
    # a kernel of 2**63 - 1 taps: the pooling loops ran for ever; torch's kernels take int sizes (RuntimeError)
    (lambda x: fl.nn.functional.lp_pool2d(x, 1.0, 2 ** 63 - 1), RuntimeError),
    (lambda x: fl.nn.functional.avg_pool2d(x, 2 ** 40), RuntimeError),
    (lambda x: fl.nn.functional.max_pool2d(x, 2, padding=2 ** 40), RuntimeError),
    # a 2**31-element tensor as stride was iterated (a hang); torch's parser takes only a one-element one
    (lambda x: fl.nn.functional.max_pool2d_with_indices(x, 2, fl.zeros(1).expand(2 ** 31)), TypeError),
])
def test_pooling_arguments_past_int32_raise_at_once(call, error):
    with pytest.raises(error):
        call(fl.zeros(1, 1, 1, 1, dtype=fl.uint8).expand(3, 3, 3, 3).float())


@pytest.mark.parametrize("call", [
    lambda: fl.ones((), dtype=fl.complex128).addcmul(4294967297, 2 ** 62),
    lambda: fl.ones(2, dtype=fl.uint8).expand(2, 2).addcmul_(-(2 ** 63), -(2 ** 63)),
    lambda: fl.addcdiv(fl.ones(2), fl.ones(2), 3),
])
def test_addcmul_addcdiv_take_tensors_only(call):
    # ints for tensor1/tensor2 were multiplied as Python ints: an OverflowError past 2^64 (found by the long fuzz);
    # torch's parser raises TypeError for any non-tensor there
    with pytest.raises(TypeError, match="must be Tensor, not int"):
        call()


@pytest.mark.parametrize("call,error", [
    # an int64 tensor clamped to 1.8e19: int(1.8e19) passed past int64 raised OverflowError; torch reads the limits
    # as int64 first (RuntimeError), then refuses negative limits for unsigned and limits outside the dtype
    (lambda: fl.nn.functional.hardtanh_(fl.ones(1, dtype=fl.int64), 0.5, 1.8446744073709552e+19), RuntimeError),
    (lambda: fl.nn.functional.hardtanh(fl.ones(2, dtype=fl.uint8), -1.0, 2.0), RuntimeError),
    (lambda: fl.nn.functional.hardtanh(fl.ones(2, dtype=fl.int8), 0.5, 300.0), RuntimeError),
    (lambda: fl.nn.functional.hardtanh(fl.ones(2, dtype=fl.bool)), RuntimeError),
    # logit(True) computed 1 / (1 - True): ZeroDivisionError; torch's parser wants a tensor
    (lambda: fl.special.logit(True), TypeError),
    # numpy's MemoryError for 3e12 values escaped range (arange turned it into torch's RuntimeError)
    (lambda: fl.range(0, 3, 1e-12), RuntimeError),
    # a shape whose suffix products pass int64: OverflowError from a comparison with the huge element count; torch
    # holds the products as int64 (ValueError)
    (lambda: fl.unravel_index(fl.tensor(0), (2 ** 31, 2 ** 63 - 1, 2 ** 31)), ValueError),
])
def test_long_fuzz_exception_classes(call, error):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch.range's deprecation)
        with pytest.raises(error):
            call()


def test_unravel_index_wraps_as_torch():
    # torch divides and takes remainders: out-of-range and negative indices wrap, and an element count past int64
    # is fine while the suffix products fit
    assert [t.tolist() for t in fl.unravel_index(fl.tensor([12, -13, -1]), (3, 4))] == [[0, 2, 2], [0, 3, 3]]
    assert [t.tolist() for t in fl.unravel_index(fl.tensor(-1), (2 ** 32, 2 ** 32))] == [2 ** 32 - 1, 2 ** 32 - 1]


def test_unravel_index_refuses_a_tensor_shape_at_once():
    # a (2**31 + 1,) stride-0 bool tensor as shape was iterated element by element (a hang found by the long fuzz);
    # torch refuses a tensor shape with TypeError
    with pytest.raises(TypeError, match="expected 'shape' to be int or sequence of ints"):
        fl.unravel_index(fl.tensor(3), fl.zeros(1, dtype=fl.bool).expand(2 ** 31 + 1))
    with pytest.raises(TypeError, match="only contain ints"):
        fl.unravel_index(fl.tensor(3), (3.0, 4))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "complex64"])
def test_special_polynomials_refuse_dtypes_torch_has_no_kernel_for(dtype):
    # float16 degrees up to 65504 ran the recurrence in float16 for minutes (a hang found by the long fuzz rerun);
    # torch's CPU kernels take float and double only (NotImplementedError)
    x = fl.ones(129, 257, dtype=getattr(fl, dtype))
    with pytest.raises(NotImplementedError, match="not implemented for"):
        fl.special.legendre_polynomial_p(x, fl.full((129, 257), 65504.0, dtype=x.dtype))
