"""flowlike.optim: optimizers and learning-rate schedulers (`torch.optim`)."""
from . import lr_scheduler  # noqa: F401
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam
from .adamw import AdamW
from .rmsprop import RMSprop
from .adagrad import Adagrad
from .adadelta import Adadelta
from .adamax import Adamax
from .nadam import NAdam
from .radam import RAdam
from .lbfgs import LBFGS
from .rprop import Rprop
from .asgd import ASGD
from . import swa_utils  # noqa: F401,E402

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "LBFGS",
           "Rprop", "ASGD", "lr_scheduler", "swa_utils"]
