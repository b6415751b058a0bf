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


def _progress_during(kernel):
    """Runs kernel() on this thread while another Python thread counts; returns how many counts fell in the middle
    half of the kernel's run (none unless the kernel released the GIL: a thread without it runs no bytecode)."""
    import time
    stamps, stop, started = [], threading.Event(), threading.Event()

    def count():
        started.set()
        while not stop.is_set():
            stamps.append(time.perf_counter())

    t = threading.Thread(target=count)
    t.start()
    started.wait()
    t0 = time.perf_counter()
    kernel()
    t1 = time.perf_counter()
    stop.set()
    t.join()
    lo, hi = t0 + (t1 - t0) / 4, t1 - (t1 - t0) / 4
    return sum(lo < s < hi for s in stamps)


def test_long_kernels_release_the_gil():
    a = fl.randn(1200, 1200, dtype=fl.float64)
    x, w = fl.randn(8, 64, 64, 64), fl.randn(64, 64, 3, 3)
    assert _progress_during(lambda: a @ a) > 0
    assert _progress_during(lambda: fl.nn.functional.conv2d(x, w, padding=1)) > 0
    # (a short kernel keeps the lock: handing it over would cost more than the kernel)


def test_threads_use_the_default_generator_and_autograd_at_once():
    """The global generator and the autograd engine from several threads: no crash, every draw has its shape, and
    each thread's gradient is its own."""
    errors, grads = [], {}

    def work(k):
        try:
            for _ in range(50):
                x = fl.randn(64, requires_grad=True)
                ((x * k) ** 2).sum().backward()
                assert bool(fl.allclose(x.grad, 2 * k * k * x.detach()))
            grads[k] = True
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(1, 7)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(grads) == 6


def test_set_num_threads_holds_for_threads_started_later():
    # torch's count is per process; libgomp's omp_set_num_threads is per thread (Note [Thread count])
    prev = fl.get_num_threads()
    n = fl._C._openmp_state()[1] + 1  # a count that no thread has by default
    seen = {}

    def worker():
        seen["get"] = fl.get_num_threads()
        (fl.ones(8) + 1).sum()  # any op call applies the process-wide count to this thread
        seen["icv"], seen["team"] = fl._C._openmp_state()

    try:
        fl.set_num_threads(n)
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    finally:
        fl.set_num_threads(prev)
    assert seen == {"get": n, "icv": n, "team": n}
    assert fl.get_num_threads() == prev and fl._C._openmp_state()[1] == prev
