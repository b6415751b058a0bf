"""Recurrent layers: RNN, LSTM, GRU (multi-layer, bidirectional, batch_first, dropout, LSTM projections,
packed sequences) and the cells RNNCell, LSTMCell, GRUCell, with torch's parameter names, shapes and init.

The input projection of a whole layer is one GEMM over every time step; each step then multiplies the
hidden state only. Everything is built from differentiable ops, so autograd needs nothing special.
"""
import math
import numbers
import warnings

from ... import _creation, _joining, _views
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _step(mode, xw, state, w_hh, b_hh, w_hr):
    """One time step from the projected input xw = x @ W_ih^T + b_ih; state is h, or (h, c) for LSTM.
    Returns (output h, new state)."""
    if mode == "LSTM":
        h, c = state
        i, f, g, o = (xw + F.linear(h, w_hh, b_hh)).chunk(4, 1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        h = o.sigmoid() * c.tanh()
        if w_hr is not None:
            h = F.linear(h, w_hr)
        return h, (h, c)
    if mode == "GRU":
        h = state
        ir, iz, in_ = xw.chunk(3, 1)
        hr, hz, hn = F.linear(h, w_hh, b_hh).chunk(3, 1)
        r, z = (ir + hr).sigmoid(), (iz + hz).sigmoid()
        n = (in_ + r * hn).tanh()
        h = n + z * (state - n)
        return h, h
    pre = xw + F.linear(state, w_hh, b_hh)
    h = pre.tanh() if mode == "RNN_TANH" else pre.relu()
    return h, h


def _slice_state(state, n):
    return tuple(s[:n] for s in state) if isinstance(state, tuple) else state[:n]


def _merge_state(new, old, n):
    # sequences that already ended (rows n and beyond, packed input) keep their last state
    if isinstance(new, tuple):
        return tuple(_merge_state(a, b, n) for a, b in zip(new, old))
    return new if n == old.shape[0] else _views.cat([new, old[n:]], 0)


def _run_direction(mode, xw_steps, batch_sizes, state, w_hh, b_hh, w_hr, reverse):
    """Runs one direction of one layer over the projected inputs of each step; returns (outputs per step,
    final state)."""
    outputs = [None] * len(xw_steps)
    order = range(len(xw_steps) - 1, -1, -1) if reverse else range(len(xw_steps))
    for t in order:
        n = batch_sizes[t]
        out, new = _step(mode, xw_steps[t], _slice_state(state, n), w_hh, b_hh, w_hr)
        outputs[t] = out
        state = _merge_state(new, state, n)
    return outputs, state


class RNNBase(Module):
    """The multi-layer recurrent network shared by RNN, LSTM and GRU."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError("hidden_size must be a positive integer" if isinstance(hidden_size, int) else
                             f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if not isinstance(num_layers, int) or num_layers <= 0:
            raise ValueError("num_layers must be greater than or equal to 1")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}")
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else real_hidden * directions
                suffix = "_reverse" if direction == 1 else ""
                shapes = [("weight_ih", (gate_size, layer_input)), ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                names = []
                for base, shape in shapes:
                    name = f"{base}_l{layer}{suffix}"
                    setattr(self, name, Parameter(_creation.empty(shape, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def _flat_weights(self):
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self):
        """Kept for API compatibility: flowlike's weights are always usable as they are."""

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    def _layer_weights(self, layer, direction):
        names = self._all_weights[layer * (2 if self.bidirectional else 1) + direction]
        w = {n.split("_l")[0]: getattr(self, n) for n in names}
        return w["weight_ih"], w["weight_hh"], w.get("bias_ih"), w.get("bias_hh"), w.get("weight_hr")

    def _check_input(self, input, batch_sizes):
        expected = 2 if batch_sizes is not None else 3
        if input.dim() not in (expected, expected - 1) or (batch_sizes is not None and input.dim() != 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.dim()}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{input.shape[-1]}")

    def _initial_state(self, hx, batch, dtype):
        directions = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        shapes = [(self.num_layers * directions, batch, real_hidden)]
        if self.mode == "LSTM":
            shapes.append((self.num_layers * directions, batch, self.hidden_size))
        if hx is None:
            states = [_creation.zeros(s, dtype=dtype) for s in shapes]
        else:
            states = list(hx) if isinstance(hx, (tuple, list)) else [hx]
            for got, want in zip(states, shapes):
                if tuple(got.shape) != want:
                    raise RuntimeError(f"Expected hidden size {want}, got {list(got.shape)}")
        return states

    def forward(self, input, hx=None):
        packed = isinstance(input, PackedSequence)
        if packed:
            data, batch_sizes_t, sorted_indices, unsorted_indices = input
            batch_sizes = batch_sizes_t.tolist()
            self._check_input(data, batch_sizes)
            batch = batch_sizes[0]
            if hx is not None and sorted_indices is not None:
                hx = tuple(h.index_select(1, sorted_indices) for h in hx) if isinstance(hx, tuple) else \
                    hx.index_select(1, sorted_indices)
            steps_of = _packed_steps
        else:
            self._check_input(input, None)
            unbatched = input.dim() == 2
            if unbatched:
                input = input.unsqueeze(1)
                if hx is not None:
                    hx = tuple(h.unsqueeze(1) for h in hx) if isinstance(hx, tuple) else hx.unsqueeze(1)
            elif self.batch_first:
                input = input.transpose(0, 1)
            data = input
            batch = input.shape[1]
            batch_sizes = [batch] * input.shape[0]
            steps_of = _padded_steps
        states = self._initial_state(hx, batch, data.dtype)
        directions = 2 if self.bidirectional else 1
        final_h, final_c = [], []
        layer_in = data
        for layer in range(self.num_layers):
            outs = []
            for direction in range(directions):
                w_ih, w_hh, b_ih, b_hh, w_hr = self._layer_weights(layer, direction)
                k = layer * directions + direction
                state = (states[0][k], states[1][k]) if self.mode == "LSTM" else states[0][k]
                xw = F.linear(layer_in, w_ih, b_ih)  # the input projection of every step at once
                step_out, state = _run_direction(self.mode, steps_of(xw, batch_sizes), batch_sizes, state, w_hh,
                                                 b_hh, w_hr, direction == 1)
                outs.append(step_out)
                if self.mode == "LSTM":
                    final_h.append(state[0])
                    final_c.append(state[1])
                else:
                    final_h.append(state)
            per_step = [_views.cat([o[t] for o in outs], -1) if directions == 2 else outs[0][t]
                        for t in range(len(batch_sizes))]
            layer_in = _views.cat(per_step, 0) if packed else _joining.stack(per_step, 0)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_in = F.dropout(layer_in, self.dropout, True)
        h_n = _joining.stack(final_h, 0)
        c_n = _joining.stack(final_c, 0) if self.mode == "LSTM" else None
        if packed:
            if unsorted_indices is not None:
                h_n = h_n.index_select(1, unsorted_indices)
                c_n = c_n.index_select(1, unsorted_indices) if c_n is not None else None
            output = PackedSequence(layer_in, batch_sizes_t, sorted_indices, unsorted_indices)
        else:
            output = layer_in
            if unbatched:
                output, h_n = output.squeeze(1), h_n.squeeze(1)
                c_n = c_n.squeeze(1) if c_n is not None else None
            elif self.batch_first:
                output = output.transpose(0, 1)
        return output, ((h_n, c_n) if self.mode == "LSTM" else h_n)


def _padded_steps(xw, batch_sizes):
    return list(xw.unbind(0))


def _packed_steps(xw, batch_sizes):
    return list(xw.split(batch_sizes, 0))


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu)."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, 0, device, dtype)


