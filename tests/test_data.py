"""utils.data: datasets, samplers (DistributedSampler too), collation and the DataLoader, in-process and with
workers (no torch needed)."""
import collections

import numpy as np
import pytest

import flowlike as torch
from flowlike.utils.data import (DataLoader, Dataset, IterableDataset, TensorDataset, StackDataset, ConcatDataset,
                                 ChainDataset, Subset, random_split, SequentialSampler, RandomSampler,
                                 SubsetRandomSampler, WeightedRandomSampler, BatchSampler, default_collate,
                                 default_convert, get_worker_info)


class Squares(Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        return {"x": torch.tensor([float(i)]), "y": i * i, "name": f"s{i}"}


class Counter(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))

    def __len__(self):
        return self.n


def test_datasets():
    x, y = torch.arange(6.0).view(3, 2), torch.arange(3)
    ds = TensorDataset(x, y)
    assert len(ds) == 3 and ds[1][1].item() == 1
    with pytest.raises(AssertionError):
        TensorDataset(x, torch.arange(4))
    st = StackDataset(a=ds, b=ds)
    assert set(st[0]) == {"a", "b"}
    cat = ConcatDataset([ds, ds])
    assert len(cat) == 6 and cat[4][1].item() == 1 and cat[-1][1].item() == 2
    assert len(ds + ds) == 6
    sub = Subset(ds, [2, 0])
    assert sub[0][1].item() == 2 and len(sub) == 2
    a, b = random_split(range(10), [0.3, 0.7], generator=torch.Generator().manual_seed(0))
    assert len(a) == 3 and len(b) == 7 and sorted(list(a) + list(b)) == list(range(10))
    with pytest.raises(ValueError):
        random_split(range(10), [3, 3])
    assert list(ChainDataset([Counter(2), Counter(3)])) == [0, 1, 0, 1, 2]


def test_samplers():
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    g = torch.Generator().manual_seed(1)
    perm = list(RandomSampler(range(8), generator=g))
    assert sorted(perm) == list(range(8))
    draws = list(RandomSampler(range(3), replacement=True, num_samples=50))
    assert len(draws) == 50 and set(draws) <= {0, 1, 2}
    assert len(list(RandomSampler(range(3), num_samples=7))) == 7
    assert sorted(SubsetRandomSampler([5, 6, 7])) == [5, 6, 7]
    w = list(WeightedRandomSampler([0.0, 0.0, 1.0], 5))
    assert w == [2] * 5
    assert list(BatchSampler(range(5), 2, False)) == [[0, 1], [2, 3], [4]]
    assert list(BatchSampler(range(5), 2, True)) == [[0, 1], [2, 3]]
    assert len(BatchSampler(range(5), 2, False)) == 3
    with pytest.raises(ValueError):
        BatchSampler(range(5), 0, False)


def test_collate():
    Point = collections.namedtuple("Point", "a b")
    batch = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert isinstance(batch, Point) and batch.a.dtype == torch.int64 and batch.b.dtype == torch.float64
    out = default_collate([(np.ones(2, np.float32), "a"), (np.zeros(2, np.float32), "b")])
    assert isinstance(out, list) and out[0].shape == (2, 2) and out[1] == ("a", "b")
    assert default_collate([np.float64(1.0), np.float64(2.0)]).dtype == torch.float64
    d = default_collate([{"k": torch.ones(2)}, {"k": torch.zeros(2)}])
    assert d["k"].shape == (2, 2)
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [1]])
    with pytest.raises(TypeError):
        default_collate([object(), object()])
    conv = default_convert({"a": np.ones(3), "b": [np.zeros(1)], "c": "text"})
    assert isinstance(conv["a"], torch.Tensor) and isinstance(conv["b"][0], torch.Tensor) and conv["c"] == "text"


