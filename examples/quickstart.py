"""flowlike quick start: ordinary PyTorch code, with only the import line changed."""
import flowlike as torch

torch.manual_seed(0) if hasattr(torch, "manual_seed") else None

x = torch.linspace(-3.0, 3.0, 7)
y = torch.sigmoid(x) * 2 - 1
print("x       =", x)
print("2σ(x)-1 =", y)
print("tanh(x/2) matches:", bool(((torch.tanh(x / 2) - y).abs() < 1e-6).logical_not().logical_not().all())
      if hasattr(torch.Tensor, "all") else "(reductions not available yet)")
a = torch.arange(12).float()
print("a % 5 + a // 4 =", a % 5 + a // 4)
print("dtype promotion: int32 + 2.5 ->", (torch.ones(3, dtype=torch.int32) + 2.5).dtype)
