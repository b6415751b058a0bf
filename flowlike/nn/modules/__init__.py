"""The nn layers, one file per family as in torch.nn.modules."""
from .module import Module
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from .linear import Identity, Linear, Bilinear, NonDynamicallyQuantizableLinear, LazyLinear
from .flatten import Flatten, Unflatten
from . import activation, adaptive, conv, lazy, dropout, loss, normalization, pooling, shape, sparse, transformer
from .activation import *  # noqa: F401,F403
from .adaptive import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .shape import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .rnn import RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell
from .sync_batchnorm import SyncBatchNorm

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Identity", "Linear",
           "Bilinear", "LazyLinear", "Flatten", "Unflatten", "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell",
           "LSTMCell", "GRUCell", "SyncBatchNorm"] + activation.__all__ + adaptive.__all__ + conv.__all__ + \
    dropout.__all__ + loss.__all__ + normalization.__all__ + pooling.__all__ + shape.__all__ + sparse.__all__ + \
    transformer.__all__
