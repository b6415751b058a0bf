"""torch.backends.cuda: settable matmul flags; CUDA itself is not built."""


class _MatmulFlags:
    """torch.backends.cuda.matmul: plain settable attributes."""

    def __init__(self):
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True


matmul = _MatmulFlags()


def is_built():
    return False


def flash_sdp_enabled():
    return False


def mem_efficient_sdp_enabled():
    return False


def math_sdp_enabled():
    return True
