"""flowlike.load's security and robustness (issue 17), without torch.

- hostile checkpoints built here opcode by opcode: code-executing globals reached through every pickle path
  (REDUCE, STACK_GLOBAL, INST, OBJ, NEWOBJ, NEWOBJ_EX, BUILD with __setstate__, persistent ids), top level and
  nested inside tensors' metadata, in torch's zip format, torch's legacy format and a bare pickle: each is refused
  with pickle.UnpicklingError by default and with weights_only=True, and a canary file proves nothing ran (the
  same files do run their payload with weights_only=False, so the payloads are live);
- the allowlist API (add_safe_globals, safe_globals, get_safe_globals, clear_safe_globals,
  get_unsafe_globals_in_checkpoint) and torch's weights_only switches (None, environment variables,
  pickle_module);
- corrupt and lying files (zip, legacy, .safetensors): clear errors; a fuzzing run in a subprocess (deterministic
  truncations and byte flips plus hypothesis mutations) with a memory limit, so a crash or a huge allocation
  fails the test instead of killing pytest;
- round trips of state dicts, optimizer state, nested containers and shared-storage views in both formats.
"""
import io
import json
import os
import pickle
import struct
import subprocess
import sys
import warnings
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import flowlike as fl
from flowlike import serialization


# ---- a tiny pickle assembler ---------------------------------------------------------------------------------

def s(text):
    b = text.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def i(n):
    if -2 ** 31 <= n < 2 ** 31:
        return b"J" + struct.pack("<i", n)
    return b"\x8a\x09" + n.to_bytes(9, "little", signed=True)  # LONG1


def g(module, name):
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def tup(*items):
    return b"(" + b"".join(items) + b"t"


def dict_of(**items):
    return b"}(" + b"".join(s(k) + v for k, v in items.items()) + b"u"


ORDERED_DICT = g("collections", "OrderedDict") + b")R"


def tensor_ops(key="0", storage="FloatStorage", numel=4, offset=0, size=(4,), stride=(1,), hooks=ORDERED_DICT,
               location=None, legacy=False):
    pid = tup(s("storage"), g("torch", storage), s(key), location or s("cpu"), i(numel), *([b"N"] if legacy else []))
    return g("torch._utils", "_rebuild_tensor_v2") + tup(pid + b"Q", i(offset), tup(*map(i, size)),
                                                         tup(*map(i, stride)), b"\x89", hooks) + b"R"


def pkl(value):
    return b"\x80\x02" + value + b"."


def zip_file(data_pkl, storages=None, records=None):
    """A torch-format zip: archive/data.pkl, byteorder, data/<key> records, version."""
    storages = {"0": np.arange(4, dtype=np.float32).tobytes()} if storages is None else storages
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", data_pkl)
        if "byteorder" not in (records or {}):
            z.writestr("archive/byteorder", "little")
        for key, raw in storages.items():
            z.writestr(f"archive/data/{key}", raw)
        for name, raw in (records or {}).items():
            z.writestr(f"archive/{name}", raw)
        z.writestr("archive/version", "3\n")
    return out.getvalue()


LEGACY_MAGIC = 0x1950A86A20F9469CFC6C


def legacy_file(obj_pkl, storages=(("0", 4, np.arange(4, dtype=np.float32).tobytes()),), magic=LEGACY_MAGIC):
    """torch's legacy (non-zip) format: magic, protocol version, sys_info, object, storage keys, storages."""
    head = b"".join(pickle.dumps(x, 2) for x in (magic, 1001, {"protocol_version": 1001, "little_endian": True,
                                                                "type_sizes": {"short": 2, "int": 4, "long": 4}}))
    tail = pickle.dumps([k for k, _, _ in storages], 2)
    return head + obj_pkl + tail + b"".join(struct.pack("<q", n) + raw for _, n, raw in storages)


def load_bytes(data, **kw):
    return fl.load(io.BytesIO(data), **kw)


# ---- hostile payloads ------------------------------------------------------------------------------------------

