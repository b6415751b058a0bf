"""Training with uneven inputs (torch.distributed.algorithms.join): ranks that run out of data shadow the
collectives of the ranks still training, so nobody waits forever.

Each iteration of a rank still training starts with Join.notify_join_context(joinable): an all-reduce of 1. A rank
whose loop has ended sits in Join.__exit__, where it all-reduces 0 (so the sum counts the ranks still training) and,
while that count is not 0, runs each joinable's JoinHook.main_hook(), which issues the same collectives as one
iteration of the training ranks (DistributedDataParallel: its buffer broadcast and its gradient all-reduces, with
zeros). When every rank has joined, each hook's post_hook(is_last_joiner) runs (DDP: the last rank to join
broadcasts its final parameters).
"""
from abc import ABC, abstractmethod

from .. import distributed_c10d as c10d

__all__ = ["Join", "Joinable", "JoinHook"]


class JoinHook:
    """What a joinable does once its rank has joined: main_hook() shadows one iteration of the ranks still
    training; post_hook(is_last_joiner) runs once all ranks have joined."""

    def main_hook(self):
        """Shadows one training iteration's collectives (default: none)."""

    def post_hook(self, is_last_joiner):
        """Runs after all ranks joined; is_last_joiner tells whether this rank was among the last (default: none)."""


class _JoinConfig:
    def __init__(self, enable, throw_on_early_termination, is_first_joinable):
        self.enable = enable
        self.throw_on_early_termination = throw_on_early_termination
        self.is_first_joinable = is_first_joinable

    @staticmethod
    def construct_disabled_join_config():
        return _JoinConfig(enable=False, throw_on_early_termination=False, is_first_joinable=False)


class Joinable(ABC):
    """A class whose instances can take part in a Join: it gives a join_hook, the device and the process group of
    its collectives, and calls Join.notify_join_context(self) at the start of each iteration."""

    @abstractmethod
    def __init__(self):
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs):
        """The JoinHook of this joinable (kwargs: the Join's keyword arguments)."""

    @property
    @abstractmethod
    def join_device(self):
        """The device of the joinable's collectives."""

    @property
    @abstractmethod
    def join_process_group(self):
        """The process group of the joinable's collectives."""


class Join:
    """Context manager for training loops with uneven inputs across ranks: with Join([ddp_model]): for batch in
    my_share: ... A rank that leaves the loop early shadows the others' collectives until all have left.
    throw_on_early_termination=True instead raises on every rank as soon as one rank has run out of inputs."""

    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._join_hooks = [joinable.join_hook(**kwargs) for joinable in joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        self._set_joinable_configs()
        self._extract_dist_info()

    def _set_joinable_configs(self):
        for i, joinable in enumerate(self._joinables):
            joinable._join_config = _JoinConfig(self._enable, self._throw_on_early_termination, i == 0)

    def _extract_dist_info(self):
        groups = {id(j.join_process_group) for j in self._joinables}
        if len(groups) > 1:
            raise ValueError("Using join context manager with multiple process groups")
        self._process_group = self._joinables[0].join_process_group
        self._rank = c10d.get_rank(self._process_group)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if not self._enable or exc_type is not None:
            return False  # an exception in the loop propagates; the other ranks get the error of the dead rank
        is_last_joiner = True
        while self._num_nonjoined_procs() > 0:
            if self._throw_on_early_termination:
                self._notify_procs_to_terminate()
            for hook in self._join_hooks:
                hook.main_hook()
            is_last_joiner = False
        for hook in self._join_hooks:
            hook.post_hook(is_last_joiner)
        for joinable in self._joinables:
            joinable._join_config = _JoinConfig.construct_disabled_join_config()
        return False

    def _num_nonjoined_procs(self):
        from ... import zeros
        count = zeros(1)
        c10d.all_reduce(count, group=self._process_group)
        return int(count.item())

    def _notify_procs_to_terminate(self):
        from ... import ones
        c10d.all_reduce(ones(1), group=self._process_group)
        raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")

    @staticmethod
    def notify_join_context(joinable):
        """Called by a joinable at the start of each iteration: counts this rank as still training (the Work of
        that all-reduce: work.result()[0] holds the number of ranks still training), and with
        throw_on_early_termination raises when a rank has run out of inputs. None outside an enabled Join, or for
        a joinable other than the Join's first."""
        from ... import ones, zeros
        config = joinable._join_config
        if not config.is_first_joinable or not config.enable:
            return None
        group = joinable.join_process_group
        work = c10d.all_reduce(ones(1), group=group, async_op=True)
        if config.throw_on_early_termination:
            should_throw = zeros(1)
            c10d.all_reduce(should_throw, group=group)
            if should_throw.item():
                raise RuntimeError("Detected at least one rank that exhausted inputs. Throwing across all ranks.")
        return work
