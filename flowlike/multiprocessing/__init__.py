"""flowlike.multiprocessing (torch.multiprocessing): Python's multiprocessing, plus spawn() to start a function on
several processes, as the DistributedDataParallel tutorials do:

    mp.spawn(train, args=(world_size,), nprocs=world_size)   # train(rank, world_size) in each process

Under mock_torch (flowlike.compat), processes started with the "spawn" method turn the mock on before they import
the parent's main module, so a script's `import torch` means flowlike in its children too. Tensors passed to
children are pickled (copied), not shared.
"""
import multiprocessing
from multiprocessing import *  # noqa: F401,F403

from .spawn import (ProcessContext, ProcessException, ProcessExitedException, ProcessRaisedException,  # noqa: F401
                    SpawnContext, spawn, start_processes)

__all__ = list(multiprocessing.__all__) + ["spawn", "start_processes", "ProcessContext", "SpawnContext",
                                           "ProcessException", "ProcessRaisedException", "ProcessExitedException",
                                           "get_sharing_strategy", "set_sharing_strategy",
                                           "get_all_sharing_strategies"]

_sharing_strategy = "file_descriptor"


def get_all_sharing_strategies():
    """The ways tensors can be passed between processes."""
    return {"file_descriptor", "file_system"}


def get_sharing_strategy():
    """The current strategy for passing tensors between processes."""
    return _sharing_strategy


def set_sharing_strategy(new_strategy):
    """Sets the strategy for passing tensors between processes ("file_descriptor" or "file_system"); flowlike
    pickles tensors either way."""
    global _sharing_strategy
    if new_strategy not in get_all_sharing_strategies():
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}")
    _sharing_strategy = new_strategy
