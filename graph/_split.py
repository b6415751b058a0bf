"""Splitting a compiled function at a graph break in its own code (torch.compile's graph breaks, at the source level).

When a compiled function's capture breaks on a statement of the function itself (a host read such as
`if loss.item() > 10:` or `print(x.tolist())`, a call to a torch.compiler.disable'd function), its body is cut around
the top-level statement that holds the break: the statements before it become one segment, that statement another,
the statements after it a third. Each segment is a generated function of one argument, the namespace of the call's
local variables so far, that returns the namespace it leaves (or that the function returned). The first and last
segments are compiled on their own (a later break in them splits them again); the breaking statement runs eagerly.
So the tensor work around an eager gap still runs as captured programs, as torch's graph breaks give.

The generated code keeps the function's file name and line numbers: errors, graph breaks and explain() name the
user's lines. A `return` anywhere in a segment ends the call with its value (which path a compiled segment took
is fixed by its guards, as for any capture). Functions this cannot split (source unavailable, lambdas, generators,
`global`/`nonlocal`) keep the whole-call fallback (eager, its modules compiled as pieces).
"""
import ast
import inspect
import textwrap

_NS = "__flowlike_ns"


def function_ast(fn):
    """fn's FunctionDef with the file's absolute line numbers, or None (no source, a lambda, a generator ...)."""
    tree = getattr(fn, "_flowlike_ast", None)
    if tree is not None:
        return tree
    code = getattr(fn, "__code__", None)
    if code is None or fn.__name__ == "<lambda>":
        return None
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
        return None
    try:
        lines, first = inspect.getsourcelines(fn)
        module = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return None
    if len(module.body) != 1 or not isinstance(module.body[0], ast.FunctionDef):
        return None
    ast.increment_lineno(module, first - 1)
    func = module.body[0]
    func.decorator_list = []  # the segments are compiled by the caller, not by a decorator
    if any(isinstance(n, (ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom)) for n in _own_nodes(func)):
        return None
    return func


def _own_nodes(func):
    """The nodes of func's body, not those of functions or classes defined inside it."""
    stack = list(func.body)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                stack.append(child)


def _names(nodes, ctx):
    found = set()
    for stmt in nodes:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ctx):
                found.add(n.id)
            elif ctx is ast.Store and isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
                found.add(n.name)
            elif ctx is ast.Store and isinstance(n, ast.alias):
                found.add((n.asname or n.name).split(".")[0])
    return found


def _params(func):
    a = func.args
    names = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
    names += [p.arg for p in (a.vararg, a.kwarg) if p is not None]
    return names


def _function_def(name, args, body, loc):
    fields = dict(name=name, args=args, body=body, decorator_list=[], returns=None)
    if "type_params" in ast.FunctionDef._fields:
        fields["type_params"] = []
    return ast.copy_location(ast.FunctionDef(**fields), loc)


def _segment(func, stmts, reads, returns, index):
    """The source-level function of one segment: it binds the names it reads from the namespace it is given, runs
    stmts, and returns (False, the names it assigned that later segments read) or (True, the function's return
    value)."""
    loc = stmts[0]
    prologue = [ast.parse(f"if {name!r} in {_NS}: {name} = {_NS}[{name!r}]").body[0] for name in sorted(reads)]
    keep = "{" + ", ".join(repr(n) for n in sorted(returns)) + "}"
    epilogue = [ast.parse(f"return False, {{k: v for k, v in locals().items() if k in {keep}}}").body[0]]
    for stmt in prologue + epilogue:
        for n in ast.walk(stmt):
            ast.copy_location(n, loc)
    body = prologue + [_ReturnAsPair().visit(stmt) for stmt in stmts] + epilogue
    args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=_NS)], vararg=None, kwonlyargs=[], kw_defaults=[],
                         kwarg=None, defaults=[])
    return _function_def(f"{func.name}__segment{index}", args, body, loc)


