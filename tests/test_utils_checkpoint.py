"""flowlike.utils.checkpoint: recomputing activations in backward gives the gradients of the plain run."""
import pytest

import flowlike as torch
from flowlike.utils.checkpoint import checkpoint, checkpoint_sequential


def model_and_input():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Dropout(0.5), torch.nn.GELU(), torch.nn.Linear(8, 2))
    return m, torch.randn(3, 4, requires_grad=True)


def grads(m, x):
    return [p.grad.clone() for p in m.parameters()] + [x.grad.clone()]


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_matches_the_plain_run_with_dropout(use_reentrant):
    m, x = model_and_input()
    torch.manual_seed(1)
    y = m(x)
    (y * torch.arange(2.0)).sum().backward()
    expected = grads(m, x)
    m.zero_grad()
    x.grad = None
    torch.manual_seed(1)  # the same dropout mask: the recomputation replays the random state
    y2 = checkpoint(m, x, use_reentrant=use_reentrant)
    assert y2.requires_grad and torch.equal(y, y2)
    (y2 * torch.arange(2.0)).sum().backward()
    for a, b in zip(expected, grads(m, x)):
        torch.testing.assert_close(a, b)


def test_checkpoint_sequential_and_keyword_arguments():
    m, x = model_and_input()
    m.eval()
    m(x).sum().backward()
    expected = grads(m, x)
    m.zero_grad()
    x.grad = None
    checkpoint_sequential(m, 2, x, use_reentrant=False).sum().backward()
    for a, b in zip(expected, grads(m, x)):
        torch.testing.assert_close(a, b)
    w = torch.randn(4, requires_grad=True)
    out = checkpoint(lambda a, scale=1.0: (a * w).sum() * scale, x, scale=3.0, use_reentrant=False)
    out.backward()
    torch.testing.assert_close(w.grad, 3 * x.detach().sum(0))


def test_version_compiler_and_accelerator_namespaces():
    assert torch.version.__version__ == torch.__version__ and torch.version.cuda is None
    assert not torch.compiler.is_compiling() and not torch.compiler.is_dynamo_compiling()

    @torch.compiler.disable
    def f(a):
        return a + 1
    assert f(1) == 2 and torch.compiler.disable(recursive=False)(f) is f
    assert not torch.accelerator.is_available() and torch.accelerator.current_accelerator() is None
