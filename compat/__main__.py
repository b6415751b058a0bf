"""python -m flowlike.compat script.py [args...] | -m module [args...] | -c code [args...]

Runs PyTorch code on flowlike unchanged: `import torch` inside it (and in everything it imports) is flowlike.
"""
import os
import runpy
import sys

from .mock_torch import _is_alias, _target_of, mock_torch

_USAGE = ("usage: python -m flowlike.compat script.py [args...]\n"
          "       python -m flowlike.compat -m module [args...]\n"
          "       python -m flowlike.compat -c code [args...]")


def main(argv=None):
    """Runs a script, module (-m) or code string (-c) as __main__, with sys.argv set as python would set it."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("-h", "--help"):
        print(_USAGE)
        return 0
    if not argv or (argv[0] in ("-m", "-c") and len(argv) < 2):
        print(_USAGE, file=sys.stderr)
        return 2
    with mock_torch():
        if argv[0] == "-m":
            sys.argv = argv[1:]
            # `-m torch.distributed.run` runs flowlike's module of that name (runpy needs the real module's code)
            module = _target_of(argv[1]) if _is_alias(argv[1]) else argv[1]
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        elif argv[0] == "-c":
            sys.argv = ["-c"] + argv[2:]
            exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
        else:
            sys.argv = argv
            sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))  # as `python script.py` sets it
            runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
