"""torch.distributions.constraints: objects whose check(value) says, per event, whether value lies in a set."""
import builtins

from .. import bool as _bool, full, isclose, linalg
from .._missing import module_getattr

__all__ = ["Constraint", "real", "boolean", "nonnegative", "positive", "unit_interval", "square", "symmetric",
           "positive_semidefinite", "positive_definite"]


class Constraint:
    """A region of values. check(value) gives a bool tensor over value's shape less its event_dim rightmost
    dimensions."""
    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self):
        return self.__class__.__name__[1:] + "()"


class _Real(Constraint):
    def check(self, value):
        return value == value  # false only for NaN


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _GreaterThanEq(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound <= value

    def __repr__(self):
        return f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound})"


class _GreaterThan(_GreaterThanEq):
    def check(self, value):
        return self.lower_bound < value


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return f"{self.__class__.__name__[1:]}(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        return full(value.shape[:-2], value.shape[-2] == value.shape[-1], dtype=_bool)


class _Symmetric(_Square):
    def check(self, value):
        square = super().check(value)
        if not builtins.bool(square.all()):
            return square
        return isclose(value, value.mT, atol=1e-6).all(-2).all(-1)


class _PositiveSemidefinite(_Symmetric):
    def check(self, value):
        symmetric = super().check(value)
        if not builtins.bool(symmetric.all()):
            return symmetric
        return linalg.eigvalsh(value).ge(0).all(-1)


class _PositiveDefinite(_Symmetric):
    def check(self, value):
        symmetric = super().check(value)
        if not builtins.bool(symmetric.all()):
            return symmetric
        return linalg.cholesky_ex(value).info.eq(0)


real = _Real()
boolean = _Boolean()
nonnegative = _GreaterThanEq(0.0)
positive = _GreaterThan(0.0)
unit_interval = _Interval(0.0, 1.0)
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()

__getattr__ = module_getattr(__name__, "torch.distributions.constraints")
