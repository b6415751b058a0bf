"""flowlike.distributed.algorithms (torch.distributed.algorithms): DistributedDataParallel communication hooks."""