class CanaryNew:
    """Writes the canary file when instantiated through __new__ (the NEWOBJ / NEWOBJ_EX paths)."""

    def __new__(cls, path):
        with open(path, "w") as f:
            f.write("new")
        return object.__new__(cls)


class CanarySetState:
    """Writes the canary file when its state is set (the BUILD path)."""

    def __setstate__(self, path):
        with open(path, "w") as f:
            f.write("setstate")


class Evil:
    """An object whose pickle runs a shell command, as found in malicious checkpoints."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


HERE = CanaryNew.__module__


def hostile_values(canary):
    """name -> (pickle ops pushing one value, whether a plain unpickler would run code with it)."""
    code = f"open({str(canary)!r}, 'w').write('pwned')"
    cmd = f"touch {canary}"
    return {
        "REDUCE os.system": (g("os", "system") + tup(s(cmd)) + b"R", True),
        "REDUCE posix.system": (g("posix", "system") + tup(s(cmd)) + b"R", True),
        "REDUCE builtins.exec": (g("builtins", "exec") + tup(s(code)) + b"R", True),
        "REDUCE __builtin__.eval": (g("__builtin__", "eval") + tup(s(code)) + b"R", True),
        "REDUCE subprocess.getoutput": (g("subprocess", "getoutput") + tup(s(cmd)) + b"R", True),
        "STACK_GLOBAL builtins.exec": (s("builtins") + s("exec") + b"\x93" + tup(s(code)) + b"R", True),
        "INST builtins.exec": (b"(" + s(code) + b"ibuiltins\nexec\n", True),
        "OBJ builtins.exec": (b"(" + g("builtins", "exec") + s(code) + b"o", True),
        "NEWOBJ": (g(HERE, "CanaryNew") + tup(s(str(canary))) + b"\x81", True),
        "NEWOBJ_EX": (g(HERE, "CanaryNew") + tup(s(str(canary))) + b"}\x92", True),
        "BUILD __setstate__": (g(HERE, "CanarySetState") + b")\x81" + s(str(canary)) + b"b", True),
        "REDUCE of a string": (s("os.system") + tup(s(cmd)) + b"R", False),
        "NEWOBJ of a string": (s("os.system") + b")\x81", False),
        "BUILD on a list": (b"]" + dict_of(append=g("builtins", "exec")) + b"b", False),
        "GLOBAL torch.load": (g("torch", "load"), False),
        "APPEND to a dict": (b"}" + i(1) + b"a", False),
        "SETITEM on a list": (b"]" + i(0) + i(1) + b"s", False),
        "BINPERSID module": (tup(s("module"), s(code)) + b"Q", False),
        "PERSID text": (b"P" + code.encode() + b"\n", False),
        "bytearray of a huge size": (g("builtins", "bytearray") + tup(i(2 ** 40)) + b"R", False),
    }


def hostile_files(canary):
    """(description, file bytes, whether a plain unpickler would run code) for every payload in every place."""
    files = []
    for name, (value, live) in hostile_values(canary).items():
        from_type = g("torch._tensor", "_rebuild_from_type_v2") + tup(
            g("torch._utils", "_rebuild_tensor_v2"), g("torch", "Tensor"),
            tup(tup(s("storage"), g("torch", "FloatStorage"), s("0"), s("cpu"), i(4)) + b"Q", i(0), tup(i(4)),
                tup(i(1)), b"\x89", ORDERED_DICT), dict_of(attr=value)) + b"R"
        places = {
            "zip, top level": zip_file(pkl(dict_of(w=tensor_ops(), x=value))),
            "zip, backward_hooks of a tensor": zip_file(pkl(dict_of(w=tensor_ops(hooks=value)))),
            "zip, storage location": zip_file(pkl(tensor_ops(location=value))),
            "zip, tensor attribute state": zip_file(pkl(from_type)),
            "zip, Parameter hooks": zip_file(pkl(g("torch._utils", "_rebuild_parameter") +
                                                 tup(tensor_ops(), b"\x88", value) + b"R")),
            "legacy": legacy_file(pkl(dict_of(w=tensor_ops(legacy=True), x=value))),
            "bare pickle": pkl(value),
        }
        files += [(f"{name} / {place}", data, live and place.startswith(("zip, top", "legacy")))
                  for place, data in places.items()]
    return files


def test_hostile_files_are_refused_and_run_nothing(tmp_path):
    canary = tmp_path / "canary"
    files = hostile_files(canary)
    assert len(files) == 20 * 7
    for description, data, _ in files:
        for kw in ({}, {"weights_only": True}, {"weights_only": None}):
            with pytest.raises(pickle.UnpicklingError) as info:
                load_bytes(data, **kw)
            assert not canary.exists(), f"{description} ran code under {kw}"
            assert "Weights only load failed" in str(info.value), description


def test_the_payloads_are_live(tmp_path):
    """With weights_only=False (the user's explicit choice) the payloads do run: the refusals above are real."""
    canary = tmp_path / "canary"
    live = [(d, data) for d, data, is_live in hostile_files(canary) if is_live]
    assert len(live) == 11 * 2
    for description, data in live:
        try:
            load_bytes(data, weights_only=False)
        except Exception:  # noqa: BLE001 - some payloads fail after running (exec returns None where a dict is built)
            pass
        assert canary.exists(), description
        canary.unlink()


def test_refusal_message_names_the_global_and_the_ways_out(tmp_path):
    data = zip_file(pkl(dict_of(w=tensor_ops(), x=g("subprocess", "getoutput") + tup(s("true")) + b"R")))
    with pytest.raises(pickle.UnpicklingError) as info:
        load_bytes(data)
    message = str(info.value)
    assert "GLOBAL subprocess.getoutput was not an allowed global by default" in message
    assert "torch.serialization.add_safe_globals([subprocess.getoutput])" in message
    assert "weights_only` set to `False` will likely succeed, but it can result in arbitrary code execution" in message
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL exec was not an allowed global"):
        load_bytes(pkl(g("builtins", "exec") + tup(s("1")) + b"R"))
    with pytest.raises(pickle.UnpicklingError, match="posix.system whose module posix is blocked"):
        load_bytes(pkl(g("posix", "system") + tup(s("true")) + b"R"))
    with pytest.raises(pickle.UnpicklingError, match="Unsupported operand 147"):  # STACK_GLOBAL
        load_bytes(pkl(s("builtins") + s("exec") + b"\x93"))


def test_fl_save_of_a_malicious_object_is_refused_by_default(tmp_path):
    canary = tmp_path / "canary"
    path = tmp_path / "evil.pt"
    for legacy in (False, True):
        fl.save({"w": fl.ones(2), "x": Evil(canary)}, path, _use_new_zipfile_serialization=not legacy)
        with pytest.raises(pickle.UnpicklingError, match="posix.system"):
            fl.load(path)
        assert not canary.exists()
        if not legacy:
            assert serialization.get_unsafe_globals_in_checkpoint(path) == ["posix.system"]
        fl.load(path, weights_only=False)
        assert canary.exists()
        canary.unlink()


# ---- the allowlist API and the weights_only switches -----------------------------------------------------------

class Point:
    """A user class a checkpoint may hold (pickled through NEWOBJ and BUILD)."""

    def __init__(self, x, y):
        self.x, self.y = x, y


@pytest.fixture
def clean_safe_globals():
    serialization.clear_safe_globals()
    yield
    serialization.clear_safe_globals()


def test_allowlist_api(tmp_path, clean_safe_globals):
    path = tmp_path / "point.pt"
    fl.save({"p": Point(1, fl.arange(3))}, path)
    name = f"{HERE}.Point"
    with pytest.raises(pickle.UnpicklingError, match=f"GLOBAL {name} was not an allowed global"):
        fl.load(path)
    assert serialization.get_unsafe_globals_in_checkpoint(path) == [name]
    assert serialization.get_safe_globals() == []
    with serialization.safe_globals([Point]):
        assert serialization.get_safe_globals() == [Point]
        assert serialization.get_unsafe_globals_in_checkpoint(path) == []
        p = fl.load(path)["p"]
        assert isinstance(p, Point) and p.x == 1 and p.y.tolist() == [0, 1, 2]
    assert serialization.get_safe_globals() == []
    with pytest.raises(pickle.UnpicklingError):
        fl.load(path)
    serialization.add_safe_globals([Point])
    assert fl.load(path)["p"].x == 1
    serialization.clear_safe_globals()
    assert serialization.get_safe_globals() == []
    # the (object, "module.name") form: the name the checkpoint spells
    data = zip_file(pkl(g("mylib.geometry", "P") + b")\x81" + dict_of(x=i(5)) + b"b"))
    with pytest.raises(pickle.UnpicklingError, match="mylib.geometry.P"):
        load_bytes(data)
    with serialization.safe_globals([(Point, "mylib.geometry.P")]):
        assert load_bytes(data).x == 5
    with serialization.safe_globals([(Point,)]), pytest.raises(ValueError, match="tuple of length 2"):
        load_bytes(data)
    # a blocked module stays blocked
    with serialization.safe_globals([os.system]), pytest.raises(pickle.UnpicklingError, match="blocked"):
        load_bytes(pkl(g("os", "system") + tup(s("true")) + b"R"))
    with pytest.raises(ValueError, match="Expected input to be a checkpoint returned by torch.save"):
        serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(pkl(b"N")))


