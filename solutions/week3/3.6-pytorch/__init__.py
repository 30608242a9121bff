"""tshmem for PyTorch: tensors on the symmetric heap, and collectives on them (chapter 3.6).

Run a program on N PEs with
    PYTHONPATH=build/<variant>/python tools/tshrun -np N /usr/bin/python3 prog.py
and start it with tshmem.init(). zeros, empty, free and allreduce_ are collective: every PE
calls them, in the same order, with the same shapes (as tshmem_malloc in C).
"""
import os
import sys

# MPI starts inside this Python process. Open MPI loads parts of itself as plugins that look
# for libmpi's symbols in the global namespace, and Python loads extension modules with their
# symbols private (RTLD_LOCAL): load ours, and the libmpi it brings, globally.
_flags = sys.getdlopenflags()
sys.setdlopenflags(_flags | os.RTLD_GLOBAL)
try:
    from . import _tshmem
finally:
    sys.setdlopenflags(_flags)

import torch
import torch.utils.dlpack

from ._tshmem import (Handle, allreduce_, allreduce_start, barrier_all, finalize, free, init,
                      my_pe, n_pes)

__all__ = ["init", "finalize", "my_pe", "n_pes", "barrier_all", "zeros", "empty", "free",
           "peer", "allreduce_", "allreduce_start", "Handle", "DataParallel"]


def _shape(shape):
    """(3, 4), [3, 4], torch.Size([3, 4]) or 3: a tuple of ints."""
    if isinstance(shape, int):
        return (shape,)
    try:
        return tuple(int(s) for s in shape)
    except TypeError:
        raise TypeError(f"tshmem.zeros: shape must be an int or a tuple of ints, not {shape!r}")


def _dtype_name(dtype):
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"tshmem.zeros: dtype must be a torch.dtype such as torch.float32, "
                        f"not {dtype!r}")
    return str(dtype).replace("torch.", "")


def zeros(shape, dtype=torch.float32):
    """A tensor of zeros on the symmetric heap (collective: same shape and dtype on every PE)."""
    capsule = _tshmem._alloc(_shape(shape), _dtype_name(dtype), True)
    return torch.utils.dlpack.from_dlpack(capsule)


def empty(shape, dtype=torch.float32):
    """As zeros, without clearing the memory."""
    capsule = _tshmem._alloc(_shape(shape), _dtype_name(dtype), False)
    return torch.utils.dlpack.from_dlpack(capsule)


def peer(t, pe):
    """The tensor t as PE pe holds it (loads and stores reach pe's memory), or None when pe is
    on another node. Not collective."""
    capsule = _tshmem._peer(t, pe)
    return None if capsule is None else torch.utils.dlpack.from_dlpack(capsule)


from .ddp import DataParallel  # noqa: E402 (it uses the calls above)
