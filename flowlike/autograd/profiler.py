"""torch.autograd.profiler's user-facing names.

flowlike has no per-op timing hooks in its dispatcher yet, so the profiler itself (profile) refuses to run with a
clear error, and record_function is what it is in torch when no profiler is running: a label that costs nothing.
"""
import contextlib

__all__ = ["profile", "record_function"]


class record_function(contextlib.ContextDecorator):
    """Labels a block of code (as a context manager) or a function (as a decorator) for the autograd profiler.

    With no profiler running, which is always the case in flowlike, the label records nothing.
    """

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self.run_callbacks_on_exit = True
        self.record = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        return False


class profile:
    """torch.autograd.profiler.profile: not supported by flowlike (no per-op timing hooks yet)."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None,
                 post_processing_timeout_s=None, activity_filters=None):
        raise NotImplementedError("torch.autograd.profiler.profile is not supported by flowlike: its operators have "
                                  "no profiling hooks yet (record_function labels are accepted and record nothing)")
