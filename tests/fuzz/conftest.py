import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fuzz_pool import WorkerPool  # noqa: E402

_POOL = []


@pytest.fixture(scope="session")
def fuzz_pool():
    pool = WorkerPool(timeout=float(os.environ.get("FLOWLIKE_FUZZ_TIMEOUT", "30")))
    _POOL.append(pool)
    yield pool
    pool.close()


def pytest_terminal_summary(terminalreporter):
    for pool in _POOL:
        terminalreporter.write_line(f"fuzz: {pool.cases_run} cases run, {pool.crashes} crashes, {pool.hangs} hangs, "
                                    f"{pool.restarts} worker restarts")
        seen = getattr(sys.modules.get("test_fuzz_ops"), "KNOWN_SEEN", {})
        for name, count in seen.items():
            terminalreporter.write_line(f"fuzz: {count} cases raised {name} (accepted by KNOWN_EXCEPTION_TYPES)")
        if os.environ.get("FLOWLIKE_FUZZ_SLOWEST"):
            for took, case in pool.slowest:
                terminalreporter.write_line(f"  {took:.2f} s: {case}")
