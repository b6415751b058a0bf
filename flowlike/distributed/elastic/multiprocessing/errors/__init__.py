"""@record and ChildFailedError (torch.distributed.elastic.multiprocessing.errors): a worker's uncaught exception
is written to the file named by TORCHELASTIC_ERROR_FILE (the launcher sets it), so that the launcher reports the
failing rank's own error as the root cause."""
import functools
import json
import os
import time
import traceback

__all__ = ["record", "ChildFailedError", "ErrorHandler", "get_error_handler"]


class ErrorHandler:
    """Writes a worker's exception to TORCHELASTIC_ERROR_FILE as torchelastic's JSON error record."""

    def initialize(self):
        """Prepares the handler (nothing to set up)."""

    def record_exception(self, e):
        """Writes e, its traceback and the time to the error file, when the launcher asked for one."""
        path = os.environ.get("TORCHELASTIC_ERROR_FILE")
        if not path:
            return
        data = {"message": {"message": f"{type(e).__name__}: {e}",
                            "extraInfo": {"py_callstack": traceback.format_exc(), "timestamp": str(int(time.time()))}}}
        with open(path, "w") as f:
            json.dump(data, f)


def get_error_handler():
    """The ErrorHandler @record uses."""
    return ErrorHandler()


def record(fn, error_handler=None):
    """Decorates a worker's main function: an exception it raises is recorded for the launcher, then re-raised."""
    handler = error_handler or get_error_handler()

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        handler.initialize()
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            handler.record_exception(e)
            raise
    return wrapper


class ChildFailedError(Exception):
    """Raised by a launcher when workers failed: failures maps each failed global rank to its description."""

    def __init__(self, name, failures):
        self.name = name
        self.failures = failures
        lines = [f"{name} FAILED"] + [f"  rank {rank}: {what}" for rank, what in sorted(failures.items())]
        super().__init__("\n".join(lines))
