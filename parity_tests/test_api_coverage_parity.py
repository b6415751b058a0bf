"""The torch API beyond ops, against torch 2.13: legacy tensor types, range/empty_strided, tensor utilities and
predicates, the generated in-place torch.x_ functions and Tensor alias methods. (The ops themselves are in the op
database, opdb.py, checked by test_opdb_parity.py.)"""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
from helpers import assert_same, run_both, to_flowlike  # noqa: E402


@pytest.mark.parametrize("name", ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
                                  "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"])
def test_legacy_tensor_types(name):
    t, f = run_both(lambda m: getattr(m, name)([1, 0, 3]))
    assert_same(f, t)
    t, f = run_both(lambda m: getattr(m, name)(2, 3))
    assert (f.dtype, tuple(f.shape)) == (getattr(fl, str(t.dtype).split(".")[-1]), tuple(t.shape))
    t, f = run_both(lambda m: getattr(m, name)(m.Size([4])))
    assert tuple(f.shape) == tuple(t.shape) == (4,)
    t, f = run_both(lambda m: getattr(m, name)())
    assert tuple(f.shape) == tuple(t.shape) == (0,)
    for other in ("FloatTensor", "LongTensor", "BoolTensor"):
        assert isinstance(f, getattr(fl, other)) == isinstance(t, getattr(torch, other))
    assert not isinstance(3, getattr(fl, name))
    assert f.type() == t.type()


def test_type_conversion_by_legacy_type_and_type_as():
    t, f = run_both(lambda m: m.tensor([1.5, 2.5]).type(m.IntTensor))
    assert_same(f, t)
    t, f = run_both(lambda m: m.tensor([1.5, 2.5]).type_as(m.tensor([1], dtype=m.int16)))
    assert_same(f, t)
    t, f = run_both(lambda m: m.tensor([1.5], dtype=m.float64).new(2, 3))
    assert (str(f.dtype), tuple(f.shape)) == (str(t.dtype), tuple(t.shape))
    t, f = run_both(lambda m: m.tensor([1.5], dtype=m.float64).new([1, 2]))
    assert_same(f, t)


@pytest.mark.parametrize("args,kwargs", [((1, 4), {}), ((0, 1, 0.25), {}), ((3, -1, -0.5), {}), ((2, 2), {}),
                                         ((1, 3), {"dtype": "int32"})])
def test_range_is_inclusive_and_warns(args, kwargs):
    def call(m):
        kw = {k: getattr(m, v) for k, v in kwargs.items()}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = m.range(*args, **kw)
        assert any(issubclass(w.category, UserWarning) for w in caught)
        return result
    t, f = run_both(call)
    assert_same(f, t)


def test_range_errors():
    for args, error in [((5,), TypeError), ((0, 1, 0), RuntimeError), ((0, 1, -1), RuntimeError)]:
        with pytest.raises(error):
            torch.range(*args)
        with pytest.raises(error):
            fl.range(*args)


def test_empty_strided():
    t, f = run_both(lambda m: m.empty_strided((2, 3), (1, 2), dtype=m.float64))
    assert (tuple(f.shape), f.stride(), str(f.dtype)) == (tuple(t.shape), t.stride(), str(t.dtype))
    t, f = run_both(lambda m: m.empty_strided((2, 0, 3), (0, 3, 1)))
    assert (tuple(f.shape), f.stride()) == (tuple(t.shape), t.stride())
    t, f = run_both(lambda m: m.zeros(1).new_empty_strided((3, 2), (1, 3)))
    assert (tuple(f.shape), f.stride()) == (tuple(t.shape), t.stride())
    f = fl.empty_strided((3, 4), (4, 1))
    f.fill_(2)  # the storage covers every element
    assert f.sum().item() == 24


def test_tensor_utility_functions():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for name, fn in [("clone", lambda m, a: m.clone(a)), ("detach", lambda m, a: m.detach(a)),
                     ("fill", lambda m, a: m.fill(a, 2.5)), ("fill_", lambda m, a: m.fill_(a.clone(), -1)),
                     ("zero_", lambda m, a: m.zero_(a.clone())), ("resolve_conj", lambda m, a: m.resolve_conj(a)),
                     ("resolve_neg", lambda m, a: m.resolve_neg(a)), ("conj", lambda m, a: m.conj(a)),
                     ("conj_physical", lambda m, a: m.conj_physical(a))]:
        t, f = fn(torch, torch.from_numpy(x)), fn(fl, fl.from_numpy(x))
        assert_same(f, t)
    a = fl.ones(2, requires_grad=True)
    c = fl.clone(a)
    assert c.requires_grad and not fl.detach(c).requires_grad
    (c * 3).sum().backward()
    assert a.grad.tolist() == [3.0, 3.0]


