"""Complex numbers: the conjugate bit (conj, resolve_conj, is_conj), the real/complex views (view_as_real,
view_as_complex, real, imag) and the constructors (complex, polar), as torch has them."""
from . import _C
from ._out import inplace_method, write_out


def _check_tensor(op, x, name="input"):
    if not isinstance(x, _C.Tensor):
        raise TypeError(f"{op}(): argument '{name}' (position 1) must be Tensor, not {type(x).__name__}")


def conj(input):
    """A view of input with its conjugate bit flipped (input itself for a real tensor); the conjugation happens
    when an op reads it (resolve_conj makes it in memory)."""
    _check_tensor("conj", input)
    return _C._conj(input)


def resolve_conj(input):
    """input with its conjugate bit resolved: new memory holding the conjugated values, or input itself when the
    bit is not set."""
    _check_tensor("resolve_conj", input)
    return _C._resolve_conj(input)


def resolve_neg(input):
    """input itself: flowlike has no negative bit to resolve."""
    return input


def conj_physical(input, *, out=None):
    """The elementwise conjugate in new memory (a copy for a real tensor)."""
    _check_tensor("conj_physical", input)
    return write_out(out, _C._conj_physical(input), "conj_physical", exact_dtype=True)


def is_conj(input):
    """Whether input has its conjugate bit set."""
    return input.is_conj()


def is_neg(input):
    """False: flowlike has no negative bit."""
    return False


def view_as_real(input):
    """The complex input seen as real numbers with a trailing dimension of size 2 (real, imaginary); shares
    memory."""
    _check_tensor("view_as_real", input)
    return _C._view_as_real(input)


def view_as_complex(input):
    """A float or double tensor whose last dimension has size 2 (and stride 1) seen as complex; shares memory."""
    _check_tensor("view_as_complex", input)
    return _C._view_as_complex(input)


def real(input):
    """The real part as a view (input itself for a real tensor)."""
    _check_tensor("real", input)
    return _C._real(input)


def imag(input):
    """The imaginary part as a view; real tensors have none (RuntimeError, as in torch)."""
    _check_tensor("imag", input)
    return _C._imag(input)


def complex(real, imag, *, out=None):
    """real + i * imag, elementwise with broadcasting (float -> complex64, double -> complex128)."""
    _check_tensor("complex", real, "real")
    _check_tensor("complex", imag, "imag")
    return write_out(out, _C._complex(real, imag), "complex", exact_dtype=True)


def polar(abs, angle, *, out=None):
    """abs * (cos(angle) + i sin(angle)), elementwise."""
    _check_tensor("polar", abs, "abs")
    _check_tensor("polar", angle, "angle")
    _C._complex(abs, angle)  # torch's dtype checks, before any arithmetic
    return write_out(out, _C._complex(abs * _C.cos(angle), abs * _C.sin(angle)), "polar", exact_dtype=True)


def _set_part(part):
    def setter(self, value):
        part(self).copy_(value)
    return setter


__all__ = ["conj", "resolve_conj", "resolve_neg", "conj_physical", "is_conj", "is_neg", "view_as_real",
           "view_as_complex", "real", "imag", "complex", "polar"]

for _name in ["conj", "resolve_conj", "resolve_neg", "conj_physical", "is_neg"]:
    setattr(_C.Tensor, _name, globals()[_name])
_C.Tensor.conj_physical_ = inplace_method(conj_physical, "conj_physical_")
_C.Tensor.real = property(real, _set_part(real), doc="The real part (a view); assigning writes it.")
_C.Tensor.imag = property(imag, _set_part(imag), doc="The imaginary part (a view); assigning writes it.")
del _name
