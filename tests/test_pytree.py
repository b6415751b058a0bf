"""flowlike.utils._pytree: flatten/unflatten round trips, maps, registered node types."""
import collections

import pytest

import flowlike as torch
from flowlike.utils import _pytree as pytree

Point = collections.namedtuple("Point", "x y")


def test_flatten_unflatten_round_trip():
    tree = {"a": [1, (2, 3)], "b": None, "c": collections.OrderedDict(z=4, y=Point(5, 6)),
            "d": collections.deque([7], maxlen=3)}
    leaves, spec = pytree.tree_flatten(tree)
    assert leaves == [1, 2, 3, 4, 5, 6, 7] and spec.num_leaves == 7
    rebuilt = pytree.tree_unflatten([v * 10 for v in leaves], spec)
    assert rebuilt == {"a": [10, (20, 30)], "b": None, "c": collections.OrderedDict(z=40, y=Point(50, 60)),
                       "d": collections.deque([70], maxlen=3)}
    assert type(rebuilt["c"]["y"]) is Point and rebuilt["d"].maxlen == 3
    with pytest.raises(ValueError, match="holds 7 items"):
        pytree.tree_unflatten([1], spec)


def test_maps_and_predicates():
    t = torch.ones(2)
    tree = (t, {"n": 3, "u": [t * 2]})
    doubled = pytree.tree_map_only(torch.Tensor, lambda x: x * 2, tree)
    assert doubled[1]["n"] == 3 and torch.equal(doubled[1]["u"][0], t * 4)
    assert pytree.tree_map(lambda a, b: a + b, [1, (2,)], [10, (20,)]) == [11, (22,)]
    with pytest.raises(ValueError, match="same structure"):
        pytree.tree_map(lambda a, b: a, [1, 2], [1, [2]])
    assert pytree.tree_any(lambda x: isinstance(x, int), tree) and not pytree.tree_all(lambda x: isinstance(x, int), tree)
    assert pytree.tree_all_only(torch.Tensor, lambda x: x.shape == (2,), tree)
    assert pytree.tree_leaves([[1], 2], is_leaf=lambda x: isinstance(x, list) and len(x) == 1) == [[1], 2]


def test_register_pytree_node():
    class Box:
        def __init__(self, items, label):
            self.items, self.label = items, label

    pytree.register_pytree_node(Box, lambda b: (b.items, b.label), lambda c, label: Box(list(c), label),
                                serialized_type_name="tests.Box")
    leaves, spec = pytree.tree_flatten([Box([1, 2], "L"), 3])
    assert leaves == [1, 2, 3]
    box = pytree.tree_unflatten([4, 5, 6], spec)[0]
    assert box.items == [4, 5] and box.label == "L"
    with pytest.raises(ValueError, match="already registered"):
        pytree.register_pytree_node(Box, None, None)


def test_key_paths():
    tree = {"a": [1, Point(2, 3)], "b": collections.defaultdict(list, {"z": 4})}
    pairs, spec = pytree.tree_flatten_with_path(tree)
    assert [(pytree.keystr(p), v) for p, v in pairs] == [("['a'][0]", 1), ("['a'][1].x", 2), ("['a'][1].y", 3),
                                                          ("['b']['z']", 4)]
    assert spec == pytree.tree_structure(tree)
    assert pairs[1][0][1].get(tree["a"]) == Point(2, 3)
    labelled = pytree.tree_map_with_path(lambda p, v: f"{pytree.keystr(p)}={v}", tree)
    assert labelled["a"][1].y == "['a'][1].y=3" and labelled["b"]["z"] == "['b']['z']=4"
    assert pytree._dict_flatten_with_keys({"k": 1}) == ([(pytree.MappingKey("k"), 1)], ["k"])
