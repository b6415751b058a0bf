"""flowlike/_tensor_str.py: repr text must equal PyTorch 2.13's.

The expected strings are golden outputs of ``repr()`` from real torch 2.13 (CPU)
for the same values; torch itself is not imported here. The module is loaded
from its file so these tests run before the flowlike extension is built.
"""

import importlib.util
import math
import pathlib
import sys
import types
from typing import Any, Callable, NamedTuple, Optional

import numpy as np
import pytest

_PATH = pathlib.Path(__file__).resolve().parents[1] / "flowlike" / "_tensor_str.py"
_spec = importlib.util.spec_from_file_location("_flowlike_tensor_str_under_test", _PATH)
ts = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ts)

_NP_TO_TORCH = {
    "float16": "torch.float16",
    "float32": "torch.float32",
    "float64": "torch.float64",
    "complex64": "torch.complex64",
    "complex128": "torch.complex128",
    "int8": "torch.int8",
    "int16": "torch.int16",
    "int32": "torch.int32",
    "int64": "torch.int64",
    "uint8": "torch.uint8",
    "bool": "torch.bool",
}
_ITEMSIZE = {"torch.bfloat16": 2}


class FakeDtype:
    def __init__(self, name: str):
        self.name = name
        self.is_floating_point = name in (
            "torch.float16",
            "torch.bfloat16",
            "torch.float32",
            "torch.float64",
        )
        self.itemsize = _ITEMSIZE.get(name) or np.dtype(name.split(".")[1]).itemsize

    def __str__(self):
        return self.name


class FakeGradFn:
    def __init__(self, name: str):
        self._name = name

    def name(self):
        return self._name


class FakeTensor:
    """Just the duck-typed surface tensor_repr reads, backed by a numpy array."""

    def __init__(self, values, dtype=None, requires_grad=False, grad_fn=None, device="cpu"):
        self._values = np.asarray(values)
        self.dtype = FakeDtype(dtype or _NP_TO_TORCH[self._values.dtype.name])
        self.shape = self._values.shape
        self.requires_grad = requires_grad
        self.grad_fn = None if grad_fn is None else FakeGradFn(grad_fn)
        self.device = device

    def dim(self):
        return self._values.ndim

    def numel(self):
        return self._values.size

    def _print_values(self):
        return self._values


@pytest.fixture(autouse=True)
def _isolate(monkeypatch):
    """Fixed default dtype (no flowlike import) and default print options per test."""
    monkeypatch.setattr(ts, "_get_default_dtype_str", lambda: "torch.float32")
    ts.set_printoptions(profile="default")
    yield
    ts.set_printoptions(profile="default")


class Case(NamedTuple):
    id: str
    values: Callable[[], np.ndarray]
    dtype: str  # torch dtype name; bfloat16 values are given as float32
    fake: "dict[str, Any]"  # requires_grad / grad_fn for FakeTensor
    options: "dict[str, Any]"  # set_printoptions kwargs
    default_dtype: Optional[str]  # None means torch.float32
    expected: str