def test_allowlist_api_is_torch_serialization_under_mock_torch(tmp_path):
    from flowlike.compat import mock_torch
    with mock_torch():
        import torch
        import torch.serialization
        assert torch.load is fl.load and torch.save is fl.save
        for name in ("add_safe_globals", "safe_globals", "get_safe_globals", "clear_safe_globals",
                     "get_unsafe_globals_in_checkpoint"):
            assert getattr(torch.serialization, name) is getattr(serialization, name)


def test_weights_only_switches(tmp_path, monkeypatch):
    path = tmp_path / "point.pt"
    fl.save(Point(1, 2), path)
    monkeypatch.delenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", raising=False)
    monkeypatch.delenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # weights_only=False warns about nothing (torch 2.6+)
        assert fl.load(path, weights_only=False).x == 1
    assert fl.load(path, pickle_module=pickle).x == 1  # a pickle_module makes the default False, as torch
    with pytest.raises(RuntimeError, match="Can not safely load weights when explicit pickle_module is specified"):
        fl.load(path, pickle_module=pickle, weights_only=True)
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "1")
    with pytest.raises(pickle.UnpicklingError):
        fl.load(path, weights_only=False)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "true")
    with pytest.raises(RuntimeError, match="Only one of"):
        fl.load(path)
    monkeypatch.delenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD")
    with pytest.warns(UserWarning, match="forcing weights_only=False"):
        assert fl.load(path).x == 1
    with pytest.raises(pickle.UnpicklingError):  # an explicit weights_only=True wins over the environment
        fl.load(path, weights_only=True)
    monkeypatch.delenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD")
    with pytest.warns(UserWarning, match="pickle_load_args only works if `weights_only=False`"):
        fl.load(io.BytesIO(zip_file(pkl(b"N"))), encoding="latin1")
    with pytest.raises(ValueError, match="mmap"):
        fl.load(io.BytesIO(zip_file(pkl(b"N"))), mmap=True)


