"""flowlike quick start: ordinary PyTorch code, with only the import line changed.

Fits y = 3x^2 - 2x + 1 (plus noise) by gradient descent with autograd. Run it as is, or
with `import torch` instead of flowlike: the losses agree.
"""
import flowlike as torch


def train(torch, steps=300, lr=0.5, log_every=50):
    """Returns the loss at every step; `torch` is flowlike or real torch."""
    x = torch.linspace(-1, 1, 256).unsqueeze(1)
    features = torch.cat([x ** 2, x, torch.ones_like(x)], dim=1)
    true_w = torch.tensor([3.0, -2.0, 1.0])
    noise = 0.05 * torch.sin(40 * x).squeeze(1)  # deterministic, so both frameworks see the same data
    y = (features * true_w).sum(dim=1) + noise

    w = torch.zeros(3, requires_grad=True)
    losses = []
    for step in range(steps):
        pred = (features * w).sum(dim=1)
        loss = ((pred - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
            w.grad.zero_()
        losses.append(loss.item())
        if log_every and step % log_every == 0:
            print(f"step {step:4d}  loss {loss.item():.6f}")
    return losses, w.detach()


if __name__ == "__main__":
    losses, w = train(torch)
    print(f"final loss {losses[-1]:.6f}, fitted w = {w.tolist()} (true: [3.0, -2.0, 1.0])")
