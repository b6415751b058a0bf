"""torch.distributions on flowlike: so far only `constraints` (the checks a library runs on values, e.g.
transformers' positive-definiteness test when it resizes embeddings); the distribution classes are not provided
yet and name themselves as missing."""
from . import constraints
from .._missing import module_getattr

__all__ = ["constraints"]

__getattr__ = module_getattr(__name__, "torch.distributions")
