"""torch.load's weights-only security against real torch: the hostile files of
tests/test_serialization_security.py are refused by both with the same exception class (and the same message
where torch's is fixed text), corrupt files raise the same class, files torch loads with weights_only=True load in
flowlike with equal contents (views still sharing storage), and flowlike-saved files load in torch with
weights_only=True."""
import io
import os
import pickle
import sys
import warnings
from collections import OrderedDict

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
from flowlike import serialization  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
import test_serialization_security as sec  # noqa: E402

from helpers import dtype_name, outcome_type  # noqa: E402


def torch_load(data, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.load(io.BytesIO(data), **kw)


# bytearray(2**40) is allowed by torch's unpickler, which would try to allocate a terabyte: flowlike refuses it.
TORCH_UNSAFE = ("bytearray of a huge size",)


def test_hostile_files_refused_by_both_with_the_same_class(tmp_path):
    canary = tmp_path / "canary"
    checked = 0
    for description, data, _ in sec.hostile_files(canary):
        if description.startswith(TORCH_UNSAFE):
            continue
        for kw in ({}, {"weights_only": True}):
            got = outcome_type(lambda: sec.load_bytes(data, **kw))
            want = outcome_type(lambda: torch_load(data, **kw))
            assert not canary.exists(), description
            assert got is pickle.UnpicklingError, (description, got)
            assert got is want, (description, got, want)
            checked += 1
    assert checked == 19 * 7 * 2


def test_refusal_messages_match_torch(tmp_path):
    for value in (sec.g("subprocess", "getoutput") + sec.tup(sec.s("true")) + b"R",
                  sec.g("posix", "system") + sec.tup(sec.s("true")) + b"R",
                  sec.g("builtins", "exec") + sec.tup(sec.s("1")) + b"R"):
        data = sec.zip_file(sec.pkl(sec.dict_of(w=sec.tensor_ops(), x=value)))
        with pytest.raises(pickle.UnpicklingError) as mine:
            sec.load_bytes(data)
        with pytest.raises(pickle.UnpicklingError) as theirs:
            torch_load(data)
        assert str(mine.value) == str(theirs.value)


def test_unsafe_globals_in_checkpoint_match_torch(tmp_path):
    path = tmp_path / "mixed.pt"
    fl.save({"w": fl.ones(2), "p": sec.Point(1, 2), "x": sec.Evil(tmp_path / "canary")}, path)
    assert serialization.get_unsafe_globals_in_checkpoint(path) == \
        sorted(torch.serialization.get_unsafe_globals_in_checkpoint(path))
    with serialization.safe_globals([sec.Point]), torch.serialization.safe_globals([sec.Point]):
        assert serialization.get_unsafe_globals_in_checkpoint(path) == \
            torch.serialization.get_unsafe_globals_in_checkpoint(path) == ["posix.system"]


CORRUPT = {
    "truncated archive": sec.good_zip()[:200],
    "empty file": b"",
    "missing storage record": sec.zip_file(sec.pkl(sec.tensor_ops()), storages={}),
    "short storage record": sec.zip_file(sec.pkl(sec.tensor_ops()), storages={"0": bytes(8)}),
    "long storage record": sec.zip_file(sec.pkl(sec.tensor_ops()), storages={"0": bytes(32)}),
    "storage offset outside": sec.zip_file(sec.pkl(sec.tensor_ops(offset=1))),
    "size outside": sec.zip_file(sec.pkl(sec.tensor_ops(size=(5,)))),
    "stride outside": sec.zip_file(sec.pkl(sec.tensor_ops(size=(2, 2), stride=(3, 1)))),
    "huge size": sec.zip_file(sec.pkl(sec.tensor_ops(size=(2 ** 40,)))),
    "huge numel": sec.zip_file(sec.pkl(sec.tensor_ops(numel=2 ** 40))),
    "bad byteorder": sec.zip_file(sec.pkl(b"N"), records={"byteorder": b"middle"}),
    "bare pickle": sec.pkl(b"N"),
    "legacy truncated": sec.legacy_file(sec.pkl(sec.tensor_ops(legacy=True)))[:-3],
    "legacy bad magic": sec.legacy_file(sec.pkl(b"N"), magic=7),
}


@pytest.mark.parametrize("name", sorted(CORRUPT))
def test_corrupt_files_raise_what_torch_raises(name):
    data = CORRUPT[name]
    got = outcome_type(lambda: sec.load_bytes(data))
    want = outcome_type(lambda: torch_load(data))
    assert want is not None and got is want, (got, want)


# ---- contents ------------------------------------------------------------------------------------------------

def assert_same_tree(got, want, shares):
    """got (flowlike) equals want (torch) recursively; tensors by type, dtype, shape, stride and values; the
    storage of each torch tensor is recorded in shares (torch storage -> flowlike storage) to check sharing."""
    if isinstance(want, torch.Tensor):
        assert isinstance(got, fl.Tensor)
        assert isinstance(got, fl.nn.Parameter) == isinstance(want, torch.nn.Parameter)
        assert dtype_name(got.dtype) == dtype_name(want.dtype)
        assert tuple(got.shape) == tuple(want.shape) and tuple(got.stride()) == tuple(want.stride())
        assert got.requires_grad == want.requires_grad and got.storage_offset() == want.storage_offset()
        np.testing.assert_array_equal(got.detach().float().numpy(), want.detach().float().numpy())
        if want.untyped_storage().nbytes():
            key = want.untyped_storage().data_ptr()
            assert shares.setdefault(key, got.untyped_storage().data_ptr()) == got.untyped_storage().data_ptr()
    elif isinstance(want, (dict, OrderedDict)):
        assert type(got).__name__ == type(want).__name__ and list(got) == list(want)
        for k in want:
            assert_same_tree(got[k], want[k], shares)
    elif isinstance(want, (list, tuple)) and not isinstance(want, torch.Size):
        assert type(got) is type(want) and len(got) == len(want)
        for a, b in zip(got, want):
            assert_same_tree(a, b, shares)
    elif isinstance(want, (torch.dtype, torch.device, torch.Size)):
        assert str(got) == str(want) and type(got).__name__ == type(want).__name__
    else:
        assert type(got) is type(want) and got == want


def torch_checkpoint():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))
    adam = torch.optim.Adam(net.parameters(), lr=0.01)
    sgd = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    net(torch.randn(5, 3)).sum().backward()
    adam.step()
    sgd.step()
    base = torch.arange(20, dtype=torch.float64).view(4, 5)
    return {
        "model": net.state_dict(), "adam": adam.state_dict(), "sgd": sgd.state_dict(),
        "dtypes": {dtype_name(d): torch.arange(6).to(d).view(2, 3) for d in (
            torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
            torch.bfloat16, torch.float32, torch.float64)},
        "base": base, "t": base.t(), "row": base[2], "strided": base[:, ::2], "empty": torch.zeros(0, 3),
        "scalar": torch.tensor(2.5), "param": torch.nn.Parameter(torch.ones(2)),
        "frozen": torch.nn.Parameter(torch.ones(1), requires_grad=False), "grad": torch.ones(2, requires_grad=True),
        "size": torch.Size([2, 3]), "dtype": torch.bfloat16, "device": torch.device("cpu"),
        "nested": [1, (2.5, "x", None, True), {"k": [torch.zeros(1)]}], "od": OrderedDict(b=1, a=2),
        "set": {1, 2}, "bytes": b"\x00\xff", "complex": 1 - 2j, "big": 2 ** 80,
    }


