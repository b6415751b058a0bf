"""The nn ops PyTorch also exposes in the torch namespace and as Tensor methods (softmax,
log_softmax, relu, selu, layer_norm, ...), defined once in flowlike/nn/_functional_*.py."""
from . import _C
from ._tensor import Tensor, _no_grad
from .nn import _functional_activation as _A
from .nn import _functional_norm as _N

__all__ = ["softmax", "log_softmax", "relu", "relu_", "selu", "selu_", "celu", "celu_", "rrelu", "rrelu_", "prelu",
           "hardshrink", "threshold", "threshold_", "layer_norm", "rms_norm", "group_norm", "batch_norm",
           "instance_norm"]


def softmax(input, dim, dtype=None):
    """softmax along dim (torch.softmax: dim is required)."""
    return _A._softmax_call(_C._softmax, input, dim, dtype)


def log_softmax(input, dim, dtype=None):
    """log_softmax along dim (torch.log_softmax: dim is required)."""
    return _A._softmax_call(_C._log_softmax, input, dim, dtype)


relu, relu_, selu, selu_, celu, celu_ = _A.relu, _A.relu_, _A.selu, _A.selu_, _A.celu, _A.celu_
rrelu, rrelu_, prelu, hardshrink, threshold, threshold_ = (_A.rrelu, _A.rrelu_, _A.prelu, _A.hardshrink, _A.threshold,
                                                           _A.threshold_)
rms_norm = _N.rms_norm


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    """torch.layer_norm: see nn.functional.layer_norm."""
    return _N.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    """torch.group_norm: see nn.functional.group_norm."""
    return _N.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    """torch.batch_norm (ATen argument order): see nn.functional.batch_norm."""
    return _N.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    """torch.instance_norm (ATen argument order): see nn.functional.instance_norm."""
    return _N.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def _softmax_method(self, dim, dtype=None):
    """Tensor.softmax(dim, dtype=None)."""
    return _A._softmax_call(_C._softmax, self, dim, dtype)


def _log_softmax_method(self, dim, dtype=None):
    """Tensor.log_softmax(dim, dtype=None)."""
    return _A._softmax_call(_C._log_softmax, self, dim, dtype)


for _name, _fn in (("softmax", _softmax_method), ("log_softmax", _log_softmax_method), ("relu", _A.relu),
                   ("relu_", _A.relu_), ("hardshrink", _A.hardshrink), ("prelu", _A.prelu)):
    setattr(Tensor, _name, _fn)


# ---- the ATen-signature forms torch also exposes at top level (torch.dropout(input, p, train), reduction as an int,
# ...), mapped onto the nn.functional implementations ---------------------------------------------------------------
from .nn import _functional_conv as _Conv  # noqa: E402
from .nn import _functional_linear as _Lin  # noqa: E402
from .nn import _functional_loss as _L  # noqa: E402
from .nn import _functional_sparse as _S  # noqa: E402
from .nn import _functional_vision as _V  # noqa: E402

# The losses take ATen's Reduction enum as an int: 1 mean, 2 sum, anything else none. torch 2.13's bindings of these
# functions default it to none (the schema's `Mean` default does not reach them), and so do these.


def _reduction(reduction):
    return {1: "mean", 2: "sum"}.get(reduction, "none")


def dropout(input, p, train):
    """torch.dropout(input, p, train): see nn.functional.dropout."""
    return _V.dropout(input, p, train)


def dropout_(input, p, train):
    """In-place torch.dropout."""
    return _V.dropout(input, p, train, inplace=True)


def alpha_dropout(input, p, train):
    """torch.alpha_dropout(input, p, train): see nn.functional.alpha_dropout."""
    return _V.alpha_dropout(input, p, train)


def alpha_dropout_(input, p, train):
    """In-place torch.alpha_dropout."""
    return _V.alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input, p, train):
    """torch.feature_alpha_dropout(input, p, train): alpha dropout of whole channels (dim 1)."""
    return _V.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p, train):
    """In-place torch.feature_alpha_dropout."""
    return _V.feature_alpha_dropout(input, p, train, inplace=True)


