"""flowlike.nn: neural-network building blocks (`torch.nn`)."""
from . import functional  # noqa: F401
from . import init, utils, parallel  # noqa: F401
from .parameter import Parameter, Buffer, UninitializedParameter, UninitializedBuffer  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules.module import register_module_forward_pre_hook, register_module_forward_hook  # noqa: F401
from ..graph.nn_graph import Graph  # noqa: F401,E402  (OneFlow's static graph over these modules)
