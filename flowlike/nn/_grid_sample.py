"""grid_sample written with differentiable ops, for its derivatives past the second (torch computes them all).

The kernels (csrc/ops/vision_grid.cpp) give the forward, backward and double backward; the node that
grid_sampler_double_backward records calls `third_derivative` below, which recomputes the double backward from
this composite under autograd (on aliases of the saved tensors) and differentiates it once more. The
composite follows the kernels step for step: unnormalize, padding on the coordinate (bilinear, nearest) or on each
tap (bicubic), taps outside the input read zero.

Under create_graph the results are built from the saved tensors' own history, so every higher order works too:
autograd.grad stops at the requested inputs (Note [Only the needed nodes run] in csrc/autograd/engine.cpp) and
never re-enters the node that called it.
"""
import flowlike as _fl
from .. import _C

_BILINEAR, _NEAREST, _BICUBIC = 0, 1, 2
_ZEROS, _BORDER, _REFLECTION = 0, 1, 2


def _unnormalize(c, size, align):
    return (c + 1) / 2 * (size - 1) if align else ((c + 1) * size - 1) / 2


def _reflect(c, twice_low, twice_high):
    if twice_low == twice_high:
        return c * 0
    lo, span = twice_low / 2, (twice_high - twice_low) / 2
    d = (c - lo).abs()
    extra = _C.fmod(d, span)
    flips = _C.floor(d / span).detach()
    return _C.where(_C.remainder(flips, 2) == 0, extra + lo, span - extra + lo)


def _pad_coordinate(c, size, padding, align):
    if padding == _BORDER:
        return c.clamp(0, size - 1)
    if padding == _REFLECTION:
        c = _reflect(c, 0, 2 * (size - 1)) if align else _reflect(c, -1, 2 * size - 1)
        return c.clamp(0, size - 1)
    return c


def _cubic_weights(t):
    # PyTorch's cubic convolution (A = -0.75) for the taps at -1, 0, 1, 2 around t in [0, 1)
    a = -0.75

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _read(flat, sizes, taps):
    """flat (N, C, prod(sizes)) read at integer tap coordinates taps[s] (N, *out), one per spatial dim (slowest
    first); taps outside the input read zero."""
    inside, index = None, None
    for tap, size in zip(taps, sizes):
        ok = (tap >= 0) & (tap <= size - 1)
        inside = ok if inside is None else inside & ok
        i = tap.clamp(0, size - 1).to(_fl.int64)
        index = i if index is None else index * size + i
    n, ch = flat.shape[0], flat.shape[1]
    out_shape = index.shape[1:]
    index = index.reshape(n, 1, -1).expand(n, ch, index[0].numel())
    values = flat.gather(2, index).reshape(n, ch, *out_shape)
    return values * inside.unsqueeze(1).to(values.dtype)


def grid_sample(input, grid, interp, padding, align):
    """grid_sampler(input, grid, interp, padding, align) as a composite of differentiable ops."""
    sizes = list(input.shape[2:])
    flat = input.reshape(input.shape[0], input.shape[1], -1)
    coords = [_unnormalize(grid[..., len(sizes) - 1 - s], sizes[s], align) for s in range(len(sizes))]
    if interp == _BICUBIC:
        floors = [_C.floor(c).detach() for c in coords]
        weights = [_cubic_weights(c - f) for c, f in zip(coords, floors)]
        out = 0
        for j in range(4):
            for i in range(4):
                taps = [_pad_coordinate(floors[0] - 1 + j, sizes[0], padding, align).detach(),
                        _pad_coordinate(floors[1] - 1 + i, sizes[1], padding, align).detach()]
                # (the kernel truncates a padded tap coordinate toward zero)
                taps = [_C.trunc(t) for t in taps]
                out = out + _read(flat, sizes, taps) * (weights[0][j] * weights[1][i]).unsqueeze(1)
        return out
    coords = [_pad_coordinate(c, size, padding, align) for c, size in zip(coords, sizes)]
    if interp == _NEAREST:
        return _read(flat, sizes, [_C.round(c).detach() for c in coords])
    floors = [_C.floor(c).detach() for c in coords]
    out = 0
    for k in range(2 ** len(sizes)):
        bits = [(k >> (len(sizes) - 1 - s)) & 1 for s in range(len(sizes))]
        w = 1
        for s in reversed(range(len(sizes))):  # x * y (* z), the kernel's product order
            w = w * (coords[s] - floors[s] if bits[s] else floors[s] + 1 - coords[s])
        out = out + _read(flat, sizes, [f + b for f, b in zip(floors, bits)]) * w.unsqueeze(1)
    return out


def third_derivative(saved, grads, interp, padding, align):
    """The gradients of grid_sampler_double_backward's inputs (grad_output, input, grid, gg_grid) given those of its
    outputs (d grad_output, d input, d grid), through the composite: double backward = the derivatives of
    phi = <gg_grid, d<grad_output, grid_sample(input, grid)>/d grid>."""
    create_graph = _fl.is_grad_enabled()
    with _fl.enable_grad():
        # Each saved tensor enters through a fresh alias, so autograd.grad gives the partial derivative for that
        # argument alone (the engine stops at the aliases, even when gg_grid's history contains grid) while the
        # results keep the saved tensors' history: every further order differentiates this composite again.
        args = [t.clone() if t.requires_grad else t.detach().requires_grad_() for t in saved]
        g, inp, grid, gg_grid = args
        y = grid_sample(inp, grid, interp, padding, align)
        d_grid, = _fl.autograd.grad((g * y).sum(), grid, create_graph=True, allow_unused=True)
        if d_grid is None:  # nearest: no grid gradient, so nothing past it
            return [None] * 4
        phi = (gg_grid * d_grid).sum()
        firsts = _fl.autograd.grad(phi, (g, inp, grid), create_graph=True, allow_unused=True)
        total = None
        for u, d in zip(grads, firsts):
            if u is not None and d is not None:
                term = (u * d).sum()
                total = term if total is None else total + term
        if total is None or not total.requires_grad:
            return [None] * 4
        return list(_fl.autograd.grad(total, args, create_graph=create_graph, allow_unused=True))


_C._set_grid_sampler_third_derivative(third_derivative)
