"""torch_3_6.py: chapter 3.6's module on GPUs (tshmem_cuda), one process per GPU (tools/gpu-torch).

Checks, as "PASS name" / "FAIL name: why" lines: tensors on the NVSHMEM heap (torch.cuda,
through DLPack kDLCUDA), peer views, the allreduce on PyTorch's stream (on the path the table
picks, and on every path forced), DataParallel driving it for 30 steps against one process (the
CPU chapter's bound, u = 2^-24). With --sweep FILE, then every path timed at each size of
SWEEP_SIZES and the fastest written into FILE (torch_3_6_paths.h); else, as bench lines,
the allreduce against torch.distributed over NCCL and a training step against
DistributedDataParallel over NCCL, each call timed alone (CUDA events, the slowest PE, the median
of 30; a step's of 90, in three rounds taking turns). On 1 GPU the allreduce of 3.3 has nothing
to do (n_pes = 1 returns at once) and NCCL's is a local copy: the figures are then launch costs only.
"""
import copy
import os
import stat
import tempfile
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

import tshmem_cuda as ts

failures = 0


def report(name, ok, why=""):
    global failures
    failures += not ok
    if ts.my_pe() == 0 or not ok:
        print(f"{'PASS' if ok else 'FAIL'} {name}{'' if ok else ': ' + why}", flush=True)


def tensors(me, n):
    t = ts.zeros((4, 256))
    ok = t.is_cuda and t.device.index == torch.cuda.current_device() and bool((t == 0).all())
    t[0] = me + 1.0  # a kernel of PyTorch's writes the NVSHMEM heap
    ts.barrier_all()
    for p in range(n):
        v = ts.peer(t, p)
        ok = ok and v is not None and float(v[0, 0]) == p + 1.0
    ts.barrier_all()
    ts.free(t)
    report("tensors_on_the_nvshmem_heap", ok, "zeros/peer on the GPU heap read wrong values")


def allreduce(me, n):
    ok = True
    for count in (1, 1000, 1 << 20):
        x = ts.zeros(count)
        x.fill_(me + 1.0)
        ts.allreduce_(x)
        y = ts.zeros(count)
        y.fill_(1.0)
        ts.allreduce_start(y).wait()
        torch.cuda.synchronize()
        ok = ok and bool((x == n * (n + 1) / 2).all()) and bool((y == n).all())
        ts.free(y)
        ts.free(x)
    report("allreduce_on_the_current_stream", ok, "a sum is wrong")


def allreduce_paths(me, n):
    """Every path forced (the table picks among them), at sizes that are and are not multiples
    of n and of a block: x[i] = (me + 1) * (i % 7 + 1), whose sum is exact in float32."""
    bad = []
    for count in (1, 1000, 65537, 1 << 18, (1 << 20) + 3, 1 << 21):
        x = ts.zeros(count)
        pattern = torch.arange(count, device="cuda", dtype=torch.float32).remainder_(7).add_(1)
        want = pattern * (n * (n + 1) / 2)
        for path in PATHS:
            ts._C._force(path)
            x.copy_(pattern * (me + 1))
            ts.allreduce_(x)
            torch.cuda.synchronize()
            if not bool((x == want).all()):
                bad.append(f"{path} at {count} floats")
        ts._C._force("auto")
        ts.free(x)
    report("allreduce_every_path", not bad, "wrong sums: " + ", ".join(bad))


def train(me, n, steps=30):
    B, u = 24, 2.0 ** -24
    torch.manual_seed(100 + me)
    net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 32),
                              torch.nn.Tanh(), torch.nn.Linear(32, 4)).cuda()
    dp = ts.DataParallel(net, bucket_bytes=2048)
    one = copy.deepcopy(net)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    bound, worst, b = 2 * (B + n + 3 * 34), 0.0, B // n
    for step in range(steps):
        g = torch.Generator().manual_seed(1000 + step)
        x = torch.randn(B, 16, generator=g).cuda()
        y = torch.sin(x[:, :4] * 2.0)
        one.load_state_dict(net.state_dict())
        scale = [torch.zeros_like(p) for p in one.parameters()]
        for i in range(B):
            one.zero_grad()
            F.mse_loss(one(x[i:i + 1]), y[i:i + 1]).backward()
            for s, p in zip(scale, one.parameters()):
                s += p.grad.abs() / B
        one.zero_grad()
        F.mse_loss(one(x), y).backward()
        F.mse_loss(dp(x[me * b:(me + 1) * b]), y[me * b:(me + 1) * b]).backward()
        dp.synchronize()
        for p, q, s in zip(net.parameters(), one.parameters(), scale):
            r = ((p.grad - q.grad).abs().double() / (u * s.double()).clamp_min(1e-300)).max()
            worst = max(worst, float(r))
        opt.step()
    torch.cuda.synchronize()
    report("data_parallel_matches_one_process", worst <= bound,
           f"a gradient is {worst:.1f} u S from one process's, more than {bound}")
    if me == 0:
        print(f"# train: worst gradient difference {worst:.2f} u S (bound {bound})", flush=True)


