"""flowlike.graph: graph capture and execution (to come with graph mode)."""
