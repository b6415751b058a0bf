"""convert_conv2d/3d_weight_memory_format (torch.nn.utils.memory_format).

flowlike stores tensors in the contiguous (row-major) format only: converting to it keeps the module as it is, and
any other memory format is refused.
"""
from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, conv_types, name):
    if str(memory_format) != "torch.contiguous_format":
        raise RuntimeError(f"{name}: flowlike supports only memory_format=torch.contiguous_format (its tensors are "
                           f"always row-major), got {memory_format}")
    if isinstance(module, conv_types):
        module.weight.data = module.weight.detach().contiguous()
    for child in module.children():
        _convert(child, memory_format, conv_types, name)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Makes the weights of module's Conv2d/ConvTranspose2d layers (recursively) use memory_format; returns module."""
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d), "convert_conv2d_weight_memory_format")


def convert_conv3d_weight_memory_format(module, memory_format):
    """Makes the weights of module's Conv3d/ConvTranspose3d layers (recursively) use memory_format; returns module."""
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d), "convert_conv3d_weight_memory_format")
