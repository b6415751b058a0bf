"""The nn layers, one file per family as in torch.nn.modules."""
from .module import Module
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from .linear import Identity, Linear, Bilinear
from .flatten import Flatten, Unflatten
from .rnn import RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Identity", "Linear",
           "Bilinear", "Flatten", "Unflatten", "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell",
           "GRUCell"]