# ---- corrupt and lying files: exact errors -----------------------------------------------------------------------

def good_zip():
    return zip_file(pkl(dict_of(w=tensor_ops())))


@pytest.mark.parametrize("data, error, match", [
    (good_zip()[:200], RuntimeError, "failed finding central directory"),
    (b"", EOFError, None),
    (zip_file(pkl(tensor_ops()), storages={}), RuntimeError, "failed locating file data/0"),
    (zip_file(pkl(tensor_ops()), storages={"0": bytes(8)}), RuntimeError, r"record size \(8 bytes\)"),
    (zip_file(pkl(tensor_ops()), storages={"0": bytes(32)}), RuntimeError, r"record size \(32 bytes\)"),
    (zip_file(pkl(tensor_ops(numel=2 ** 40))), RuntimeError, "record size"),
    (zip_file(pkl(tensor_ops(offset=1))), RuntimeError, "not resizable"),
    (zip_file(pkl(tensor_ops(size=(5,)))), RuntimeError, "not resizable"),
    (zip_file(pkl(tensor_ops(size=(2, 2), stride=(3, 1)))), RuntimeError, "not resizable"),
    (zip_file(pkl(tensor_ops(size=(2 ** 40,)))), RuntimeError, "not resizable"),
    (zip_file(pkl(tensor_ops(size=(2 ** 62, 2 ** 62), stride=(0, 0)))), RuntimeError, "too large"),
    (zip_file(pkl(tensor_ops(stride=(-1,)))), RuntimeError, "negative"),
    (zip_file(pkl(tensor_ops(size=(2, 2), stride=(1,)))), RuntimeError, "mismatch in length"),
    (zip_file(pkl(g("torch._utils", "_rebuild_tensor_v2") + tup(s("x"), i(0), tup(), tup()) + b"R")), RuntimeError,
     "expected a storage"),
    (zip_file(pkl(tup(s("storage"), i(1)) + b"Q")), RuntimeError, "malformed storage reference"),
    (zip_file(pkl(g("torch._utils", "_rebuild_qtensor") + b")R")), RuntimeError, "cannot rebuild"),
    (zip_file(pkl(b"N"), records={"byteorder": b"middle"}), ValueError, "Unknown endianness type: middle"),
    (zip_file(pkl(b"N"), records={"constants.pkl": b""}), RuntimeError, "TorchScript"),
    (zip_file(pkl(b"N")[:-1]), EOFError, None),
    (zip_file(pkl(b"t")), pickle.UnpicklingError, "could not find MARK"),
    (zip_file(pkl(b"h\x07")), pickle.UnpicklingError, "Memo value not found"),
    (zip_file(pkl(b"X\xff\xff\xff\x7f")), pickle.UnpicklingError, "truncated"),
    (pkl(b"N"), RuntimeError, "Invalid magic number; corrupt file?"),
    (legacy_file(pkl(tensor_ops(legacy=True)))[:-3], RuntimeError, "unexpected EOF, expected 3 more bytes"),
    (legacy_file(pkl(tensor_ops(legacy=True)), storages=(("0", 3, bytes(16)),)), RuntimeError, "wrong byte size"),
    (legacy_file(pkl(tensor_ops(numel=2 ** 40, legacy=True))), RuntimeError, "declared in a checkpoint"),
    (legacy_file(pkl(tensor_ops(size=(9,), legacy=True))), RuntimeError, "not resizable"),
    (legacy_file(pkl(tensor_ops(legacy=True)), storages=(("1", 4, bytes(16)),)), RuntimeError, "not found"),
    (legacy_file(pkl(tensor_ops(legacy=True)), storages=()), RuntimeError, "have no data in the file"),
    (legacy_file(pkl(b"N"), magic=7), RuntimeError, "Invalid magic number"),
    (b"\0" * 257 + b"ustar" + b"\0" * 300, RuntimeError, "legacy .tar format"),
], ids=lambda x: x if isinstance(x, str) else "")
def test_corrupt_files_raise_clear_errors(data, error, match):
    with pytest.raises(error, match=match):
        load_bytes(data)


