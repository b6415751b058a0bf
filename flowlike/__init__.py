"""flowlike: a PyTorch-compatible deep learning framework (`import flowlike as torch`)."""
from . import _C
from ._dtype import (dtype, bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, short, int,
                     long, half, float, double, get_default_dtype, set_default_dtype, promote_types, can_cast,
                     finfo, iinfo)
from ._tensor import Tensor, Size, device
from ._tensor_str import set_printoptions, get_printoptions, printoptions
from ._creation import (tensor, as_tensor, asarray, from_numpy, frombuffer, empty, zeros, ones, full, empty_like,
                        zeros_like, ones_like, full_like, arange, linspace, logspace, eye, scalar_tensor)
from ._ops import *  # noqa: F401,F403  (pointwise ops and the rest of the op namespace)
from ._reduce import *  # noqa: F401,F403  (reductions, scans, sorting)
from . import memory

__version__ = "2.13.0+flowlike.0.1.0"
result_type = _C.result_type
is_tensor = lambda obj: isinstance(obj, Tensor)  # noqa: E731