@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "bool", "int8"])
def test_predicates(dtype):
    def check(m):
        x = m.ones(2, 3, dtype=getattr(m, dtype))
        return (m.is_complex(x), m.is_signed(x), m.is_conj(x), m.is_neg(x), m.is_same_size(x, m.zeros(2, 3)),
                m.is_same_size(x, m.zeros(3, 2)), x.is_signed(), x.is_conj(), x.is_neg(),
                m.is_nonzero(m.tensor([1], dtype=getattr(m, dtype))), m.is_nonzero(m.zeros((), dtype=getattr(m, dtype))))
    assert check(fl) == check(torch)


@pytest.mark.parametrize("make", [lambda m: m.zeros(2), lambda m: m.zeros(0)])
def test_is_nonzero_needs_one_element(make):
    with pytest.raises(RuntimeError):
        torch.is_nonzero(make(torch))
    with pytest.raises(RuntimeError):
        fl.is_nonzero(make(fl))


def test_default_device_typename_is_storage():
    assert str(fl.get_default_device()) == str(torch.get_default_device()) == "cpu"
    fl.set_default_device("cpu")
    fl.set_default_device(None)
    t, f = run_both(lambda m: m.typename(m.zeros(2, dtype=m.int32)))
    assert f == t
    assert fl.typename(3) == torch.typename(3) == "int"
    assert fl.is_storage(fl.zeros(2).untyped_storage()) and not fl.is_storage(fl.zeros(2))


def test_inplace_functions_match_methods():
    """Every generated torch.x_ (flowlike/_ops.py's table) exists in torch and writes in place as torch's does."""
    from flowlike._ops import _INPLACE_FUNCTIONS
    ints = {"gcd", "lcm"}
    args = {"clamp": (-0.5, 0.5), "clip": (-0.5, 0.5), "clamp_max": (0.2,), "clamp_min": (0.2,), "gcd": None,
            "lcm": None, "ldexp": None, "xlogy": None, "logit": (0.1,)}
    base = np.linspace(0.1, 0.9, 6).reshape(2, 3)
    for name in _INPLACE_FUNCTIONS:
        assert hasattr(torch, name + "_"), name
        if name == "addmv":
            t_in, f_in = torch.ones(2, dtype=torch.float64), fl.ones(2, dtype=fl.float64)
            mat, vec = np.arange(6.0).reshape(2, 3), np.array([1.0, -1.0, 2.0])
            t_out, f_out = torch.addmv_(t_in, torch.tensor(mat), torch.tensor(vec)), fl.addmv_(f_in, fl.tensor(mat),
                                                                                            fl.tensor(vec))
            assert f_out is f_in
            assert_same(f_in, t_in)
            continue
        if name in ints:
            data = np.array([[4, 6, 9], [12, 0, 7]])
            extra_t, extra_f = (torch.tensor([6, 4, 3]),), (fl.tensor([6, 4, 3]),)
        else:
            data = base
            extra = args.get(name, ())
            if extra is None:  # binary ops
                extra_t, extra_f = (torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64),), (
                    fl.tensor([1.0, 2.0, 0.5], dtype=fl.float64),)
            else:
                extra_t = extra_f = extra
        t_in, f_in = torch.tensor(data), fl.tensor(data)
        t_out, f_out = getattr(torch, name + "_")(t_in, *extra_t), getattr(fl, name + "_")(f_in, *extra_f)
        assert f_out is f_in, name
        assert_same(f_in, t_in)
        assert_same(f_out, t_out)


@pytest.mark.parametrize("alias", ["absolute", "arccos", "arcsinh", "arctan2", "negative", "fix", "sgn", "multiply",
                                   "subtract", "greater", "less_equal", "not_equal"])
def test_tensor_alias_methods(alias):
    binary = alias in ("arctan2", "multiply", "subtract", "greater", "less_equal", "not_equal")
    x = torch.linspace(-0.9, 0.9, 6, dtype=torch.float64).reshape(2, 3)
    y = torch.tensor([0.5, -0.25, 0.0], dtype=torch.float64)
    t_args, f_args = ((y,), (to_flowlike(y),)) if binary else ((), ())
    assert_same(getattr(to_flowlike(x), alias)(*f_args), getattr(x, alias)(*t_args))
    if alias not in ("greater", "less_equal", "not_equal"):
        t_in, f_in = x.clone(), to_flowlike(x)
        getattr(t_in, alias + "_")(*t_args)
        getattr(f_in, alias + "_")(*f_args)
        assert_same(f_in, t_in)


