"""DataLoader: batches from a dataset, in the main process or in worker processes (torch.utils.data.DataLoader)."""
import itertools
import multiprocessing
import os
import queue
import random
import signal

from ... import _dtype as D
from ._utils.collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info", "WorkerInfo"]


class WorkerInfo:
    """What get_worker_info() returns inside a worker: id, num_workers, seed, dataset."""

    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)

    def __repr__(self):
        items = ", ".join(f"{k}={v}" for k, v in self.__dict__.items())
        return f"WorkerInfo({items})"


_worker_info = None


def get_worker_info():
    """The WorkerInfo of the current worker process, or None in the main process."""
    return _worker_info


class _DatasetKind:
    Map, Iterable = 0, 1


class _IterableDatasetStopIteration:
    def __init__(self, worker_id):
        self.worker_id = worker_id


class _ResumeIteration:
    pass


class _ExceptionWrapper:
    """An exception raised in a worker, re-raised in the main process with the worker's traceback."""

    def __init__(self, exc_info, where):
        import traceback
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


class _Fetcher:
    """Fetches one batch (or sample) from a dataset for a list of indices (map) or from an iterator (iterable)."""

    def __init__(self, kind, dataset, auto_collation, collate_fn, drop_last):
        self.kind, self.dataset = kind, dataset
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last
        self.dataset_iter = iter(dataset) if kind == _DatasetKind.Iterable else None
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.kind == _DatasetKind.Iterable:
            if self.ended:
                raise StopIteration
            if self.auto_collation:
                data = []
                for _ in possibly_batched_index:
                    try:
                        data.append(next(self.dataset_iter))
                    except StopIteration:
                        self.ended = True
                        break
                if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
                    raise StopIteration
            else:
                data = next(self.dataset_iter)
            return self.collate_fn(data)
        if self.auto_collation:
            if hasattr(self.dataset, "__getitems__") and self.dataset.__getitems__:
                data = self.dataset.__getitems__(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


def _generate_state(base_seed, worker_id):
    """numpy's per-worker seed, derived from the base seed as torch does (SeedSequence-style hashing)."""
    INIT_A, MULT_A, INIT_B, MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
    MIX_MULT_L, MIX_MULT_R, XSHIFT, MASK32 = 0xCA01F9DD, 0x4973F715, 16, 0xFFFFFFFF
    entropy = [worker_id, base_seed & MASK32, base_seed >> 32, 0]
    hash_const_a = INIT_A

    def hash_(value):
        nonlocal hash_const_a
        value = (value ^ hash_const_a) & MASK32
        hash_const_a = (hash_const_a * MULT_A) & MASK32
        value = (value * hash_const_a) & MASK32
        return (value ^ (value >> XSHIFT)) & MASK32

    def mix(x, y):
        result = ((MIX_MULT_L * x) & MASK32) - ((MIX_MULT_R * y) & MASK32) & MASK32
        result &= MASK32
        return (result ^ (result >> XSHIFT)) & MASK32

    pool = [hash_(e) for e in entropy]
    for i_src in range(4):
        for i_dst in range(4):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hash_(pool[i_src]))
    hash_const_b = INIT_B
    state = []
    for data_val in pool:
        data_val = (data_val ^ hash_const_b) & MASK32
        hash_const_b = (hash_const_b * MULT_B) & MASK32
        data_val = (data_val * hash_const_b) & MASK32
        state.append((data_val ^ (data_val >> XSHIFT)) & MASK32)
    return state


def _worker_loop(*args):
    """A worker process: seeds its RNGs, then fetches batches for the indices it receives until told to stop (or
    until its parent is gone)."""
    try:
        _worker_main(os.getppid(), *args)
    except KeyboardInterrupt:
        pass  # Ctrl-C reaches the whole process group: the main process raises it (as torch's workers, silently)


def _worker_main(parent, kind, dataset, index_queue, data_queue, auto_collation, collate_fn, drop_last, base_seed,
                 init_fn, worker_id, num_workers):
    global _worker_info
    from ..._random import manual_seed, set_num_threads
    # As torch: one intra-op thread per worker (and no use of the parent's OpenMP pool after fork).
    set_num_threads(1)
    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    import numpy as np
    np.random.seed(_generate_state(base_seed, worker_id))
    _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
    init_exception = fetcher = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = _Fetcher(kind, dataset, auto_collation, collate_fn, drop_last)
    except Exception:
        import sys
        init_exception = _ExceptionWrapper(sys.exc_info(), f"in DataLoader worker process {worker_id}")
    iteration_end = False
    while True:
        try:
            r = index_queue.get(timeout=5.0)
        except queue.Empty:
            if os.getppid() != parent:  # the main process died (killed): do not outlive it
                break
            continue
        if isinstance(r, _ResumeIteration):
            data_queue.put((r, None))
            iteration_end = False
            fetcher = _Fetcher(kind, dataset, auto_collation, collate_fn, drop_last)
            continue
        if r is None:
            break
        if iteration_end:
            continue
        idx, index = r
        if init_exception is not None:
            data, init_exception = init_exception, None
            iteration_end = fetcher is None
        else:
            try:
                data = fetcher.fetch(index)
            except Exception as e:
                import sys
                if isinstance(e, StopIteration) and kind == _DatasetKind.Iterable:
                    data = _IterableDatasetStopIteration(worker_id)
                    iteration_end = True
                else:
                    data = _ExceptionWrapper(sys.exc_info(), f"in DataLoader worker process {worker_id}")
        data_queue.put((idx, data))


