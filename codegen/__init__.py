"""flowlike.codegen: fused kernels generated from the fusion groups of captured programs.

`fuse(program, keep)` finds the groups (codegen/fusion.py), writes their C++ (codegen/cpp.py) and compiles it in
the background; `FusionPlan.poll()` installs the kernels into the program once they are built, so the first runs
go on unfused instead of waiting for the compiler. Without a compiler, or when compilation fails, the program
keeps running its unfused calls and a warning says so once. codegen/triton.py writes the same groups as Triton
kernels.

Switches: FLOWLIKE_FUSION=0 turns fusion off; `config.async_compile = False` makes fuse() wait for the compiler
(tests); FLOWLIKE_LOGS=+codegen (or nn.Graph.debug(1)) logs the groups and their source.
"""
import logging
import os
import warnings
from concurrent.futures import ThreadPoolExecutor

from . import cpp
from .fusion import find_groups

__all__ = ["fuse", "FusionPlan", "config"]

log = logging.getLogger("flowlike.codegen")
if "+codegen" in os.environ.get("FLOWLIKE_LOGS", ""):
    log.setLevel(logging.DEBUG)
    if not logging.getLogger().handlers:
        logging.basicConfig()


class _Config:
    """enabled: fuse at all (FLOWLIKE_FUSION=0 turns it off); async_compile: compile in the background."""

    def __init__(self):
        self.enabled = os.environ.get("FLOWLIKE_FUSION", "1") != "0"
        self.async_compile = True


config = _Config()
_pool = None
_warned = set()


def _executor():
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1), thread_name_prefix="flowlike-codegen")
    return _pool


def _warn_once(reason):
    if reason not in _warned:
        _warned.add(reason)
        warnings.warn(f"flowlike: fused kernels are off ({reason}); graphs run the unfused kernels.", RuntimeWarning,
                      stacklevel=3)


class FusionPlan:
    """The fusion groups of one program and the state of their kernels: `poll()` installs them when built."""

    def __init__(self, program, groups, meta):
        self.program = program
        self.groups = groups
        self.meta = meta  # per value id: (sizes, strides, dtype, wrapped) at capture
        # the groups computed by generated kernels (the others run an op: epilogues)
        self.generated = [g for g in groups if g.replacement is None]
        self.installed = False
        self.failed = None
        self.compiled = 0  # libraries compiled (not found in the cache)
        self._futures = []
        # epilogues run an existing op: installed at once, without a compiler
        for g in groups:
            if g.replacement is not None:
                program.add_group(g.name, g.calls, g.inputs, g.outputs, 0, g.replacement)
        groups = self.generated
        if not groups:
            self.installed = bool(self.groups)
            return
        # the groups are split over the CPUs: one translation unit per share, compiled in parallel
        shares = max(1, min(len(groups), os.cpu_count() or 1))
        self._units = [groups[i::shares] for i in range(shares)]
        self.sources = [cpp.program_source(unit, meta) for unit in self._units]
        for src in self.sources:
            log.debug("generated C++:\n%s", src)
        if config.async_compile:
            self._futures = [_executor().submit(cpp.build, s) for s in self.sources]
        else:
            self._futures = [_Done(s) for s in self.sources]
            self.poll()

    def poll(self):
        """Installs the kernels into the program if they are built; True once they are."""
        if self.installed or self.failed or not self.generated:
            return self.installed
        if not all(f.done() for f in self._futures):
            return False
        try:
            built = [f.result() for f in self._futures]
        except (OSError, cpp.CompileError) as e:  # (a missing compiler is an OSError)
            self.failed = str(e)
            log.debug("fusion off for this program: %s", e)
            _warn_once(str(e).splitlines()[0])
            return False
        for (path, compiled), unit in zip(built, self._units):
            self.compiled += compiled
            addresses = cpp.load(path, [g.name for g in unit])
            for g, address in zip(unit, addresses):
                self.program.add_group(g.name, g.calls, g.inputs, g.outputs, address)
        self.installed = True
        log.debug("installed %d fused groups (%d libraries compiled, %d from the cache)", len(self.generated),
                  self.compiled, len(built) - self.compiled)
        return True

    def wait(self):
        """Blocks until the kernels are built, then installs them; True when installed."""
        for f in self._futures:
            try:
                f.result()
            except Exception:  # noqa: BLE001  (poll reports it)
                pass
        return self.poll()


class _Done:
    """A build run at once (config.async_compile off), shaped as a finished future."""

    def __init__(self, source):
        try:
            self._value, self._error = cpp.build(source), None
        except (OSError, cpp.CompileError) as e:  # (a missing compiler is an OSError)
            self._value, self._error = None, e

    def done(self):
        return True

    def result(self):
        if self._error is not None:
            raise self._error
        return self._value


def fuse(program, keep):
    """Finds the fusion groups of a captured program and starts building their kernels.

    keep: the value ids a run hands back (they are written to memory even when a group makes them)."""
    if not config.enabled:
        return FusionPlan(program, [], None)
    groups, view = find_groups(program, keep)
    for g in groups:
        ops = " -> ".join(n.op for n in g.nodes) if g.replacement is None else f"one call of {g.replacement[0]}"
        log.debug("%s: %d ops over %s: %s (reads %s, writes %s)", g.name, len(g.calls), list(g.shape), ops,
                  g.inputs, g.outputs)
    return FusionPlan(program, groups, view.meta)
