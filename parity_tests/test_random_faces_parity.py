"""The generated faces of random_ and bernoulli_ against real PyTorch: torch's overloads (random_(from, to),
random_(to), random_(); bernoulli_(Tensor p), bernoulli_(float p)) with their backward nodes, the ranges drawn from
and the errors of arguments that fit no overload. The streams differ from torch's, so ranges are compared."""
import pytest

torch = pytest.importorskip("torch")
import flowlike as fl  # noqa: E402
from helpers import LIBS, assert_raises_same  # noqa: E402

FILLS = {
    "random_from_to": lambda lib, t: t.random_(-3, 4),
    "random_from_to_kw": lambda lib, t: t.random_(**{"from": 2, "to": 5}),
    "random_from_none": lambda lib, t: t.random_(3, None),
    "random_to": lambda lib, t: t.random_(6),
    "random_all": lambda lib, t: t.random_(),
    "random_generator": lambda lib, t: t.random_(0, 3, generator=lib.Generator().manual_seed(3)),
    "bernoulli_float": lambda lib, t: t.bernoulli_(0.25),
    "bernoulli_default": lambda lib, t: t.bernoulli_(),
    "bernoulli_tensor": lambda lib, t: t.bernoulli_(lib.full((4000,), 0.75)),
    "bernoulli_generator": lambda lib, t: t.bernoulli_(0.5, generator=lib.Generator().manual_seed(1)),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int8", "uint8"])
@pytest.mark.parametrize("name", sorted(FILLS))
def test_fill_range(name, dtype):
    """Both draw from the same set: the smallest and largest values agree within the range's sampling (exact for
    the small ranges, within 1% of the bound for the dtype-wide ones)."""
    if dtype == "uint8" and "from_to" in name:
        pytest.skip("a negative bound for uint8")
    got = []
    for lib in LIBS:
        t = FILLS[name](lib, lib.empty(4000, dtype=getattr(lib, dtype)))
        got.append((t.min().item(), t.max().item(), str(t.dtype).split(".")[-1]))
    (tmin, tmax, tdt), (fmin, fmax, fdt) = got
    assert fdt == tdt
    span = max(abs(tmax), 1)
    assert abs(fmin - tmin) <= 0.01 * span + 1e-9 and abs(fmax - tmax) <= 0.01 * span + 1e-9, (got, name)


@pytest.mark.parametrize("name", sorted(FILLS))
def test_node_names(name):
    """Each overload records torch's node on a tensor that requires grad."""
    names = []
    for lib in LIBS:
        x = lib.ones(4000, requires_grad=True) * 1
        y = FILLS[name](lib, x)
        names.append(y.grad_fn.name())
        y.sum().backward()
    assert names[1] == names[0]


BAD = {
    "random_float_to": lambda lib, t: t.random_(1.5),
    "random_from_ge_to": lambda lib, t: t.random_(4, 2),
    "random_three": lambda lib, t: t.random_(1, 2, 3),
    "bernoulli_str": lambda lib, t: t.bernoulli_("a"),
    "bernoulli_p_range": lambda lib, t: t.bernoulli_(1.5),
    "bernoulli_generator_type": lambda lib, t: t.bernoulli_(0.5, generator=1),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_arguments(name):
    assert_raises_same(lambda lib: BAD[name](lib, lib.empty(3)))
