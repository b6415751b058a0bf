"""The op declarations (csrc/ops/*.yaml) and what the build makes of them: ops registered with their schemas,
Python faces bound by the schema, autograd kernels from the derivative formulas (csrc/ops/gen_ops.py)."""
import importlib.util
import inspect
import pathlib
import warnings

import pytest
import yaml

import flowlike as fl
from flowlike import _C

OPS_DIR = pathlib.Path(__file__).resolve().parent.parent / "csrc" / "ops"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_ops", OPS_DIR / "gen_ops.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _entries():
    for path in sorted(OPS_DIR.glob("*.yaml")):
        for entry in yaml.safe_load(path.read_text())["ops"]:
            yield path.stem, entry


def test_every_declaration_is_a_registered_op_with_its_schema_and_faces():
    gen = _generator()
    registry = {name: schema for name, schema, _ in _C._op_registry()}
    entries = list(_entries())
    assert len(entries) > 40
    for family, e in entries:
        schema = gen.Schema(e["func"])
        name = e.get("name", schema.name + ("_" + schema.overload if schema.overload else ""))
        assert registry[name] == e["func"], (family, name)
        faces = gen._listed(e.get("python"))
        py_name = schema.name  # (the overloads of one name make one face)
        if "function" in faces:
            assert getattr(fl, py_name) is getattr(_C, py_name)
        if "private" in faces:
            assert callable(getattr(_C, py_name if py_name.startswith("_") else "_" + py_name))
        if "method" in faces:
            assert callable(getattr(fl.Tensor, py_name))
        if "inplace" in faces:
            assert callable(getattr(fl.Tensor, py_name + "_"))
    assert not _C._schema_problems()


def test_faces_bind_arguments_as_torch_does():
    x = fl.arange(12.0).reshape(3, 4)
    assert fl.roll(x, 1).tolist() == fl.roll(input=x, shifts=1).tolist()
    assert fl.roll(x, 1, None).tolist() == fl.roll(x, 1).tolist()  # None takes a list's default
    assert x.flip(0, 1).tolist() == fl.flip(x, (0, 1)).tolist()  # spread-out ints of a lone int list
    assert x.repeat(2, 1).shape == (6, 4)
    with pytest.raises(TypeError, match=r"flip\(\): argument 'dims' \(position 2\) must be tuple of ints, not int"):
        fl.flip(x, 0)
    with pytest.raises(TypeError, match=r"roll\(\) missing required argument 'shifts'"):
        fl.roll(x)
    with pytest.raises(TypeError, match=r"roll\(\) got an unexpected keyword argument 'dim'"):
        fl.roll(x, 1, dim=0)
    with pytest.raises(TypeError, match=r"tril\(\) takes 2 positional arguments but 3 were given"):
        fl.tril(x, 0, 1)
    with pytest.raises(TypeError, match=r"got multiple values for argument 'input'"):
        fl.trace(x, input=x)
    with pytest.raises(TypeError, match="must be Tensor, not NoneType"):
        fl.trace(None)
    assert str(inspect.signature(fl.tril)) == "(input, diagonal=0, *, out=None)"
    assert str(inspect.signature(fl.roll)) == "(input, shifts, dims=[])"
    assert "lower triangle" in fl.tril.__doc__