def test_legacy_storage_views_are_bounds_checked():
    view = tup(s("storage"), g("torch", "FloatStorage"), s("0"), s("cpu"), i(4), tup(s("v"), i(2), i(5))) + b"Q"
    data = legacy_file(pkl(g("torch._utils", "_rebuild_tensor_v2") + tup(view, i(0), tup(i(1)), tup(i(1)), b"\x89",
                                                                           ORDERED_DICT) + b"R"))
    with pytest.raises(RuntimeError, match="lies outside its storage"):
        load_bytes(data)
    ok = legacy_file(pkl(g("torch._utils", "_rebuild_tensor_v2") + tup(
        view.replace(i(5), i(2)), i(1), tup(i(1)), tup(i(1)), b"\x89", ORDERED_DICT) + b"R"))
    assert load_bytes(ok).tolist() == [3.0]


def safetensors_file(header, body=b"", raw_header=None):
    h = raw_header if raw_header is not None else json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + body


GOOD_HEADER = {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
               "b": {"dtype": "I64", "shape": [1], "data_offsets": [8, 16]}, "__metadata__": {"k": "v"}}


@pytest.mark.parametrize("data, match", [
    (b"\x01\x02", "cannot hold the 8-byte header length"),
    (struct.pack("<Q", 2 ** 63) + b"{}", "exceeds the limit"),
    (struct.pack("<Q", 100) + b"{}", "larger than the"),
    (safetensors_file(None, raw_header=b"{not json"), "not valid JSON"),
    (safetensors_file(None, raw_header=b"\xff\xfe"), "not valid JSON"),
    (safetensors_file(None, raw_header=b"[" * 100000 + b"]" * 100000), "not valid JSON"),
    (safetensors_file([1, 2]), "not an object"),
    (safetensors_file(None, raw_header=b'{"a": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}, "a": {}}'),
     "duplicate keys"),
    (safetensors_file({"a": {"dtype": "C64", "shape": [1], "data_offsets": [0, 8]}}, bytes(8)), "'C64'"),
    (safetensors_file({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}, bytes(4)), "invalid shape"),
    (safetensors_file({"a": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 4]}}, bytes(4)), "invalid shape"),
    (safetensors_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 400]}}, bytes(4)), "outside"),
    (safetensors_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 0]}}, bytes(4)), "outside"),
    (safetensors_file({"a": {"dtype": "F32", "shape": [2 ** 40], "data_offsets": [0, 4]}}, bytes(4)), "needs"),
    (safetensors_file({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                       "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}, bytes(12)), "overlaps"),
    (safetensors_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, bytes(8)), "gap"),
    (safetensors_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, bytes(8)), "cover 4 of the 8"),
    (safetensors_file({"a": {"dtype": "F32", "shape": [1]}}, bytes(4)), "exactly dtype, shape and data_offsets"),
    (safetensors_file({"__metadata__": {"k": 1}}), "__metadata__"),
], ids=lambda x: x if isinstance(x, str) else "")
def test_corrupt_safetensors_raise_clear_errors(tmp_path, data, match):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(data)
    with pytest.raises(RuntimeError, match=match):
        fl.load(path)


