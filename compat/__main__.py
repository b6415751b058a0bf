"""python -m flowlike.compat script.py [args...] | -m module [args...]: run PyTorch code on flowlike unchanged."""
import os
import runpy
import sys

from .mock_torch import mock_torch

_USAGE = "usage: python -m flowlike.compat script.py [args...]\n       python -m flowlike.compat -m module [args...]"


def main(argv=None):
    """Runs a script (or, after -m, a module) as __main__ with sys.argv set and `import torch` meaning flowlike."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or (argv[0] == "-m" and len(argv) < 2):
        print(_USAGE, file=sys.stderr if not argv or argv[0] == "-m" else sys.stdout)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    with mock_torch():
        if argv[0] == "-m":
            sys.argv = argv[1:]
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = argv
            sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))  # as `python script.py` sets it
            runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
