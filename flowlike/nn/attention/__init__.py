"""torch.nn.attention: SDPBackend and the sdpa_kernel context manager.

flowlike has one scaled_dot_product_attention kernel on the CPU, whose numbers are those of torch's MATH backend
(torch's CPU flash kernel computes the same function), so choosing backends does not change results here;
sdpa_kernel checks its argument as torch does."""
import contextlib
import enum

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(enum.IntEnum):
    """The scaled_dot_product_attention implementations torch can pick from."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __repr__(self):
        return f"<SDPBackend.{self.name}: {self.value}>"


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Allows only `backends` (an SDPBackend or a list of them) for scaled_dot_product_attention in the block;
    flowlike's single kernel serves them all with the same numbers."""
    listed = backends if isinstance(backends, (list, tuple)) else [backends]
    if not all(isinstance(b, SDPBackend) for b in listed):
        raise AssertionError(f"Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
                             f"{type(backends).__name__}")
    yield {}
