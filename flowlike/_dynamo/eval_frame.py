"""torch._dynamo.eval_frame: where torch keeps OptimizedModule (isinstance checks in user code import it here)."""
from ..graph.compile import OptimizedModule

__all__ = ["OptimizedModule"]