def test_safetensors_load(tmp_path):
    path = tmp_path / "ok.safetensors"
    bf16 = np.array([0x3F80, 0xC000], dtype=np.uint16)  # 1.0, -2.0
    header = {**GOOD_HEADER, "c": {"dtype": "BF16", "shape": [2], "data_offsets": [16, 20]},
              "e": {"dtype": "BOOL", "shape": [0, 3], "data_offsets": [20, 20]}}
    path.write_bytes(safetensors_file(header, np.array([1.5, -2], np.float32).tobytes() +
                                      np.array([7], np.int64).tobytes() + bf16.tobytes()))
    out = fl.load(path)
    assert out["a"].tolist() == [1.5, -2.0] and out["a"].dtype == fl.float32
    assert out["b"].tolist() == [7] and out["b"].dtype == fl.int64
    assert out["c"].dtype == fl.bfloat16 and out["c"].float().tolist() == [1.0, -2.0]
    assert tuple(out["e"].shape) == (0, 3) and out["e"].dtype == fl.bool
    with pytest.raises(RuntimeError, match="dict map_location"):
        fl.load(path, map_location={"cuda:0": "cpu"})


# ---- fuzzing in a subprocess -------------------------------------------------------------------------------------

# What a corrupt file may raise: torch's classes for its checks, RuntimeError for the rest, and TypeError where
# the pickle calls an allowed function with wrong arguments or uses an unhashable key (as torch's unpickler does).
CLEAN_ERRORS = (RuntimeError, pickle.UnpicklingError, ValueError, EOFError, TypeError)