class LSTM(RNNBase):
    """Long short-term memory; returns (output, (h_n, c_n)). proj_size > 0 projects h to that size."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)


class GRU(RNNBase):
    """Gated recurrent unit (reset gate applied to the hidden projection, as PyTorch and cuDNN)."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, 0,
                         device, dtype)


class RNNCellBase(Module):
    """One step of an RNN, LSTM or GRU (weight_ih, weight_hh, bias_ih, bias_hh)."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(_creation.empty((num_chunks * hidden_size, input_size), dtype=dtype))
        self.weight_hh = Parameter(_creation.empty((num_chunks * hidden_size, hidden_size), dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_creation.empty(num_chunks * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(_creation.empty(num_chunks * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def _cell(self, mode, input, state):
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[-1]} expected {self.input_size}")
        unbatched = input.dim() == 1
        if unbatched:
            input = input.unsqueeze(0)
            state = tuple(s.unsqueeze(0) for s in state) if isinstance(state, tuple) else \
                (state.unsqueeze(0) if state is not None else None)
        batch = input.shape[0]
        if state is None:
            zeros = _creation.zeros(batch, self.hidden_size, dtype=input.dtype)
            state = (zeros, zeros) if mode == "LSTM" else zeros
        xw = F.linear(input, self.weight_ih, self.bias_ih)
        _, new = _step(mode, xw, state, self.weight_hh, self.bias_hh, None)
        if unbatched:
            new = tuple(s.squeeze(0) for s in new) if isinstance(new, tuple) else new.squeeze(0)
        return new


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu)."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)

    def forward(self, input, hx=None):
        return self._cell("RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU", input, hx)


class LSTMCell(RNNCellBase):
    """One LSTM step: returns (h', c')."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        return self._cell("LSTM", input, None if hx is None else tuple(hx))


class GRUCell(RNNCellBase):
    """One GRU step."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        return self._cell("GRU", input, hx)
