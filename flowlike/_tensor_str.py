"""Tensor printing, matching ``torch/_tensor_str.py`` (PyTorch 2.13) text exactly.

The tensor argument is duck-typed: it needs ``shape``, ``dim()``, ``numel()``,
``dtype`` (``str()`` like ``"torch.float32"``, with ``is_floating_point``),
``device``, ``requires_grad``, ``grad_fn`` and ``_print_values()``, which returns
a numpy array holding the exact element values (bfloat16 as float32).

This module must not import torch, nor flowlike at import time (import cycle).
"""

import contextlib
import dataclasses
import math
from typing import Any, Optional

import numpy as np

__all__ = [
    "PRINT_OPTS",
    "get_printoptions",
    "printoptions",
    "set_printoptions",
    "tensor_repr",
]


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: Optional[bool] = None


PRINT_OPTS = _PrinterOptions()


def set_printoptions(
    precision=None,
    threshold=None,
    edgeitems=None,
    linewidth=None,
    profile=None,
    sci_mode=None,
):
    """Set options for printing tensors (same semantics as ``torch.set_printoptions``).

    Args:
        precision: digits after the decimal point for floats (default 4).
        threshold: element count above which the repr is summarized with
            ``...`` (default 1000).
        edgeitems: items kept at the start and end of each summarized
            dimension (default 3).
        linewidth: characters per line before wrapping (default 80).
        profile: ``"default"``, ``"short"`` or ``"full"`` presets; the other
            arguments override it.
        sci_mode: ``True``/``False`` forces scientific notation on/off;
            ``None`` lets each tensor decide. Unlike the other options it is
            always assigned, so omitting it resets it to ``None``.
    """
    if profile is not None:
        if profile == "default":
            PRINT_OPTS.precision = 4
            PRINT_OPTS.threshold = 1000
            PRINT_OPTS.edgeitems = 3
            PRINT_OPTS.linewidth = 80
        elif profile == "short":
            PRINT_OPTS.precision = 2
            PRINT_OPTS.threshold = 1000
            PRINT_OPTS.edgeitems = 2
            PRINT_OPTS.linewidth = 80
        elif profile == "full":
            PRINT_OPTS.precision = 4
            PRINT_OPTS.threshold = math.inf
            PRINT_OPTS.edgeitems = 3
            PRINT_OPTS.linewidth = 80

    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> "dict[str, Any]":
    """Return the current print options as a dict usable as ``set_printoptions(**d)``."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Context manager that temporarily applies ``set_printoptions(**kwargs)``."""
    old_kwargs = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old_kwargs)


def _get_default_dtype_str() -> str:
    """``str(flowlike.get_default_dtype())``, or ``"torch.float32"`` if unavailable."""
    try:
        import flowlike

        return str(flowlike.get_default_dtype())
    except Exception:  # flowlike not built / partially initialised
        return "torch.float32"


