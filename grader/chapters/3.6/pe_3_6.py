"""pe_3_6.py: chapter 3.6's PE program: the Python module tshmem under tshrun, one scenario a run
(or several in turn: seq).

Started by build/<variant>/bin/pe_3_6 (which sets PYTHONPATH to that variant's module):
    tools/tshrun -np N build/solutions/bin/pe_3_6 tensors
It reports with the lines of pe_test.h: "pe <i>: step ...", "pe <i>: FAIL ...",
"pe <i>: value k=v", "pe <i>: done".
"""
import os
import sys
import traceback

ME = int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))  # before init, from the launcher
FAILURES = 0


def say(kind, text):
    # One write(2) per line: the PEs share tshrun's pipe, and a line written in pieces could be
    # cut by another PE's line.
    sys.stdout.flush()
    os.write(1, f"pe {ME}: {kind}{' ' if kind else ''}{text}\n".encode())


def step(text):
    say("step", text)


def check(cond, text):
    global FAILURES
    if not cond:
        FAILURES += 1
        say("FAIL", text)
    return cond


step(f"start pid={os.getpid()}")
try:
    import torch
except ImportError as e:
    say("FAIL", f"cannot import torch ({e}): chapter 3.6 needs Debian's python3-torch "
        f"(make deps-torch installs it)")
    sys.exit(1)
import tshmem  # noqa: E402 (the variant's module, from PYTHONPATH)

import pe_3_6_train  # noqa: E402 (the training scenario, beside this file)

torch.set_num_threads(1)  # PEs share the cores; one thread each keeps them from fighting


def todo_exit(e):
    """A Python stub raised NotImplementedError("not written yet (chapter X, section "S"): task"):
    report it as the C stubs do (tshmem_todo), so the grader shows the same block."""
    text = str(e)
    tb = traceback.extract_tb(e.__traceback__)[-1]
    head, _, task = text.partition("): ")
    section = head.split('section "', 1)[-1].rstrip('"')
    # The module runs from its copy in build/<variant>/python/tshmem/, made by make torch;
    # the learner edits the same file, line for line, in week3/3.6-pytorch/.
    where = f"week3/3.6-pytorch/{os.path.basename(tb.filename)}:{tb.lineno}"
    sys.stderr.write(f"tshmem: PE {ME}: {tb.name}() is not written yet (chapter 3.6).\n"
                     f"  task:  {task}\n  where: {where}\n"
                     f"  read:  chapter 3.6, section \"{section}\"  (build/grader/grader read 3.6)\n")
    sys.stderr.flush()
    os._exit(99)  # TSHMEM_EXIT_TODO


def expect_error(kind, words, fn, *args):
    """fn(*args) must raise kind, with a sentence that contains every one of words."""
    name = getattr(fn, "__name__", str(fn))
    try:
        fn(*args)
    except kind as e:
        msg = str(e)
        check(all(w in msg for w in words) and msg.endswith(".") and len(msg) > 40,
              f"{name}: the {kind.__name__} says \"{msg}\"; expected a sentence that names "
              f"{words}")
        return
    except NotImplementedError:
        raise
    except Exception as e:  # noqa: BLE001 (the wrong kind is the finding)
        check(False, f"{name}: expected {kind.__name__} mentioning {words}, got "
              f"{type(e).__name__}: {e}")
        return
    check(False, f"{name}: expected {kind.__name__} mentioning {words}, but it returned")


def same_everywhere(vec):
    """1 when the float tensor vec has the same bits on every PE (through peer views; across
    nodes, through a float64 sum and sum of squares, which are equal to n*x and n*x^2 only then).
    Collective."""
    me, n = tshmem.my_pe(), tshmem.n_pes()
    buf = tshmem.zeros(vec.shape, vec.dtype)
    buf.copy_(vec)
    tshmem.barrier_all()
    same = True
    far = False
    for p in range(n):
        v = tshmem.peer(buf, p)
        if v is None:
            far = True
        elif not torch.equal(v, vec):
            same = False
    tshmem.barrier_all()
    tshmem.free(buf)
    if far:
        x = vec.double().flatten()
        s = tshmem.zeros((2, x.numel()), torch.float64)
        s[0].copy_(x)
        s[1].copy_(x * x)
        tshmem.allreduce_(s)
        same = same and torch.equal(s[0], x * n) and torch.equal(s[1], x * x * n)
        tshmem.free(s)
    return same


DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.int32,
          torch.int64, torch.uint8]


def tensors(args):
    """Shapes and dtypes, empty tensors, the same offsets everywhere, peer views (None off-node),
    free and reuse. TSHMEM_PES_PER_NODE, when set, splits the PEs into virtual nodes."""
    tshmem.init()
    me, n = tshmem.my_pe(), tshmem.n_pes()
    per_node = int(os.environ.get("TSHMEM_PES_PER_NODE", "0")) or n
    step("shapes and dtypes")
    made = []
    for dtype in DTYPES:
        for shape in [(5,), (3, 4), (2, 3, 4)]:
            t = tshmem.zeros(shape, dtype)
            check(tuple(t.shape) == shape and t.dtype == dtype and t.is_contiguous()
                  and t.device.type == "cpu", f"zeros({shape}, {dtype}) gave shape "
                  f"{tuple(t.shape)}, dtype {t.dtype}, contiguous {t.is_contiguous()}")
            check(bool((t == 0).all()), f"zeros({shape}, {dtype}) is not all zeros")
            e = tshmem.empty(shape, dtype)
            check(tuple(e.shape) == shape and e.dtype == dtype, f"empty({shape}, {dtype}) gave "
                  f"shape {tuple(e.shape)}, dtype {e.dtype}")
            made += [t, e]
    check(tuple(tshmem.zeros(7).shape) == (7,), "zeros(7) (an int shape) is not of shape (7,)")
    step("empty tensors")
    for shape in [(0,), (3, 0), (0, 5, 2)]:
        z = tshmem.zeros(shape)
        check(tuple(z.shape) == shape and z.numel() == 0, f"zeros({shape}) gave {tuple(z.shape)}")
        check(tshmem.allreduce_(z) is z, "allreduce_ of an empty tensor did not return it")
        pz = tshmem.peer(z, (me + 1) % n)
        check(pz is None or tuple(pz.shape) == shape, f"peer of zeros({shape}) has shape "
              f"{None if pz is None else tuple(pz.shape)}")
        tshmem.free(z)
    step("same offsets on every PE")
    base = made[0].data_ptr()
    offs = torch.tensor([float(t.data_ptr() - base) for t in made], dtype=torch.float64)
    check(same_everywhere(offs), "the tensors of the same zeros/empty calls are at different "
          "offsets from the first one on different PEs: every PE must run the same allocator on "
          "the same calls (tshmem_malloc)")
    step("peer views")
    w = tshmem.zeros((n, 64))
    w[me] = me * 1000 + torch.arange(64, dtype=torch.float32)  # my own row, in my own copy
    tshmem.barrier_all()
    for p in range(n):
        v = tshmem.peer(w, p)
        near = p // per_node == me // per_node
        if not check((v is not None) == near, f"peer(t, {p}) is {'a tensor' if v is not None else 'None'}, "
                     f"but PE {p} is {'on' if near else 'off'} this node ({per_node} PEs a node)"):
            continue
        if v is None:
            continue
        check(tuple(v.shape) == (n, 64) and v.dtype == torch.float32, f"peer(t, {p}) has shape "
              f"{tuple(v.shape)} and dtype {v.dtype}, not those of t")
        want = p * 1000 + torch.arange(64, dtype=torch.float32)
        check(torch.equal(v[p], want), f"peer(t, {p})[{p}] is {v[p][:4].tolist()}..., not what PE "
              f"{p} wrote in its copy ({want[:4].tolist()}...)")
        row = tshmem.peer(w[p], p)  # a view: the same offset inside the allocation
        check(row is not None and torch.equal(row, want), f"peer(t[{p}], {p}) does not read PE "
              f"{p}'s row {p}")
    tshmem.barrier_all()  # everyone read before anyone writes the next phase
    for p in range(n):
        v = tshmem.peer(w, p)
        if v is not None and p != me:
            v[me, 0] = -1.0 - me  # a store into PE p's memory
    tshmem.barrier_all()
    for p in range(n):
        if p != me and p // per_node == me // per_node:
            check(w[p, 0].item() == -1.0 - p, f"PE {p} stored {-1.0 - p} into my row {p} through "
                  f"peer(), but I read {w[p, 0].item()} after the barrier")
    tshmem.barrier_all()
    step("free and reuse")
    x = tshmem.zeros(1000)
    where = x.data_ptr()
    x.fill_(7.0)
    tshmem.free(x)
    y = tshmem.zeros(1000)
    check(y.data_ptr() == where, f"zeros(1000) after free of zeros(1000) is at {y.data_ptr():#x}, "
          f"not at the freed block's {where:#x}: free must give the block back")
    check(bool((y == 0).all()), "zeros() reusing a freed block still holds the old values")
    for t in reversed(made + [w, y]):
        tshmem.free(t)
    tshmem.finalize()