def _fuzz_bases():
    x = fl.arange(12, dtype=fl.float32).view(3, 4)
    obj = {"w": x, "t": x.t(), "row": x[1], "p": fl.nn.Parameter(fl.ones(2)), "b": fl.tensor([True, False]),
           "h": fl.ones(3, dtype=fl.bfloat16), "n": [1, 2.5, "s", None, (fl.Size([2]), fl.int64)],
           "od": OrderedDict(k=fl.zeros(1, dtype=fl.int16))}
    zbuf, lbuf = io.BytesIO(), io.BytesIO()
    fl.save(obj, zbuf)
    fl.save(obj, lbuf, _use_new_zipfile_serialization=False)
    st = safetensors_file(GOOD_HEADER, np.array([1.5, -2], np.float32).tobytes() + np.array([7], np.int64).tobytes())
    with zipfile.ZipFile(zbuf) as z:
        data_pkl = z.read("archive/data.pkl")
        storages = {n[len("archive/data/"):]: z.read(n) for n in z.namelist() if n.startswith("archive/data/")}
    bases = {"zip": zbuf.getvalue(), "legacy": lbuf.getvalue(), "safetensors": st, "data.pkl": data_pkl}
    return bases, storages


def _fuzz_one(kind, data, path, storages):
    """None when data loads or fails cleanly, else a description of the failure. Kind "data.pkl" is the pickle
    of the zip file, put back into a well-formed archive (whose checksums would catch a corrupt record)."""
    try:
        if kind == "safetensors":
            with open(path, "wb") as f:
                f.write(data)
            fl.load(path)
        elif kind == "data.pkl":
            load_bytes(zip_file(data, storages))
        else:
            load_bytes(data)
    except CLEAN_ERRORS:
        return None
    except Exception as e:  # noqa: BLE001 - any other exception is the finding
        return f"{kind}: {type(e).__name__}: {e}"
    return None


def _fuzz_worker(seconds):
    """Runs every truncation and byte flip of the base files, then hypothesis mutations for `seconds`; prints the
    failures as JSON. Runs in its own process, with its address space limited to 3 GiB."""
    import resource
    import tempfile
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
    warnings.simplefilter("ignore")
    failures, cases = [], 0
    path = os.path.join(tempfile.mkdtemp(), "f.safetensors")
    bases, storages = _fuzz_bases()
    for kind, data in bases.items():
        for n in range(len(data)):
            cases += 1
            failures.append(_fuzz_one(kind, data[:n], path, storages))
        for pos in range(len(data)):
            for flip in (0x01, 0xFF):
                mutated = bytearray(data)
                mutated[pos] ^= flip
                cases += 1
                failures.append(_fuzz_one(kind, bytes(mutated), path, storages))
    try:
        from hypothesis import given, settings, HealthCheck, strategies as st
    except ImportError:
        st = None
    if st is not None:
        @settings(max_examples=10 ** 6, deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck))
        @given(st.sampled_from(sorted(bases)), st.lists(st.tuples(st.integers(0, 10 ** 6), st.integers(0, 255),
                                                                  st.sampled_from(["set", "insert", "delete"])),
                                                        min_size=1, max_size=8))
        def mutate(kind, edits):
            nonlocal cases
            data = bytearray(bases[kind])
            for pos, value, how in edits:
                pos %= len(data) + 1
                if how == "insert":
                    data[pos:pos] = bytes([value])
                elif pos < len(data):
                    if how == "set":
                        data[pos] = value
                    else:
                        del data[pos]
            cases += 1
            failures.append(_fuzz_one(kind, bytes(data), path, storages))
            if time.monotonic() > stop:
                raise _Done

        import time

        class _Done(Exception):
            pass

        stop = time.monotonic() + seconds
        try:
            mutate()
        except _Done:
            pass
    print(json.dumps({"cases": cases, "failures": [f for f in failures if f][:20]}))


def test_fuzzed_files_fail_cleanly():
    result = subprocess.run([sys.executable, __file__, "--fuzz", "3"], capture_output=True, text=True, timeout=300,
                            cwd=os.path.dirname(__file__))
    assert result.returncode == 0, f"fuzz worker died (rc {result.returncode}): {result.stderr[-3000:]}"
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["failures"] == []
    assert report["cases"] > 10000


