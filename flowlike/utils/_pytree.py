"""flowlike.utils._pytree (torch.utils._pytree): nested containers as a flat list of leaves plus a TreeSpec.

tuple, list, dict, OrderedDict, defaultdict, deque, namedtuples and None are nodes (None has no children, as in
torch); register_pytree_node adds a type (libraries register their output classes this way). Everything else is a
leaf.
"""
import collections
import dataclasses

__all__ = ["TreeSpec", "LeafSpec", "register_pytree_node", "tree_flatten", "tree_unflatten", "tree_leaves",
           "tree_structure", "tree_map", "tree_map_only", "tree_all", "tree_any", "tree_all_only", "tree_any_only",
           "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path", "keystr", "MappingKey",
           "SequenceKey", "GetAttrKey", "SUPPORTED_NODES", "Context", "KeyEntry"]

Context = object   # a node type's context (dict keys, a namedtuple class, ...)
KeyEntry = object  # a MappingKey, SequenceKey or GetAttrKey


@dataclasses.dataclass(frozen=True)
class MappingKey:
    """The path step of a mapping entry: [key]."""
    key: object

    def __str__(self):
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """The path step of a sequence element: [idx]."""
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """The path step of an attribute: .name."""
    name: str

    def __str__(self):
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


def keystr(kp):
    """A key path as a string, e.g. "['a'][0].x"."""
    return "".join(str(k) for k in kp)


@dataclasses.dataclass(frozen=True)
class NodeDef:
    """How a registered type is flattened (to children and a context) and rebuilt."""
    type: type
    flatten_fn: object
    unflatten_fn: object
    serialized_type_name: str = None
    flatten_with_keys_fn: object = None


SUPPORTED_NODES = {}


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None, to_dumpable_context=None,
                         from_dumpable_context=None, flatten_with_keys_fn=None):
    """Makes cls a pytree node: flatten_fn(obj) -> (children, context), unflatten_fn(children, context) -> obj."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, serialized_type_name, flatten_with_keys_fn)


_register_pytree_node = register_pytree_node


def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(type(obj), "_fields")


def _node_type(obj):
    if _is_namedtuple(obj):
        return collections.namedtuple
    return type(obj) if type(obj) in SUPPORTED_NODES else None


def _dict_flatten(d):
    return list(d.values()), list(d.keys())


def _dict_unflatten(values, context):
    return dict(zip(context, values))


def _dict_flatten_with_keys(d):
    values, context = _dict_flatten(d)
    return [(MappingKey(k), v) for k, v in zip(context, values)], context


def _sequence_flatten_with_keys(seq):
    return [(SequenceKey(i), v) for i, v in enumerate(seq)], SUPPORTED_NODES[type(seq)].flatten_fn(seq)[1]


def _defaultdict_flatten(d):
    return list(d.values()), (d.default_factory, list(d.keys()))


def _defaultdict_flatten_with_keys(d):
    values, context = _defaultdict_flatten(d)
    return [(MappingKey(k), v) for k, v in zip(context[1], values)], context


def _namedtuple_flatten_with_keys(t):
    return [(GetAttrKey(f), v) for f, v in zip(t._fields, t)], type(t)


register_pytree_node(type(None), lambda _: ([], None), lambda _, __: None,
                     flatten_with_keys_fn=lambda _: ([], None))
register_pytree_node(tuple, lambda t: (list(t), None), lambda c, _: tuple(c),
                     flatten_with_keys_fn=_sequence_flatten_with_keys)
register_pytree_node(list, lambda t: (list(t), None), lambda c, _: list(c),
                     flatten_with_keys_fn=_sequence_flatten_with_keys)
register_pytree_node(dict, _dict_flatten, _dict_unflatten, flatten_with_keys_fn=_dict_flatten_with_keys)
register_pytree_node(collections.OrderedDict, _dict_flatten, lambda c, keys: collections.OrderedDict(zip(keys, c)),
                     flatten_with_keys_fn=_dict_flatten_with_keys)
register_pytree_node(collections.defaultdict, _defaultdict_flatten,
                     lambda c, ctx: collections.defaultdict(ctx[0], zip(ctx[1], c)),
                     flatten_with_keys_fn=_defaultdict_flatten_with_keys)
register_pytree_node(collections.deque, lambda d: (list(d), d.maxlen),
                     lambda c, maxlen: collections.deque(c, maxlen=maxlen),
                     flatten_with_keys_fn=_sequence_flatten_with_keys)
register_pytree_node(collections.namedtuple, lambda t: (list(t), type(t)), lambda c, cls: cls(*c),
                     flatten_with_keys_fn=_namedtuple_flatten_with_keys)


class TreeSpec:
    """The structure of a pytree: node type, its context (keys, ...) and the specs of its children."""

    def __init__(self, type, context, children_specs):
        self.type = type
        self.context = context
        self.children_specs = children_specs
        self.num_leaves = sum(s.num_leaves for s in children_specs)
        self.num_nodes = 1 + sum(s.num_nodes for s in children_specs)
        self.num_children = len(children_specs)

    def is_leaf(self):
        """Whether this spec is a single leaf."""
        return False

    def unflatten(self, leaves):
        """The tree of this structure holding leaves."""
        return tree_unflatten(leaves, self)

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and other.is_leaf() == self.is_leaf() and self.type == other.type and
                self.context == other.context and self.children_specs == other.children_specs)

    def __repr__(self):
        name = getattr(self.type, "__name__", str(self.type))
        return f"TreeSpec({name}, {self.context}, {self.children_specs})"


class LeafSpec(TreeSpec):
    """The spec of one leaf."""

    def __init__(self):
        super().__init__(None, None, [])
        self.num_leaves, self.num_nodes = 1, 1

    def is_leaf(self):
        return True

    def __repr__(self):
        return "*"


def tree_flatten(tree, is_leaf=None):
    """(leaves, spec): the leaves of tree in order, and its structure."""
    leaves = []

    def walk(node):
        kind = None if is_leaf is not None and is_leaf(node) else _node_type(node)
        if kind is None:
            leaves.append(node)
            return LeafSpec()
        children, context = SUPPORTED_NODES[kind].flatten_fn(node)
        return TreeSpec(kind, context, [walk(c) for c in children])
    spec = walk(tree)
    return leaves, spec


def tree_unflatten(leaves, treespec):
    """The tree of structure treespec holding leaves (in tree_flatten's order)."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance of TreeSpec but got "
                        f"item of type {type(treespec)}.")
    leaves = list(leaves)
    if len(leaves) != treespec.num_leaves:
        raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers to a "
                         f"pytree that holds {treespec.num_leaves} items ({treespec}).")
    it = iter(leaves)

    def build(spec):
        if spec.is_leaf():
            return next(it)
        return SUPPORTED_NODES[spec.type].unflatten_fn([build(c) for c in spec.children_specs], spec.context)
    return build(treespec)


