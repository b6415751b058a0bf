"""torch.fft placeholder: flowlike has no FFT yet, and every function named here says so.

The error is both an AttributeError (so hasattr() and getattr(..., default) see the function as missing) and a
NotImplementedError (so `except NotImplementedError` fallbacks written for partial backends also work).
"""


class FFTNotProvidedError(AttributeError, NotImplementedError):
    """Raised for any torch.fft function: flowlike does not provide torch.fft yet."""


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    raise FFTNotProvidedError(f"torch.fft.{name} is not provided: flowlike does not provide torch.fft yet")
