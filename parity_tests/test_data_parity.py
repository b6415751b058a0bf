"""utils.data against real torch: batches, collation, sampler structure (DistributedSampler too) and split sizes."""
import collections

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import flowlike as fl  # noqa: E402
from helpers import assert_same  # noqa: E402

Pair = collections.namedtuple("Pair", "a b")


def _samples(lib):
    rs = np.random.RandomState(0)
    return [{"img": rs.randn(2, 3).astype(np.float32), "label": i, "w": float(i) / 3, "name": f"n{i}",
             "pair": Pair(lib.tensor([i, i + 1]), (i, float(i))), "flag": i % 2 == 0} for i in range(11)]


class ListDataset:
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


@pytest.mark.parametrize("kwargs", [dict(batch_size=4), dict(batch_size=4, drop_last=True), dict(batch_size=None),
                                    dict(batch_size=3, num_workers=2)])
def test_sequential_batches_match(kwargs):
    bt = list(torch.utils.data.DataLoader(ListDataset(_samples(torch)), **kwargs))
    bf = list(fl.utils.data.DataLoader(ListDataset(_samples(fl)), **kwargs))
    assert len(bf) == len(bt)
    for f, t in zip(bf, bt):
        assert_same(f, t, exact=True)


def test_tensor_dataset_and_len():
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    for kw in (dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=4, shuffle=True)):
        lt = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.tensor(x)), **kw)
        lf = fl.utils.data.DataLoader(fl.utils.data.TensorDataset(fl.tensor(x)), **kw)
        assert len(lf) == len(lt)
        assert [tuple(b[0].shape) for b in lf] == [tuple(b[0].shape) for b in lt]
        got = np.sort(np.concatenate([b[0].numpy() for b in lf]), axis=0)
        exp = np.sort(np.concatenate([b[0].numpy() for b in lt]), axis=0)
        np.testing.assert_array_equal(got, exp)


def test_seeded_shuffle_is_reproducible_permutation():
    def order(seed):
        g = fl.Generator().manual_seed(seed)
        return [int(v) for b in fl.utils.data.DataLoader(list(range(12)), batch_size=5, shuffle=True, generator=g)
                for v in b]
    assert order(3) == order(3) and sorted(order(3)) == list(range(12))
    assert order(3) != order(4)


def test_samplers_structure():
    for lib in (torch, fl):
        assert len(list(lib.utils.data.RandomSampler(range(5), replacement=True, num_samples=70))) == 70
    assert list(fl.utils.data.BatchSampler(range(7), 3, False)) == list(torch.utils.data.BatchSampler(range(7), 3,
                                                                                                      False))
    for bad in (dict(batch_size=0, drop_last=False), dict(batch_size=2, drop_last=1)):
        with pytest.raises(ValueError) as et:
            torch.utils.data.BatchSampler(range(3), **bad)
        with pytest.raises(ValueError) as ef:
            fl.utils.data.BatchSampler(range(3), **bad)
        assert str(ef.value) == str(et.value)


def test_random_split_sizes():
    for lengths in ([0.3, 0.3, 0.4], [2, 8], [0.5, 0.5]):
        st = torch.utils.data.random_split(range(11) if isinstance(lengths[0], float) else range(10), lengths)
        sf = fl.utils.data.random_split(range(11) if isinstance(lengths[0], float) else range(10), lengths)
        assert [len(s) for s in sf] == [len(s) for s in st]


def test_collate_matches():
    for batch in ([1, 2, 3], [1.5, 2.5], [True, False], ["a", "b"], [(1, 2.0), (3, 4.0)], [[1, 2], [3, 4]],
                  [np.float32(1.0), np.float32(2.0)], [np.int64(3), np.int64(4)]):
        assert_same(fl.utils.data.default_collate(batch), torch.utils.data.default_collate(batch), exact=True)


@pytest.mark.parametrize("n,replicas,drop_last", [(10, 3, False), (10, 3, True), (12, 4, False), (2, 5, False)])
def test_distributed_sampler(n, replicas, drop_last):
    """Unshuffled: exactly torch's indices per rank; shuffled: the same sizes, the ranks together cover a
    permutation (plus torch's padding), the order is fixed per (seed, epoch) and changes with set_epoch."""
    data = list(range(n))
    for r in range(replicas):
        st = torch.utils.data.DistributedSampler(data, replicas, r, shuffle=False, drop_last=drop_last)
        sf = fl.utils.data.DistributedSampler(data, replicas, r, shuffle=False, drop_last=drop_last)
        assert list(sf) == list(st) and len(sf) == len(st)
    samplers = [fl.utils.data.DistributedSampler(data, replicas, r, seed=3, drop_last=drop_last)
                for r in range(replicas)]
    first = [list(s) for s in samplers]
    assert [len(x) for x in first] == [len(torch.utils.data.DistributedSampler(data, replicas, r, drop_last=drop_last))
                                       for r in range(replicas)]
    merged = [first[r][i] for i in range(len(first[0])) for r in range(replicas)]
    if drop_last:
        assert len(set(merged)) == len(merged)
    else:
        assert set(merged) == set(data)
    assert [list(s) for s in samplers] == first
    for s in samplers:
        s.set_epoch(1)
    if n > 5:
        assert [list(s) for s in samplers] != first
    for kwargs in (dict(), dict(num_replicas=2), dict(rank=0)):
        with pytest.raises(ValueError) as et:
            torch.utils.data.DistributedSampler(data, **kwargs)
        with pytest.raises(ValueError) as ef:
            fl.utils.data.DistributedSampler(data, **kwargs)
        assert str(ef.value) == str(et.value)
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval \[0, 2\]"):
        fl.utils.data.DistributedSampler(data, 3, 3)