def misuse(args):
    """Every mistake is a Python exception whose sentence names the call and the problem."""
    expect_error(RuntimeError, ["tshmem.zeros", "init"], tshmem.zeros, 3)
    tshmem.init()
    n = tshmem.n_pes()
    expect_error(RuntimeError, ["tshmem.init", "already"], tshmem.init)
    t = tshmem.zeros(8)
    step("foreign, freed, wrong dtype")
    expect_error(ValueError, ["tshmem.free", "not on the symmetric heap"], tshmem.free,
                 torch.zeros(8))
    expect_error(ValueError, ["tshmem.allreduce_", "not on the symmetric heap"],
                 tshmem.allreduce_, torch.ones(8))
    expect_error(ValueError, ["tshmem.peer", "not on the symmetric heap"], tshmem.peer,
                 torch.ones(8), 0)
    expect_error(TypeError, ["tshmem.allreduce_", "int64", "float32"], tshmem.allreduce_,
                 tshmem.zeros(4, torch.int64))
    expect_error(TypeError, ["tshmem.allreduce_start", "float16"], tshmem.allreduce_start,
                 tshmem.zeros(4, torch.float16))
    expect_error(ValueError, ["tshmem.allreduce_", "non-contiguous"], tshmem.allreduce_,
                 tshmem.zeros((4, 4)).t())
    expect_error(ValueError, ["tshmem.free", "view"], tshmem.free, t[2:])
    expect_error(ValueError, ["tshmem.peer", str(n), f"0 to {n - 1}"], tshmem.peer, t, n)
    expect_error(ValueError, ["tshmem.peer", "-1"], tshmem.peer, t, -1)
    expect_error(TypeError, ["tshmem.zeros", "not supported"], tshmem.zeros, 4, torch.complex64)
    expect_error(ValueError, ["tshmem.zeros", "size"], tshmem.zeros, (2, -1))
    expect_error(TypeError, ["tshmem.free", "torch.Tensor"], tshmem.free, [1.0, 2.0])
    tshmem.free(t)
    expect_error(ValueError, ["tshmem.free", "freed"], tshmem.free, t)
    expect_error(ValueError, ["tshmem.allreduce_", "freed"], tshmem.allreduce_, t)
    expect_error(ValueError, ["tshmem.peer", "freed"], tshmem.peer, t, 0)
    step("a handle left in flight")
    u = tshmem.zeros(1000)
    h = tshmem.allreduce_start(u)
    expect_error(RuntimeError, ["tshmem.finalize", "wait"], tshmem.finalize)
    h.wait()
    tshmem.free(u)
    tshmem.finalize()
    expect_error(RuntimeError, ["tshmem.my_pe", "finalize"], tshmem.my_pe)
    expect_error(RuntimeError, ["tshmem.zeros", "finalize"], tshmem.zeros, 3)