def test_out_and_inplace_faces_follow_the_one_convention():
    x = fl.arange(9.0).reshape(3, 3)
    out = fl.empty(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = fl.tril(x, out=out)
    assert r is out and out.tolist() == fl.tril(x).tolist()
    assert any("was resized" in str(w.message) for w in caught)
    with pytest.raises(RuntimeError, match="can't be cast"):
        fl.tril(x, out=fl.empty(3, 3, dtype=fl.int64))
    y = x.clone()
    assert y.triu_(1) is y and y.tolist() == fl.triu(x, 1).tolist()
    leaf = fl.ones(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf.tril_()
    z = leaf * 2
    z.tril_()
    z.sum().backward()
    assert leaf.grad.tolist() == [[2.0, 0.0], [2.0, 2.0]]


def test_generated_autograd_saves_only_what_formulas_read():
    x = fl.randn(3, 4, requires_grad=True)
    # repeat's formula reads only self->sizes: nothing is saved, so writing x in place later is allowed
    r = x.repeat(2, 1)
    with fl.no_grad():
        x.add_(1)
    r.sum().backward()
    assert x.grad.tolist() == [[2.0] * 4] * 3
    # sort's formula reads the indices it returns; median over all reads self and result (saved, version-checked)
    y = fl.randn(5, requires_grad=True)
    assert y.median().grad_fn.name() == "MedianBackward0"
    values, _ = y.sort()
    (values * fl.arange(5.0)).sum().backward()
    assert sorted(y.grad.tolist()) == [0.0, 1.0, 2.0, 3.0, 4.0]
    w = fl.randn(4, requires_grad=True)
    s = w * 1
    med = s.median()
    with fl.no_grad():
        s.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        med.backward()


def test_out_exact_faces_take_out_of_exactly_the_results_dtype():
    gen = _generator()
    _, source = gen.generate("t", {"ops": [{"func": "f(Tensor self) -> Tensor", "cpu": "f_cpu", "derivatives": "none",
                                            "python": ["function", "out_exact"]}]})
    assert '"function,out_exact"' in source
    x = fl.arange(6.0).reshape(2, 3)
    out = fl.empty(0)
    assert fl.index_select(x, 1, fl.tensor([2, 0]), out=out) is out and out.tolist() == [[2.0, 0.0], [5.0, 3.0]]
    with pytest.raises(RuntimeError, match="expected out tensor to have dtype Float, but got Double"):
        fl.index_select(x, 1, fl.tensor([2]), out=fl.empty(0, dtype=fl.float64))  # (tril's out= would cast)


def test_generator_refuses_bad_entries():
    gen = _generator()

    def generate(entry):
        return gen.generate("t", {"ops": [entry]})

    with pytest.raises(ValueError, match="not a Tensor argument"):
        generate({"func": "f(Tensor self, int k) -> Tensor", "cpu": "f_cpu", "derivatives": {"k": "grad"}})
    with pytest.raises(ValueError, match="unknown python faces"):
        generate({"func": "f(Tensor self) -> Tensor", "cpu": "f_cpu", "derivatives": "none", "python": ["fn"]})
    with pytest.raises(ValueError, match="say `derivatives:`"):
        generate({"func": "f(Tensor self) -> Tensor", "cpu": "f_cpu"})
    with pytest.raises(ValueError, match="no C\\+\\+ type"):
        generate({"func": "f(Tensor self, Dimname d) -> Tensor", "cpu": "f_cpu", "derivatives": "none"})
    header, source = generate({"func": "f(Tensor self, Tensor other, int k=1) -> Tensor", "cpu": "f_cpu",
                               "derivatives": {"self": "grad * other", "other": "g(grad, self->sizes)"}})
    assert "FL_DECLARE_OP(f, Tensor(const Tensor&, const Tensor&, int64_t))" in header
    assert "Tensor f_cpu(const Tensor&, const Tensor&, int64_t);" in header
    # other is read whole, by self's formula only: saved only when self requires grad (as torchgen); self only for
    # its sizes (kept by value)
    assert "{requires_grad(self) ? other : Tensor()}, false" in source and "self_sizes = self->sizes" in source
    # read whole by every formula: saved unconditionally
    _, source = generate({"func": "f(Tensor self, Tensor other) -> Tensor", "cpu": "f_cpu",
                          "derivatives": {"self": "grad * other", "other": "grad * other"}})
    assert "{other}, false" in source



def test_generator_joint_formula_runs_once_for_its_inputs():
    gen = _generator()
    entry = {"func": "f(Tensor self, Tensor other, Tensor w) -> Tensor", "cpu": "f_cpu",
             "derivatives": {"other, self": "h(grad, self, other, grad_input_mask)", "w": "grad * w"}}
    _, source = gen.generate("t", {"ops": [entry]})
    # one TensorList for both, in the key's order, computed when one of them wants a gradient (edges 1 and 0)
    assert ("TensorList joint0_(2); { const std::array<bool, 2> grad_input_mask{should_compute_output(1), "
            "should_compute_output(0)}; if (grad_input_mask[0] || grad_input_mask[1]) joint0_ = "
            "h(grad, self, other, grad_input_mask); }") in source
    assert "return TensorList{joint0_[1], joint0_[0], should_compute_output(2) ? grad * w : Tensor()};" in source
    with pytest.raises(ValueError, match="not a Tensor argument"):
        gen.generate("t", {"ops": [dict(entry, derivatives={"self, nope": "h(grad)"})]})

def test_generator_gives_several_differentiable_results_one_node():
    gen = _generator()
    entry = {"func": "f(Tensor self) -> (Tensor Q, Tensor R, Tensor idx)", "cpu": "f_cpu",
             "output_differentiability": [True, True, False],
             "derivatives": {"self": "g(grad_Q, grads[1], Q, idx, self->sizes)"}}
    _, source = gen.generate("t", {"ops": [entry]})
    # Q is read whole: saved as output 0 (no cycle); idx is not differentiable: kept by value; self by its sizes
    assert "record_multi(\"FBackward0\", {gradient_edge(self)}, {std::get<0>(out_), std::get<1>(out_), Tensor()}, {}, {0}" in source
    assert "idx = std::get<2>(out_)" in source and "self_sizes = self->sizes" in source
    assert "const Tensor& grad_Q = grads[0];" in source
    with pytest.raises(ValueError, match="output_differentiability needs one"):
        gen.generate("t", {"ops": [dict(entry, output_differentiability=[True, True])]})
    with pytest.raises(ValueError, match="output_differentiability needs formulas"):
        gen.generate("t", {"ops": [dict(entry, derivatives={"self": "grad"})]})


def test_multi_output_node_receives_each_results_gradient():
    import torch

    data = fl.randn(3, 4).tolist()
    x, tx = fl.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    v, m = fl.var_mean(x, 1)
    tv, tm = torch.var_mean(tx, 1)
    assert v.grad_fn is m.grad_fn and v.grad_fn.name() == tv.grad_fn.name()
    m.sum().backward()  # only the mean's gradient arrives
    tm.sum().backward()
    assert fl.allclose(x.grad, fl.tensor(tx.grad.tolist()))
    v, m = fl.var_mean(x, 1)
    tv, tm = torch.var_mean(tx, 1)
    (v * 3 + m).sum().backward()
    (tv * 3 + tm).sum().backward()
    assert fl.allclose(x.grad, fl.tensor(tx.grad.tolist()), atol=1e-6)
    # the input is a saved variable now: writing it in place before backward is torch's error
    y = x * 1
    v, _ = fl.var_mean(y, 0)
    with fl.no_grad():
        y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        v.sum().backward()


def test_faces_take_torchs_numpy_spellings_and_check_tensor_lists():
    import torch

    data = fl.randn(2, 3).tolist()
    x, tx = fl.tensor(data), torch.tensor(data)
    # torch's parser also takes axis= for dim=, keepdims= for keepdim=, x= for input=
    for call in (lambda m, t: m.cat([t, t], axis=1), lambda m, t: m.concatenate((t, t), axis=0),
                 lambda m, t: m.roll(t, 1, 0), lambda m, t: m.flip(t, [0]), lambda m, t: m.tril(t, diagonal=-1)):
        assert call(fl, x).tolist() == call(torch, tx).tolist()
    for ours, theirs in (([x, None], [tx, None]), ((x, 3), (tx, 3)), (x, tx)):
        with pytest.raises(TypeError) as ours_error:
            fl.cat(ours)
        with pytest.raises(TypeError) as torchs_error:
            torch.cat(theirs)
        assert str(ours_error.value) == str(torchs_error.value)
    out = fl.empty(0)
    assert fl.cat([x, x], out=out) is out and out.shape == (4, 3)
    with pytest.raises(TypeError, match="unexpected keyword argument 'axes'"):
        fl.cat([x], axes=0)


def test_dtype_defaults_and_generated_random_faces():
    assert fl._C._randperm(4).dtype == fl.int64  # `ScalarType dtype=long`
    assert fl._C._randperm(4, dtype=None).dtype == fl.int64
    assert fl._C._randperm(4, dtype=fl.float32).dtype == fl.float32
    g1, g2 = fl.Generator().manual_seed(3), fl.Generator().manual_seed(3)
    a = fl.empty(5).uniform_(2.0, 3.0, generator=g1)
    b = fl.empty(5).uniform_(2.0, 3.0, generator=g2)
    assert a.tolist() == b.tolist() and all(2.0 <= v < 3.0 for v in a.tolist())
    assert str(inspect.signature(fl.multinomial)) == "(input, num_samples, replacement=False, *, generator=None, out=None)"
    with pytest.raises(TypeError, match="positional arguments"):
        fl.empty(3).normal_(0.0, 1.0, fl.Generator())  # generator is keyword-only, as torch's


def test_generated_autograd_keeps_metadata_of_an_absent_optional_tensor():
    gen = _generator()
    _, source = gen.generate("t", {"ops": [{"func": "f(Tensor self, Tensor? w) -> Tensor", "cpu": "f_cpu",
                                            "derivatives": {"self": "grad * self", "w": "g(grad, w->sizes)"}}]})
    assert "w_sizes = w ? w->sizes : decltype(w->sizes){}" in source
    # an op with an optional tensor that is absent: binary_cross_entropy_with_logits without pos_weight
    x = fl.tensor([0.3, -1.2], requires_grad=True)
    loss = fl.nn.functional.binary_cross_entropy_with_logits(x, fl.tensor([1.0, 0.0]), reduction="sum")
    (g,) = fl.autograd.grad(loss, x, create_graph=True)
    g.sum().backward()
    s = (x.detach().sigmoid() * (1 - x.detach().sigmoid()))
    assert fl.allclose(x.grad, s)


def test_generated_inplace_write_checks_records_and_rebases_in_order():
    gen = _generator()
    entry = {"func": "f_(Tensor(a!) self, Tensor other) -> Tensor(a!)", "cpu": "f_cpu",
             "derivatives": {"self": "grad * other", "other": "grad * self + result"}}
    _, source = gen.generate("t", {"ops": [entry]})
    steps = ["if (!inplace_needs_grad(self, requires_grad(other))) return redispatch_no_grad(ops::f_, ks, self, other);",
             "check_inplace_write(self);",
             # self's old value is read whole by other's formula only: cloned before the write only when other
             # requires grad (and other, read by self's formula, saved only when self does)
             "Tensor self_old_ = requires_grad(other) ? copy_before_write(self) : Tensor();",
             "Edge self_edge_ = gradient_edge(self);", "redispatch_no_grad(ops::f_, ks, self, other);",
             "record_saved(\"FBackward0\", self, {self_edge_, gradient_edge(other)}, "
             "{self_old_, requires_grad(self) ? other : Tensor()}, true,",
             "const Tensor& self = saved_[0]; const Tensor& other = saved_[1]; const Tensor& result = saved_[2];",
             "rebase_view_history(self);", "return self;"]
    at = 0
    for step in steps:  # each after the one before
        at = source.index(step, at) + len(step)
    # formulas that do not read self's old value whole make no clone
    _, source = gen.generate("t", {"ops": [dict(entry, derivatives={"self": "zeros_like(grad)",
                                                                    "other": "sum_to(grad, other->sizes)"})]})
    assert "copy_before_write" not in source and "record_lambda(\"FBackward0\", self, {self_edge_, " in source
    with pytest.raises(ValueError, match="formula for self's old value"):
        gen.generate("t", {"ops": [dict(entry, derivatives={"other": "grad"})]})


def test_generated_autograd_error_refuses_tensors_that_require_grad():
    gen = _generator()
    _, source = gen.generate("t", {"ops": [{"func": "g_(Tensor(a!) self, int[] size) -> Tensor(a!)", "cpu": "g_cpu",
                                            "autograd": 'error "cannot do that"'}]})
    assert ('FL_REGISTER_KERNEL(g_, Autograd, ([](DispatchKeySet, const Tensor& self, const IntList& size) -> Tensor '
            '{ throw Error("cannot do that"); }))') in source
    x = fl.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        x.resize_(5)
    with fl.no_grad():  # (the Autograd kernel runs only under grad mode)
        assert x.detach().resize_(5).shape == (5,)


def test_generated_autograd_for_a_tensor_list_input():
    gen = _generator()
    entry = {"func": "f(Tensor[] ts, int dim) -> Tensor", "cpu": "f_cpu",
             "derivatives": {"ts": "h(grad, to_args_sizes(ts), to_args_scalartypes(ts), dim)"}}
    _, source = gen.generate("t", {"ops": [entry]})
    # one edge per tensor; the formula's TensorList is the node's outputs; the tensors' metadata kept by value
    assert ("record_lambda(\"FBackward0\", out_, {gradient_edges(ts)}, [ts_args_scalartypes = to_args_scalartypes(ts), "
            "ts_args_sizes = to_args_sizes(ts), dim](const Tensor& grad) { return h(grad, ts_args_sizes, "
            "ts_args_scalartypes, dim); });") in source
    with pytest.raises(ValueError, match="only differentiable input"):
        gen.generate("t", {"ops": [{"func": "f(Tensor[] ts, Tensor w) -> Tensor", "cpu": "f_cpu",
                                    "derivatives": {"ts": "h(grad)", "w": "grad"}}]})


def test_generator_composite_runs_the_unfused_ops_only_with_a_gradient():
    gen = _generator()
    entry = {"func": "f(Tensor self, Tensor w, bool relu) -> Tensor", "cpu": "f_cpu", "autograd": "composite",
             "composite": "g(ops::mm(self, w), relu)"}
    _, source = gen.generate("t", {"ops": [entry]})
    assert ("FL_REGISTER_KERNEL(f, Autograd, ([](DispatchKeySet, const Tensor& self, const Tensor& w, bool relu) -> "
            "Tensor { return g(ops::mm(self, w), relu); }))") in source
    with pytest.raises(ValueError, match="needs `composite:`"):
        gen.generate("t", {"ops": [dict(entry, composite=None)]})


def test_generator_absent_results_get_no_output_and_undefined_values():
    gen = _generator()
    entry = {"func": "f(Tensor A, str mode) -> (Tensor Q, Tensor R)", "cpu": "f_cpu", "absent": {"Q": 'mode == "r"'},
             "derivatives": {"A": "g(grads[0], grads[1], Q, R)"}}
    _, source = gen.generate("t", {"ops": [entry]})
    # Q gets no history when absent; saved as an output either way (undefined when absent)
    assert ('{gradient_edge(A)}, {mode == "r" ? Tensor() : std::get<0>(out_), std::get<1>(out_)}, {}, {0, 1}'
            in source)
    with pytest.raises(ValueError, match="`absent:` names differentiable results"):
        gen.generate("t", {"ops": [dict(entry, absent={"X": "true"})]})
    with pytest.raises(ValueError, match="`absent:` names differentiable results"):
        gen.generate("t", {"ops": [dict(entry, derivatives={"A": "grad"})]})


def test_conv2d_bias_act_is_fused_without_a_gradient_and_the_unfused_pair_with_one():
    # _conv2d_bias_act: without a gradient the fused kernel (no node); with one, the convolution and the activation
    # each record their node, and the gradients are the unfused pair's
    x, w, b = fl.randn(2, 3, 6, 6), fl.randn(4, 3, 3, 3), fl.randn(4)

    def fused(weight):
        return fl._C._call_op("_conv2d_bias_act", x, weight, b, [1, 1], [1, 1], [1, 1], 1, "relu")

    assert fused(w).grad_fn is None
    wg, wr = w.clone().requires_grad_(), w.clone().requires_grad_()
    y = fused(wg)
    assert y.grad_fn.name() == "ReluBackward0"
    assert y.grad_fn.next_functions[0][0].name() == "ConvolutionBackward0"
    y.sum().backward()
    fl.nn.functional.conv2d(x, wr, b, padding=1).relu().sum().backward()
    assert fl.allclose(wg.grad, wr.grad)


def test_factorizations_results_absent_by_argument_have_no_node():
    # linalg.qr with mode='r': R alone has a node, Q none; its gradient needs Q (torch's error)
    A = fl.randn(4, 3, requires_grad=True)
    Q, R = fl.linalg.qr(A, mode="r")
    assert Q.grad_fn is None and R.grad_fn.name() == "LinalgQrBackward0"
    with pytest.raises(RuntimeError, match="not computed when mode='r'"):
        R.sum().backward()
    # svd without compute_uv: S alone has a node, whose backward needs the vectors
    U, S, Vh = fl._C._linalg_svd(A, False, False)
    assert U.grad_fn is None and Vh.grad_fn is None and S.grad_fn.name() == "LinalgSvdBackward0"
    with pytest.raises(RuntimeError, match="singular values alone are not differentiable"):
        S.sum().backward()


def test_generator_tensor_list_result_gives_one_output_per_tensor():
    gen = _generator()
    entry = {"func": "f(Tensor g, Tensor x) -> Tensor[]", "cpu": "f_cpu",
             "derivatives": {"g, x": "h(grads[0], grads[1], g, x, grad_input_mask)"}}
    _, source = gen.generate("t", {"ops": [entry]})
    # the list itself is the node's outputs (its undefined tensors get no history)
    assert "record_multi(\"FBackward0\", {gradient_edge(g), gradient_edge(x)}, out_, {g, x}, {}," in source
    with pytest.raises(ValueError, match="a Tensor\\[\\] as the only one"):
        gen.generate("t", {"ops": [dict(entry, derivatives={"g": "grad"})]})
    with pytest.raises(ValueError, match="read its gradients, not the result"):
        gen.generate("t", {"ops": [dict(entry, derivatives={"g": "h(grads[0], result)"})]})


def test_grid_sampler_backward_nodes_have_one_output_per_tensor_of_the_list():
    # grid_sampler_backward: grad_grid's derivatives, through the node of the Tensor[]'s outputs (third order too)
    x = fl.randn(1, 2, 4, 4, requires_grad=True)
    grid = (fl.rand(1, 3, 3, 2) * 2 - 1).requires_grad_()
    y = fl.nn.functional.grid_sample(x, grid, align_corners=False)
    gx, gg = fl.autograd.grad((y * y).sum(), (x, grid), create_graph=True)
    assert gg.grad_fn.name() == "GridSamplerBackwardBackward0"
    (gx.sum() + (gg * gg).sum()).backward()
    assert x.grad.shape == x.shape and grid.grad.shape == grid.shape
