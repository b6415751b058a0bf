"""torch.distributed._composable: the composable APIs' old home (fsdp's fully_shard)."""
