"""flowlike: a PyTorch-compatible deep learning framework (`import flowlike as torch`)."""


def _load_openblas():
    # _C links against libscipy_openblas.so by its soname; loading it first from the installed
    # scipy-openblas32 wheel lets the dynamic loader resolve that dependency wherever the wheel lives.
    import ctypes
    import os
    import scipy_openblas32

    ctypes.CDLL(os.path.join(scipy_openblas32.get_lib_dir(), scipy_openblas32.get_library(fullname=True)),
                ctypes.RTLD_GLOBAL)


_load_openblas()
from . import _C  # noqa: E402
from ._dtype import (dtype, bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, short, int,
                     long, half, float, double, get_default_dtype, set_default_dtype, promote_types, can_cast,
                     finfo, iinfo, complex32, chalf, complex64, cfloat, complex128, cdouble, float8_e4m3fn,
                     float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu, uint16, uint32, uint64)
from ._tensor import (Tensor, Size, device, UntypedStorage, TypedStorage, layout, strided, memory_format,
                      contiguous_format, preserve_format, channels_last, channels_last_3d)
from ._tensor_str import set_printoptions, get_printoptions, printoptions
from ._creation import (tensor, as_tensor, asarray, from_numpy, frombuffer, empty, zeros, ones, full, empty_like,
                        zeros_like, ones_like, full_like, arange, linspace, logspace, eye, scalar_tensor, range,
                        empty_strided, get_default_device, set_default_device, hann_window, hamming_window,
                        blackman_window, bartlett_window, kaiser_window, FloatTensor, DoubleTensor, HalfTensor,
                        BFloat16Tensor, ByteTensor, CharTensor, ShortTensor, IntTensor, LongTensor, BoolTensor,
                        empty_permuted, set_default_tensor_type)
from ._ops import *  # noqa: F401,F403  (pointwise ops and the rest of the op namespace)
from ._random import (Generator, default_generator, manual_seed, seed, initial_seed, get_rng_state, set_rng_state,
                      rand, randn, randint, rand_like, randn_like, randint_like, randperm, normal, bernoulli,
                      multinomial, poisson, get_num_threads, set_num_threads)
from ._C import from_dlpack
from ._views import *  # noqa: F401,F403  (views and shape ops)
from ._complex import *  # noqa: F401,F403  (conj, view_as_real, real/imag, complex, polar)
from ._spectral import stft, istft
from ._joining import *  # noqa: F401,F403  (stack, tile, repeat_interleave, meshgrid, ...)
from ._matrix import *  # noqa: F401,F403  (diag, tril_indices, block_diag, vander, ...)
from ._index import *  # noqa: F401,F403  (indexing ops)
from ._reduce import *  # noqa: F401,F403  (reductions, scans, sorting)
from ._linalg_products import *  # noqa: F401,F403  (matmul and the other products)
from ._float8 import _scaled_mm
from .nn._functional_vision import pixel_shuffle, pixel_unshuffle, cdist, cosine_similarity, pairwise_distance, pdist
from ._linalg import *  # noqa: F401,F403  (torch.* linear algebra; torch.linalg is flowlike.linalg)
from ._nn import *  # noqa: F401,F403  (softmax, relu, layer_norm, ... in the torch namespace)
from . import memory
from . import autograd
from .autograd import no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled, is_inference_mode_enabled
from .nn import _grid_sample  # noqa: E402,F401 - registers grid_sample's third derivative (needs autograd)

from .version import __version__  # noqa: E402
result_type = _C.result_type


def is_tensor(obj):
    """True when obj is a flowlike tensor (or a subclass such as Parameter)."""
    return isinstance(obj, Tensor)


def is_floating_point(input):
    """True when input's dtype is a floating point type."""
    return input.dtype.is_floating_point


def numel(input):
    """The number of elements of input."""
    return input.numel()


def is_complex(input):
    """Whether input's dtype is complex."""
    return input.is_complex()


def is_signed(input):
    """True when input's dtype is signed (every dtype but uint8 and bool)."""
    return input.is_signed()


def is_nonzero(input):
    """Whether a one-element tensor is nonzero (RuntimeError for any other number of elements)."""
    return input.is_nonzero()


