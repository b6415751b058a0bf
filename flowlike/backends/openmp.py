"""torch.backends.openmp: flowlike parallelizes its CPU kernels with OpenMP."""


def is_available():
    return True
