"""torch.distributed.checkpoint (DCP) on flowlike: not implemented. Sharded saves need DTensor, which flowlike
lacks; save a model with torch.save/safetensors from one rank instead. hf_storage's classes exist so that
libraries importing them load; constructing one raises NotImplementedError."""
from ..._missing import module_getattr

__getattr__ = module_getattr(__name__, "torch.distributed.checkpoint")
