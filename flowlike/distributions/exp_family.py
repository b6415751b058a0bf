"""torch.distributions.exp_family: ExponentialFamily, the base of families with densities
h(x) exp(<t(x), theta> - F(theta))."""
from ..autograd import grad
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """A family given by its natural parameters theta (_natural_params), log normalizer F (_log_normalizer) and
    E[log h(x)] (_mean_carrier_measure). Its entropy, and the KL divergence between two members of one family
    without a closed form registered, follow from F and its gradient (Bregman divergence), as in torch."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = grad(lg_normal.sum(), nparams, create_graph=True)
        result += lg_normal
        for p, g in zip(nparams, gradients):
            result -= (p * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
