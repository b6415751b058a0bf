"""torch.backends.mkldnn: flowlike does not use oneDNN."""
enabled = True


def is_available():
    return False
