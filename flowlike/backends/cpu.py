"""torch.backends.cpu."""


def get_cpu_capability():
    """"DEFAULT": flowlike's kernels are compiled for one baseline instruction set for now."""
    return "DEFAULT"
