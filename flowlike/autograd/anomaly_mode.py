"""Anomaly detection: nodes remember where their forward op was called, and a backward that returns NaN
raises a RuntimeError naming that node and showing the forward call's traceback."""
from .. import _C

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled"]

is_anomaly_enabled = _C.is_anomaly_enabled


def is_anomaly_check_nan_enabled():
    return _C.is_anomaly_enabled()


class detect_anomaly:
    """Context manager (and decorator) turning anomaly detection on inside its block."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        self.prev = _C.is_anomaly_enabled()

    def __enter__(self):
        self.prev = _C.is_anomaly_enabled()
        _C._set_anomaly_enabled(self.check_nan)
        return self

    def __exit__(self, *exc):
        _C._set_anomaly_enabled(self.prev)
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """Turns anomaly detection on or off now; as a context manager, restores the previous state on exit."""

    def __init__(self, mode, check_nan=True):
        self.prev = _C.is_anomaly_enabled()
        _C._set_anomaly_enabled(bool(mode) and check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _C._set_anomaly_enabled(self.prev)
        return False