# ---- round trips -------------------------------------------------------------------------------------------------

def same(a, b):
    assert type(a) is type(b) and a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
    assert a.requires_grad == b.requires_grad
    np.testing.assert_array_equal(a.detach().float().numpy(), b.detach().float().numpy())


@pytest.mark.parametrize("legacy", [False, True])
def test_round_trip_state_dicts_optimizer_and_containers(tmp_path, legacy):
    net = fl.nn.Sequential(fl.nn.Linear(3, 4), fl.nn.BatchNorm1d(4), fl.nn.Linear(4, 2))
    opt = fl.optim.Adam(net.parameters(), lr=0.01)
    net(fl.randn(5, 3)).sum().backward()
    opt.step()
    base = fl.arange(20, dtype=fl.float64).view(4, 5)
    tensors = {str(d): fl.arange(6).to(d).view(2, 3) for d in fl._dtype.ALL_DTYPES}
    obj = {"model": net.state_dict(), "optim": opt.state_dict(), "epoch": 3, "lr": 1e-3, "name": "run",
           "tensors": tensors, "nested": [(1, [2, {"x": fl.zeros(0, 2)}]), {"s": fl.tensor(3.5)}],
           "view": base.t()[1:], "base": base, "p": fl.nn.Parameter(fl.ones(3)),
           "frozen": fl.nn.Parameter(fl.ones(1), requires_grad=False), "size": fl.Size([2, 3]),
           "dtype": fl.bfloat16, "device": fl.device("cpu"), "set": {1, 2}, "bytes": b"\x00\xff",
           "complex": 1 - 2j, "none": None, "big": 2 ** 80, "od": OrderedDict([("b", 1), ("a", 2)])}
    path = tmp_path / "ck.pt"
    fl.save(obj, path, _use_new_zipfile_serialization=not legacy)
    assert zipfile.is_zipfile(path) != legacy
    back = fl.load(path, weights_only=True)
    assert back.keys() == obj.keys()
    for k, v in obj["model"].items():
        same(back["model"][k], v)
    assert type(back["model"]) is OrderedDict and back["model"]._metadata == obj["model"]._metadata
    assert back["optim"]["param_groups"] == obj["optim"]["param_groups"]
    for idx, state in obj["optim"]["state"].items():
        for k, v in state.items():
            same(back["optim"]["state"][idx][k], v)
    for k, v in tensors.items():
        same(back["tensors"][k], v)
    same(back["nested"][0][1][1]["x"], obj["nested"][0][1][1]["x"])
    same(back["nested"][1]["s"], obj["nested"][1]["s"])
    same(back["view"], obj["view"])
    assert back["view"].stride() == obj["view"].stride()
    back["base"][1, 1] = -1.0  # views of one storage stay one storage
    assert back["view"][0, 1].item() == -1.0
    same(back["p"], obj["p"])
    same(back["frozen"], obj["frozen"])
    for k in ("epoch", "lr", "name", "size", "dtype", "device", "set", "bytes", "complex", "none", "big", "od"):
        assert back[k] == obj[k] and type(back[k]) is type(obj[k]), k
    net2 = fl.nn.Sequential(fl.nn.Linear(3, 4), fl.nn.BatchNorm1d(4), fl.nn.Linear(4, 2))
    net2.load_state_dict(back["model"])
    opt2 = fl.optim.Adam(net2.parameters(), lr=0.01)
    opt2.load_state_dict(back["optim"])


def test_buffer_attributes_and_arbitrary_objects_round_trip(tmp_path):
    buf = fl.nn.Buffer(fl.ones(2), persistent=False)
    path = tmp_path / "b.pt"
    fl.save({"buf": buf, "point": Point(1, fl.ones(1))}, path)
    back = fl.load(path, weights_only=False)
    assert back["buf"].persistent is False and back["buf"]._is_buffer
    assert back["point"].y.tolist() == [1.0]


if __name__ == "__main__" and sys.argv[1:2] == ["--fuzz"]:
    _fuzz_worker(float(sys.argv[2]))
