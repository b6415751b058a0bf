"""Ready-made parametrizations (`torch.nn.utils.parametrizations`): orthogonal, weight_norm and spectral_norm,
registered through `parametrize.register_parametrization`."""
from enum import Enum, auto

from ... import _C, _creation, linalg
from ..._dtype import finfo
from ..._ops import allclose
from ..._random import randn
from ..._tensor import Tensor
from ...autograd import no_grad
from .. import functional as F
from ..modules.module import Module
from . import parametrize
from .spectral_norm import _is_conv_transpose
from .weight_norm import _weight_norm, norm_except_dim

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _is_orthogonal(Q):
    n, k = Q.size(-2), Q.size(-1)
    return allclose(Q.mT @ Q, _creation.eye(k, dtype=Q.dtype), atol=10.0 * n * finfo(Q.dtype).eps)


def _make_orthogonal(A):
    """The Q of A = QR with R's diagonal made non-negative (unique for full-rank A)."""
    Q, R = linalg.qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _householder_product(A, tau):
    """The first k columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T, v_i the i-th column of A below the
    diagonal with an implicit 1 on it (torch.linalg.householder_product), written with differentiable ops."""
    n, k = A.size(-2), A.size(-1)
    eye = _creation.eye(n, k, dtype=A.dtype)
    V = A.tril(-1) + eye
    Q = eye.expand(*A.shape[:-2], n, k)
    for i in reversed(range(k)):
        v = V[..., :, i:i + 1]
        Q = Q - (tau[..., i:i + 1].unsqueeze(-1) * v) @ (v.mT @ Q)
    return Q


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    """Maps a matrix (or batch) to an orthogonal one (orthonormal columns or rows when not square)."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if not use_trivialization:
            # Would need geqrf's Householder reflectors (right_inverse) which flowlike does not expose yet.
            raise NotImplementedError("flowlike: orthogonal(use_trivialization=False) is not supported yet")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            # A skew-symmetric matrix from the lower triangle, mapped to the orthogonal group.
            X = X.tril()
            if n != k:
                X = _C.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mT
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = linalg.matrix_exp(A)
            else:
                eye = _creation.eye(n, dtype=A.dtype)
                Q = linalg.solve(eye - 0.5 * A, eye + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if self.base is not None:
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        # Stores Q (made orthogonal) as `base` and returns the X that forward maps to the identity.
        with no_grad():
            if Q.shape != self.shape:
                raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                                 f"Got a tensor of shape {Q.shape}.")
            Q_init = Q
            n, k = Q.size(-2), Q.size(-1)
            if n < k:
                Q = Q.mT
                n, k = k, n
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
            else:
                N = randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype)
                Q = _make_orthogonal(_C.cat([Q, N], dim=-1))
            self.base = Q
            neg_id = _creation.zeros_like(Q_init)
            neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_id


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Constrains module.<name> (a matrix or batch of matrices) to be orthogonal, or to have orthonormal columns
    or rows when not square, through orthogonal_map "matrix_exp", "cayley" or "householder" (default:
    "matrix_exp" for square matrices, "householder" otherwise). Returns the module.

    flowlike supports only use_trivialization=True (the default): the parametrization is X -> base @ map(X).
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.size(-2) == weight.size(-1) else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    """(g, v) -> g * v / ||v||, norms over every dim except `dim` (dim None: over the whole tensor)."""

    def __init__(self, dim=0):
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrizes module.<name> as g * v / ||v||: g is `parametrizations.<name>.original0` (the norms over
    every dim except `dim`; dim=None: the norm of the whole tensor), v is `original1`. Checkpoints of the legacy
    nn.utils.weight_norm (<name>_g, <name>_v) load into it. Returns the module."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                 error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    """weight -> weight / sigma, sigma the largest singular value of the weight as a matrix with rows along
    `dim`, estimated by power iteration on the buffers _u and _v (advanced in training mode only)."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got "
                             f"{dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = _creation.empty(h, dtype=weight.dtype).normal_(0, 1)
            v = _creation.empty(w, dtype=weight.dtype).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            # Start from a good estimate of the top singular vectors.
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        # Updates the buffers in place, so that they can be read and written as state.
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(weight_mat.mv(self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(weight_mat.mT.mv(self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # Clones: backward must see the u, v of this forward even if the buffers are updated again.
        u, v = self._u.clone(), self._v.clone()
        sigma = u.dot(weight_mat.mv(v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Reparametrizes module.<name> as weight / sigma, sigma its largest singular value (seen as a matrix with
    rows along `dim`; default 1 for ConvTranspose, else 0), estimated by n_power_iterations steps of power
    iteration per forward in training mode (none in eval mode). Returns the module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if _is_conv_transpose(module) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
