"""Packed sequences (`torch.nn.utils.rnn`): PackedSequence, pack_padded_sequence, pad_packed_sequence,
pad_sequence, pack_sequence, unpack_sequence, unpad_sequence.

A PackedSequence stores the time steps of a batch of sequences sorted by decreasing length: `data` holds,
for each step t, the elements of the batch_sizes[t] sequences still running; sorted_indices maps that order
to the caller's batch order and unsorted_indices back.
"""
from collections import namedtuple

from ... import _creation, _joining, _views
from ..._tensor import Tensor

__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence", "pack_sequence",
           "unpack_sequence", "unpad_sequence", "invert_permutation"]


class PackedSequence(namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """Holds the data and batch sizes of a packed batch of sequences (made by pack_padded_sequence)."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else type(self)(data, self.batch_sizes, self.sorted_indices,
                                                         self.unsorted_indices)

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False


def invert_permutation(permutation):
    """The permutation that undoes `permutation` (None stays None)."""
    if permutation is None:
        return None
    out = _creation.empty_like(permutation)
    out[permutation] = _creation.arange(permutation.numel(), dtype=permutation.dtype)
    return out


def _lengths_list(lengths):
    return [int(v) for v in (lengths.tolist() if isinstance(lengths, Tensor) else lengths)]


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch (T, B, *) (or (B, T, *) with batch_first) of sequences with the given lengths."""
    lengths = _lengths_list(lengths)
    if batch_first:
        input = input.transpose(0, 1)
    if len(lengths) != input.shape[1]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths)} (batch_size="
                           f"{input.shape[1]})")
    if any(n <= 0 for n in lengths):
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    if enforce_sorted:
        if any(a < b for a, b in zip(lengths, lengths[1:])):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                               "sidestep this requirement if you do not need ONNX exportability.")
        sorted_indices = None
        order = list(range(len(lengths)))
    else:
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
        sorted_indices = _creation.tensor(order)
        input = input.index_select(1, sorted_indices)
    sorted_lengths = [lengths[i] for i in order]
    if sorted_lengths[0] > input.shape[0]:
        raise RuntimeError(f"Expected the longest sequence length {sorted_lengths[0]} to be at most the padded length "
                           f"{input.shape[0]}")
    batch_sizes = [sum(1 for n in sorted_lengths if n > t) for t in range(sorted_lengths[0])]
    data = _views.cat([input[t, :b] for t, b in enumerate(batch_sizes)], 0)
    return PackedSequence(data, _creation.tensor(batch_sizes), sorted_indices)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Inverse of pack_padded_sequence: returns (padded (T, B, *) or (B, T, *), lengths as an int64 tensor)."""
    data, batch_sizes = sequence.data, sequence.batch_sizes.tolist()
    max_len = len(batch_sizes)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError(f"Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {max_len}")
        max_len = total_length
    batch = batch_sizes[0]
    steps, offset = [], 0
    for b in batch_sizes:
        step = data[offset:offset + b]
        if b < batch:
            step = _views.cat([step, _creation.full((batch - b,) + tuple(data.shape[1:]), padding_value,
                                                   dtype=data.dtype)], 0)
        steps.append(step)
        offset += b
    for _ in range(max_len - len(batch_sizes)):
        steps.append(_creation.full((batch,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype))
    padded = _joining.stack(steps, 0)
    lengths = _creation.tensor([sum(1 for b in batch_sizes if b > i) for i in range(batch)])
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices]
    return (padded.transpose(0, 1) if batch_first else padded), lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks variable-length tensors (L_i, *) into (T, B, *) (or (B, T, *)), padding with padding_value."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    sequences = list(sequences)
    max_len = max(s.shape[0] for s in sequences)
    rows = []
    for s in sequences:
        pad = _creation.full((max_len - s.shape[0],) + tuple(s.shape[1:]), padding_value, dtype=s.dtype)
        rows.append(_views.cat([s, pad] if padding_side == "right" else [pad, s], 0))
    out = _joining.stack(rows, 0)
    return out if batch_first else out.transpose(0, 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Splits a padded batch back into a list of tensors of the given lengths."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[i, :n] for i, n in enumerate(_lengths_list(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of variable-length tensors (L_i, *)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of tensors a PackedSequence was made of."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
