"""Shared plumbing of the families: parameters broadcast together, and the probs-or-logits parameterization."""
import numbers

from .. import Size
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits


class _Broadcast(Distribution):
    """A family whose tensor parameters (named in `_params`, in constructor order) broadcast together; the batch
    shape is theirs, () when all were given as numbers."""
    _params = ()

    def _set_params(self, *values, validate_args=None, event_shape=Size()):
        for name, t in zip(self._params, broadcast_all(*values)):
            setattr(self, name, t)
        scalar = all(isinstance(v, numbers.Number) for v in values)
        batch_shape = Size() if scalar else getattr(self, self._params[0]).size()
        Distribution.__init__(self, batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(_family_of(self), _instance)
        batch_shape = Size(batch_shape)
        for name in self._params:
            setattr(new, name, getattr(self, name).expand(batch_shape))
        self._expand_extra(new, batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _expand_extra(self, new, batch_shape):
        """Copies what a family holds besides its parameters into the expanded instance."""


def _family_of(dist):
    """The library class a distribution belongs to: the first in its MRO that defines __init__ here (user
    subclasses with their own __init__ must define expand, as in torch)."""
    return next(c for c in type(dist).__mro__ if c.__module__.startswith(__package__) and "__init__" in c.__dict__)


class _ProbsOrLogits(Distribution):
    """Families given either probs or logits (not both); the other is derived lazily. `_is_binary`: logits are
    log-odds (else unnormalized log probabilities along the last dim)."""
    _is_binary = True

    def _set_probs_or_logits(self, probs, logits):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        return Size() if isinstance(probs if probs is not None else logits, numbers.Number) else self._param.size()

    def _expand_param(self, new, param_shape):
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(param_shape))
                new._param = getattr(new, name)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=self._is_binary)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=self._is_binary)

    @property
    def param_shape(self):
        return self._param.size()

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)