def allreduce(args):
    """allreduce_ and allreduce_start: exact sums for every size and both float types, several
    handles in flight waited in any order, slices, the same bits on every PE."""
    tshmem.init()
    me, n = tshmem.my_pe(), tshmem.n_pes()
    tri = n * (n + 1) // 2
    for dtype in (torch.float32, torch.float64):
        for count in (1, 7, 1000, 70000, 300000):
            step(f"allreduce_ {count} x {dtype}")
            x = tshmem.zeros(count, dtype)
            pattern = (torch.arange(count) % 17 + 1).to(dtype)
            x.copy_(pattern * (me + 1))
            check(tshmem.allreduce_(x) is x, "allreduce_(t) must return t")
            check(torch.equal(x, pattern * tri), f"allreduce_ of {count} x {dtype}: element "
                  f"{int((x != pattern * tri).nonzero()[0]) if not torch.equal(x, pattern * tri) else 0}"
                  f" is wrong (expected the sum over {n} PEs of (pe + 1) * (i % 17 + 1))")
            tshmem.free(x)
    step("three handles in flight, waited in reverse order")
    xs = [tshmem.zeros(5000 * (k + 1), torch.float32) for k in range(3)]
    for k, x in enumerate(xs):
        x.fill_(float(me + 1 + k))
    hs = [tshmem.allreduce_start(x) for x in xs]
    check(all(isinstance(h, tshmem.Handle) for h in hs), "allreduce_start must return a Handle")
    for k in reversed(range(3)):
        hs[k].wait()
        check(hs[k].is_completed(), "a handle is not completed after wait()")
        want = float(tri + n * k)
        check(bool((xs[k] == want).all()), f"handle {k}: the tensor holds "
              f"{xs[k][0].item()} after wait(), expected {want}")
    hs[0].wait()  # a second wait returns at once
    step("a slice of a heap tensor")
    y = tshmem.zeros(1000)
    y.fill_(1.0)
    tshmem.allreduce_(y[100:600])
    check(bool((y[100:600] == n).all()) and bool((y[:100] == 1).all())
          and bool((y[600:] == 1).all()), "allreduce_ of t[100:600] must sum those elements "
          "and leave the others alone")
    step("random floats: the same bits on every PE")
    g = torch.Generator().manual_seed(1234 + me)
    r = tshmem.zeros(100000)
    r.copy_(torch.randn(100000, generator=g))
    tshmem.allreduce_start(r).wait()
    check(same_everywhere(r), "after allreduce the PEs hold different bits: every PE must add "
          "in the same order")
    for t in [r, y] + xs[::-1]:
        tshmem.free(t)
    tshmem.finalize()


def seq(items, scenarios):
    """seq SCENARIO[:ARG...] ...: several scenarios in turn in one process, for one import of
    torch instead of one per scenario (the grader's shared jobs: suite.h, expect_ok_shared).
    The runtime starts once: the scenarios' own init is skipped, and their finalize is a
    barrier, so that no PE starts the next scenario while another still works on the last."""
    init, finalize = tshmem.init, tshmem.finalize
    init()
    tshmem.init, tshmem.finalize = (lambda: None), tshmem.barrier_all
    for item in items:
        name, *args = item.split(":")
        if name not in scenarios or name in ("misuse", "seq"):
            say("FAIL", f"seq: no scenario '{name}' to run in turn (misuse starts and stops "
                f"the runtime itself)")
            os._exit(2)
        step(f"scenario {item}")
        scenarios[name](args)
    tshmem.init, tshmem.finalize = init, finalize
    finalize()


def main():
    scenarios = {"tensors": tensors, "misuse": misuse, "allreduce": allreduce,
                 "train": lambda args: pe_3_6_train.run(args, sys.modules[__name__])}
    scenarios["seq"] = lambda items: seq(items, scenarios)
    if len(sys.argv) < 2 or sys.argv[1] not in scenarios:
        say("FAIL", f"usage: pe_3_6 SCENARIO [args]; scenarios: {', '.join(scenarios)}")
        sys.exit(2)
    try:
        scenarios[sys.argv[1]](sys.argv[2:])
    except NotImplementedError as e:
        if str(e).startswith("not written yet"):
            todo_exit(e)
        raise
    except Exception as e:  # noqa: BLE001 (reported as a FAIL line, then the traceback)
        say("FAIL", f"{type(e).__name__}: {e}")
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)  # not sys.exit: the other PEs may wait in a collective; tshrun ends them
    if FAILURES:
        os._exit(1)
    say("", "done")


if __name__ == "__main__":
    main()
