"""pe_3_6_train.py: the training scenario of pe_3_6.py: tshmem.DataParallel against one process.

    pe_3_6 train STEPS BUCKET_BYTES [ddp]

A small MLP is trained with SGD for STEPS steps on global batches of B = 24 samples that every
PE generates alike; PE p trains on rows p*B/n .. (p+1)*B/n - 1. Each step the program checks:
  - against one process: a copy of the model at the same weights computes the gradient of the
    whole global batch; every gradient of DataParallel must be within the bound of the book
    (chapter 3.6, "How close is close enough"): |g_dp - g_one| <= C * u * S elementwise, with
    u = 2^-24, S the mean over the batch of each sample's |gradient|, and
    C = 2 (B + n + L (h + 2)) for L = 3 layers of inner size at most h = 32;
  - the bucketed allreduce started before backward ended: in DataParallel.events, the first
    ("start", k) comes before the last ("grad", i);
  - with `ddp`: torch.nn.parallel.DistributedDataParallel over gloo, at the same weights on the
    same rows, gives gradients within 2 C u S of DataParallel's.
At the end every PE holds the same weights, bit for bit, and the run of one process on the same
global batches (not reset to DataParallel's weights between steps) is close to them.
"""
import copy

import torch
import torch.nn.functional as F

import tshmem

B, IN, HID, OUT, LR = 24, 16, 32, 4, 0.1
LAYERS = 3


def model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(IN, HID), torch.nn.Tanh(),
                               torch.nn.Linear(HID, HID), torch.nn.Tanh(),
                               torch.nn.Linear(HID, OUT))


def batch(t):
    """Global batch number t, the same on every PE."""
    g = torch.Generator().manual_seed(1000 + t)
    x = torch.randn(B, IN, generator=g)
    return x, torch.sin(x[:, :OUT] * 2.0) + 0.1 * torch.randn(B, OUT, generator=g)


def grads(m):
    return [p.grad.detach().clone() for p in m.parameters()]


def sample_scale(m, x, y):
    """S: for every parameter element, the mean over the batch of |its per-sample gradient|."""
    total = [torch.zeros_like(p) for p in m.parameters()]
    for i in range(x.shape[0]):
        m.zero_grad()
        F.mse_loss(m(x[i:i + 1]), y[i:i + 1]).backward()
        for s, p in zip(total, m.parameters()):
            s += p.grad.abs()
    return [s / x.shape[0] for s in total]


def worst(a, b, scale, u):
    """The largest |a - b| / (u * scale) over all elements (0 where both are exact zeros)."""
    r = 0.0
    for x, y, s in zip(a, b, scale):
        d = (x - y).abs().double() / (u * s.double()).clamp_min(1e-300)
        r = max(r, float(d.max()))
    return r


def run(args, pe):
    steps, bucket_bytes = int(args[0]), int(args[1])
    use_ddp = len(args) > 2 and args[2] == "ddp"
    tshmem.init()
    me, n = tshmem.my_pe(), tshmem.n_pes()
    b = B // n
    rows = slice(me * b, (me + 1) * b)
    net = model(100 + me)  # different on every PE: DataParallel must start all from PE 0's
    dp = tshmem.DataParallel(net, bucket_bytes=bucket_bytes)
    pe.say("value", f"buckets={len(dp.buckets)}")
    one = copy.deepcopy(net)        # reset to DataParallel's weights every step
    alone = copy.deepcopy(net)      # one process on its own for the whole run
    opt = torch.optim.SGD(net.parameters(), lr=LR)
    opt_alone = torch.optim.SGD(alone.parameters(), lr=LR)
    ddp = None
    if use_ddp:
        ddp = gloo_ddp(me, n)
    u = 2.0 ** -24
    bound = 2 * (B + n + LAYERS * (HID + 2))
    ratio = ratio_ddp = 0.0
    for t in range(steps):
        x, y = batch(t)
        pe.step(f"step {t}")
        one.load_state_dict(net.state_dict())
        one.zero_grad()
        F.mse_loss(one(x), y).backward()
        g_one = grads(one)
        scale = sample_scale(one, x, y)
        F.mse_loss(dp(x[rows]), y[rows]).backward()
        dp.synchronize()
        g_dp = grads(net)
        r = worst(g_dp, g_one, scale, u)
        ratio = max(ratio, r)
        if not pe.check(r <= bound, f"step {t}: a gradient differs from one process's on the "
                        f"same global batch by {r:.1f} u S, more than the bound {bound} u S: is "
                        f"every bucket summed, and divided by the number of PEs ({n})?"):
            break
        check_events(pe, dp, t)
        if ddp is not None:
            with torch.no_grad():
                for q, p in zip(ddp.module.parameters(), net.parameters()):
                    q.copy_(p)
            ddp.zero_grad()
            F.mse_loss(ddp(x[rows]), y[rows]).backward()
            r = worst(g_dp, grads(ddp.module), scale, u)
            ratio_ddp = max(ratio_ddp, r)
            pe.check(r <= 2 * bound, f"step {t}: DistributedDataParallel's gradients differ "
                     f"from DataParallel's by {r:.1f} u S, more than {2 * bound} u S")
        opt.step()
        opt_alone.zero_grad()
        F.mse_loss(alone(x), y).backward()
        opt_alone.step()
    pe.say("value", f"worst_u_S={ratio:.2f}")
    if ddp is not None:
        pe.say("value", f"worst_vs_ddp_u_S={ratio_ddp:.2f}")
    w = torch.cat([p.detach().flatten() for p in net.parameters()])
    w_alone = torch.cat([p.detach().flatten() for p in alone.parameters()])
    pe.check(pe.same_everywhere(w), f"after {steps} steps the PEs hold different weights: every "
             f"PE must take the same step from the same averaged gradients")
    drift = float((w - w_alone).abs().max() / w_alone.abs().max())
    pe.say("value", f"drift_vs_one_process={drift:.3g}")
    pe.check(drift <= 1e-4, f"after {steps} steps the weights differ from one process's on the "
             f"same global batches by {drift:.3g} of the largest weight (at most 1e-4 expected)")
    if ddp is not None:
        torch.distributed.destroy_process_group()
    tshmem.finalize()


def check_events(pe, dp, t):
    """The hooks' record of this step: buckets started in order, the first before backward
    ended (when there are several), every bucket waited for."""
    ev = dp.events
    starts = [k for kind, k in ev if kind == "start"]
    waits = [k for kind, k in ev if kind == "wait"]
    grads_at = [j for j, (kind, _) in enumerate(ev) if kind == "grad"]
    first_start = next((j for j, (kind, _) in enumerate(ev) if kind == "start"), len(ev))
    k_all = list(range(len(dp.buckets)))
    pe.check(starts == k_all and waits == k_all, f"step {t}: buckets started {starts} and "
             f"waited {waits}; expected each of {k_all} once, in order")
    pe.check(len(grads_at) == len(dp.params), f"step {t}: {len(grads_at)} gradient hooks ran "
             f"for {len(dp.params)} parameters")
    if len(dp.buckets) > 1 and grads_at:
        pe.check(first_start < grads_at[-1], f"step {t}: the first bucket's allreduce started "
                 f"only after the last gradient was ready: start it from the hook that fills "
                 f"the bucket, while backward is still running")


def gloo_ddp(me, n):
    """torch's own DistributedDataParallel over gloo, on the same PEs (a file rendezvous)."""
    import gloo_meet  # beside this file
    gloo_meet.init_gloo()
    return torch.nn.parallel.DistributedDataParallel(model(100))
