"""Train a small CNN on synthetic shape images: ordinary PyTorch code (model, DataLoader, optimizer,
scheduler, checkpoint), which runs unchanged on flowlike.

    python examples/train_cnn.py                        # on PyTorch
    python -m flowlike.compat examples/train_cnn.py     # the same file on flowlike

The images are drawn locally (no download): 12x12 pictures of a horizontal bar, a vertical bar, a
diagonal or a square outline, at random places with noise; the network learns to tell them apart.
"""
import os
import tempfile

import numpy as np
import torch

try:
    from tqdm import tqdm
except ImportError:  # progress bars are optional
    def tqdm(iterable, **kwargs):
        return iterable

CLASSES = ("horizontal", "vertical", "diagonal", "square")


def make_shapes(n, seed=0, size=12):
    """n noisy images (n, 1, size, size) of the four shapes, and their labels."""
    rng = np.random.default_rng(seed)
    images = rng.normal(0.0, 0.3, (n, 1, size, size)).astype(np.float32)
    labels = rng.integers(0, len(CLASSES), n)
    for img, label in zip(images[:, 0], labels):
        r, c = rng.integers(2, size - 6, 2)
        if label == 0:
            img[r + 2, c:c + 5] += 1.0
        elif label == 1:
            img[r:r + 5, c + 2] += 1.0
        elif label == 2:
            img[np.arange(r, r + 5), np.arange(c, c + 5)] += 1.0
        else:
            img[r, c:c + 5] += 1.0
            img[r + 4, c:c + 5] += 1.0
            img[r:r + 5, c] += 1.0
            img[r:r + 5, c + 4] += 1.0
    return images, labels.astype(np.int64)


def build_model(torch):
    nn = torch.nn

    class ShapeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
            self.head = nn.Sequential(nn.Flatten(), nn.Linear(16 * 3 * 3, 32), nn.ReLU(), nn.Linear(32, len(CLASSES)))

        def forward(self, x):
            return self.head(self.features(x))
    return ShapeNet()


def train(torch, epochs=6, batch_size=32, init_state=None, seed=0, progress=True):
    """Trains on 512 images and tests on 256; returns (loss per step, test accuracy, final state_dict as numpy).
    init_state (a dict of numpy arrays) starts from given weights, so two frameworks can start identically."""
    torch.manual_seed(seed)
    x, y = make_shapes(512, seed)
    x_test, y_test = make_shapes(256, seed + 1)
    data = torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
    # the batch order comes from numpy, so it is the same on every framework
    order = np.random.default_rng(seed).permutation(len(data))
    batches = [order[i:i + batch_size].tolist() for i in range(0, len(order), batch_size)]
    loader = torch.utils.data.DataLoader(data, batch_sampler=batches)

    model = build_model(torch)
    if init_state is not None:
        model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in init_state.items()})
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=0.05)

    losses = []
    for epoch in range(epochs):
        model.train()
        for images, labels in tqdm(loader, desc=f"epoch {epoch + 1}/{epochs}", disable=not progress, leave=False):
            optimizer.zero_grad()
            loss = loss_fn(model(images), labels)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        scheduler.step()
        if progress:
            print(f"epoch {epoch + 1}: loss {np.mean(losses[-len(loader):]):.4f}, lr {scheduler.get_last_lr()[0]:.5f}")

    # checkpoint round trip, as a training script would do between runs
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "shapes.pt")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)
        restored = build_model(torch)
        restored.load_state_dict(torch.load(path)["model"])
    restored.eval()
    with torch.no_grad():
        predicted = restored(torch.from_numpy(x_test)).argmax(dim=1).numpy()
    accuracy = float((predicted == y_test).mean())
    state = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    return losses, accuracy, state


if __name__ == "__main__":
    losses, accuracy, _ = train(torch)
    print(f"{torch.__name__}: final loss {losses[-1]:.4f}, test accuracy {accuracy:.1%}")
