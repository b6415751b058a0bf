"""torch.backends.cudnn: flags are settable (so seeding recipes run) but cuDNN is never available."""
import contextlib as _contextlib

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available():
    return False


def version():
    return None


def is_acceptable(tensor):
    return False


@_contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """Sets the flags for the duration of a with-block, restoring them afterwards."""
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    g = globals()
    saved = {n: g[n] for n in names}
    g.update(zip(names, (enabled, benchmark, benchmark_limit, deterministic, allow_tf32)))
    try:
        yield
    finally:
        g.update(saved)