def feature_dropout(input, p, train):
    """torch.feature_dropout(input, p, train): dropout of whole channels (dim 1)."""
    return _V._dropout_impl(input, p, train, False, True, False)


def feature_dropout_(input, p, train):
    """In-place torch.feature_dropout."""
    return _V._dropout_impl(input, p, train, True, True, False)


def native_dropout(input, p, train):
    """Dropout returning (output, boolean keep mask)."""
    from ._creation import ones_like
    from ._dtype import bool as bool_
    from ._random import rand_like
    if train is False:
        return input.clone(), ones_like(input, dtype=bool_)
    keep = 1.0 - p
    mask = rand_like(input, dtype=_C.get_default_dtype() if not input.dtype.is_floating_point else None) < keep
    return input * mask * (0.0 if keep == 0 else 1.0 / keep), mask


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """torch.embedding(weight, indices, ...) (ATen order; a negative padding_idx means none)."""
    return _S.embedding(indices, weight, None if padding_idx < 0 else padding_idx,
                        scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


bilinear = _Lin.bilinear


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    """torch.binary_cross_entropy_with_logits (reduction as ATen's int: 0 none, 1 mean, 2 sum)."""
    return _L.binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(reduction),
                                               pos_weight=pos_weight)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    """torch.cosine_embedding_loss (reduction as an int)."""
    return _L.cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0, zero_infinity=False):
    """torch.ctc_loss (reduction as an int)."""
    return _L.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _reduction(reduction), zero_infinity)


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    """torch.hinge_embedding_loss (reduction as an int)."""
    return _L.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def kl_div(input, target, reduction=0, *, log_target=False):
    """torch.kl_div (reduction as an int; mean is over all elements, as ATen's)."""
    loss = _L.kl_div(input, target, reduction="none", log_target=log_target)
    return {"none": loss, "mean": loss.mean(), "sum": loss.sum()}[_reduction(reduction)]


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    """torch.margin_ranking_loss (reduction as an int)."""
    return _L.margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """torch.poisson_nll_loss (every argument required, reduction as an int)."""
    return _L.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False, reduction=0):
    """torch.triplet_margin_loss (reduction as an int)."""
    return _L.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction=_reduction(reduction))


def _normalized_stats(x, dims, eps):
    """The mean and 1/sqrt(biased variance + eps) of x over dims (kept)."""
    mean = x.mean(dims, keepdim=True)
    var = ((x - mean) ** 2).mean(dims, keepdim=True)
    return mean, _C.rsqrt(var + eps)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """layer_norm returning (output, mean, rstd); mean and rstd keep the normalized dims as size 1."""
    dims = list(range(input.dim() - len(normalized_shape), input.dim()))
    with _no_grad():
        mean, rstd = _normalized_stats(input, dims, eps)
    return _N.layer_norm(input, normalized_shape, weight, bias, eps), mean, rstd


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """batch_norm returning (output, save_mean, save_invstd): the batch statistics per channel in training, empty
    tensors in evaluation (as PyTorch's CPU kernel)."""
    dims = [0] + list(range(2, input.dim()))
    if training:
        with _no_grad():
            mean, invstd = _normalized_stats(input, dims, eps)
        mean, invstd = mean.reshape(-1), invstd.reshape(-1)
    else:
        mean = invstd = input.new_empty(0)
    out = _N.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    return out, mean, invstd


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """group_norm returning (output, mean, rstd), the statistics of shape (N, group) (differentiable, as torch's)."""
    mean, rstd = _normalized_stats(input.reshape(N, group, -1), [2], eps)
    return _N.group_norm(input, group, weight, bias, eps), mean.reshape(N, group), rstd.reshape(N, group)


