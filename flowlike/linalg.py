"""flowlike.linalg: linear algebra (`torch.linalg`)."""