CASES = [
    Case(
        'float_vector',
        lambda: np.array([1.5, -2.25, 3.125], np.float32),
        'torch.float32',
        {},
        {},
        None,
        'tensor([ 1.5000, -2.2500,  3.1250])',
    ),
    Case(
        'float_matrix',
        lambda: np.arange(6, dtype=np.float32).reshape(2, 3) / np.float32(3),
        'torch.float32',
        {},
        {},
        None,
        (
            'tensor([[0.0000, 0.3333, 0.6667],\n'
            '        [1.0000, 1.3333, 1.6667]])'
        ),
    ),
    Case(
        'float_3d',
        lambda: np.arange(12, dtype=np.float32).reshape(2, 3, 2) - np.float32(5.5),
        'torch.float32',
        {},
        {},
        None,
        (
            'tensor([[[-5.5000, -4.5000],\n'
            '         [-3.5000, -2.5000],\n'
            '         [-1.5000, -0.5000]],\n'
            '\n'
            '        [[ 0.5000,  1.5000],\n'
            '         [ 2.5000,  3.5000],\n'
            '         [ 4.5000,  5.5000]]])'
        ),
    ),
    Case(
        'int_mode_floats',
        lambda: np.array([1.0, 2.0, -30.0], np.float32),
        'torch.float32',
        {},
        {},
        None,
        'tensor([  1.,   2., -30.])',
    ),
    Case(
        'int_mode_matrix',
        lambda: np.arange(-3, 3, dtype=np.float32).reshape(3, 2),
        'torch.float32',
        {},
        {},
        None,
        (
            'tensor([[-3., -2.],\n'
            '        [-1.,  0.],\n'
            '        [ 1.,  2.]])'
        ),
    ),
    Case(
        'sci_large',
        lambda: np.array([1e10, 1.0, -2.5], np.float32),
        'torch.float32',
        {},
        {},
        None,
        'tensor([ 1.0000e+10,  1.0000e+00, -2.5000e+00])',
    ),
    Case(
        'sci_small',
        lambda: np.array([1e-5, 0.5], np.float32),
        'torch.float32',
        {},
        {},
        None,
        'tensor([1.0000e-05, 5.0000e-01])',
    ),
    Case(
        'sci_ratio',
        lambda: np.array([0.001, 1.5], np.float32),
        'torch.float32',
        {},
        {},
        None,
        'tensor([1.0000e-03, 1.5000e+00])',
    ),
    Case(
        'no_sci_ratio_1000',
        lambda: np.array([1.0, 1000.0], np.float32),
        'torch.float32',
        {},
        {},
        None,
        'tensor([   1., 1000.])',
    ),
    Case(
        'nan_inf',
        lambda: np.array([np.nan, np.inf, -np.inf, 1.5], np.float32),
        'torch.float32',
        {},
        {},
        None,
        'tensor([   nan,    inf,   -inf, 1.5000])',
    ),
    Case(
        'nan_inf_int_mode',
        lambda: np.array([np.nan, 1.0, -np.inf], np.float32),
        'torch.float32',
        {},
        {},
        None,
        'tensor([nan, 1., -inf])',
    ),
    Case(
        'all_nan',
        lambda: np.array([np.nan, np.nan], np.float32),
        'torch.float32',
        {},
        {},
        None,
        'tensor([nan, nan])',
    ),
    Case(
        'negative_zero',
        lambda: np.array([-0.0, 1.0, 2.0], np.float32),
        'torch.float32',
        {},
        {},
        None,
        'tensor([-0., 1., 2.])',
    ),
    Case(
        'negative_zero_frac',
        lambda: np.array([-0.0, 0.5], np.float32),
        'torch.float32',
        {},
        {},
        None,
        'tensor([-0.0000, 0.5000])',
    ),
    Case(
        'zeros',
        lambda: np.zeros(4, np.float32),
        'torch.float32',
        {},
        {},
        None,
        'tensor([0., 0., 0., 0.])',
    ),
    Case(
        'summarize_2000',
        lambda: np.arange(2000, dtype=np.float32),
        'torch.float32',
        {},
        {},
        None,
        (
            'tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n'
            '        1.9990e+03])'
        ),
    ),
    Case(
        'summarize_100x100',
        lambda: np.arange(10000, dtype=np.float32).reshape(100, 100) / np.float32(7),
        'torch.float32',
        {},
        {},
        None,
        (
            'tensor([[0.0000e+00, 1.4286e-01, 2.8571e-01,  ..., 1.3857e+01, 1.4000e+01,\n'
            '         1.4143e+01],\n'
            '        [1.4286e+01, 1.4429e+01, 1.4571e+01,  ..., 2.8143e+01, 2.8286e+01,\n'
            '         2.8429e+01],\n'
            '        [2.8571e+01, 2.8714e+01, 2.8857e+01,  ..., 4.2429e+01, 4.2571e+01,\n'
            '         4.2714e+01],\n'
            '        ...,\n'
            '        [1.3857e+03, 1.3859e+03, 1.3860e+03,  ..., 1.3996e+03, 1.3997e+03,\n'
            '         1.3999e+03],\n'
            '        [1.4000e+03, 1.4001e+03, 1.4003e+03,  ..., 1.4139e+03, 1.4140e+03,\n'
            '         1.4141e+03],\n'
            '        [1.4143e+03, 1.4144e+03, 1.4146e+03,  ..., 1.4281e+03, 1.4283e+03,\n'
            '         1.4284e+03]])'
        ),
    ),
    Case(
        'summarize_int64',
        lambda: np.arange(1001, dtype=np.int64),
        'torch.int64',
        {},
        {},
        None,
        'tensor([   0,    1,    2,  ...,  998,  999, 1000])',
    ),
    Case(
        'summarize_3d',
        lambda: np.arange(2400, dtype=np.int32).reshape(10, 20, 12),
        'torch.int32',
        {},
        {},
        None,
        (
            'tensor([[[   0,    1,    2,  ...,    9,   10,   11],\n'
            '         [  12,   13,   14,  ...,   21,   22,   23],\n'
            '         [  24,   25,   26,  ...,   33,   34,   35],\n'
            '         ...,\n'
            '         [ 204,  205,  206,  ...,  213,  214,  215],\n'
            '         [ 216,  217,  218,  ...,  225,  226,  227],\n'
            '         [ 228,  229,  230,  ...,  237,  238,  239]],\n'
            '\n'
            '        [[ 240,  241,  242,  ...,  249,  250,  251],\n'
            '         [ 252,  253,  254,  ...,  261,  262,  263],\n'
            '         [ 264,  265,  266,  ...,  273,  274,  275],\n'
            '         ...,\n'
            '         [ 444,  445,  446,  ...,  453,  454,  455],\n'
            '         [ 456,  457,  458,  ...,  465,  466,  467],\n'
            '         [ 468,  469,  470,  ...,  477,  478,  479]],\n'
            '\n'
            '        [[ 480,  481,  482,  ...,  489,  490,  491],\n'
            '         [ 492,  493,  494,  ...,  501,  502,  503],\n'
            '         [ 504,  505,  506,  ...,  513,  514,  515],\n'
            '         ...,\n'
            '         [ 684,  685,  686,  ...,  693,  694,  695],\n'
            '         [ 696,  697,  698,  ...,  705,  706,  707],\n'
            '         [ 708,  709,  710,  ...,  717,  718,  719]],\n'
            '\n'
            '        ...,\n'
            '\n'
            '        [[1680, 1681, 1682,  ..., 1689, 1690, 1691],\n'
            '         [1692, 1693, 1694,  ..., 1701, 1702, 1703],\n'
            '         [1704, 1705, 1706,  ..., 1713, 1714, 1715],\n'
            '         ...,\n'
            '         [1884, 1885, 1886,  ..., 1893, 1894, 1895],\n'
            '         [1896, 1897, 1898,  ..., 1905, 1906, 1907],\n'
            '         [1908, 1909, 1910,  ..., 1917, 1918, 1919]],\n'
            '\n'
            '        [[1920, 1921, 1922,  ..., 1929, 1930, 1931],\n'
            '         [1932, 1933, 1934,  ..., 1941, 1942, 1943],\n'
            '         [1944, 1945, 1946,  ..., 1953, 1954, 1955],\n'
            '         ...,\n'
            '         [2124, 2125, 2126,  ..., 2133, 2134, 2135],\n'
            '         [2136, 2137, 2138,  ..., 2145, 2146, 2147],\n'
            '         [2148, 2149, 2150,  ..., 2157, 2158, 2159]],\n'
            '\n'
            '        [[2160, 2161, 2162,  ..., 2169, 2170, 2171],\n'
            '         [2172, 2173, 2174,  ..., 2181, 2182, 2183],\n'
            '         [2184, 2185, 2186,  ..., 2193, 2194, 2195],\n'
            '         ...,\n'
            '         [2364, 2365, 2366,  ..., 2373, 2374, 2375],\n'
            '         [2376, 2377, 2378,  ..., 2385, 2386, 2387],\n'
            '         [2388, 2389, 2390,  ..., 2397, 2398, 2399]]], dtype=torch.int32)'
        ),
    ),
    Case(
        'scalar_float',
        lambda: np.array(3.5, np.float32),
        'torch.float32',
        {},
        {},
        None,
        'tensor(3.5000)',
    ),
    Case(
        'scalar_int_mode',
        lambda: np.array(3.0, np.float32),
        'torch.float32',
        {},
        {},
        None,
        'tensor(3.)',
    ),
    Case(
        'scalar_sci',
        lambda: np.array(1.5e-7, np.float64),
        'torch.float64',
        {},
        {},
        None,
        'tensor(1.5000e-07, dtype=torch.float64)',
    ),
    Case(
        'scalar_int64',
        lambda: np.array(7, np.int64),
        'torch.int64',
        {},
        {},
        None,
        'tensor(7)',
    ),
    Case(
        'scalar_bool',
        lambda: np.array(True),
        'torch.bool',
        {},
        {},
        None,
        'tensor(True)',
    ),
    Case(
        'scalar_nan',
        lambda: np.array(np.nan, np.float32),
        'torch.float32',
        {},
        {},
        None,
        'tensor(nan)',
    ),
    Case(
        'empty_float',
        lambda: np.zeros(0, np.float32),
        'torch.float32',
        {},
        {},
        None,
        'tensor([])',
    ),
    Case(
        'empty_2d',
        lambda: np.zeros((0, 3), np.float32),
        'torch.float32',
        {},
        {},
        None,
        'tensor([], size=(0, 3))',
    ),
    Case(
        'empty_int64',
        lambda: np.zeros(0, np.int64),
        'torch.int64',
        {},
        {},
        None,
        'tensor([], dtype=torch.int64)',
    ),
    Case(
        'empty_bool_2d',
        lambda: np.zeros((2, 0), np.bool_),
        'torch.bool',
        {},
        {},
        None,
        'tensor([], size=(2, 0), dtype=torch.bool)',
    ),
    Case(
        'empty_float64',
        lambda: np.zeros(0, np.float64),
        'torch.float64',
        {},
        {},
        None,
        'tensor([], dtype=torch.float64)',
    ),
    Case(
        'int32',
        lambda: np.array([1, -20, 300], np.int32),
        'torch.int32',
        {},
        {},
        None,
        'tensor([  1, -20, 300], dtype=torch.int32)',
    ),
    Case(
        'int64',
        lambda: np.array([[1, -20], [300, 4]], np.int64),
        'torch.int64',
        {},
        {},
        None,
        (
            'tensor([[  1, -20],\n'
            '        [300,   4]])'
        ),
    ),
    Case(
        'int8',
        lambda: np.array([-128, 127], np.int8),
        'torch.int8',
        {},
        {},
        None,
        'tensor([-128,  127], dtype=torch.int8)',
    ),
    Case(
        'uint8',
        lambda: np.array([0, 7, 255], np.uint8),
        'torch.uint8',
        {},
        {},
        None,
        'tensor([  0,   7, 255], dtype=torch.uint8)',
    ),
    Case(
        'bool',
        lambda: np.array([True, False]),
        'torch.bool',
        {},
        {},
        None,
        'tensor([ True, False])',
    ),
    Case(
        'bool_matrix',
        lambda: np.array([[True, False], [False, False]]),
        'torch.bool',
        {},
        {},
        None,
        (
            'tensor([[ True, False],\n'
            '        [False, False]])'
        ),
    ),
    Case(
        'float64',
        lambda: np.array([0.1, 2.0], np.float64),
        'torch.float64',
        {},
        {},
        None,
        'tensor([0.1000, 2.0000], dtype=torch.float64)',
    ),
    Case(
        'float16',
        lambda: np.array([0.1, 65504.0, -2.0], np.float16),
        'torch.float16',
        {},
        {},
        None,
        'tensor([ 9.9976e-02,  6.5504e+04, -2.0000e+00], dtype=torch.float16)',
    ),
    Case(
        'float16_int_mode',
        lambda: np.array([1.0, 2048.0], np.float16),
        'torch.float16',
        {},
        {},
        None,
        'tensor([1.0000e+00, 2.0480e+03], dtype=torch.float16)',
    ),
    Case(
        'bfloat16',
        lambda: np.array([1.5, -0.375, 3.140625], np.float32),
        'torch.bfloat16',
        {},
        {},
        None,
        'tensor([ 1.5000, -0.3750,  3.1406], dtype=torch.bfloat16)',
    ),
    Case(
        'bfloat16_large',
        lambda: np.array([3.3895313892515355e38, 1.0], np.float32),
        'torch.bfloat16',
        {},
        {},
        None,
        'tensor([3.3895e+38, 1.0000e+00], dtype=torch.bfloat16)',
    ),
    Case(
        'complex64',
        lambda: np.array([1 + 2j, -0.5 - 0j, 3j], np.complex64),
        'torch.complex64',
        {},
        {},
        None,
        'tensor([ 1.0000+2.j, -0.5000+0.j,  0.0000+3.j])',
    ),
    Case(
        'requires_grad',
        lambda: np.array([1.0, 2.5], np.float32),
        'torch.float32',
        {'requires_grad': True},
        {},
        None,
        'tensor([1.0000, 2.5000], requires_grad=True)',
    ),
    Case(
        'grad_fn',
        lambda: np.array([1.0, 2.5], np.float32),
        'torch.float32',
        {'requires_grad': True, 'grad_fn': 'AddBackward0'},
        {},
        None,
        'tensor([1.0000, 2.5000], grad_fn=<AddBackward0>)',
    ),
    Case(
        'grad_fn_float64',
        lambda: np.array([1.0, 2.5], np.float64),
        'torch.float64',
        {'requires_grad': True, 'grad_fn': 'MulBackward0'},
        {},
        None,
        'tensor([1.0000, 2.5000], dtype=torch.float64, grad_fn=<MulBackward0>)',
    ),
    Case(
        'grad_fn_scalar',
        lambda: np.array(4.25, np.float32),
        'torch.float32',
        {'requires_grad': True, 'grad_fn': 'SumBackward0'},
        {},
        None,
        'tensor(4.2500, grad_fn=<SumBackward0>)',
    ),
    Case(
        'requires_grad_empty',
        lambda: np.zeros((0, 2), np.float16),
        'torch.float16',
        {'requires_grad': True},
        {},
        None,
        'tensor([], size=(0, 2), dtype=torch.float16, requires_grad=True)',
    ),
    Case(
        'precision_2',
        lambda: np.array([1.12345, -0.5, 10.0], np.float32),
        'torch.float32',
        {},
        {'precision': 2},
        None,
        'tensor([ 1.12, -0.50, 10.00])',
    ),
    Case(
        'precision_0',
        lambda: np.array([1.5, 2.5, 0.4], np.float32),
        'torch.float32',
        {},
        {'precision': 0},
        None,
        'tensor([2, 2, 0])',
    ),
    Case(
        'sci_mode_false',
        lambda: np.array([1e10, 1.0], np.float32),
        'torch.float32',
        {},
        {'sci_mode': False},
        None,
        'tensor([10000000000.,           1.])',
    ),
    Case(
        'sci_mode_true',
        lambda: np.array([1.0, 2.5], np.float32),
        'torch.float32',
        {},
        {'sci_mode': True},
        None,
        'tensor([1.0000e+00, 2.5000e+00])',
    ),
    Case(
        'sci_mode_true_int_mode',
        lambda: np.array([1.0, 20.0], np.float32),
        'torch.float32',
        {},
        {'sci_mode': True},
        None,
        'tensor([1.0000e+00, 2.0000e+01])',
    ),
    Case(
        'sci_mode_true_nan',
        lambda: np.array([1.0, np.nan, -np.inf], np.float32),
        'torch.float32',
        {},
        {'sci_mode': True},
        None,
        'tensor([1.0000e+00,        nan,       -inf])',
    ),
    Case(
        'linewidth_wrap',
        lambda: np.arange(30, dtype=np.float32) * np.float32(1.5),
        'torch.float32',
        {},
        {'linewidth': 40},
        None,
        (
            'tensor([ 0.0000,  1.5000,  3.0000,\n'
            '         4.5000,  6.0000,  7.5000,\n'
            '         9.0000, 10.5000, 12.0000,\n'
            '        13.5000, 15.0000, 16.5000,\n'
            '        18.0000, 19.5000, 21.0000,\n'
            '        22.5000, 24.0000, 25.5000,\n'
            '        27.0000, 28.5000, 30.0000,\n'
            '        31.5000, 33.0000, 34.5000,\n'
            '        36.0000, 37.5000, 39.0000,\n'
            '        40.5000, 42.0000, 43.5000])'
        ),
    ),
    Case(
        'default_linewidth_wrap',
        lambda: np.arange(40, dtype=np.float32) / np.float32(3),
        'torch.float32',
        {},
        {},
        None,
        (
            'tensor([ 0.0000,  0.3333,  0.6667,  1.0000,  1.3333,  1.6667,  2.0000,  2.3333,\n'
            '         2.6667,  3.0000,  3.3333,  3.6667,  4.0000,  4.3333,  4.6667,  5.0000,\n'
            '         5.3333,  5.6667,  6.0000,  6.3333,  6.6667,  7.0000,  7.3333,  7.6667,\n'
            '         8.0000,  8.3333,  8.6667,  9.0000,  9.3333,  9.6667, 10.0000, 10.3333,\n'
            '        10.6667, 11.0000, 11.3333, 11.6667, 12.0000, 12.3333, 12.6667, 13.0000])'
        ),
    ),
    Case(
        'suffix_wrap',
        lambda: np.arange(12, dtype=np.float64) / 3,
        'torch.float64',
        {'requires_grad': True, 'grad_fn': 'DivBackward0'},
        {},
        None,
        (
            'tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n'
            '        3.0000, 3.3333, 3.6667], dtype=torch.float64, grad_fn=<DivBackward0>)'
        ),
    ),
    Case(
        'suffix_newline',
        lambda: np.arange(8, dtype=np.float64) / 3,
        'torch.float64',
        {'requires_grad': True, 'grad_fn': 'DivBackward0'},
        {'linewidth': 60},
        None,
        (
            'tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667,\n'
            '        2.0000, 2.3333], dtype=torch.float64,\n'
            '       grad_fn=<DivBackward0>)'
        ),
    ),
    Case(
        'threshold_5',
        lambda: np.arange(10, dtype=np.int64),
        'torch.int64',
        {},
        {'threshold': 5},
        None,
        'tensor([0, 1, 2,  ..., 7, 8, 9])',
    ),
    Case(
        'edgeitems_1',
        lambda: np.arange(50, dtype=np.float32).reshape(10, 5),
        'torch.float32',
        {},
        {'threshold': 10, 'edgeitems': 1},
        None,
        (
            'tensor([[ 0.,  ...,  4.],\n'
            '        ...,\n'
            '        [45.,  ..., 49.]])'
        ),
    ),
    Case(
        'edgeitems_0',
        lambda: np.arange(50, dtype=np.float32).reshape(10, 5),
        'torch.float32',
        {},
        {'threshold': 10, 'edgeitems': 0},
        None,
        'tensor([...], size=(10, 5))',
    ),
    Case(
        'profile_short',
        lambda: np.arange(2000, dtype=np.float32) / np.float32(3),
        'torch.float32',
        {},
        {'profile': 'short'},
        None,
        'tensor([0.00e+00, 3.33e-01,  ..., 6.66e+02, 6.66e+02])',
    ),
    Case(
        'profile_full',
        lambda: np.arange(1200, dtype=np.int32),
        'torch.int32',
        {},
        {'profile': 'full', 'linewidth': 200},
        None,
        (
            'tensor([   0,    1,    2,    3,    4,    5,    6,    7,    8,    9,   10,   11,   12,   13,   14,   15,   16,   17,   18,   19,   20,   21,   22,   23,   24,   25,   26,   27,   28,   29,   30,   31,\n'
            '          32,   33,   34,   35,   36,   37,   38,   39,   40,   41,   42,   43,   44,   45,   46,   47,   48,   49,   50,   51,   52,   53,   54,   55,   56,   57,   58,   59,   60,   61,   62,   63,\n'
            '          64,   65,   66,   67,   68,   69,   70,   71,   72,   73,   74,   75,   76,   77,   78,   79,   80,   81,   82,   83,   84,   85,   86,   87,   88,   89,   90,   91,   92,   93,   94,   95,\n'
            '          96,   97,   98,   99,  100,  101,  102,  103,  104,  105,  106,  107,  108,  109,  110,  111,  112,  113,  114,  115,  116,  117,  118,  119,  120,  121,  122,  123,  124,  125,  126,  127,\n'
            '         128,  129,  130,  131,  132,  133,  134,  135,  136,  137,  138,  139,  140,  141,  142,  143,  144,  145,  146,  147,  148,  149,  150,  151,  152,  153,  154,  155,  156,  157,  158,  159,\n'
            '         160,  161,  162,  163,  164,  165,  166,  167,  168,  169,  170,  171,  172,  173,  174,  175,  176,  177,  178,  179,  180,  181,  182,  183,  184,  185,  186,  187,  188,  189,  190,  191,\n'
            '         192,  193,  194,  195,  196,  197,  198,  199,  200,  201,  202,  203,  204,  205,  206,  207,  208,  209,  210,  211,  212,  213,  214,  215,  216,  217,  218,  219,  220,  221,  222,  223,\n'
            '         224,  225,  226,  227,  228,  229,  230,  231,  232,  233,  234,  235,  236,  237,  238,  239,  240,  241,  242,  243,  244,  245,  246,  247,  248,  249,  250,  251,  252,  253,  254,  255,\n'
            '         256,  257,  258,  259,  260,  261,  262,  263,  264,  265,  266,  267,  268,  269,  270,  271,  272,  273,  274,  275,  276,  277,  278,  279,  280,  281,  282,  283,  284,  285,  286,  287,\n'
            '         288,  289,  290,  291,  292,  293,  294,  295,  296,  297,  298,  299,  300,  301,  302,  303,  304,  305,  306,  307,  308,  309,  310,  311,  312,  313,  314,  315,  316,  317,  318,  319,\n'
            '         320,  321,  322,  323,  324,  325,  326,  327,  328,  329,  330,  331,  332,  333,  334,  335,  336,  337,  338,  339,  340,  341,  342,  343,  344,  345,  346,  347,  348,  349,  350,  351,\n'
            '         352,  353,  354,  355,  356,  357,  358,  359,  360,  361,  362,  363,  364,  365,  366,  367,  368,  369,  370,  371,  372,  373,  374,  375,  376,  377,  378,  379,  380,  381,  382,  383,\n'
            '         384,  385,  386,  387,  388,  389,  390,  391,  392,  393,  394,  395,  396,  397,  398,  399,  400,  401,  402,  403,  404,  405,  406,  407,  408,  409,  410,  411,  412,  413,  414,  415,\n'
            '         416,  417,  418,  419,  420,  421,  422,  423,  424,  425,  426,  427,  428,  429,  430,  431,  432,  433,  434,  435,  436,  437,  438,  439,  440,  441,  442,  443,  444,  445,  446,  447,\n'
            '         448,  449,  450,  451,  452,  453,  454,  455,  456,  457,  458,  459,  460,  461,  462,  463,  464,  465,  466,  467,  468,  469,  470,  471,  472,  473,  474,  475,  476,  477,  478,  479,\n'
            '         480,  481,  482,  483,  484,  485,  486,  487,  488,  489,  490,  491,  492,  493,  494,  495,  496,  497,  498,  499,  500,  501,  502,  503,  504,  505,  506,  507,  508,  509,  510,  511,\n'
            '         512,  513,  514,  515,  516,  517,  518,  519,  520,  521,  522,  523,  524,  525,  526,  527,  528,  529,  530,  531,  532,  533,  534,  535,  536,  537,  538,  539,  540,  541,  542,  543,\n'
            '         544,  545,  546,  547,  548,  549,  550,  551,  552,  553,  554,  555,  556,  557,  558,  559,  560,  561,  562,  563,  564,  565,  566,  567,  568,  569,  570,  571,  572,  573,  574,  575,\n'
            '         576,  577,  578,  579,  580,  581,  582,  583,  584,  585,  586,  587,  588,  589,  590,  591,  592,  593,  594,  595,  596,  597,  598,  599,  600,  601,  602,  603,  604,  605,  606,  607,\n'
            '         608,  609,  610,  611,  612,  613,  614,  615,  616,  617,  618,  619,  620,  621,  622,  623,  624,  625,  626,  627,  628,  629,  630,  631,  632,  633,  634,  635,  636,  637,  638,  639,\n'
            '         640,  641,  642,  643,  644,  645,  646,  647,  648,  649,  650,  651,  652,  653,  654,  655,  656,  657,  658,  659,  660,  661,  662,  663,  664,  665,  666,  667,  668,  669,  670,  671,\n'
            '         672,  673,  674,  675,  676,  677,  678,  679,  680,  681,  682,  683,  684,  685,  686,  687,  688,  689,  690,  691,  692,  693,  694,  695,  696,  697,  698,  699,  700,  701,  702,  703,\n'
            '         704,  705,  706,  707,  708,  709,  710,  711,  712,  713,  714,  715,  716,  717,  718,  719,  720,  721,  722,  723,  724,  725,  726,  727,  728,  729,  730,  731,  732,  733,  734,  735,\n'
            '         736,  737,  738,  739,  740,  741,  742,  743,  744,  745,  746,  747,  748,  749,  750,  751,  752,  753,  754,  755,  756,  757,  758,  759,  760,  761,  762,  763,  764,  765,  766,  767,\n'
            '         768,  769,  770,  771,  772,  773,  774,  775,  776,  777,  778,  779,  780,  781,  782,  783,  784,  785,  786,  787,  788,  789,  790,  791,  792,  793,  794,  795,  796,  797,  798,  799,\n'
            '         800,  801,  802,  803,  804,  805,  806,  807,  808,  809,  810,  811,  812,  813,  814,  815,  816,  817,  818,  819,  820,  821,  822,  823,  824,  825,  826,  827,  828,  829,  830,  831,\n'
            '         832,  833,  834,  835,  836,  837,  838,  839,  840,  841,  842,  843,  844,  845,  846,  847,  848,  849,  850,  851,  852,  853,  854,  855,  856,  857,  858,  859,  860,  861,  862,  863,\n'
            '         864,  865,  866,  867,  868,  869,  870,  871,  872,  873,  874,  875,  876,  877,  878,  879,  880,  881,  882,  883,  884,  885,  886,  887,  888,  889,  890,  891,  892,  893,  894,  895,\n'
            '         896,  897,  898,  899,  900,  901,  902,  903,  904,  905,  906,  907,  908,  909,  910,  911,  912,  913,  914,  915,  916,  917,  918,  919,  920,  921,  922,  923,  924,  925,  926,  927,\n'
            '         928,  929,  930,  931,  932,  933,  934,  935,  936,  937,  938,  939,  940,  941,  942,  943,  944,  945,  946,  947,  948,  949,  950,  951,  952,  953,  954,  955,  956,  957,  958,  959,\n'
            '         960,  961,  962,  963,  964,  965,  966,  967,  968,  969,  970,  971,  972,  973,  974,  975,  976,  977,  978,  979,  980,  981,  982,  983,  984,  985,  986,  987,  988,  989,  990,  991,\n'
            '         992,  993,  994,  995,  996,  997,  998,  999, 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 1015, 1016, 1017, 1018, 1019, 1020, 1021, 1022, 1023,\n'
            '        1024, 1025, 1026, 1027, 1028, 1029, 1030, 1031, 1032, 1033, 1034, 1035, 1036, 1037, 1038, 1039, 1040, 1041, 1042, 1043, 1044, 1045, 1046, 1047, 1048, 1049, 1050, 1051, 1052, 1053, 1054, 1055,\n'
            '        1056, 1057, 1058, 1059, 1060, 1061, 1062, 1063, 1064, 1065, 1066, 1067, 1068, 1069, 1070, 1071, 1072, 1073, 1074, 1075, 1076, 1077, 1078, 1079, 1080, 1081, 1082, 1083, 1084, 1085, 1086, 1087,\n'
            '        1088, 1089, 1090, 1091, 1092, 1093, 1094, 1095, 1096, 1097, 1098, 1099, 1100, 1101, 1102, 1103, 1104, 1105, 1106, 1107, 1108, 1109, 1110, 1111, 1112, 1113, 1114, 1115, 1116, 1117, 1118, 1119,\n'
            '        1120, 1121, 1122, 1123, 1124, 1125, 1126, 1127, 1128, 1129, 1130, 1131, 1132, 1133, 1134, 1135, 1136, 1137, 1138, 1139, 1140, 1141, 1142, 1143, 1144, 1145, 1146, 1147, 1148, 1149, 1150, 1151,\n'
            '        1152, 1153, 1154, 1155, 1156, 1157, 1158, 1159, 1160, 1161, 1162, 1163, 1164, 1165, 1166, 1167, 1168, 1169, 1170, 1171, 1172, 1173, 1174, 1175, 1176, 1177, 1178, 1179, 1180, 1181, 1182, 1183,\n'
            '        1184, 1185, 1186, 1187, 1188, 1189, 1190, 1191, 1192, 1193, 1194, 1195, 1196, 1197, 1198, 1199], dtype=torch.int32)'
        ),
    ),
    Case(
        'default_float64_f64',
        lambda: np.array([0.5, 1.0], np.float64),
        'torch.float64',
        {},
        {},
        'torch.float64',
        'tensor([0.5000, 1.0000])',
    ),
    Case(
        'default_float64_f32',
        lambda: np.array([0.5, 1.0], np.float32),
        'torch.float32',
        {},
        {},
        'torch.float64',
        'tensor([0.5000, 1.0000], dtype=torch.float32)',
    ),
    Case(
        'default_float64_empty_f32',
        lambda: np.zeros(0, np.float32),
        'torch.float32',
        {},
        {},
        'torch.float64',
        'tensor([], dtype=torch.float32)',
    ),
    Case(
        'default_float64_complex128',
        lambda: np.array([1 + 1j], np.complex128),
        'torch.complex128',
        {},
        {},
        'torch.float64',
        'tensor([1.+1.j])',
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_repr_matches_torch(case, monkeypatch):
    if case.default_dtype is not None:
        monkeypatch.setattr(ts, "_get_default_dtype_str", lambda: case.default_dtype)
    ts.set_printoptions(**case.options)
    t = FakeTensor(case.values(), dtype=case.dtype, **case.fake)
    assert ts.tensor_repr(t) == case.expected


def test_printoptions_defaults_and_profiles():
    assert ts.get_printoptions() == {
        "precision": 4,
        "threshold": 1000,
        "edgeitems": 3,
        "linewidth": 80,
        "sci_mode": None,
    }
    ts.set_printoptions(profile="short", precision=6)
    assert ts.get_printoptions() == {
        "precision": 6,
        "threshold": 1000,
        "edgeitems": 2,
        "linewidth": 80,
        "sci_mode": None,
    }
    ts.set_printoptions(profile="full")
    assert ts.get_printoptions()["threshold"] == math.inf
    assert ts.get_printoptions()["precision"] == 4


def test_set_printoptions_always_resets_sci_mode():
    ts.set_printoptions(sci_mode=True)
    assert ts.get_printoptions()["sci_mode"] is True
    ts.set_printoptions(precision=3)
    assert ts.get_printoptions()["sci_mode"] is None
    assert ts.get_printoptions()["precision"] == 3


def test_printoptions_context_manager_restores():
    ts.set_printoptions(linewidth=50, sci_mode=False)
    before = ts.get_printoptions()
    t = FakeTensor(np.array([1.12345], np.float32))
    with ts.printoptions(precision=2):
        assert ts.get_printoptions()["precision"] == 2
        assert ts.tensor_repr(t) == "tensor([1.12])"
    assert ts.get_printoptions() == before
    with pytest.raises(RuntimeError):
        with ts.printoptions(precision=1):
            raise RuntimeError
    assert ts.get_printoptions() == before


def test_tensor_contents_and_prefix():
    t = FakeTensor(np.array([1, 2], np.int32))
    # Golden: torch.tensor([1, 2], dtype=torch.int32).__repr__(tensor_contents="XYZ")
    assert ts.tensor_repr(t, tensor_contents="XYZ") == "tensor(XYZ, dtype=torch.int32)"
    m = FakeTensor(np.arange(4, dtype=np.float32).reshape(2, 2) + np.float32(0.5))
    assert ts.tensor_repr(m, prefix="Param(") == (
        "Param([[0.5000, 1.5000],\n"
        "       [2.5000, 3.5000]])"
    )


def test_non_cpu_device_suffix():
    t = FakeTensor(np.array([1.5], np.float32), device="cuda:0")
    assert ts.tensor_repr(t) == "tensor([1.5000], device='cuda:0')"


def test_default_dtype_str_uses_flowlike(monkeypatch):
    stub = types.ModuleType("flowlike")
    stub.get_default_dtype = lambda: "torch.float64"
    monkeypatch.setitem(sys.modules, "flowlike", stub)
    assert _real_default_dtype_str() == "torch.float64"


def test_default_dtype_str_fallback(monkeypatch):
    monkeypatch.setitem(sys.modules, "flowlike", types.ModuleType("flowlike"))
    assert _real_default_dtype_str() == "torch.float32"


def _real_default_dtype_str():
    # The autouse fixture patches ts._get_default_dtype_str; call the original.
    fresh = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(fresh)
    return fresh._get_default_dtype_str()
