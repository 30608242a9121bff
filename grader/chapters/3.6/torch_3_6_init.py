"""tshmem_cuda: chapter 3.6's module on GPUs (tools/gpu-torch builds it; see torch_3_6.cu).

The same calls as the CPU module tshmem, on torch.cuda tensors whose memory is the NVSHMEM
heap. allreduce_ is enqueued on PyTorch's current stream; allreduce_start runs on a side stream
and Handle.wait() makes the current stream wait for it (the CPU never blocks). DataParallel is
the CPU chapter's ddp.py, unchanged, copied beside this file.
"""
import os
import sys

_flags = sys.getdlopenflags()
sys.setdlopenflags(_flags | os.RTLD_GLOBAL)  # MPI's plugins need libmpi's symbols
try:
    from . import _tshmem_cuda as _C
finally:
    sys.setdlopenflags(_flags)

import torch
import torch.utils.dlpack

from ._tshmem_cuda import barrier_all, finalize, free, my_pe, n_pes  # noqa: F401

_DL = {torch.float32: (2, 32), torch.float64: (2, 64), torch.float16: (2, 16),
       torch.int32: (0, 32), torch.int64: (0, 64)}
_comm = None
_comm_raw = 0
_dev = 0
# The current stream's handle without building a torch.cuda.Stream object (a hook calls this
# once per bucket, and a step's host time is what DataParallel is measured on).
_raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _stream():
    return _raw(_dev) if _raw else torch.cuda.current_stream().cuda_stream


def init(cap_floats=16 << 20):
    global _comm, _comm_raw, _dev
    _C.init(cap_floats)
    _dev = torch.cuda.current_device()
    _comm = torch.cuda.Stream()
    _comm_raw = _comm.cuda_stream


def _code(dtype):
    if dtype not in _DL:
        raise TypeError(f"tshmem_cuda.zeros: dtype {dtype} is not supported here.")
    return _DL[dtype]


def zeros(shape, dtype=torch.float32):
    shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
    return torch.utils.dlpack.from_dlpack(_C._alloc(shape, *_code(dtype), True))


def empty(shape, dtype=torch.float32):
    shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
    return torch.utils.dlpack.from_dlpack(_C._alloc(shape, *_code(dtype), False))


def peer(t, pe):
    cap = _C._peer(t, pe, tuple(t.shape), tuple(t.stride()), *_code(t.dtype))
    return None if cap is None else torch.utils.dlpack.from_dlpack(cap)


def allreduce_(t):
    return _C._allreduce(t, _stream())


class Handle:
    __slots__ = ("tensor", "event")

    def __init__(self, t):
        self.tensor = t  # kept alive until waited for
        self.event = _C._start(t, _stream(), _comm_raw)

    def wait(self):
        if self.event is not None:
            _C._wait(self.event, _stream())
            self.event, self.tensor = None, None

    def is_completed(self):
        return self.event is None


def allreduce_start(t):
    return Handle(t)


from .ddp import DataParallel  # noqa: E402,F401
