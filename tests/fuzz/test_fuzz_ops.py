"""No input kills the process: a Hypothesis fuzzer over every op-database entry, every Tensor method and the
functions of flowlike, flowlike.nn.functional, flowlike.linalg and flowlike.special (see fuzz_targets.py for how
arguments are drawn: edge shapes, overflowing sizes, every dim form, every dtype, non-contiguous / expanded /
overlapping / offset views, aliased inputs and out=, backward and double backward through the result).

Each case runs in a worker process (fuzz_pool.py); a crash or a hang fails the test of its target with a
reproducer and the worker is replaced. An exception is fine when it is one of the types torch raises for bad input
(RuntimeError, IndexError, TypeError, ValueError, NotImplementedError); any other type is a failure too.

Bounded by default (FUZZ_EXAMPLES cases per target, derandomized so CI is reproducible); FLOWLIKE_FUZZ_LONG=1
(or `pytest --fuzz-long`) runs many more cases per target with fresh random seeds.
"""
import os
import re

import pytest

pytest.importorskip("hypothesis")  # (in the test extras: pip install -e ".[test]")

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import flowlike as fl  # noqa: E402
from fuzz_cases import ALLOWED, to_code  # noqa: E402
from fuzz_targets import all_targets, cases, opdb_sample_shapes, target_params  # noqa: E402

LONG = os.environ.get("FLOWLIKE_FUZZ_LONG", "") not in ("", "0")
EXAMPLES = int(os.environ.get("FLOWLIKE_FUZZ_EXAMPLES", "150" if LONG else "15"))
TARGETS = all_targets(fl)
# shrinking a crash restarts the worker per step; the raw case is already small, so shrink only when asked
PHASES = [Phase.explicit, Phase.reuse, Phase.generate] + ([Phase.shrink] if os.environ.get("FLOWLIKE_FUZZ_SHRINK") else [])
REPORT = os.environ.get("FLOWLIKE_FUZZ_REPORT")  # a file every failure is appended to as it happens

# exception types that are not torch's but are accepted for now: (type, message pattern, reason); the cases they
# admit are counted (KNOWN_SEEN) and printed in the session summary
KNOWN_EXCEPTION_TYPES = [
    ("AttributeError", r"^'(?:[\w.]+\.)?(int|float|bool|complex|str|list|tuple|NoneType|dtype|slice|ellipsis|"
                       r"Size|device|layout|memory_format)' object has no attribute",
     "a Python-written op reads a tensor attribute of a non-tensor argument where torch's argument parser raises "
     "TypeError; same mistake, other class (fixed per function as found: isclose, ldexp, clamp_min/max, ...)"),
]
KNOWN_EXCEPTION_TYPES.append(
    ("AssertionError", r"^(Padding_idx must be within num_embeddings|query should be unbatched|expected \(int, float\)"
                       r"|key should be unbatched|value should be unbatched|For (un)?batched)",
     "torch raises AssertionError here too (Python asserts in torch.nn.functional and torch.sym_max/sym_min)"))
KNOWN_EXCEPTION_TYPES.append(
    ("OverflowError", r"^cannot convert float infinity to integer$",
     "torch.sym_int(inf) and int() of a tensor holding inf raise OverflowError too (only accepted for fl.sym_int "
     "and Tensor.__int__)"))
KNOWN_EXCEPTION_TYPES.append(
    ("OverflowError", r"^(int too big to convert|can't convert negative int to unsigned)$",
     "torch raises Python's OverflowError for an int outside [-2^63, 2^64) as a Scalar (only accepted for cases "
     "that pass such an int)"))
# exception types accepted only where the case allows them: pattern -> test on (target, case)
KNOWN_WHERE = {
    r"^cannot convert float infinity to integer$":
        lambda target, case: re.match(r"^(fl\.sym_int|Tensor\.__int__)$", target) is not None,
    r"^(int too big to convert|can't convert negative int to unsigned)$":
        lambda target, case: _has_int(case, lambda v: not -(2 ** 63) <= v < 2 ** 64),
}
KNOWN_SEEN = {}


def _has_int(case, test):
    """Whether a literal int of the case's arguments passes test."""
    def walk(s):
        if isinstance(s, tuple) and s and s[0] == "lit":
            return isinstance(s[1], int) and not isinstance(s[1], bool) and test(s[1]) or (
                isinstance(s[1], (tuple, list)) and any(walk(("lit", x)) for x in s[1]))
        if isinstance(s, tuple) and s and s[0] in ("tuple", "list"):
            return any(walk(x) for x in s[1])
        return False
    return any(walk(a) for a in case["args"]) or any(walk(a) for a in case["kwargs"].values())


def _has_huge(case):
    def walk(s):
        if isinstance(s, tuple) and s and s[0] == "tensor":
            return s[3] == "huge"
        if isinstance(s, tuple) and s and s[0] in ("tuple", "list"):
            return any(walk(x) for x in s[1])
        return False
    return any(walk(a) for a in case["args"]) or any(walk(a) for a in case["kwargs"].values())


def judge(pool, case):
    status, detail = pool.run(case)
    if status in ("ok", "setup"):
        return None
    if status == "raised":
        name, msg, mro = detail
        if any(n in ALLOWED for n in mro) or (name == "MemoryError" and _has_huge(case)):
            return None
        for known_name, pattern, _reason in KNOWN_EXCEPTION_TYPES:
            if name == known_name and re.search(pattern, msg) and (
                    pattern not in KNOWN_WHERE or KNOWN_WHERE[pattern](case["target"], case)):
                KNOWN_SEEN[known_name] = KNOWN_SEEN.get(known_name, 0) + 1
                return None
        return f"raised {name} (not a type torch raises for bad input): {msg}"
    if status == "crash":
        # confirm in a fresh worker, so that the reproducer is this case alone
        history = list(pool.history)
        pool.close()
        again, _ = pool.run(case, confirm=True)
        if again == "crash":
            return f"CRASH (reproduces alone): {detail}"
        # it needs what earlier cases left behind (a corrupted heap, say): find which
        found = pool.culprits(history)
        if found is None:
            return f"CRASH (does not reproduce, not even after the worker's {len(history) - 1} earlier cases): {detail}"
        steps = "\n".join(f"  run_case(fl, {c!r})" for c in found)
        return f"CRASH (reproduces after these {len(found) - 1} earlier case(s), in order):\n{steps}\n{detail}"
    return f"{status.upper()}: {detail}"


@pytest.mark.parametrize("target", TARGETS)
def test_fuzz(fuzz_pool, target):
    params = target_params(fl, target)
    shapes, dtypes = opdb_sample_shapes(fl, target[5:]) if target.startswith("opdb:") else (None, None)
    failures = []

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=not LONG, database=None,
              suppress_health_check=list(HealthCheck), print_blob=False,
              phases=PHASES)
    @given(st.data())
    def run(data):
        case = data.draw(cases(fl, target, params, shapes, dtypes))
        problem = judge(fuzz_pool, case)
        if problem:
            failures.append(case)
            if REPORT:
                with open(REPORT, "a") as f:
                    f.write(f"{target}: {problem}\nCASE {case!r}\n\n")
            raise AssertionError(f"{target}: {problem}\n--- reproducer (run from tests/fuzz) ---\n{to_code(case)}")

    run()
