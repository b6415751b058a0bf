"""Statistics and control of flowlike's caching CPU allocator."""
from . import _C


def memory_stats():
    """A dict of allocator counters, keyed as torch.cuda.memory_stats."""
    return _C._memory_stats()


def memory_allocated():
    """Bytes in tensors alive now (rounded to the allocator's block sizes)."""
    return _C._memory_stats()["allocated_bytes.all.current"]


def max_memory_allocated():
    """Peak of memory_allocated() since start or the last reset_peak_memory_stats()."""
    return _C._memory_stats()["allocated_bytes.all.peak"]


def memory_reserved():
    """Bytes held from the system: allocated plus cached free blocks."""
    return _C._memory_stats()["reserved_bytes.all.current"]


def max_memory_reserved():
    return _C._memory_stats()["reserved_bytes.all.peak"]


def reset_peak_memory_stats():
    _C._reset_peak_memory_stats()


def empty_cache():
    """Returns all cached free blocks to the system."""
    _C._empty_cache()
