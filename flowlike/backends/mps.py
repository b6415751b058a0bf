"""torch.backends.mps: Apple's Metal backend is not available in flowlike."""


def is_available():
    return False


def is_built():
    return False