@pytest.mark.parametrize("legacy", [False, True])
def test_torch_files_load_in_flowlike_with_equal_contents(legacy):
    want = torch_checkpoint()
    buf = io.BytesIO()
    torch.save(want, buf, _use_new_zipfile_serialization=not legacy)
    data = buf.getvalue()
    torch_back = torch_load(data, weights_only=True)
    got = sec.load_bytes(data)
    assert_same_tree(got, torch_back, {})
    got["base"][2, 1] = -7.0  # the views torch loads sharing one storage share one storage in flowlike
    assert got["t"][1, 2].item() == -7.0 and got["row"][1].item() == -7.0


@pytest.mark.parametrize("legacy", [False, True])
def test_flowlike_files_load_in_torch_weights_only(tmp_path, legacy):
    want = torch_checkpoint()
    buf = io.BytesIO()
    torch.save(want, buf)
    mine = sec.load_bytes(buf.getvalue())  # the same checkpoint as flowlike objects
    path = tmp_path / "fl.pt"
    fl.save(mine, path, _use_new_zipfile_serialization=not legacy)
    got = torch.load(path, weights_only=True)
    back = fl.load(path)
    assert_same_tree(back, got, {})
    for k in ("model", "adam", "dtypes", "t", "strided", "size", "dtype", "nested"):
        assert_same_tree(mine[k], got[k], {})
    got["base"][1, 1] = -7.0  # torch sees flowlike's views of one storage as views of one storage
    assert got["t"][1, 1].item() == -7.0
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))
    net.load_state_dict(got["model"])
    torch.optim.Adam(net.parameters(), lr=0.01).load_state_dict(got["adam"])


def test_safetensors_path_loads_like_torch(tmp_path):
    pytest.importorskip("safetensors")
    from safetensors.torch import save_file
    want = {"w": torch.randn(3, 4), "b": torch.randn(5).to(torch.bfloat16), "i": torch.arange(6).reshape(2, 3),
            "e": torch.zeros(0, 2, dtype=torch.bool)}
    path = str(tmp_path / "a.safetensors")
    save_file(want, path)
    # What torch.load(path) returns: the tensors saved, in the file's order. (Reading the file with real torch
    # through the safetensors library would leave it bound to real torch for later tests under mock_torch.)
    got = fl.load(path)
    assert sorted(got) == sorted(want)
    assert_same_tree(got, {k: want[k] for k in got}, {})
