"""Loss modules: each holds its options (tensor options such as weight as buffers, as torch does) and calls
its nn.functional loss. The deprecated size_average/reduce arguments map to reduction as in torch."""
import warnings

from .. import functional as F
from .._functional_loss import _reduction
from .module import Module

__all__ = ["L1Loss", "MSELoss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss",
           "HuberLoss", "SmoothL1Loss", "PoissonNLLLoss", "GaussianNLLLoss", "MarginRankingLoss",
           "HingeEmbeddingLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss", "MultiLabelMarginLoss",
           "MultiMarginLoss", "CosineEmbeddingLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss", "CTCLoss",
           "NLLLoss2d"]

_LEGACY = ("size_average", "reduce")
_TENSOR_OPTIONS = ("weight", "pos_weight")


class _Loss(Module):
    """Base of the loss modules: `reduction` ('none', 'mean', 'sum'), from the legacy arguments when given."""

    _options = ()      # (name, default) in torch's constructor order
    _keyword_only = ()  # (name, default) after `*`

    def __init__(self, *args, **kwargs):
        super().__init__()
        names = [n for n, _ in self._options]
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__}() takes at most {len(names)} positional arguments")
        values = dict(self._options + self._keyword_only)
        values.update(zip(names, args))
        for k, v in kwargs.items():
            if k not in values:
                raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument '{k}'")
            values[k] = v
        if "reduction" in values:
            values["reduction"] = _reduction(values.pop("size_average", None), values.pop("reduce", None),
                                             values["reduction"])
        for k, v in values.items():
            if k in _TENSOR_OPTIONS:
                self.register_buffer(k, v)
            else:
                setattr(self, k, v)
        self._call_options = [k for k in values if k not in _LEGACY]

    def forward(self, *inputs):
        return self._fn(*inputs, **{k: getattr(self, k) for k in self._call_options})


def _loss(name, fn, options=(), keyword_only=()):
    return type(name, (_Loss,), {"_fn": staticmethod(fn), "_options": tuple(options),
                                 "_keyword_only": tuple(keyword_only),
                                 "__doc__": f"Module form of F.{fn.__name__} (options: "
                                            f"{', '.join(n for n, _ in tuple(options) + tuple(keyword_only))})."})


_R = [("size_average", None), ("reduce", None), ("reduction", "mean")]
L1Loss = _loss("L1Loss", F.l1_loss, _R)
MSELoss = _loss("MSELoss", F.mse_loss, _R)
CrossEntropyLoss = _loss("CrossEntropyLoss", F.cross_entropy,
                         [("weight", None), ("size_average", None), ("ignore_index", -100), ("reduce", None),
                          ("reduction", "mean"), ("label_smoothing", 0.0)])
NLLLoss = _loss("NLLLoss", F.nll_loss, [("weight", None), ("size_average", None), ("ignore_index", -100),
                                        ("reduce", None), ("reduction", "mean")])
BCELoss = _loss("BCELoss", F.binary_cross_entropy, [("weight", None)] + _R)
BCEWithLogitsLoss = _loss("BCEWithLogitsLoss", F.binary_cross_entropy_with_logits,
                          [("weight", None)] + _R + [("pos_weight", None)])
KLDivLoss = _loss("KLDivLoss", F.kl_div, _R + [("log_target", False)])
HuberLoss = _loss("HuberLoss", F.huber_loss, [("reduction", "mean"), ("delta", 1.0)])
SmoothL1Loss = _loss("SmoothL1Loss", F.smooth_l1_loss, _R + [("beta", 1.0)])
PoissonNLLLoss = _loss("PoissonNLLLoss", F.poisson_nll_loss,
                       [("log_input", True), ("full", False), ("size_average", None), ("eps", 1e-8), ("reduce", None),
                        ("reduction", "mean")])
GaussianNLLLoss = _loss("GaussianNLLLoss", F.gaussian_nll_loss, (),
                        [("full", False), ("eps", 1e-6), ("reduction", "mean")])
MarginRankingLoss = _loss("MarginRankingLoss", F.margin_ranking_loss, [("margin", 0.0)] + _R)
HingeEmbeddingLoss = _loss("HingeEmbeddingLoss", F.hinge_embedding_loss, [("margin", 1.0)] + _R)
SoftMarginLoss = _loss("SoftMarginLoss", F.soft_margin_loss, _R)
MultiLabelSoftMarginLoss = _loss("MultiLabelSoftMarginLoss", F.multilabel_soft_margin_loss, [("weight", None)] + _R)
MultiLabelMarginLoss = _loss("MultiLabelMarginLoss", F.multilabel_margin_loss, _R)
MultiMarginLoss = _loss("MultiMarginLoss", F.multi_margin_loss, [("p", 1), ("margin", 1.0), ("weight", None)] + _R)
CosineEmbeddingLoss = _loss("CosineEmbeddingLoss", F.cosine_embedding_loss, [("margin", 0.0)] + _R)
TripletMarginLoss = _loss("TripletMarginLoss", F.triplet_margin_loss,
                          [("margin", 1.0), ("p", 2.0), ("eps", 1e-6), ("swap", False)] + _R)
TripletMarginWithDistanceLoss = _loss("TripletMarginWithDistanceLoss", F.triplet_margin_with_distance_loss, (),
                                      [("distance_function", None), ("margin", 1.0), ("swap", False),
                                       ("reduction", "mean")])
CTCLoss = _loss("CTCLoss", F.ctc_loss, [("blank", 0), ("reduction", "mean"), ("zero_infinity", False)])


class NLLLoss2d(NLLLoss):
    """Deprecated alias of NLLLoss (warns FutureWarning when constructed, as torch)."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in replacement and see "
                      "https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.", FutureWarning,
                      stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)