def constant_pad_nd(input, pad, value=0):
    """Pads (or, with negative amounts, crops) the last dims: see nn.functional.pad."""
    if isinstance(value, complex) and input.dtype.is_complex:
        # the kernel pads with a real value: the imaginary part goes where the padding went (outside the input)
        r = _V.pad(input, pad, "constant", value.real)
        from ._creation import ones
        outside = 1 - _V.pad(ones(input.shape, dtype=input.dtype), pad, "constant", 0.0)
        return r + outside * (1j * value.imag) if value.imag else r
    return _V.pad(input, pad, "constant", value)


channel_shuffle = native_channel_shuffle = _V.channel_shuffle

_GRID_MODES = ("bilinear", "nearest", "bicubic")
_GRID_PADDING = ("zeros", "border", "reflection")


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """torch.grid_sampler (modes as ATen's ints): see nn.functional.grid_sample."""
    return _V.grid_sample(input, grid, _GRID_MODES[interpolation_mode], _GRID_PADDING[padding_mode], align_corners)


grid_sampler_2d = grid_sampler_3d = grid_sampler


def affine_grid_generator(theta, size, align_corners):
    """torch.affine_grid_generator: see nn.functional.affine_grid (size a sequence of ints: torch's parser refuses a
    tensor)."""
    if isinstance(size, Tensor):
        raise TypeError("affine_grid_generator(): argument 'size' (position 2) must be tuple of ints, not Tensor")
    return _V.affine_grid(theta, size, align_corners)


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """The general convolution: conv1d/2d/3d, or conv_transpose1d/2d/3d when transposed (by weight's rank)."""
    n = weight.dim() - 2
    if n not in (1, 2, 3):
        raise RuntimeError(f"convolution: expected a 3-D, 4-D or 5-D weight, but got {weight.dim()}-D")
    if transposed:
        return getattr(_Conv, f"conv_transpose{n}d")(input, weight, bias, stride, padding, output_padding, groups,
                                                       dilation)
    return getattr(_Conv, f"conv{n}d")(input, weight, bias, stride, padding, dilation, groups)


# ---- single RNN steps (torch.rnn_tanh_cell, lstm_cell, ...), as nn.RNNCell and friends compute them -------------

def _gates(input, hx, w_ih, w_hh, b_ih, b_hh):
    return _Lin.linear(input, w_ih, b_ih) + _Lin.linear(hx, w_hh, b_hh)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman RNN step with tanh: tanh(W_ih x + b_ih + W_hh h + b_hh)."""
    return _C.tanh(_gates(input, hx, w_ih, w_hh, b_ih, b_hh))


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman RNN step with ReLU."""
    return _A.relu(_gates(input, hx, w_ih, w_hh, b_ih, b_hh))


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step: hx = (h, c) -> (h', c'), gates in the order input, forget, cell, output."""
    h, c = hx
    i, f, g, o = _gates(input, h, w_ih, w_hh, b_ih, b_hh).chunk(4, -1)
    c = _C.sigmoid(f) * c + _C.sigmoid(i) * _C.tanh(g)
    return _C.sigmoid(o) * _C.tanh(c), c


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step: gates in the order reset, update, new."""
    i_r, i_z, i_n = _Lin.linear(input, w_ih, b_ih).chunk(3, -1)
    h_r, h_z, h_n = _Lin.linear(hx, w_hh, b_hh).chunk(3, -1)
    r, z = _C.sigmoid(i_r + h_r), _C.sigmoid(i_z + h_z)
    n = _C.tanh(i_n + r * h_n)
    return n + z * (hx - n)


# ---- whole sequences: torch.rnn_tanh / rnn_relu / lstm / gru (the flat-weights functions nn.RNN & co. call) -----

