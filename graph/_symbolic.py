"""Symbolic dimensions for flowlike.compile (dynamic=None): one captured program serving every size of a dimension.

A replay already recomputes every shape (each boxed op runs its shape rule on the tensors it gets); what a
program fixes are the integer arguments derived from sizes (`x.view(B * T, C)`, `pos[:, :T]`). Two captures of
the same code that differ only in one size s (the same value in every tensor dimension that changed, e.g. the
batch dimension of inputs and targets) are compared call by call: the same ops on the same value ids, and every
integer argument that differs is fitted as affine in s (v = v1 + (v2 - v1) * (s - s1) / (s2 - s1)). A third
capture at another size checks the fit; from then on a new size instantiates the program with its integer
arguments recomputed, without running the Python code. Anything else that differs (floats, constants, structure)
means no fit, and each size keeps its own capture."""
from fractions import Fraction

from .. import _C, equal


def shape_difference(key1, key2):
    """The (tensor index, dimension) positions where two guard keys' tensor shapes differ, when nothing else
    differs and all of them hold one size per key; None otherwise."""
    if len(key1) != len(key2) or any(a != b for i, (a, b) in enumerate(zip(key1, key2)) if i != 1):
        return None
    metas1, metas2 = key1[1], key2[1]
    if len(metas1) != len(metas2):
        return None
    positions = []
    for i, ((shape1, *rest1), (shape2, *rest2)) in enumerate(zip(metas1, metas2)):
        if rest1 != rest2 or len(shape1) != len(shape2):
            return None
        positions += [(i, d) for d, (a, b) in enumerate(zip(shape1, shape2)) if a != b]
    if not positions or len({key1[1][i][0][d] for i, d in positions}) != 1 or \
            len({key2[1][i][0][d] for i, d in positions}) != 1:
        return None
    return positions


def masked(key, positions):
    """The guard key with the symbolic dimensions left out, and the size they hold (None when they disagree)."""
    metas = [list(m) for m in key[1]]
    sizes = set()
    for i, d in positions:
        if i >= len(metas) or d >= len(metas[i][0]):
            return None, None
        shape = list(metas[i][0])
        sizes.add(shape[d])
        shape[d] = None
        metas[i][0] = tuple(shape)
    masked_key = (key[0], tuple(tuple(m) for m in metas), *key[2:])
    return masked_key, (sizes.pop() if len(sizes) == 1 else None)


def export(program):
    """The program as plain data (_TracedProgram.export), None for one that cannot be (an explicit generator's
    draws)."""
    try:
        return program.export()
    except RuntimeError:
        return None


def at_geometry(program, values):
    """The program rebuilt with the geometry (sizes, strides, dtype) its values had in a run (`values`: replay()'s,
    by id). A program instantiated at a new size otherwise carries that of the capture its fit started from."""
    calls, input_ids, constants, num_values, meta = program.export()
    meta = [m if v is None else (list(v.shape), v.dtype, list(v.stride()), m[3]) for m, v in zip(meta, values)]
    return _C._program_from(calls, input_ids, constants, num_values, meta)


class SymbolicProgram:
    """A program's exported calls with the integer arguments that follow a size s (the fit of two captures)."""

    def __init__(self, exported, fits, s1, s2):
        self.calls, self.input_ids, self.constants, self.num_values, self.meta = exported
        self.fits, self.s1, self.s2 = fits, s1, s2  # fits: (call, argument, element or None, v1, v2)

    @staticmethod
    def fit(e1, e2, s1, s2):
        """The symbolic form of two captures at sizes s1 != s2 (their programs as export() gives them, before any
        pass), or None when they differ in more than integers."""
        if e1 is None or e2 is None:
            return None
        calls1, input_ids1, consts1, n1, _ = e1
        calls2, input_ids2, consts2, n2, _ = e2
        if input_ids1 != input_ids2 or n1 != n2 or len(calls1) != len(calls2) or len(consts1) != len(consts2):
            return None
        for (v1, c1), (v2, c2) in zip(consts1, consts2):
            if v1 != v2 or c1.shape != c2.shape or c1.dtype != c2.dtype or not equal(c1, c2):
                return None
        fits = []
        for ci, ((name1, args1, ids1, res1), (name2, args2, ids2, res2)) in enumerate(zip(calls1, calls2)):
            if name1 != name2 or ids1 != ids2 or res1 != res2 or len(args1) != len(args2):
                return None
            for ai, (a1, a2) in enumerate(zip(args1, args2)):
                if type(a1) is not type(a2):
                    return None
                if _same(a1, a2):
                    continue
                if type(a1) is int:
                    fits.append((ci, ai, None, a1, a2))
                elif type(a1) is list and len(a1) == len(a2) and all(type(x) is int for x in a1 + a2):
                    fits += [(ci, ai, k, x1, x2) for k, (x1, x2) in enumerate(zip(a1, a2)) if x1 != x2]
                else:
                    return None
        return SymbolicProgram(e1, fits, s1, s2)

    def calls_at(self, s):
        """The calls with their integer arguments at size s; None when an argument would not be an integer."""
        calls = [(name, list(args), ids, res) for name, args, ids, res in self.calls]
        for ci, ai, k, v1, v2 in self.fits:
            value = v1 + Fraction(v2 - v1) * (s - self.s1) / (self.s2 - self.s1)
            if value.denominator != 1:
                return None
            args = calls[ci][1]
            if k is None:
                args[ai] = int(value)
            else:
                if args[ai] is self.calls[ci][1][ai]:
                    args[ai] = list(args[ai])
                args[ai][k] = int(value)
        return calls

    def at(self, s):
        """The program at size s (None where the fit gives no integer arguments)."""
        calls = self.calls_at(s)
        if calls is None:
            return None
        return _C._program_from(calls, self.input_ids, self.constants, self.num_values, self.meta)

    def predicts(self, exported, s):
        """Whether the program captured at size s (as export() gave it) is what this fit gives at s (the check of a
        fit)."""
        calls = self.calls_at(s)
        if calls is None or exported is None:
            return False
        captured = exported[0]
        return len(calls) == len(captured) and all(
            c[0] == d[0] and len(c[1]) == len(d[1]) and all(map(_same, c[1], d[1])) for c, d in zip(calls, captured))


def _same(a, b):
    """Equal arguments (a float NaN, such as an unset scale, equals NaN)."""
    if type(a) is float and type(b) is float and a != a and b != b:
        return True
    return type(a) is type(b) and a == b