class DataLoader:
    """Iterates over a dataset in batches: sampling, batching, collation and optional worker processes."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            if shuffle not in {False, None}:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
                                 f"got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._iterator = None

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if self._dataset_kind == _DatasetKind.Iterable:
            length = len(self.dataset)
            if self.batch_size is not None:
                from math import ceil
                length = length // self.batch_size if self.drop_last else ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def __del__(self):
        it = self.__dict__.get("_iterator")
        if it is not None:
            it._shutdown_workers()


class _InfiniteConstantSampler:
    """The sampler of an IterableDataset: yields None forever (the dataset decides when to stop)."""

    def __iter__(self):
        while True:
            yield None


class _BaseDataLoaderIter:
    def __init__(self, loader):
        from ..._creation import empty
        from ..._random import default_generator
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        # Like torch, every iterator draws a base seed (for the workers) from the loader's generator.
        gen = loader.generator if loader.generator is not None else default_generator
        self._base_seed = int(empty((), dtype=D.int64).random_(generator=gen).item())
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0

    def _next_index(self):
        return next(self._sampler_iter)

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        return data

    def __len__(self):
        return len(self._index_sampler)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = _Fetcher(self._dataset_kind, self._dataset, self._auto_collation, self._collate_fn,
                                 self._drop_last)

    def _next_data(self):
        index = self._next_index()
        return self._fetcher.fetch(index)


def _worker_death_message(pid, exitcode):
    """torch's words for a worker that died: killed by a signal (a negative exit code) or exited with a code."""
    if exitcode is not None and exitcode < 0:
        return f"DataLoader worker (pid {pid}) is killed by signal: {signal.strsignal(-exitcode)}. "
    return (f"DataLoader worker (pid {pid}) exited unexpectedly with exit code {exitcode}. Details are lost due to "
            "multiprocessing. Rerunning with num_workers=0 may give better error trace.")


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Worker processes (fork) fed round-robin with batch indices; results are delivered in sampler order."""

    def __init__(self, loader):
        super().__init__(loader)
        self._persistent_workers = loader.persistent_workers
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = multiprocessing.get_context("fork")
        elif isinstance(ctx, str):
            ctx = multiprocessing.get_context(ctx)
        self._worker_result_queue = ctx.Queue()
        self._index_queues = []
        self._workers = []
        for i in range(self._num_workers):
            index_queue = ctx.Queue()
            w = ctx.Process(target=_worker_loop,
                            args=(self._dataset_kind, self._dataset, index_queue, self._worker_result_queue,
                                  self._auto_collation, self._collate_fn, self._drop_last, self._base_seed,
                                  loader.worker_init_fn, i, self._num_workers),
                            daemon=True)
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._shutdown = False
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # Persistent workers: restart their dataset iterators and wait until each has acknowledged.
            for q in self._index_queues:
                q.put(_ResumeIteration())
            remaining = self._num_workers
            while remaining > 0:
                idx, _ = self._get_data()
                if isinstance(idx, _ResumeIteration):
                    remaining -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _get_data(self):
        timeout = self._timeout if self._timeout > 0 else None
        while True:
            try:
                return self._worker_result_queue.get(timeout=timeout if timeout is not None else 5.0)
            except queue.Empty:
                if timeout is not None:
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds") from None
                for w in self._workers:
                    if not w.is_alive():
                        self._shutdown_workers()
                        raise RuntimeError(_worker_death_message(w.pid, w.exitcode)) from None

    def _try_put_index(self):
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_queue_idx = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_queue_idx]:
                break
        else:
            return
        self._index_queues[worker_queue_idx].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_queue_idx,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _next_data(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is None:
                    self._rcvd_idx += 1
                    continue
                worker_id = info[0]
                if len(info) == 2 or self._workers_status[worker_id]:
                    break
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                data = self._task_info.pop(self._rcvd_idx)[1]
                self._rcvd_idx += 1
                return self._process_data(data)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _IterableDatasetStopIteration):
                self._workers_status[data.worker_id] = False
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                self._task_info[idx] += (data,)
            else:
                del self._task_info[idx]
                self._rcvd_idx += 1
                return self._process_data(data)

    def _process_data(self, data):
        self._try_put_index()
        if isinstance(data, _ExceptionWrapper):
            data.reraise()
        return data

    def _shutdown_workers(self):
        if getattr(self, "_shutdown", True):
            return
        self._shutdown = True
        for q in self._index_queues:
            try:
                q.put(None)
            except Exception:
                pass
        for w in self._workers:
            w.join(timeout=5.0)
            if w.is_alive():
                w.terminate()
        for q in self._index_queues:
            q.cancel_join_thread()
            q.close()
        self._worker_result_queue.cancel_join_thread()
        self._worker_result_queue.close()

    def __del__(self):
        self._shutdown_workers()
