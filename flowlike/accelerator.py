"""flowlike.accelerator (torch.accelerator): the current accelerator, on a CPU-only flowlike none."""
__all__ = ["is_available", "current_accelerator", "device_count", "synchronize"]


def is_available():
    """Whether an accelerator (CUDA, ...) is available: False, flowlike runs on the CPU."""
    return False


def current_accelerator(check_available=False):
    """The accelerator's device type, None when there is none (always, on flowlike's CPU build)."""
    return None


def device_count():
    """The number of accelerator devices: 0."""
    return 0


def synchronize(device=None):
    """Waits for the accelerator's work to finish: nothing is ever pending on the CPU."""