def test_special_only_ops_stay_in_torch_special():
    """i1, i0e, erfcx, zeta, ... are torch.special functions only, as in torch."""
    for name in ["i1", "i0e", "i1e", "erfcx", "zeta"]:
        assert hasattr(fl.special, name)
        assert hasattr(fl, name) == hasattr(torch, name)
        assert hasattr(fl.Tensor, name) == hasattr(torch.Tensor, name)
    assert not any(n.startswith("special_") for n in dir(fl) + dir(fl.Tensor))


def test_rnn_cells_match_nn_cells():
    cell = torch.nn.LSTMCell(3, 4)
    x, h, c = torch.randn(2, 3), torch.randn(2, 4), torch.randn(2, 4)
    want = cell(x, (h, c))
    params = [to_flowlike(p.detach()) for p in (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)]
    got = fl.lstm_cell(to_flowlike(x), (to_flowlike(h), to_flowlike(c)), *params)
    for g, w in zip(got, want):
        assert_same(g, w.detach(), rtol=1e-5)


def test_as_strided_scatter_gradient_skips_the_scattered_positions():
    # torch 2.13 gets this gradient backwards (it keeps only the scattered positions), so it is checked directly
    x, y = fl.arange(12.0).reshape(3, 4).requires_grad_(), fl.ones(2, 2, requires_grad=True)
    (fl.as_strided_scatter(x, y, (2, 2), (1, 3), 1) * fl.arange(12.0).reshape(3, 4)).sum().backward()
    assert x.grad.reshape(-1).tolist() == [0, 0, 0, 3, 0, 0, 6, 7, 8, 9, 10, 11]
    assert y.grad.tolist() == [[1, 4], [2, 5]]


def test_vmap_cond_while_loop():
    def run(m):
        out = [m.vmap(lambda a, b: (a * b, a.sum()), in_dims=(0, None))(m.arange(6.0).reshape(3, 2), m.tensor([1.0, 2.0])),
               m.vmap(lambda d: d["x"] @ d["y"], in_dims=({"x": 1, "y": None},))({"x": m.ones(2, 3), "y": m.ones(2)}),
               m.vmap(m.dot)(m.arange(12.0).reshape(4, 3), m.ones(4, 3)),
               m.vmap(lambda a: a.t(), out_dims=2)(m.arange(24.0).reshape(4, 3, 2)),
               m.vmap(m.vmap(lambda a: a * 2))(m.arange(6.0).reshape(2, 3)),
               m.cond(m.tensor(False), lambda a: a + 1, lambda a: a - 1, (m.ones(2),)),
               m.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s + i), (m.tensor(0), m.tensor(0)))]
        flat = []
        for o in out:
            flat.extend(o if isinstance(o, tuple) else [o])
        return flat
    for f, t in zip(run(fl), run(torch)):
        assert_same(f, t)
    for bad in (lambda m: m.vmap(m.dot)(m.ones(4, 3), m.ones(5, 3)), lambda m: m.vmap(lambda a: a, in_dims=(None,))(m.ones(2))):
        with pytest.raises(ValueError):
            bad(torch)
        with pytest.raises(ValueError):
            bad(fl)
    x = fl.ones(3, requires_grad=True)
    fl.vmap(lambda a: a * a)(x * 2).sum().backward()
    assert x.grad.tolist() == [8.0, 8.0, 8.0]


def test_sym_helpers():
    for name, args in [("sym_int", (-3.7,)), ("sym_int", (4,)), ("sym_float", (3,)), ("sym_max", (5, 2.0)),
                       ("sym_min", (1, 2)), ("sym_not", (True,)), ("sym_sqrt", (4,)), ("sym_ite", (False, 1, 2)),
                       ("sym_sum", ([1.5, 2],))]:
        got, want = getattr(fl, name)(*args), getattr(torch, name)(*args)
        assert (got, type(got)) == (want, type(want)), name


@pytest.mark.parametrize("make,size", [(lambda m: m.arange(6.0).reshape(2, 3), (2, 2)), (lambda m: m.arange(4.0), (2, 3)),
                                       (lambda m: m.ones(2, 3).t(), (3, 2)), (lambda m: m.ones(2, 3).t(), (4,)),
                                       (lambda m: m.arange(10.0)[2:5], (2, 4))])
