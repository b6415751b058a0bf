"""What nn.Graph and flowlike.compile share: the flattening of a call's arguments and results into tensors and a
structure, the user's source line of an error raised during a capture, and where a program's inputs and a call's
result tensors are found (a call argument, a held tensor, a program value)."""
import os
import threading
import traceback

from .. import _C, _tensor

# flowlike's own code (the package, and this graph package wherever it is installed from)
_OWN_DIRS = tuple(os.path.dirname(os.path.abspath(f)) + os.sep for f in (__file__, _tensor.__file__))


def flatten(value, tensors, path="input", who="nn.Graph", objects=None):
    """The structure of value with every tensor replaced by its index in `tensors` (appended in order). Values of
    the types `objects` (modules, for compile) stay in the structure as themselves, and are appended to `objects`
    ((types, found list))."""
    if isinstance(value, _C.Tensor):
        tensors.append(value)
        return ("T", len(tensors) - 1)
    if isinstance(value, (list, tuple)):
        kind = type(value).__name__ if type(value) in (list, tuple) else type(value)  # a namedtuple: its class
        return (kind, tuple(flatten(v, tensors, f"{path}[{i}]", who, objects) for i, v in enumerate(value)))
    if isinstance(value, dict):
        return ("dict", tuple((k, flatten(v, tensors, f"{path}[{k!r}]", who, objects)) for k, v in value.items()))
    if value is None or isinstance(value, (bool, int, float, str)):
        return ("V", value)
    if objects is not None and isinstance(value, objects[0]):
        objects[1].append(value)
        return ("O", value)
    raise TypeError(f"{who}: {path} is a {type(value).__name__}; a graph takes tensors, Python numbers, bools, "
                    "strings, None and lists, tuples and dicts of them")


def unflatten(spec, tensors):
    kind, body = spec
    if kind == "T":
        return tensors[body]
    if kind in ("V", "O"):
        return body
    if kind == "dict":
        return {k: unflatten(v, tensors) for k, v in body}
    items = [unflatten(v, tensors) for v in body]
    if isinstance(kind, type):
        return kind(*items) if hasattr(kind, "_fields") else kind(items)
    return tuple(items) if kind == "tuple" else items


def user_frame(tb, default="build"):
    """'file:line' of the innermost frame of the traceback outside flowlike itself."""
    for frame in reversed(traceback.extract_tb(tb)):
        if not os.path.abspath(frame.filename).startswith(_OWN_DIRS):
            return f"{frame.filename}:{frame.lineno}"
    return default


def sources(program, known):
    """Per program input, where a run takes it from: the (kind, what) pair `known` gives its tensor's id, else
    ("fixed", the capture-time tensor)."""
    return [known.get(id(t), ("fixed", t)) for t in program.inputs]


def locator(program):
    """A function giving where a capture-time tensor is found after a run: ("input", k) for the program's input k,
    ("value", id) for a value the program makes, ("fixed", tensor) for one it never met."""
    inputs = program.inputs  # held: the ids below are those of live objects
    input_pos = {id(t): k for k, t in enumerate(inputs)}

    def locate(t):
        if id(t) in input_pos and inputs[input_pos[id(t)]] is t:
            return ("input", input_pos[id(t)])
        vid = program.value_of(t)
        return ("fixed", t) if vid < 0 else ("value", vid)
    return locate


def resolve(where, got, inputs):
    """The tensor a locator's answer names after a run (got: value id -> tensor; inputs: the run's inputs)."""
    kind, what = where
    return got[what] if kind == "value" else inputs[what] if kind == "input" else what


_tracing = threading.local()


def trace_begin(forbid_host_reads=False):
    """Starts recording at the Tracer key on this thread (_C._trace_begin), counting captures so that compiled
    code can tell it runs inside one (then its calls are part of the outer program)."""
    _C._trace_begin(forbid_host_reads=forbid_host_reads)
    _tracing.depth = getattr(_tracing, "depth", 0) + 1


def trace_end():
    """Ends this thread's recording; returns the program."""
    _tracing.depth -= 1
    return _C._trace_end()


def tracing():
    """Whether a capture started by trace_begin is recording on this thread."""
    return getattr(_tracing, "depth", 0) > 0
