"""Several Python threads running models at once on separate tensors: each gets the result it gets alone, and
nothing crashes (tensor creation, the caching allocator, autograd, per-thread generators)."""
import threading

import flowlike as fl
import flowlike.nn as nn


def train(seed, steps=60):
    g = fl.Generator().manual_seed(seed)
    m = nn.Sequential(nn.Linear(12, 24), nn.Tanh(), nn.Linear(24, 3))
    with fl.no_grad():
        for p in m.parameters():
            p.copy_(fl.randn(p.shape, generator=g) * 0.3)
    opt = fl.optim.Adam(m.parameters(), lr=0.01)
    x = fl.randn(32, 12, generator=g)
    y = fl.randint(0, 3, (32,), generator=g)
    for _ in range(steps):
        loss = nn.functional.cross_entropy(m(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        # allocator churn of other sizes, and ops with their own buffers
        fl.randn(257, generator=g).sort().values.cumsum(0)
        (x @ x.t()).softmax(-1).sum().item()
    return [p.detach().clone() for p in m.parameters()], loss.item()


def test_threads_train_models_at_once_with_their_results():
    seeds = list(range(8))
    alone = {s: train(s) for s in seeds}
    together, errors = {}, []

    def work(s):
        try:
            together[s] = train(s)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=work, args=(s,)) for s in seeds]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for s in seeds:
        (p_alone, l_alone), (p_tog, l_tog) = alone[s], together[s]
        assert l_alone == l_tog
        assert all(bool((a == b).all()) for a, b in zip(p_alone, p_tog))


def test_threads_share_nothing_but_the_allocator():
    errors = []

    def churn(k):
        try:
            for i in range(300):
                t = fl.empty(1 + (i * 37 + k) % 4096)
                t.fill_(k)
                assert bool((t == k).all())
                del t
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    threads = [threading.Thread(target=churn, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