def test_dataloader_single_process():
    dl = DataLoader(Squares(), batch_size=4)
    batches = list(dl)
    assert len(dl) == 3 and len(batches) == 3
    assert batches[0]["x"].shape == (4, 1) and batches[0]["y"].tolist() == [0, 1, 4, 9]
    assert batches[2]["name"] == ["s8", "s9"]
    assert len(list(DataLoader(Squares(), batch_size=4, drop_last=True))) == 2
    g = torch.Generator().manual_seed(0)
    ys = [b["y"].tolist() for b in DataLoader(Squares(), batch_size=5, shuffle=True, generator=g)]
    assert sorted(sum(ys, [])) == [i * i for i in range(10)]
    unbatched = list(DataLoader(Squares(), batch_size=None))
    assert unbatched[3]["y"] == 9
    bs = list(DataLoader(Squares(), batch_sampler=[[0, 1], [9]]))
    assert bs[1]["y"].tolist() == [81]
    with pytest.raises(ValueError):
        DataLoader(Squares(), batch_sampler=[[0]], batch_size=2)
    with pytest.raises(ValueError):
        DataLoader(Squares(), sampler=[0], shuffle=True)
    it = list(DataLoader(Counter(5), batch_size=2))
    assert [b.tolist() for b in it] == [[0, 1], [2, 3], [4]]


def _init_fn(worker_id):
    np.random.seed(worker_id)


def test_dataloader_workers():
    dl = DataLoader(Squares(), batch_size=3, num_workers=2, worker_init_fn=_init_fn, prefetch_factor=2)
    ys = [b["y"].tolist() for b in dl]
    assert ys == [[0, 1, 4], [9, 16, 25], [36, 49, 64], [81]]
    x = torch.arange(20.0).view(10, 2)
    dl = DataLoader(TensorDataset(x), batch_size=4, num_workers=2, persistent_workers=True)
    for _ in range(2):
        out = torch.cat([b[0] for b in dl])
        assert np.array_equal(out.numpy(), x.numpy())
    vals = sorted(sum((b.tolist() for b in DataLoader(Counter(7), batch_size=2, num_workers=2)), []))
    assert vals == list(range(7))


class Failing(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        raise KeyError("bad sample")


def test_dataloader_worker_error():
    with pytest.raises(KeyError, match="bad sample"):
        list(DataLoader(Failing(), batch_size=2, num_workers=1))


def _bad_init(worker_id):
    raise ValueError(f"init failed in {worker_id}")


def test_dataloader_worker_init_error_and_timeout():
    with pytest.raises(ValueError, match="init failed in 0"):
        list(DataLoader(Squares(), batch_size=2, num_workers=1, worker_init_fn=_bad_init))
    with pytest.raises(ValueError):
        DataLoader(Squares(), num_workers=0, prefetch_factor=2)
    with pytest.raises(ValueError):
        DataLoader(Squares(), persistent_workers=True)
    with pytest.raises(ValueError):
        DataLoader(Squares(), timeout=-1)


class Slow(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        import time
        time.sleep(3)
        return i


def test_dataloader_timeout():
    with pytest.raises(RuntimeError, match="timed out"):
        list(DataLoader(Slow(), batch_size=1, num_workers=1, timeout=0.5))


def test_generic_subscripting():
    from flowlike.utils.data import Sampler

    class Evens(Sampler[int]):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(0, self.n, 2))

        def __len__(self):
            return (self.n + 1) // 2

    class Pairs(Dataset[tuple]):
        def __len__(self):
            return 6

        def __getitem__(self, i):
            return i, -i

    out = list(DataLoader(Pairs(), batch_size=2, sampler=Evens(6)))
    assert [b[0].tolist() for b in out] == [[0, 2], [4]]


class Big(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return (torch.ones(300, 300) * i).exp().sum(0)


def test_workers_after_parent_used_threads():
    (torch.ones(2000, 2000) * 2).exp().sum()  # the parent's OpenMP pool is live before fork
    out = list(DataLoader(Big(), batch_size=2, num_workers=2, timeout=60))
    assert [tuple(b.shape) for b in out] == [(2, 300), (2, 300)]


def test_distributed_sampler_partition():
    data = list(range(11))
    shares = [list(torch.utils.data.DistributedSampler(data, num_replicas=4, rank=r, seed=7)) for r in range(4)]
    assert all(len(s) == 3 for s in shares)
    merged = [i for s in shares for i in s]
    assert set(merged) == set(data) and len(merged) == 12  # one index repeated as padding
    loader = torch.utils.data.DataLoader(data, batch_size=2,
                                         sampler=torch.utils.data.DistributedSampler(data, 4, 1, seed=7))
    assert [int(i) for b in loader for i in b] == shares[1]
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        torch.utils.data.DistributedSampler(data)
