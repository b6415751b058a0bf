"""default_collate and default_convert: how a DataLoader turns a list of samples into a batch."""
import collections.abc
import copy
import re

import numpy as np

from ...._tensor import Tensor

__all__ = ["default_collate", "default_convert"]

_np_str_obj_array_pattern = re.compile(r"[SaUO]")
_collate_err = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}")
_convert_err = "default_convert: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def default_convert(data):
    """Converts numpy arrays (recursively inside mappings and sequences) to tensors; leaves the rest as is."""
    from ...._creation import as_tensor
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" and _np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """Stacks a list of samples into a batch, recursing into dicts, tuples, namedtuples and lists (torch rules)."""
    from ...._creation import as_tensor, tensor
    from ...._joining import stack
    from .... import _dtype as D
    elem = batch[0]
    elem_type = type(elem)
    if isinstance(elem, Tensor):
        return stack(list(batch), 0)
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ in ("ndarray", "memmap"):
            if _np_str_obj_array_pattern.search(elem.dtype.str) is not None:
                raise TypeError(_collate_err.format(elem.dtype))
            return default_collate([as_tensor(b) for b in batch])
        if elem.shape == ():
            return as_tensor(np.array(batch))
    if isinstance(elem, float):
        return tensor(batch, dtype=D.float64)
    if isinstance(elem, bool) or isinstance(elem, int):
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update({key: default_collate([d[key] for d in batch]) for key in elem})
                return clone
            return elem_type({key: default_collate([d[key] for d in batch]) for key in elem})
        except TypeError:
            return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return elem_type(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = default_collate(samples)
                return clone
            return elem_type([default_collate(samples) for samples in transposed])
        except TypeError:
            return [default_collate(samples) for samples in transposed]
    raise TypeError(_collate_err.format(elem_type))
