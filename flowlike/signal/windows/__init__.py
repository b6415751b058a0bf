"""torch.signal.windows: the window functions of scipy.signal.windows, computed as torch computes them."""
from .windows import (bartlett, blackman, cosine, exponential, gaussian, general_cosine, general_hamming, hamming, hann,
                      kaiser, nuttall)

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming", "hamming",
           "hann", "kaiser", "nuttall"]