def is_same_size(input, other):
    """True when both tensors have the same shape."""
    return input.is_same_size(other)


def is_storage(obj):
    """True when obj is a storage (an UntypedStorage or a TypedStorage)."""
    return isinstance(obj, (UntypedStorage, TypedStorage))


def clone(input, *, memory_format=None):
    """A copy of input (differentiable: gradients flow back to input)."""
    return input.clone()


def detach(input):
    """A view of input cut from the autograd graph."""
    return input.detach()


def fill(input, value):
    """A tensor of input's shape and dtype filled with value."""
    return empty_like(input).fill_(value)


def fill_(input, value):
    """Fills input with value in place."""
    return input.fill_(value)


def resize_as_(input, the_template, *, memory_format=None):
    """Resizes input in place to the_template's shape (see Tensor.resize_)."""
    return input.resize_as_(the_template)


def zero_(input):
    """Fills input with zeros in place."""
    return input.zero_()


def get_device(input):
    """The device index of input: -1, the CPU."""
    return input.get_device()


def to_dlpack(tensor):
    """A DLPack capsule sharing tensor's memory (tensor.__dlpack__())."""
    return tensor.__dlpack__()


def set_anomaly_enabled(enabled, check_nan=True):
    """Turns autograd anomaly detection on or off (see autograd.set_detect_anomaly)."""
    autograd.set_detect_anomaly(enabled, check_nan)


is_anomaly_enabled = autograd.is_anomaly_enabled
is_anomaly_check_nan_enabled = autograd.anomaly_mode.is_anomaly_check_nan_enabled


def typename(obj):
    """The type name of obj: 'torch.FloatTensor' style for tensors, module.qualname otherwise."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(type(obj), "__module__", "") or ""
    name = getattr(type(obj), "__qualname__", type(obj).__name__)
    return name if module in ("", "builtins") else f"{module}.{name}"


# ---- the rest of the torch namespace: torch.cuda, torch.backends, torch.jit, torch.compile, ... -------------
from . import backends, cuda, fft, jit, signal, special, testing, xpu  # noqa: E402
from .backends import (use_deterministic_algorithms, are_deterministic_algorithms_enabled,  # noqa: E402
                       is_deterministic_algorithms_warn_only_enabled, set_float32_matmul_precision,
                       get_float32_matmul_precision)


def set_deterministic_debug_mode(debug_mode):
    """0 / "default": deterministic algorithms off; 1 / "warn": on, warning only; 2 / "error": on."""
    modes = {"default": 0, "warn": 1, "error": 2}
    if isinstance(debug_mode, str):
        if debug_mode not in modes:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = modes[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    """The mode set_deterministic_debug_mode sets: 0, 1 (warn only) or 2."""
    if not are_deterministic_algorithms_enabled():
        return 0
    return 1 if is_deterministic_algorithms_warn_only_enabled() else 2


from .nn.utils.weight_norm import norm_except_dim  # noqa: E402
from .jit import _compile as compile  # noqa: E402
from . import func  # noqa: E402
from .func import vmap, cond, while_loop  # noqa: E402
from .nn._functional_conv import (conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d,  # noqa: E402
                                 conv_transpose3d, max_pool1d, max_pool2d, max_pool3d, max_pool1d_with_indices,
                                 avg_pool1d, adaptive_avg_pool1d,
                                 adaptive_max_pool1d_with_indices as adaptive_max_pool1d)  # torch.* returns both
from . import nn, optim, utils  # noqa: E402
from . import library  # noqa: E402
from .amp.autocast_mode import (autocast, is_autocast_enabled, get_autocast_dtype, set_autocast_enabled,  # noqa: E402
                                set_autocast_dtype, is_autocast_cpu_enabled, get_autocast_cpu_dtype)
from .library import ops  # noqa: E402
from .serialization import save, load  # noqa: E402


def __getattr__(name):
    """Imports submodules on first use (torch.X style) and names torch attributes flowlike lacks (PEP 562)."""
    import importlib
    import importlib.util

    # torch imports _dynamo on first attribute use too (its _lazy_modules)
    if (not name.startswith("_") or name == "_dynamo") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")
    from ._missing import missing_attribute_error
    raise missing_attribute_error(__name__, "torch", name)
