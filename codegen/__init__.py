"""flowlike.codegen: fused-kernel generators (to come with graph mode)."""
