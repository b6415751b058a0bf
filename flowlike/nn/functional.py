"""flowlike.nn.functional: the functional neural-network ops (`torch.nn.functional`).

Each area lives in its own private module (flowlike/nn/_functional_<area>.py) and is re-exported
here with one import line, so this module is the single public path, as in PyTorch.
"""
from ._functional_loss import *  # noqa: F401,F403  (loss functions)
from ._functional_vision import *  # noqa: F401,F403
from ._functional_sparse import *  # noqa: F401,F403
from ._functional_activation import *  # noqa: F401,F403
from ._functional_norm import *  # noqa: F401,F403
from ._functional_attention import *  # noqa: F401,F403
from ._functional_linear import *  # noqa: F401,F403
from ._functional_conv import *  # noqa: F401,F403  (convolution, pooling, fold/unfold)
