"""bench_3_6.py: chapter 3.6's benchmark: tshmem's allreduce and DataParallel from PyTorch,
against torch.distributed over gloo (PyTorch's own CPU backend) in the same run.

    tools/tshrun -np 2 build/solutions/bin/bench_3_6 [--quick] [--min SIZE] [--max SIZE]

PE 0 prints the lines of grader/bench/bench.h (the protocol of every benchmark):
  op=allreduce  a float32 tensor summed in place: tshmem.allreduce_ on the symmetric heap,
                torch.distributed.all_reduce (gloo) on an ordinary tensor;
  op=ddp_step   one training step of an MLP (forward, backward with the gradient sync, SGD):
                tshmem.DataParallel against torch's DistributedDataParallel over gloo, same
                model, same bucket size, same local batch; bytes = the gradient's bytes.
Each iteration starts after a barrier; its time is the slowest PE's; figures are medians.
"""
import os
import sys
import time

os.environ.setdefault("TSHMEM_SYMMETRIC_SIZE", str(512 << 20))
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import tshmem  # noqa: E402
import gloo_meet  # noqa: E402 (beside this file)

torch.set_num_threads(1)


def parse(argv):
    o = {"quick": False, "min": 4096, "max": 16 << 20, "iters": 0}
    unit = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--quick":
            o["quick"], o["max"] = True, 1 << 20
        elif a in ("--min", "--max", "--iters") and i + 1 < len(argv):
            v = argv[i + 1].lower()
            o[a[2:]] = int(float(v[:-1]) * unit[v[-1]]) if v[-1] in unit else int(v)
            i += 1
        else:
            sys.exit(f"usage: tools/tshrun -np N {sys.argv[0]} [--quick] [--min SIZE] "
                     f"[--max SIZE] [--iters N]")
        i += 1
    o["min"] = max(o["min"], 4096)  # below a page, Python's call overhead is all one sees
    return o


def slowest(seconds):
    """The slowest PE's time of one iteration (through gloo, outside the timed region)."""
    t = torch.tensor([seconds], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return float(t[0])


def measure(fn, iters):
    times = []
    for i in range(iters + 2):
        tshmem.barrier_all()
        t0 = time.perf_counter()
        fn()
        t = slowest(time.perf_counter() - t0)
        if i >= 2:  # two warm-up iterations
            times.append(t)
    times.sort()
    return times[len(times) // 2], times[0], times[-1]


def line(op, impl, n, nbytes, iters, med, lo, hi, bus_factor):
    if tshmem.my_pe() != 0:
        return
    alg = nbytes / med / 1e9 if med > 0 else 0.0
    print(f"bench op={op} impl={impl} pes={n} bytes={nbytes} iters={iters} "
          f"median_us={med * 1e6:.1f} min_us={lo * 1e6:.1f} max_us={hi * 1e6:.1f} "
          f"algbw_GBps={alg:.3f} busbw_GBps={alg * bus_factor:.3f}", flush=True)


def allreduce(o, n):
    size = o["min"]
    while size <= o["max"]:
        iters = o["iters"] or (50 if size <= 64 << 10 else 20 if size <= 4 << 20 else 5)
        if o["quick"]:
            iters = min(iters, 10)
        count = size // 4
        mine = tshmem.zeros(count)
        theirs = torch.zeros(count)
        for impl, fn in (("tshmem", lambda: tshmem.allreduce_(mine)),
                         ("gloo", lambda: dist.all_reduce(theirs))):
            med, lo, hi = measure(fn, iters)
            line("allreduce", impl, n, size, iters, med, lo, hi, 2 * (n - 1) / n)
        tshmem.free(mine)
        size *= 16 if o["quick"] else 4


def mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                               torch.nn.Linear(512, 512), torch.nn.ReLU(),
                               torch.nn.Linear(512, 256))


def ddp_step(o, n):
    bucket = 256 << 10
    ours = mlp()
    dp = tshmem.DataParallel(ours, bucket_bytes=bucket)
    opt = torch.optim.SGD(ours.parameters(), lr=0.01)
    theirs = dist_ddp(bucket)
    opt2 = torch.optim.SGD(theirs.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(tshmem.my_pe())
    x, y = torch.randn(32, 256, generator=g), torch.randn(32, 256, generator=g)
    nbytes = sum(p.numel() * 4 for p in ours.parameters())

    def step_ours():
        F.mse_loss(dp(x), y).backward()
        dp.synchronize()
        opt.step()

    def step_theirs():
        opt2.zero_grad()
        F.mse_loss(theirs(x), y).backward()
        opt2.step()

    alone = mlp()  # the same step with no gradient sync at all: what computing alone costs
    opt3 = torch.optim.SGD(alone.parameters(), lr=0.01)

    def step_alone():
        opt3.zero_grad()
        F.mse_loss(alone(x), y).backward()
        opt3.step()

    iters = o["iters"] or (10 if o["quick"] else 30)
    res = {}
    for impl, fn in (("tshmem", step_ours), ("gloo", step_theirs)):
        res[impl] = measure(fn, iters)
        line("ddp_step", impl, n, nbytes, iters, *res[impl], 2 * (n - 1) / n)
    res["alone"] = measure(step_alone, iters)
    if tshmem.my_pe() == 0:
        print(f"# ddp_step: {nbytes // 4} parameters in {len(dp.buckets)} buckets of "
              f"{bucket >> 10} KiB; DataParallel {res['tshmem'][0] * 1e3:.2f} ms a step, "
              f"DistributedDataParallel over gloo {res['gloo'][0] * 1e3:.2f} ms "
              f"({res['gloo'][0] / res['tshmem'][0]:.2f}x), the step with no sync "
              f"{res['alone'][0] * 1e3:.2f} ms", flush=True)


def dist_ddp(bucket):
    return torch.nn.parallel.DistributedDataParallel(mlp(), bucket_cap_mb=bucket / (1 << 20))


def main():
    o = parse(sys.argv[1:])
    tshmem.init()
    n = tshmem.n_pes()
    gloo_meet.init_gloo()
    allreduce(o, n)
    ddp_step(o, n)
    dist.destroy_process_group()
    tshmem.finalize()


if __name__ == "__main__":
    main()
