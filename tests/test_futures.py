"""flowlike.futures.Future: completion, then() chains, errors, collect_all."""
import pytest

import flowlike as torch
from flowlike.futures import Future, collect_all, wait_all


def test_then_chains_run_when_the_value_arrives():
    f = Future()
    g = f.then(lambda fut: fut.value() * 2).then(lambda fut: fut.value() + 1)
    assert not f.done() and not g.done()
    f.set_result(torch.tensor([3.0]))
    assert g.done() and g.wait().item() == 7.0
    with pytest.raises(RuntimeError, match="only be marked completed once"):
        f.set_result(1)


def test_errors_propagate_and_unfinished_futures_say_so():
    f = Future()
    g = f.then(lambda fut: 1 / 0)
    f.set_result(0)
    with pytest.raises(ZeroDivisionError):
        g.wait()
    h = Future()
    h.set_exception(ValueError("bad"))
    with pytest.raises(ValueError, match="bad"):
        h.value()
    with pytest.raises(RuntimeError, match="not completed"):
        Future().value()


def test_collect_all_and_wait_all():
    a, b = Future(), Future()
    both = collect_all([a, b])
    a.set_result(1)
    assert not both.done()
    b.set_result(2)
    assert both.done() and [f.value() for f in both.wait()] == [1, 2] and wait_all([a, b]) == [1, 2]
