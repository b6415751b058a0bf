"""torch.distributed.checkpoint.hf_storage: DCP's safetensors reader and writer (not available on flowlike; see
the package docstring)."""

__all__ = ["HuggingFaceStorageReader", "HuggingFaceStorageWriter"]


class _Unavailable:
    def __new__(cls, *args, **kwargs):
        raise NotImplementedError(f"{cls.__name__}: flowlike has no torch.distributed.checkpoint (it needs "
                                  f"DTensor); save and load with safetensors from one rank")


class HuggingFaceStorageReader(_Unavailable):
    """Reads a DCP checkpoint stored as safetensors files; constructing one raises."""


class HuggingFaceStorageWriter(_Unavailable):
    """Writes a DCP checkpoint as safetensors files; constructing one raises."""