class _Formatter:
    """Common element width and notation for one (possibly summarized) array.

    ``values`` is a numpy array; ``floating`` says whether the tensor dtype is
    floating point (bool and integer tensors print with ``str()``); ``e8m0``
    says it is float8_e8m0fnu, which torch's tests see their own way: every
    code is finite (NaN too), and 0 converts to the smallest code, 2**-127.
    """

    def __init__(self, values: np.ndarray, floating: bool, e8m0: bool = False):
        self.floating_dtype = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1

        flat = values.reshape(-1)
        if not floating:
            for value in flat.tolist():
                self.max_width = max(self.max_width, len(f"{value}"))
            return

        if e8m0:
            nonzero_finite = flat[flat != 2.0 ** -127]
        else:
            nonzero_finite = flat[np.isfinite(flat) & (flat != 0)]
        if nonzero_finite.size == 0:
            return

        # torch does the sci-mode decision in float64 (half overflows at 1e8).
        # Python floats: the ratio may overflow to inf without a numpy warning.
        nonzero_abs = np.abs(nonzero_finite).astype(np.float64)
        abs_min = float(nonzero_abs.min())
        abs_max = float(nonzero_abs.max())

        self.int_mode = bool(np.all(nonzero_finite == np.ceil(nonzero_finite)))

        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = (
                abs_max / abs_min > 1000.0 or abs_max > 1.0e8 or abs_min < 1.0e-4
            )
        else:
            self.sci_mode = PRINT_OPTS.sci_mode

        precision = PRINT_OPTS.precision
        if self.sci_mode:
            fmt, extra = f"{{:.{precision}e}}", 0
        elif self.int_mode:
            # Int-mode floats get a trailing "." (nonfinite ones do not).
            fmt, extra = "{:.0f}", 1
        else:
            fmt, extra = f"{{:.{precision}f}}", 0
        for value in nonzero_finite.tolist():
            self.max_width = max(self.max_width, len(fmt.format(value)) + extra)

    def width(self) -> int:
        return self.max_width

    def format(self, value) -> str:
        """Format one Python scalar right-aligned to the common width."""
        if self.floating_dtype:
            if self.sci_mode:
                ret = f"{{:{self.max_width}.{PRINT_OPTS.precision}e}}".format(value)
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{{:.{PRINT_OPTS.precision}f}}".format(value)
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _complex_str(value: complex, formatter1: _Formatter, formatter2: _Formatter) -> str:
    real_str = formatter1.format(value.real)
    imag_str = (formatter2.format(value.imag) + "j").lstrip()
    # The imaginary part carries its own sign (including -0.0 and nan signs).
    if imag_str[0] == "+" or imag_str[0] == "-":
        return real_str + imag_str
    return real_str + "+" + imag_str


def _val_str(value, formatter1: _Formatter, formatter2: Optional[_Formatter]) -> str:
    if formatter2 is not None:
        return _complex_str(value, formatter1, formatter2)
    return formatter1.format(value)


def _vector_str(values, indent, summarize, formatter1, formatter2=None) -> str:
    # Each element takes its width plus ", ".
    element_length = formatter1.width() + 2
    if formatter2 is not None:
        element_length += formatter2.width() + 1  # imaginary part and "j"

    elements_per_line = max(
        1, math.floor((PRINT_OPTS.linewidth - indent) / element_length)
    )

    edgeitems = PRINT_OPTS.edgeitems
    if summarize and not edgeitems:
        data = ["..."]
    elif summarize and values.shape[0] > 2 * edgeitems:
        data = (
            [_val_str(v, formatter1, formatter2) for v in values[:edgeitems].tolist()]
            + [" ..."]
            + [_val_str(v, formatter1, formatter2) for v in values[-edgeitems:].tolist()]
        )
    else:
        data = [_val_str(v, formatter1, formatter2) for v in values.tolist()]

    lines = [
        ", ".join(data[i : i + elements_per_line])
        for i in range(0, len(data), elements_per_line)
    ]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(values, indent, summarize, formatter1, formatter2=None):
    dim = values.ndim
    if dim == 0:
        return _val_str(values.item(), formatter1, formatter2)
    if dim == 1:
        return _vector_str(values, indent, summarize, formatter1, formatter2)

    edgeitems = PRINT_OPTS.edgeitems
    size0 = values.shape[0]
    if summarize and size0 > 2 * edgeitems:
        rows = list(range(edgeitems)) + [None] + list(range(size0 - edgeitems, size0))
    else:
        rows = list(range(size0))
    slices = [
        "..."
        if i is None
        else _tensor_str_with_formatter(
            values[i], indent + 1, summarize, formatter1, formatter2
        )
        for i in rows
    ]
    return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices) + "]"


def _summarized_data(values: np.ndarray) -> np.ndarray:
    """The elements a summarized print shows; only these feed the formatter."""
    edgeitems = PRINT_OPTS.edgeitems
    if values.ndim == 0:
        return values
    if values.ndim == 1:
        if values.shape[0] > 2 * edgeitems:
            # values[-0:] is the whole array, as in torch, so edgeitems=0
            # still formats every element of a vector.
            return np.concatenate((values[:edgeitems], values[-edgeitems:]))
        return values
    if not edgeitems:
        return np.empty([0] * values.ndim, dtype=values.dtype)
    size0 = values.shape[0]
    if size0 > 2 * edgeitems:
        rows = list(range(edgeitems)) + list(range(size0 - edgeitems, size0))
    else:
        rows = range(size0)
    return np.stack([_summarized_data(values[i]) for i in rows])