def test_resize_(make, size):
    t, f = make(torch), make(fl)
    t.resize_(*size)
    f.resize_(*size)
    assert (tuple(f.shape), f.stride(), f.storage_offset()) == (tuple(t.shape), t.stride(), t.storage_offset())
    kept = min(t.numel(), 3)  # elements that were already there keep their values
    assert f.reshape(-1)[:kept].tolist() == t.reshape(-1)[:kept].tolist()
    with pytest.raises(RuntimeError):
        fl.ones(2, requires_grad=True).resize_(3)
    f2 = fl.zeros(1)
    fl.resize_as_(f2, fl.ones(2, 2))
    assert tuple(f2.shape) == (2, 2)


def test_elementwise_python_callables_and_small_utilities():
    for m in (torch, fl):
        assert m.ones(3).apply_(lambda v: v * 2 + 1).tolist() == [3.0, 3.0, 3.0]
        assert m.ones(2, 2).map_(m.tensor([1.0, 2.0]), lambda a, b: a + b).tolist() == [[2.0, 3.0], [2.0, 3.0]]
        assert m.ones(2).map2_(m.ones(2), m.tensor([2.0, 3.0]), lambda a, b, c: a + b * c).tolist() == [3.0, 4.0]
        assert m.zeros(2).module_load(m.ones(2)).tolist() == [1.0, 1.0]
        y = m.ones(1)
        assert not y.is_pinned() and y.const_data_ptr() == y.data_ptr()
        assert m.ones(2).real.tolist() == [1.0, 1.0]
        with pytest.raises(RuntimeError):
            m.imag(m.ones(2))
    t, f = run_both(lambda m: m.empty_permuted((2, 3, 4), (2, 0, 1)))
    assert (tuple(f.shape), f.stride()) == (tuple(t.shape), t.stride())
    t, f = run_both(lambda m: m.ones(2, dtype=m.float64).to_dense())
    assert_same(f, t)
    x = fl.ones(2)
    assert fl.get_device(x) == torch.get_device(torch.ones(2)) == -1
    assert fl.from_dlpack(fl.to_dlpack(x)).tolist() == [1.0, 1.0]


def test_set_default_tensor_type():
    try:
        fl.set_default_tensor_type(fl.DoubleTensor)
        assert fl.get_default_dtype() == fl.float64 and fl.ones(1).dtype == fl.float64
        fl.set_default_tensor_type("torch.FloatTensor")
        assert fl.get_default_dtype() == fl.float32
        with pytest.raises(TypeError):
            fl.set_default_tensor_type(fl.LongTensor)
        with pytest.raises(TypeError):
            torch.set_default_tensor_type(torch.LongTensor)
    finally:
        fl.set_default_dtype(fl.float32)


def test_anomaly_switches():
    try:
        fl.set_anomaly_enabled(True)
        assert fl.is_anomaly_enabled() and fl.is_anomaly_check_nan_enabled()
    finally:
        fl.set_anomaly_enabled(False)
    assert not fl.is_anomaly_enabled()


@pytest.mark.parametrize("method,args", [("exponential_", (2.0,)), ("cauchy_", (1.0, 0.5)), ("log_normal_", (0.5, 0.25)),
                                         ("geometric_", (0.3,))])
def test_random_fills_follow_their_distribution(method, args):
    """Different streams from torch's, so the moments (and the median for Cauchy) are compared."""
    fl.manual_seed(0)
    torch.manual_seed(0)
    f = getattr(fl.empty(200000, dtype=fl.float64), method)(*args)
    t = getattr(torch.empty(200000, dtype=torch.float64), method)(*args)
    if method == "cauchy_":
        assert abs(f.median().item() - t.median().item()) < 0.02
    else:
        assert abs(f.mean().item() - t.mean().item()) < 0.02 * abs(t.mean().item())
        assert abs(f.std().item() - t.std().item()) < 0.05 * t.std().item()
    if method == "geometric_":
        assert f.min().item() >= 1 and bool((f == f.round()).all())


@pytest.mark.parametrize("call", [lambda m: m.empty(3).exponential_(-1.0), lambda m: m.empty(3).geometric_(1.5),
                                  lambda m: m.empty(3).log_normal_(0.0, -1.0), lambda m: m.empty(3).cauchy_(0.0, 0.0)])