def _run_rnn(name, cell, input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """Runs `cell` over the sequence, layer by layer and direction by direction. params holds, per layer and
    direction, w_ih, w_hh (and b_ih, b_hh with biases); hx is (layers * directions, batch, hidden), or a tuple of
    two such tensors (h, c) for the LSTM. Returns (output, h_n) or (output, h_n, c_n)."""
    from ._joining import stack
    lstm = isinstance(hx, (tuple, list))
    directions = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    if len(params) != num_layers * directions * per:
        raise RuntimeError(f"{name}: expected {num_layers * directions * per} weight tensors, got {len(params)}")
    unbatched = input.dim() == 2
    x = input.unsqueeze(1) if unbatched else input.transpose(0, 1) if batch_first else input
    h0 = [h.unsqueeze(1) if unbatched else h for h in hx] if lstm else [hx.unsqueeze(1) if unbatched else hx]
    last_h, last_c = [], []
    for layer in range(num_layers):
        outputs = []
        for d in range(directions):
            k = layer * directions + d
            w = list(params[k * per:(k + 1) * per]) + [None] * (4 - per)
            state = (h0[0][k], h0[1][k]) if lstm else h0[0][k]
            steps = range(x.shape[0] - 1, -1, -1) if d == 1 else range(x.shape[0])
            out = [None] * x.shape[0]
            for t in steps:
                state = cell(x[t], state, *w)
                out[t] = state[0] if lstm else state
            outputs.append(stack(out, 0))
            last_h.append(state[0] if lstm else state)
            if lstm:
                last_c.append(state[1])
        x = outputs[0] if directions == 1 else _C.cat(outputs, 2)
        if dropout > 0 and train and layer < num_layers - 1:
            x = _V.dropout(x, dropout, True)
    output = x.squeeze(1) if unbatched else x.transpose(0, 1) if batch_first else x
    h_n = stack(last_h, 0)
    if unbatched:
        h_n = h_n.squeeze(1)
    if not lstm:
        return output, h_n
    c_n = stack(last_c, 0)
    return output, h_n, c_n.squeeze(1) if unbatched else c_n


def rnn_tanh(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """An Elman RNN with tanh over a whole sequence: (output, h_n)."""
    return _run_rnn("rnn_tanh", rnn_tanh_cell, input, hx, params, has_biases, num_layers, dropout, train,
                    bidirectional, batch_first)


def rnn_relu(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """An Elman RNN with ReLU over a whole sequence: (output, h_n)."""
    return _run_rnn("rnn_relu", rnn_relu_cell, input, hx, params, has_biases, num_layers, dropout, train,
                    bidirectional, batch_first)


def lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """An LSTM over a whole sequence, hx = (h_0, c_0): (output, h_n, c_n)."""
    return _run_rnn("lstm", lstm_cell, input, tuple(hx), params, has_biases, num_layers, dropout, train, bidirectional,
                    batch_first)


def gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """A GRU over a whole sequence: (output, h_n)."""
    return _run_rnn("gru", gru_cell, input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                    batch_first)


def embedding_renorm_(weight, indices, max_norm, norm_type):
    """Rescales in place the rows of weight that indices look up whose norm exceeds max_norm (not recorded by
    autograd), as embedding(max_norm=...) does; returns weight."""
    _S._renorm_(weight, indices, max_norm, norm_type)
    return weight


__all__ += ["dropout", "dropout_", "alpha_dropout", "alpha_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_",
            "feature_dropout", "feature_dropout_", "native_dropout", "embedding", "bilinear",
            "binary_cross_entropy_with_logits", "cosine_embedding_loss", "ctc_loss", "hinge_embedding_loss", "kl_div",
            "margin_ranking_loss", "poisson_nll_loss", "triplet_margin_loss", "native_layer_norm", "native_batch_norm",
            "native_group_norm", "constant_pad_nd", "channel_shuffle", "native_channel_shuffle", "grid_sampler",
            "grid_sampler_2d", "grid_sampler_3d", "affine_grid_generator", "convolution", "rnn_tanh_cell",
            "rnn_relu_cell", "lstm_cell", "gru_cell", "rnn_tanh", "rnn_relu", "lstm", "gru", "embedding_renorm_"]