def _tensor_str(values: np.ndarray, floating: bool, indent: int, e8m0: bool = False) -> str:
    """Bracketed contents of an array, like torch's ``_tensor_str`` (``e8m0`` as for _Formatter)."""
    if values.size == 0:
        return "[]"

    summarize = values.size > PRINT_OPTS.threshold
    shown = _summarized_data(values) if summarize else values
    if values.dtype.kind == "c":
        real_formatter = _Formatter(shown.real, True)
        imag_formatter = _Formatter(shown.imag, True)
        return _tensor_str_with_formatter(
            values, indent, summarize, real_formatter, imag_formatter
        )
    formatter = _Formatter(shown, floating, e8m0)
    return _tensor_str_with_formatter(values, indent, summarize, formatter)


def _add_suffixes(tensor_str, suffixes, indent, force_newline=False) -> str:
    tensor_strs = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        suffix_len = len(suffix)
        if force_newline or last_line_len + suffix_len + 2 > PRINT_OPTS.linewidth:
            tensor_strs.append(",\n" + " " * indent + suffix)
            last_line_len = indent + suffix_len
            force_newline = False
        else:
            tensor_strs.append(", " + suffix)
            last_line_len += suffix_len + 2
    tensor_strs.append(")")
    return "".join(tensor_strs)


def _grad_fn_name(grad_fn) -> str:
    name = grad_fn.name() if hasattr(grad_fn, "name") else type(grad_fn).__name__
    # C++ nodes may report a qualified name such as "torch::autograd::AddBackward0".
    return name.rsplit("::", 1)[-1]


def tensor_repr(t, *, tensor_contents: Optional[str] = None, prefix: str = "tensor(") -> str:
    """Return exactly what ``repr(t)`` gives in PyTorch 2.13 for a dense tensor.

    Args:
        t: the duck-typed tensor (see the module docstring).
        tensor_contents: if given, used verbatim instead of the formatted
            values (suffixes such as ``dtype=`` are still appended), as in
            torch's ``Tensor.__repr__(tensor_contents=...)``.
        prefix: the opening text; its length sets the continuation indent.
    """
    indent = len(prefix)
    suffixes = []
    dtype_str = str(t.dtype)
    default_dtype_str = _get_default_dtype_str()
    shape = tuple(int(s) for s in t.shape)

    device_str = str(t.device)
    # torch prints the device only when it differs from the default (CPU).
    if device_str.split(":", 1)[0] != "cpu":
        suffixes.append("device='" + device_str + "'")

    default_complex_str = (
        "torch.complex128" if default_dtype_str == "torch.float64" else "torch.complex64"
    )
    has_default_dtype = dtype_str in (
        default_dtype_str,
        default_complex_str,
        "torch.int64",
        "torch.bool",
    )

    if t.numel() == 0:
        # Match NumPy: show the shape unless it is (0,).
        if t.dim() != 1:
            suffixes.append("size=" + str(shape))
        # No elements to infer the dtype from, so even int64/bool show it.
        if dtype_str != default_dtype_str:
            suffixes.append("dtype=" + dtype_str)
        if tensor_contents is None:
            tensor_contents = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append("size=" + str(shape))
        if not has_default_dtype:
            suffixes.append("dtype=" + dtype_str)
        if tensor_contents is None:
            values = np.asarray(t._print_values()).reshape(shape)
            tensor_contents = _tensor_str(
                values, bool(t.dtype.is_floating_point), indent, dtype_str == "torch.float8_e8m0fnu"
            )

    grad_fn = t.grad_fn
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{_grad_fn_name(grad_fn)}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")

    return _add_suffixes(prefix + tensor_contents, suffixes, indent)