def test_random_fill_argument_errors(call):
    with pytest.raises(RuntimeError):
        call(torch)
    with pytest.raises(RuntimeError):
        call(fl)


@pytest.mark.parametrize("kind", ["rnn_tanh", "rnn_relu", "lstm", "gru"])
@pytest.mark.parametrize("bidirectional,batch_first,layers,bias", [(False, False, 1, True), (True, True, 2, True),
                                                                   (True, False, 2, False)])
def test_sequence_rnn_functions_match_torch(kind, bidirectional, batch_first, layers, bias):
    make = {"rnn_tanh": lambda **k: torch.nn.RNN(nonlinearity="tanh", **k),
            "rnn_relu": lambda **k: torch.nn.RNN(nonlinearity="relu", **k), "lstm": torch.nn.LSTM, "gru": torch.nn.GRU}
    module = make[kind](input_size=3, hidden_size=4, num_layers=layers, bidirectional=bidirectional,
                        batch_first=batch_first, bias=bias)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(2, 5, 3, generator=g)
    h = torch.randn(layers * (2 if bidirectional else 1), 2 if batch_first else 5, 4, generator=g)
    hx = (h, torch.randn(h.shape, generator=g)) if kind == "lstm" else h
    params = [p.detach() for p in module._flat_weights]
    want = getattr(torch, kind)(x, hx, params, bias, layers, 0.0, False, bidirectional, batch_first)
    f_hx = tuple(to_flowlike(t) for t in hx) if kind == "lstm" else to_flowlike(hx)
    got = getattr(fl, kind)(to_flowlike(x), f_hx, [to_flowlike(p) for p in params], bias, layers, 0.0, False,
                            bidirectional, batch_first)
    assert len(got) == len(want)
    for g_, w in zip(got, want):
        assert_same(g_, w.detach(), rtol=1e-5)


def test_restriding_and_deprecated_spellings():
    t, f = run_both(lambda m: m.as_strided_(m.arange(6.0), (2, 2), (1, 2), 1))
    assert_same(f, t)
    assert f.storage_offset() == t.storage_offset()
    for m in (torch, fl):
        with pytest.warns(UserWarning):
            assert tuple(m.arange(6.0).resize(2, 3).shape) == (2, 3)
        with pytest.raises(RuntimeError):
            m.arange(6.0).resize(4)
    t, f = run_both(lambda m: m.norm_except_dim(m.arange(6.0).reshape(2, 3), 2, 1))
    assert_same(f, t)
    t, f = run_both(lambda m: m.embedding_renorm_(m.arange(15.0).reshape(5, 3), m.tensor([0, 2, 2]), 3.0, 2.0))
    assert_same(f, t)
    try:
        fl.set_deterministic_debug_mode("warn")
        assert fl.get_deterministic_debug_mode() == 1 and fl.are_deterministic_algorithms_enabled()
        fl.set_deterministic_debug_mode(2)
        assert fl.get_deterministic_debug_mode() == 2
    finally:
        fl.set_deterministic_debug_mode("default")
    assert fl.get_deterministic_debug_mode() == 0
    with pytest.raises(RuntimeError):
        fl.set_deterministic_debug_mode(3)


@pytest.mark.parametrize("name", ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_k0",
                                  "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1"])
def test_bessel_gradients_are_the_known_derivatives(name):
    """torch has no gradients for these; flowlike's follow J0' = -J1, J1' = J0 - J1/x, ... (checked numerically)."""
    x = fl.tensor([0.3, 1.7, 4.0, 11.0, 30.0], dtype=fl.float64, requires_grad=True)
    fn = getattr(fl.special, name)
    fn(x).sum().backward()
    eps = 1e-6
    numeric = (fn(x.detach() + eps) - fn(x.detach() - eps)) / (2 * eps)
    np.testing.assert_allclose(x.grad.numpy(), numeric.numpy(), rtol=1e-6, atol=1e-9)


def test_airy_ai_against_reference_values():
    """Values of scipy.special.airy (torch's kernel drifts by ~3e-6 near -2.1, so it is not the reference there)."""
    x = fl.tensor([-2.1, -1.0, 0.0, 1.0, 2.0, -10.0], dtype=fl.float64)
    want = [0.1634845129992927, 0.5355608832923522, 0.3550280538878172, 0.13529241631288147, 0.03492413042327436,
            0.040241238486441955]
    np.testing.assert_allclose(fl.special.airy_ai(x).numpy(), want, rtol=1e-12)


