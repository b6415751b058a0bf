"""flowlike.distributed.elastic (torch.distributed.elastic): the pieces of torchelastic that scripts use."""
