"""flowlike.linalg: linear algebra (`torch.linalg`)."""
from ._linalg_products import multi_dot, matmul, vecdot  # noqa: F401