def test_gumbel_softmax():
    """One-hot rows whose frequencies follow softmax(logits); hard samples pass the soft sample's gradient."""
    fl.manual_seed(0)
    logits = fl.tensor([0.0, 1.0, 2.0])
    samples = fl.stack([fl.nn.functional.gumbel_softmax(logits, hard=True) for _ in range(4000)])
    assert bool(((samples == 0) | (samples == 1)).all()) and samples.sum(-1).tolist() == [1.0] * 4000
    np.testing.assert_allclose(samples.mean(0).numpy(), torch.softmax(torch.tensor([0.0, 1.0, 2.0]), 0).numpy(),
                               atol=0.03)
    soft = fl.nn.functional.gumbel_softmax(fl.zeros(5, 4), tau=0.3, dim=0)
    np.testing.assert_allclose(soft.sum(0).numpy(), np.ones(4), rtol=1e-6)
    x = fl.tensor([[1.0, 2.0, 0.5]], requires_grad=True)
    (fl.nn.functional.gumbel_softmax(x, hard=True) * fl.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad is not None and float(x.grad.abs().sum()) > 0
    t, f = run_both(lambda m: m.nn.functional.native_channel_shuffle(m.arange(12.0).reshape(1, 6, 2), 3))
    assert_same(f, t)


@pytest.mark.parametrize("rate", [0.0, 0.4, 3.0, 9.9, 10.0, 60.0, 5000.0])
def test_poisson_follows_its_distribution(rate):
    fl.manual_seed(0)
    f = fl.poisson(fl.full((40000,), rate, dtype=fl.float64))
    t = torch.poisson(torch.full((40000,), rate, dtype=torch.float64))
    assert f.dtype == fl.float64 and bool((f == f.round()).all()) and bool((f >= 0).all())
    tol = 4 * np.sqrt(rate / 40000) + 1e-9  # four standard errors of the mean
    assert abs(f.mean().item() - rate) <= tol and abs(t.mean().item() - rate) <= tol
    if rate:
        assert abs(f.var().item() / rate - 1) < 0.05


def test_poisson_shapes_generators_and_errors():
    g = fl.Generator().manual_seed(3)
    a = fl.poisson(fl.tensor([[1.0, 20.0], [0.0, 5.0]]), generator=g)
    g.manual_seed(3)
    assert a.shape == (2, 2) and a.tolist() == fl.poisson(fl.tensor([[1.0, 20.0], [0.0, 5.0]]), generator=g).tolist()
    for bad, error in [(lambda m: m.poisson(m.tensor([-1.0])), RuntimeError), (lambda m: m.poisson(m.tensor([1])),
                                                                                 NotImplementedError)]:
        with pytest.raises(error):
            bad(torch)
        with pytest.raises(error):
            bad(fl)


@pytest.mark.parametrize("make", [lambda m: m.ones(2, 3, 4), lambda m: m.ones(2, 3, 4).transpose(0, 2),
                                  lambda m: m.ones(2, 3, 4, 5).permute(0, 2, 3, 1),
                                  lambda m: m.ones(3, 1, 4).expand(3, 5, 4), lambda m: m.ones(1, 3, 1, 2),
                                  lambda m: m.ones(2, 1, 3).permute(2, 1, 0), lambda m: m.ones(5, 4)[:, :1],
                                  lambda m: m.empty_strided((2, 3, 4), (1, 8, 2)), lambda m: m.ones(())])
def test_dim_order(make):
    assert make(fl).dim_order() == make(torch).dim_order()


def test_integer_and_special_edges_never_crash():
    """gcd/lcm at the most negative integer (where torch itself traps), airy_ai at the infinities as torch, and a
    clear error instead of an endless recurrence for huge polynomial degrees."""
    for dtype, lo in ((fl.int64, -2 ** 63), (fl.int32, -2 ** 31), (fl.int8, -128)):
        a, b = fl.tensor([lo, 12, -4], dtype=dtype), fl.tensor([5, 18, 6], dtype=dtype)
        assert fl.gcd(a, b).tolist() == [1, 6, 2]
        assert fl.lcm(a, b).tolist()[1:] == [36, 12]
    t = torch.tensor([float("inf"), float("-inf"), 0.5])
    assert_same(fl.special.airy_ai(to_flowlike(t)), torch.special.airy_ai(t))
    with pytest.raises(RuntimeError, match="degrees up to"):
        fl.special.chebyshev_polynomial_t(fl.tensor([0.5]), fl.tensor([1e7]))
