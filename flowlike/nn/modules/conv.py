"""Convolution modules: Conv1d/2d/3d and ConvTranspose1d/2d/3d (padding modes through F.pad)."""
import math

from ... import _creation
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d",
           "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"]


def _tuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _ConvNd(Module):
    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding", "in_channels",
                     "out_channels", "kernel_size"]

    def __init__(self, n, transposed, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                 padding_mode, output_padding=0, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"padding_mode must be one of ['zeros', 'reflect', 'replicate', 'circular'], but got "
                             f"padding_mode='{padding_mode}'")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of ['valid', 'same']")
            if padding == "same" and any(s != 1 for s in _tuple(stride, n)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = _tuple(kernel_size, n), _tuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _tuple(padding, n)
        self.dilation, self.transposed = _tuple(dilation, n), transposed
        self.output_padding, self.groups, self.padding_mode = _tuple(output_padding, n), groups, padding_mode
        if isinstance(self.padding, str):
            # the left/right amounts 'same' needs, for the non-zeros padding modes
            pads = []
            for d, k in zip(reversed(self.dilation), reversed(self.kernel_size)):
                total = d * (k - 1)
                pads += [total // 2, total - total // 2] if padding == "same" else [0, 0]
            self._reversed_padding_repeated_twice = pads
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(self.padding) for _ in range(2)]
        shape = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(_creation.empty(shape + self.kernel_size, dtype=dtype))
        if bias:
            self.bias = Parameter(_creation.empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)


def _conv_class(name, n):
    fn = getattr(F, f"conv{n}d")

    class Conv(_ConvNd):
        def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                     bias=True, padding_mode="zeros", device=None, dtype=None):
            super().__init__(n, False, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                             padding_mode, dtype=dtype)

        def forward(self, input):
            if self.padding_mode != "zeros":
                input = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
                return fn(input, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
            return fn(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)
    Conv.__name__ = Conv.__qualname__ = name
    Conv.__doc__ = f"{n}-d convolution over an input of shape (N, C_in, ...) (or unbatched)."
    return Conv


def _transposed_class(name, n):
    fn = getattr(F, f"conv_transpose{n}d")

    class ConvTranspose(_ConvNd):
        def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                     bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
            if padding_mode != "zeros":
                raise ValueError(f'Only "zeros" padding mode is supported for {name}')
            super().__init__(n, True, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                             padding_mode, output_padding, dtype=dtype)

        def forward(self, input, output_size=None):
            output_padding = self.output_padding
            if output_size is not None:
                spatial = list(output_size)[-n:]
                output_padding = []
                for d in range(n):
                    size_in = input.shape[input.dim() - n + d]
                    base = ((size_in - 1) * self.stride[d] - 2 * self.padding[d] +
                            self.dilation[d] * (self.kernel_size[d] - 1) + 1)
                    extra = spatial[d] - base
                    if not 0 <= extra < max(self.stride[d], self.dilation[d]):
                        raise ValueError(f"requested an output size of {spatial}, but valid sizes range from {base} "
                                         f"to {base + max(self.stride[d], self.dilation[d]) - 1} (for an input of "
                                         f"{list(input.shape[-n:])})")
                    output_padding.append(extra)
            return fn(input, self.weight, self.bias, self.stride, self.padding, tuple(output_padding), self.groups,
                      self.dilation)
    ConvTranspose.__name__ = ConvTranspose.__qualname__ = name
    ConvTranspose.__doc__ = f"{n}-d transposed convolution (the gradient of Conv{n}d with respect to its input)."
    return ConvTranspose


Conv1d, Conv2d, Conv3d = (_conv_class(f"Conv{n}d", n) for n in (1, 2, 3))
ConvTranspose1d, ConvTranspose2d, ConvTranspose3d = (_transposed_class(f"ConvTranspose{n}d", n) for n in (1, 2, 3))


class _LazyConvXdMixin(LazyModuleMixin):
    """in_channels inferred from the first input's channel dimension."""

    def _make_lazy(self, out_channels, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        """Infers in_channels from input and initializes weight and bias."""
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
            else:
                self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input):
        n = self._get_num_spatial_dims()
        if input.dim() not in (n + 1, n + 2):
            raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == n + 2 else input.shape[0]


def _lazy_conv_class(base, n):
    class LazyConv(_LazyConvXdMixin, base):
        cls_to_become = base

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                     padding_mode="zeros", device=None, dtype=None):
            # in/out_channels 0 and bias=False: no tensors are created only to be replaced
            super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode,
                             device=device, dtype=dtype)
            self._make_lazy(out_channels, bias, device, dtype)

        def _get_num_spatial_dims(self):
            return n
    LazyConv.__name__ = LazyConv.__qualname__ = "Lazy" + base.__name__
    LazyConv.__doc__ = f"A {base.__name__} whose in_channels is inferred from the first input (then it becomes one)."
    return LazyConv


def _lazy_transposed_class(base, n):
    class LazyConvTranspose(_LazyConvXdMixin, base):
        cls_to_become = base

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                     dilation=1, padding_mode="zeros", device=None, dtype=None):
            super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                             padding_mode, device=device, dtype=dtype)
            self._make_lazy(out_channels, bias, device, dtype)

        def _get_num_spatial_dims(self):
            return n
    LazyConvTranspose.__name__ = LazyConvTranspose.__qualname__ = "Lazy" + base.__name__
    LazyConvTranspose.__doc__ = (f"A {base.__name__} whose in_channels is inferred from the first input (then it "
                                 "becomes one).")
    return LazyConvTranspose


LazyConv1d, LazyConv2d, LazyConv3d = (_lazy_conv_class(c, n) for n, c in enumerate((Conv1d, Conv2d, Conv3d), 1))
LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d = (
    _lazy_transposed_class(c, n) for n, c in enumerate((ConvTranspose1d, ConvTranspose2d, ConvTranspose3d), 1))
