"""DataParallel: data-parallel training over tshmem's allreduce, with gradient buckets.

Chapter 3.6. Every PE holds the whole model and trains it on its own share of each global
batch. After backward, every gradient must be the average over the PEs, so that every PE takes
the same optimizer step and the models stay equal. Averaging parameter by parameter after
backward would leave the PEs idle during backward and pay one call per parameter; instead:

- the gradients live in one symmetric buffer, cut into buckets of about bucket_bytes, filled
  in reverse parameter order (backward produces the last layer's gradients first);
- an autograd hook on each parameter copies its gradient into its slot; the hook that fills a
  bucket starts that bucket's allreduce (tshmem.allreduce_start), while backward goes on to the
  earlier layers;
- synchronize(), before the optimizer step, waits for the buckets, divides by the number of
  PEs (the whole buffer at once) and points every parameter's .grad at its slot (no copy back).

Buckets start in bucket order on every PE (a bucket that fills early waits for the ones before
it): non-blocking collectives must start in the same order everywhere.
"""
TSHMEM_CHAPTER = "3.6"

import torch

from . import allreduce_, allreduce_start, my_pe, n_pes, zeros


class DataParallel(torch.nn.Module):
    def __init__(self, module, bucket_bytes=1 << 20):
        super().__init__()
        self.module = module
        self.params = [p for p in module.parameters() if p.requires_grad]
        self.names = {id(p): n for n, p in module.named_parameters()}
        dtypes = {p.dtype for p in self.params}
        if len(dtypes) != 1 or dtypes.pop() not in (torch.float32, torch.float64):
            raise TypeError(f"tshmem.DataParallel: PE {my_pe()}: the parameters must all be "
                            f"float32 or all float64, not {sorted(map(str, dtypes))}.")
        if bucket_bytes < 1:
            raise ValueError(f"tshmem.DataParallel: bucket_bytes = {bucket_bytes}; give the "
                             f"bytes of one bucket, e.g. 1 << 20.")
        self.dtype = self.params[0].dtype
        self.bucket_bytes = bucket_bytes
        # buckets[k] = (start, end, [parameter indices]); offsets[i] = where parameter i's
        # gradient starts in the buffer (in elements).
        self.buckets, self.offsets = self._plan_buckets()
        if len(self.buckets) > 64:
            raise ValueError(f"tshmem.DataParallel: {len(self.buckets)} buckets, but at most 64 "
                             f"allreduces can be in flight; raise bucket_bytes.")
        total = self.buckets[-1][1] if self.buckets else 0
        self.buffer = zeros((total,), self.dtype)  # collective: same size on every PE
        # Each parameter's slot and each bucket's slice, as views made once: a view costs the
        # host microseconds, and the hooks and synchronize() run every step.
        self.slots = [self._slot(i) for i in range(len(self.params))]
        self.bucket_views = [self.buffer[start:end] for start, end, _ in self.buckets]
        self.bucket_of = {i: k for k, (_, _, ids) in enumerate(self.buckets) for i in ids}
        self.events = []  # what happened in the last backward, in order (tests read it)
        self._same_start()
        self._reset()
        for i, p in enumerate(self.params):
            p.register_hook(self._make_hook(i))

    def _same_start(self):
        """Every PE starts from PE 0's weights: others contribute zeros to a sum (exact)."""
        with torch.no_grad():
            for i, p in enumerate(self.params):
                slot = self._slot(i)
                slot.copy_(p if my_pe() == 0 else torch.zeros_like(p))
                allreduce_(self.buffer[self.offsets[i]:self.offsets[i] + p.numel()])
                p.copy_(slot)
            self.buffer.zero_()

    def _slot(self, i):
        """Parameter i's place in the buffer, shaped like the parameter."""
        p = self.params[i]
        return self.buffer[self.offsets[i]:self.offsets[i] + p.numel()].view_as(p)

    def _reset(self):
        self.ready = [0] * len(self.buckets)  # gradients in each bucket so far
        self.handles = [None] * len(self.buckets)
        self.next_start = 0                  # the first bucket not started yet
        self.events = []

    def forward(self, *args, **kwargs):
        if any(h is not None for h in self.handles):
            raise RuntimeError(f"tshmem.DataParallel: PE {my_pe()}: a new forward before "
                               f"synchronize() finished the last backward's allreduces.")
        self._reset()
        # Fresh gradients each step: autograd must not add into a slot whose allreduce may be
        # in flight (gradient accumulation across backwards is not supported here).
        for p in self.params:
            p.grad = None
        return self.module(*args, **kwargs)

    def _plan_buckets(self):
        raise NotImplementedError("not written yet (chapter 3.6, section \"Buckets\"): walk the parameters in reverse order, packing them into buckets of at most bucket_bytes (a larger parameter gets a bucket of its own); return the list of (start, end, [indices]) in elements and each parameter's offset")

    def _make_hook(self, i):
        def hook(grad):
            self._grad_ready(i, grad)
            return None  # the gradient itself is left as autograd made it

        return hook

    def _grad_ready(self, i, grad):
        raise NotImplementedError("not written yet (chapter 3.6, section \"The hook\"): copy the gradient into its slot (self.slots[i]), record (\"grad\", i), count it in its bucket, then start every bucket from next_start on that is full, in bucket order (its slice: self.bucket_views[k]), recording (\"start\", k)")

    def synchronize(self):
        """Before optimizer.step(): every gradient is the average over the PEs."""
        raise NotImplementedError("not written yet (chapter 3.6, section \"Before the step\"): a parameter that got no gradient is a RuntimeError naming it; wait for every bucket in order, recording (\"wait\", k); then divide the whole buffer by the number of PEs (one call, not one per bucket) and point each parameter's .grad at its slot")