def tree_leaves(tree, is_leaf=None):
    """The leaves of tree, in order."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    """The TreeSpec of tree."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func, tree, *rests, is_leaf=None):
    """The tree of the same structure with func applied to each leaf (zipped with the leaves of rests, which must
    have tree's structure)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = []
    for r in rests:
        r_leaves, r_spec = tree_flatten(r, is_leaf)
        if r_spec != spec:
            raise ValueError(f"tree_map: the trees do not have the same structure: {spec} and {r_spec}")
        others.append(r_leaves)
    return tree_unflatten([func(*xs) for xs in zip(leaves, *others)], spec)


def _type_filter(type_or_types, func):
    return lambda x: func(x) if isinstance(x, type_or_types) else x


def tree_map_only(type_or_types_or_pred, func, tree, is_leaf=None):
    """tree_map of func over the leaves of the given type(s) (or satisfying a predicate); other leaves stay."""
    if isinstance(type_or_types_or_pred, (type, tuple)):
        mapped = _type_filter(type_or_types_or_pred, func)
    else:
        mapped = lambda x: func(x) if type_or_types_or_pred(x) else x  # noqa: E731
    return tree_map(mapped, tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    """Whether pred holds for every leaf."""
    return all(map(pred, tree_leaves(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    """Whether pred holds for some leaf."""
    return any(map(pred, tree_leaves(tree, is_leaf)))


def tree_all_only(type_or_types, pred, tree, is_leaf=None):
    """Whether pred holds for every leaf of the given type(s)."""
    return all(pred(x) for x in tree_leaves(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, pred, tree, is_leaf=None):
    """Whether pred holds for some leaf of the given type(s)."""
    return any(pred(x) for x in tree_leaves(tree, is_leaf) if isinstance(x, type_or_types))


def tree_flatten_with_path(tree, is_leaf=None):
    """([(key path, leaf), ...], spec): each leaf with the path of keys that reaches it."""
    pairs = []

    def walk(node, path):
        kind = None if is_leaf is not None and is_leaf(node) else _node_type(node)
        if kind is None:
            pairs.append((path, node))
            return
        node_def = SUPPORTED_NODES[kind]
        if node_def.flatten_with_keys_fn is None:
            raise ValueError(f"Did not find a flatten_with_keys_fn for type: {kind}. Please pass a "
                             f"flatten_with_keys_fn argument to register_pytree_node.")
        for key, child in node_def.flatten_with_keys_fn(node)[0]:
            walk(child, path + (key,))
    walk(tree, ())
    return pairs, tree_structure(tree, is_leaf)


def tree_leaves_with_path(tree, is_leaf=None):
    """[(key path, leaf), ...] of tree."""
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    """tree_map where func also receives each leaf's key path first: func(path, leaf, *rest_leaves)."""
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    others = [tree_leaves(r, is_leaf) for r in rests]
    return tree_unflatten([func(path, leaf, *xs) for (path, leaf), *xs in zip(pairs, *others)], spec)
