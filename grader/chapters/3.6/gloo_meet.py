"""gloo_meet.py: torch.distributed's gloo group on the PEs of a tshmem job, for the baselines of
chapter 3.6 (bench_3_6.py, and pe_3_6_train.py's DistributedDataParallel).

The PEs meet through a file in a folder of the job's (TMPDIR or /tmp, tshmem-gloo-UID-JOB) that
PE 0 makes with mode 700. A name in a shared /tmp could have been made first by another user, to
read or feed the rendezvous: every PE checks that the folder is a real folder, this user's and
closed to everyone else, and refuses it with a sentence otherwise. Only tshmem's barrier is
used, none of the chapter's own code. Once every PE is in the group, PE 0 removes the folder.
"""
import datetime
import os
import shutil
import stat
import tempfile

import torch.distributed as dist

import tshmem


def _folder():
    job = os.environ.get("TSHMEM_JOB_ID", str(os.getppid()))
    return os.path.join(tempfile.gettempdir(), f"tshmem-gloo-{os.getuid()}-{job}")


def _check(folder, me):
    st = os.lstat(folder)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise RuntimeError(
            f"gloo_meet: PE {me}: {folder} is not a folder of this user's alone (a "
            f"{'folder' if stat.S_ISDIR(st.st_mode) else 'file or link'} of uid {st.st_uid}, "
            f"mode {st.st_mode & 0o777:o}; this user is uid {os.getuid()}): the gloo baseline "
            f"will not meet through it. Remove it if it is yours, or set TMPDIR to a folder "
            f"of your own.")


def init_gloo():
    """Collective: every PE joins one gloo group of n_pes ranks, rank = my_pe()."""
    me, n = tshmem.my_pe(), tshmem.n_pes()
    folder = _folder()
    if me == 0:
        if os.path.lexists(folder):  # a killed job of the same id left it: check, clear
            _check(folder, me)
            shutil.rmtree(folder)
        os.mkdir(folder, 0o700)  # fails, rather than reuse, if someone made it meanwhile
    tshmem.barrier_all()
    _check(folder, me)
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    # A PE that never comes is reported after a minute, not after gloo's default of 30.
    dist.init_process_group("gloo", init_method=f"file://{folder}/rendezvous", rank=me,
                            world_size=n, timeout=datetime.timedelta(seconds=60))
    tshmem.barrier_all()
    if me == 0:
        shutil.rmtree(folder, ignore_errors=True)
