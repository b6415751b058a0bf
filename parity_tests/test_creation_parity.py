"""Creation functions: values, dtypes and shapes against torch 2.13."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402

CASES = {
    "zeros": lambda m: m.zeros(2, 3),
    "zeros_tuple_dtype": lambda m: m.zeros((2, 3), dtype=m.int32),
    "ones": lambda m: m.ones(4, dtype=m.float64),
    "full_int": lambda m: m.full((2,), 7),
    "full_float": lambda m: m.full((2, 2), 1.5),
    "full_bool": lambda m: m.full((3,), True),
    "empty_like_shape": lambda m: m.zeros_like(m.empty(3, 2, dtype=m.int16)),
    "ones_like": lambda m: m.ones_like(m.zeros(2, dtype=m.float16)),
    "full_like": lambda m: m.full_like(m.zeros(2, 2), 3),
    "arange_int": lambda m: m.arange(10),
    "arange_float": lambda m: m.arange(0, 1, 0.1),
    "arange_neg_step": lambda m: m.arange(5, -5, -1.5),
    "arange_dtype": lambda m: m.arange(3, dtype=m.float64),
    "linspace": lambda m: m.linspace(-1, 1, 7),
    "linspace_one": lambda m: m.linspace(2, 5, 1),
    "logspace": lambda m: m.logspace(0, 3, 4),
    "logspace_base2": lambda m: m.logspace(0, 4, 5, base=2),
    "eye": lambda m: m.eye(3),
    "eye_rect": lambda m: m.eye(2, 4, dtype=m.int64),
    "tensor_nested": lambda m: m.tensor([[1, 2], [3, 4]]),
    "tensor_mixed": lambda m: m.tensor([1, 2.5]),
    "tensor_bool": lambda m: m.tensor([True, False]),
    "tensor_scalar": lambda m: m.tensor(3.5),
    "tensor_empty": lambda m: m.tensor([]),
    "tensor_dtype": lambda m: m.tensor([1, 2], dtype=m.float16),
    "scalar_tensor": lambda m: m.scalar_tensor(2),
    "tril_indices": lambda m: m.tril_indices(3, 4, 1),
    "triu_indices": lambda m: m.triu_indices(4, 3, -1),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_creation_matches_torch(name):
    got, expected = CASES[name](fl), CASES[name](torch)
    assert str(got.dtype) == str(expected.dtype)
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_allclose(got.float().numpy(), expected.float().numpy(), rtol=1e-6)


@pytest.mark.parametrize("case", ["negative_size", "arange_zero_step", "arange_bad_bounds", "eye_negative",
                                  "linspace_negative", "tensor_string"])
def test_creation_errors_match_torch(case):
    calls = {
        "negative_size": lambda m: m.zeros(-1),
        "arange_zero_step": lambda m: m.arange(0, 1, 0),
        "arange_bad_bounds": lambda m: m.arange(0, 10, -1),
        "eye_negative": lambda m: m.eye(-1),
        "linspace_negative": lambda m: m.linspace(0, 1, -1),
        "tensor_string": lambda m: m.tensor("abc"),
    }

    def kind(m):
        try:
            calls[case](m)
        except Exception as e:  # noqa: BLE001
            return type(e)
        return None

    assert kind(torch) is not None
    assert kind(fl) is kind(torch)
