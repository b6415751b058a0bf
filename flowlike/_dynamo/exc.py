"""torch._dynamo.exc: the errors compiled code raises."""
from ..graph.compile import Unsupported

__all__ = ["Unsupported"]