class _ReturnAsPair(ast.NodeTransformer):
    """`return x` -> `return True, x` in a segment's own code."""

    def visit_Return(self, node):
        value = node.value if node.value is not None else ast.Constant(None)
        return ast.copy_location(ast.Return(ast.Tuple([ast.Constant(True), value], ast.Load())), node)

    def visit_FunctionDef(self, node):
        return node  # a nested function's returns are its own

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef


def split(fn, line):
    """[(segment function, whether to compile it, the names it reads)] for fn cut around the top-level statement holding `line`, or
    None when fn cannot be split there. A segment function (made by an earlier split) splits into segments that
    take and leave namespaces as it does."""
    func = function_ast(fn)
    if func is None:
        return None
    body = func.body
    at = next((i for i, s in enumerate(body) if s.lineno <= line <= (s.end_lineno or s.lineno)), None)
    if at is None:
        return None
    parts = [(body[:at], True), (body[at:at + 1], False), (body[at + 1:], True)]
    parts = [(stmts, compiled) for stmts, compiled in parts if stmts]
    if len(parts) == 1:
        return None  # the function is that one statement: nothing would be compiled
    # the names a call's namespace holds: the parameters and the closure's variables (a segment split again: the
    # names its own namespace held), then whatever the segments assign
    known = getattr(fn, "_flowlike_known", None)
    if known is None:
        known = set(_params(func)) | set(fn.__code__.co_freevars)
    exit_needed = getattr(fn, "_flowlike_needed", set())  # what a segment split again must hand back
    segments = []
    for index, (stmts, compiled) in enumerate(parts):
        later = [s for p, _ in parts[index + 1:] for s in p]
        reads = _names(stmts, ast.Load) & known
        returns = _names(stmts, ast.Store) & (_names(later, ast.Load) | exit_needed)
        seg = _segment(func, stmts, reads, returns, index)
        module = ast.fix_missing_locations(ast.Module(body=[seg], type_ignores=[]))
        namespace = {}
        exec(compile(module, fn.__code__.co_filename, "exec"), fn.__globals__, namespace)
        made = namespace[seg.name]
        # the segment's own statements, for a later break in it that splits it again
        made._flowlike_ast = _function_def(seg.name, seg.args, stmts, stmts[0])
        made._flowlike_known, made._flowlike_needed = reads, returns
        segments.append((made, compiled, reads))
        known = known | _names(stmts, ast.Store)
    return segments


def run_segments(segments, fn, args, kwargs, wrap_number):
    """Runs a split function's segments ((callable, names it reads, compiled?)) for one call of fn; returns what a
    segment returns: (True, fn's return value) or (False, the namespace at the end). A float an eager segment made
    (a host read's value) reaches a compiled segment as wrap_number(value), a tensor that computes as that Python
    number does: the segment's program takes it as an input instead of being captured again for each value."""
    if hasattr(fn, "_flowlike_known"):  # a segment split again: its argument is the namespace
        namespace = dict(args[0])
    else:
        target = getattr(fn, "__func__", fn)
        bound = inspect.signature(target).bind(*((fn.__self__,) if target is not fn else ()), *args, **kwargs)
        bound.apply_defaults()
        namespace = dict(bound.arguments)
        cells = target.__closure__ or ()
        for name, cell in zip(target.__code__.co_freevars, cells):
            try:
                namespace[name] = cell.cell_contents
            except ValueError:  # a variable of the enclosing function not yet assigned
                pass
    host_numbers = set()
    for segment, reads, compiled in segments:
        given = {k: namespace[k] for k in reads if k in namespace}
        if compiled:
            given.update((k, wrap_number(given[k])) for k in host_numbers & given.keys())
        returned, value = segment(given)
        if returned:
            return True, value
        namespace.update(value)
        if not compiled:
            host_numbers |= {k for k, v in value.items() if type(v) is float}
    return False, namespace
