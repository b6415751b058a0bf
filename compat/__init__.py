"""flowlike.compat: running unmodified PyTorch code on flowlike (mock_torch comes with the one-line-switch issue)."""
