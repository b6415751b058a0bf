"""repr/str of flowlike tensors is character-identical to torch's."""
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402

from helpers import to_flowlike  # noqa: E402

CASES = [
    lambda: torch.tensor([1.0, 2.5, -3.25]),
    lambda: torch.arange(12).reshape(3, 4),
    lambda: torch.arange(24.0).reshape(2, 3, 4) / 7,
    lambda: torch.tensor([1e-8, 1.0, 1e8]),
    lambda: torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0]),
    lambda: torch.linspace(-1, 1, 2000),
    lambda: torch.tensor(3.5),
    lambda: torch.tensor([], dtype=torch.float32),
    lambda: torch.tensor([True, False]),
    lambda: torch.tensor([1, 2, 3], dtype=torch.int32),
    lambda: torch.tensor([1, 2, 3], dtype=torch.uint8),
    lambda: torch.tensor([0.1, 0.2], dtype=torch.float64),
    lambda: torch.tensor([0.1, 65504.0], dtype=torch.float16),
    lambda: torch.tensor([0.1, 3.0], dtype=torch.bfloat16),
    lambda: torch.rand(100, 100, generator=torch.Generator().manual_seed(0)) * 1000,
]


@pytest.mark.parametrize("i", range(len(CASES)))
def test_repr_identical(i):
    t = CASES[i]()
    f = to_flowlike(t)
    assert repr(f) == repr(t)
    assert str(f) == str(t)


def test_requires_grad_suffix_and_printoptions():
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    f = fl.tensor([1.0, 2.0], requires_grad=True)
    assert repr(f) == repr(t)
    torch.set_printoptions(precision=2)
    fl.set_printoptions(precision=2)
    try:
        assert repr(fl.tensor([1.23456])) == repr(torch.tensor([1.23456]))
    finally:
        torch.set_printoptions(profile="default")
        fl.set_printoptions(profile="default")
