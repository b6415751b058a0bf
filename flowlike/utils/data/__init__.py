"""flowlike.utils.data: datasets, samplers and the DataLoader (`torch.utils.data`)."""
from .dataset import (Dataset, IterableDataset, TensorDataset, StackDataset, ConcatDataset, ChainDataset, Subset,
                      random_split)
from .sampler import (Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler, WeightedRandomSampler,
                      BatchSampler)
from .distributed import DistributedSampler
from .dataloader import DataLoader, get_worker_info, WorkerInfo
from ._utils.collate import default_collate, default_convert

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset", "Subset",
           "random_split", "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler", "DistributedSampler", "DataLoader", "get_worker_info", "WorkerInfo",
           "default_collate", "default_convert"]