REPS, WARM = 30, 5


def timed(fn, reps=REPS, lead_us=0, raw=False):
    """Each call on its own: every PE idle and past a barrier, CUDA events around the call on
    PyTorch's current stream; per call the slowest PE's time, then the median of reps (and the
    least and the most), in microseconds. lead_us: the stream first sleeps that long on the GPU
    (torch.cuda._sleep), so that the host has queued the call before its start event: the time
    is then the GPU's alone, as in a training loop whose host runs ahead, and a one-float NCCL
    allreduce after the sleep lines the PEs' streams up (else the PEs' skew leaving the host
    barrier is in every small call's time); with 0 the host's cost of starting the call (Python,
    the launch) is in it too. raw: the per-call times themselves, unsorted (to pool rounds)."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times, align = [], torch.zeros(1, device="cuda")
    for r in range(WARM + reps):
        ts.barrier_all()  # the device idle, then every PE
        if lead_us:
            torch.cuda._sleep(int(lead_us * CYCLES_PER_US))
            dist.all_reduce(align)  # on the GPUs: every PE's stream leaves it together
        start.record()
        fn()
        end.record()
        end.synchronize()
        if r >= WARM:
            times.append(start.elapsed_time(end) * 1000.0)
    t = torch.tensor(times, dtype=torch.float64, device="cuda")
    dist.all_reduce(t, op=dist.ReduceOp.MAX)  # per call, the slowest PE
    return t.tolist() if raw else stats(t.tolist())


def stats(times):
    """(median, least, most) of a list of times."""
    t = sorted(times)
    return t[len(t) // 2], t[0], t[-1]



def host_split(phases, reps=REPS):
    """The host's time in each phase of a call (perf_counter, this PE), with the GPU kept busy
    by a 20 ms sleep queued first, so that no phase waits for the GPU and each time is what the
    host spends enqueueing (Python, PyTorch's dispatch, the launches); a phase that waits for
    the GPU shows up as milliseconds. Median of reps per phase, in microseconds."""
    acc = [[] for _ in phases]
    for r in range(WARM + reps):
        ts.barrier_all()
        torch.cuda._sleep(int(20000 * CYCLES_PER_US))
        for j, (_, fn) in enumerate(phases):
            t0 = time.perf_counter()
            fn()
            t1 = time.perf_counter()
            if r >= WARM:
                acc[j].append((t1 - t0) * 1e6)
        torch.cuda.synchronize()
    return [sorted(a)[len(a) // 2] for a in acc]


def line(op, impl, n, nbytes, us, bus=True, iters=REPS):
    med, lo, hi = us
    alg = nbytes / med / 1e3 if bus else 0.0
    print(f"bench op={op} impl={impl} pes={n} bytes={nbytes} iters={iters} median_us={med:.1f} "
          f"min_us={lo:.1f} max_us={hi:.1f} algbw_GBps={alg:.2f} "
          f"busbw_GBps={alg * 2 * (n - 1) / n if n > 1 else alg:.2f}", flush=True)


PATHS = ("ll", "oneshot", "twoshot_ll", "twoshot", "ring")  # torch_3_6.cu's paths (_force)
CYCLES_PER_US = 2000  # about the SM clock in MHz of an H100 or H200 (only roughly needed)
LEAD_US = 500     # an allreduce: its host side (Python, checks, the launch) takes tens of us
STEP_LEAD_US = 4000  # a training step: PyTorch's host side launches dozens of kernels
STEP_ROUNDS = 3


def nccl_group(me, n):
    """NCCL's process group, the baselines', met through a file: in TSHMEM_NCCL_DIR, the folder
    of this run's own that tools/gpu-torch makes, else in a folder of this user's alone under
    the temporary folder (never a name in /tmp that another user could have made first).
    Returns the file, for nccl_group_end."""
    folder = os.environ.get("TSHMEM_NCCL_DIR")
    if not folder:
        folder = os.path.join(tempfile.gettempdir(), f"tshmem-nccl-{os.getuid()}")
        os.makedirs(folder, mode=0o700, exist_ok=True)
        st = os.lstat(folder)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
            raise SystemExit(f"torch_3_6.py: {folder} is not a folder of this user's alone "
                             "(mode 700): remove it, or run through tools/gpu-torch.")
    path = os.path.join(folder, f"nccl-{os.environ.get('OMPI_COMM_WORLD_JOBID', os.getppid())}")
    if me == 0 and os.path.exists(path):
        os.unlink(path)
    ts.barrier_all()
    dist.init_process_group("nccl", init_method=f"file://{path}", rank=me, world_size=n,
                            device_id=torch.device("cuda", torch.cuda.current_device()))
    return path


def nccl_group_end(me, path):
    dist.destroy_process_group()
    if me == 0:
        os.unlink(path)


def bench(me, n):
    path = nccl_group(me, n)
    if me == 0:
        print(f"# timing: each call alone, CUDA events on the current stream after a barrier, the "
              f"slowest PE, median of {REPS} after {WARM} warm-ups", flush=True)
    size = 4 << 10
    while size <= 256 << 20:
        mine, theirs = ts.zeros(size // 4), torch.zeros(size // 4, device="cuda")
        # tshmem: the module as it is (the path of torch_3_6_paths.h for this size and n); up
        # to 1 MiB also the LL path and 3.3's one shot forced (tshmem_ll, tshmem_3.3).
        impls = [("tshmem", lambda: ts.allreduce_(mine), "auto")]
        if size <= 1 << 20:
            impls += [("tshmem_ll", lambda: ts.allreduce_(mine), "ll"),
                      ("tshmem_3.3", lambda: ts.allreduce_(mine), "oneshot")]
        impls.append(("nccl", lambda: dist.all_reduce(theirs), "auto"))
        for impl, fn, how in impls:  # (`path` is the file NCCL's group meets through)
            ts._C._force(how)
            us = timed(fn, lead_us=LEAD_US)
            host = timed(fn)
            if me == 0:
                line("allreduce", impl, n, size, us)
                print(f"# allreduce {impl} {size} bytes with the host's launch in the time: "
                      f"{host[0]:.1f} us (min {host[1]:.1f})", flush=True)
        ts._C._force("auto")
        ts.free(mine)
        size *= 4
    # The allreduce's grid at the large sizes (the module's default is the first).
    for size in (16 << 20, 64 << 20, 256 << 20):
        mine = ts.zeros(size // 4)
        for ctas, threads in ((128, 1024), (64, 1024), (32, 512)):
            ts._C._force("ring", ctas, threads)
            med, lo, hi = timed(lambda: ts.allreduce_(mine), lead_us=LEAD_US)
            if me == 0:
                print(f"# grid {ctas} x {threads}: {size >> 20} MiB in {med:.1f} us "
                      f"({size / med / 1e3 * 2 * (n - 1) / n:.1f} GB/s bus)", flush=True)
        ts._C._force("auto")
        ts.free(mine)
    # The ring's least chunk (floats) at the middle sizes, where few blocks carry a call.
    for size in (1 << 20, 4 << 20, 16 << 20):
        mine = ts.zeros(size // 4)
        for min_chunk in (16384, 4096):
            ts._C._force("ring", 128, 1024, min_chunk)
            med, lo, hi = timed(lambda: ts.allreduce_(mine), lead_us=LEAD_US)
            if me == 0:
                print(f"# min_chunk {min_chunk}: {size >> 20} MiB in {med:.1f} us "
                      f"({size / med / 1e3 * 2 * (n - 1) / n:.1f} GB/s bus)", flush=True)
        ts._C._force("auto")
        ts.free(mine)
    torch.manual_seed(0)

    def mlp():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.ReLU(),
                                   torch.nn.Linear(2048, 1024)).cuda()

    ours, theirs = mlp(), torch.nn.parallel.DistributedDataParallel(mlp())
    dp = ts.DataParallel(ours, bucket_bytes=4 << 20)
    x, y = torch.randn(64, 1024, device="cuda"), torch.randn(64, 1024, device="cuda")
    o1 = torch.optim.SGD(ours.parameters(), lr=0.01)
    o2 = torch.optim.SGD(theirs.parameters(), lr=0.01)

    def step_ours():
        F.mse_loss(dp(x), y).backward()
        dp.synchronize()
        o1.step()

    def step_theirs():
        o2.zero_grad()
        F.mse_loss(theirs(x), y).backward()
        o2.step()

    def step_alone():
        o3.zero_grad()
        F.mse_loss(alone(x), y).backward()
        o3.step()

    alone = mlp()
    o3 = torch.optim.SGD(alone.parameters(), lr=0.01)
    nbytes = sum(p.numel() * 4 for p in ours.parameters())
    # A step from the host is noisy (Python, the allocator, the OS): three rounds, the three
    # steps taking turns, 90 calls each pooled, so that a slow minute hits all three alike.
    steps = (("tshmem", step_ours), ("nccl", step_theirs), ("none", step_alone))
    pooled = {impl: ([], []) for impl, _ in steps}
    for _ in range(STEP_ROUNDS):
        for impl, fn in steps:
            pooled[impl][0].extend(timed(fn, lead_us=STEP_LEAD_US, raw=True))
            pooled[impl][1].extend(timed(fn, raw=True))
    for impl, _ in steps:
        us, host = stats(pooled[impl][0]), stats(pooled[impl][1])
        if me == 0 and impl != "none":
            line("ddp_step", impl, n, nbytes, us, bus=False, iters=REPS * STEP_ROUNDS)
        if me == 0:
            print(f"# ddp_step {impl}: {us[0]:.1f} us (min {us[1]:.1f}); with the host's launch "
                  f"in the time {host[0]:.1f} us (min {host[1]:.1f})"
                  f"{' (no communication)' if impl == 'none' else ''}", flush=True)
    # Where each step's host time goes (the GPU busy, so no phase waits for it).
    state = {}

    def fwd(model):
        def f():
            state["loss"] = F.mse_loss(model(x), y)
        return f

    def bwd():
        state["loss"].backward()

    splits = (("tshmem", [("zero_grad", lambda: None), ("forward", fwd(dp)), ("backward", bwd),
                          ("synchronize", dp.synchronize), ("optimizer", o1.step)]),
              ("nccl", [("zero_grad", o2.zero_grad), ("forward", fwd(theirs)),
                        ("backward", bwd), ("synchronize", lambda: None),
                        ("optimizer", o2.step)]),
              ("none", [("zero_grad", o3.zero_grad), ("forward", fwd(alone)), ("backward", bwd),
                        ("synchronize", lambda: None), ("optimizer", o3.step)]))
    for impl, phases in splits:
        us = host_split(phases)
        if me == 0:
            print(f"# ddp_step host {impl}: " + " ".join(f"{name}={t:.1f}" for (name, _), t in
                                                          zip(phases, us)) +
                  f" total={sum(us):.1f} us", flush=True)
    nccl_group_end(me, path)


SWEEP_SIZES = [256 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20, 8 << 20]
SWEEP_ROUNDS = 2


def candidates(size):
    """The paths the sweep forces at one size: (path, ctas, threads, min_chunk); 0 = default."""
    out = [("ll", 0, 0, 0), ("oneshot", 0, 0, 0)] if size <= 1 << 20 else []
    out += [("twoshot_ll", 0, 512, 0), ("twoshot_ll", 0, 256, 0)]
    out += [("twoshot", 0, 512, 0), ("twoshot", 0, 256, 0), ("twoshot", 0, 1024, 0),
            ("twoshot", 32, 1024, 0)]
    out += [("ring", c, t, m) for c, t in ((128, 1024), (64, 1024), (64, 512), (32, 1024))
            for m in (16384, 4096, 1024)]
    return out


def sweep(me, n, header):
    """Each candidate path forced at each size of SWEEP_SIZES, SWEEP_ROUNDS rounds taking turns
    (pooled medians), NCCL beside them; then the fastest per size becomes this PE count's rows
    of the table `header` (torch_3_6_paths.h), the other PE counts' rows kept."""
    path = nccl_group(me, n)
    best = {}
    for size in SWEEP_SIZES:
        mine, theirs = ts.zeros(size // 4), torch.zeros(size // 4, device="cuda")
        cands = candidates(size)
        pooled = {c: [] for c in cands}
        nccl = []
        for _ in range(SWEEP_ROUNDS):
            for c in cands:
                ts._C._force(*c)
                pooled[c].extend(timed(lambda: ts.allreduce_(mine), lead_us=LEAD_US, raw=True))
            ts._C._force("auto")
            nccl.extend(timed(lambda: dist.all_reduce(theirs), lead_us=LEAD_US, raw=True))
        ranked = sorted((stats(t)[0], c) for c, t in pooled.items())
        ref = stats(nccl)[0]
        if me == 0:
            for med, c in ranked:
                print(f"sweep pes={n} bytes={size} path={c[0]} ctas={c[1]} threads={c[2]} "
                      f"min_chunk={c[3]} median_us={med:.1f} nccl_us={ref:.1f} "
                      f"nccl_over_ours={ref / med:.2f}", flush=True)
        best[size] = (ranked[0][1], ranked[0][0], ranked[1], ref)
        ts.free(mine)
    nccl_group_end(me, path)
    if me == 0:
        write_paths(header, n, best)


ENUM = {"ll": "P_LL", "oneshot": "P_ONESHOT", "twoshot_ll": "P_TWOSHOT_LL",
        "twoshot": "P_TWOSHOT", "ring": "P_RING"}


def write_paths(header, n, best):
    """Rewrites this PE count's rows of the table in `header`, keeping the other counts' rows:
    one row per run of sizes with the same fastest path, its bound the run's largest size."""
    def kib(b):
        return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB"

    def name(c):
        grid = (f" {c[1]} x {c[2] or 'default'}" if c[1] else f" {c[2]} threads" if c[2]
                else "")
        return c[0] + grid + (f"/{c[3]}" if c[0] == "ring" else "")

    head, keep = [], []
    body, owner = False, 0  # owner: the PE count of the block a line is in
    for ln in open(header).read().splitlines():
        t = ln.strip()
        if ln.startswith("static const struct choice paths[]"):
            body = True
            continue
        if not body:
            head.append(ln)
            continue
        if t.startswith("/* pes,") or not t.startswith(("{", "/*")):
            continue
        if t.startswith("/*") and " PEs: " in t:
            owner = int(t[3:].split()[0])
        elif t.startswith("{"):
            owner = int(t[1:].split(",")[0])
        if owner != n:
            keep.append(ln)
    runs = [[("ll", 0, 0, 0), SWEEP_SIZES[0] // 2, ["below the sweep: the LL path, as before"]]]
    for size in sorted(best):
        c, med, (med2, c2), ref = best[size]
        note = f"{kib(size)}: {med:.1f} us, next {name(c2)} {med2:.1f}, NCCL {ref:.1f}"
        if runs[-1][0] == c:
            runs[-1][1] = size
            runs[-1][2].append(note)
        else:
            runs.append([c, size, [note]])
    rows = [f"    /* {n} PEs: {torch.cuda.get_device_name()}, {time.strftime('%Y-%m-%d')}, one "
            f"sweep, pooled medians of {SWEEP_ROUNDS} x {REPS} calls on the GPU */"]
    for c, size, notes in runs:
        rows += [f"    /* {t} */" for t in notes]
        rows.append(f"    {{{n}, {size}, {ENUM[c[0]]}, {c[1]}, {c[2]}, {c[3]}}},")
    with open(header, "w") as f:
        f.write("\n".join(head) + "\nstatic const struct choice paths[] = {\n"
                "    /* pes, max_bytes, path, ctas, threads, min_chunk (floats) */\n")
        f.write("\n".join(keep + rows) + "\n};\n")
    print(f"# sweep: {n} PEs' rows written to {header}", flush=True)


def main():
    import sys
    header = sys.argv[sys.argv.index("--sweep") + 1] if "--sweep" in sys.argv else None
    ts.init(64 << 20)  # floats: the largest allreduce of the benchmark (256 MiB)
    me, n = ts.my_pe(), ts.n_pes()
    if me == 0:
        print(f"# {n} PE(s), {torch.cuda.get_device_name()}, torch {torch.__version__}",
              flush=True)
    tensors(me, n)
    allreduce(me, n)
    allreduce_paths(me, n)
    if header:
        if not failures and n > 1:
            sweep(me, n, header)
        ts.finalize()
        raise SystemExit(1 if failures else 0)
    train(me, n)
    bench(me, n)
    ts.finalize()
    raise SystemExit(1 if failures else 0)


if __name__ == "__main__":
    main()
