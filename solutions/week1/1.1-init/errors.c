/* errors.c: the runtime's error messages and argument checks.
 *
 * Provided: you do not need to edit this file. Call these from your code: every error is one
 * sentence that names the function, the PE and the value, and says what to do.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "tshmem_internal.h"

struct tshmem_state tshmem_g;

/* Before tshmem_init has run, the PE number comes from the launcher's environment. */
static const char *pe_label(char *buf, size_t len)
{
    if (tshmem_g.initialized) {
        snprintf(buf, len, "%d", tshmem_g.my_pe);
        return buf;
    }
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    if (!rank)
        rank = getenv("PMI_RANK");
    snprintf(buf, len, "%s", rank ? rank : "?");
    return buf;
}

static void vreport(const char *func, const char *fmt, va_list ap)
{
    char pe[16], msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    fflush(stdout);
    fprintf(stderr, "tshmem: PE %s: %s: %s\n", pe_label(pe, sizeof pe), func, msg);
    fflush(stderr);
}

void tshmem_warn(const char *func, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(func, fmt, ap);
    va_end(ap);
}

/* _exit, not exit or MPI_Abort: the launcher sees the non-zero status and stops every other
 * PE of the job, and no atexit handler of MPI can hang on a half-initialized library. */
_Noreturn void tshmem_fail(const char *func, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(func, fmt, ap);
    va_end(ap);
    _exit(TSHMEM_EXIT_ERROR);
}

_Noreturn void tshmem_todo(const char *chapter, const char *section, const char *task,
                           const char *func, const char *file, int line)
{
    char pe[16];
    fflush(stdout);
    fprintf(stderr,
            "tshmem: PE %s: %s() is not written yet (chapter %s).\n"
            "  task:  %s\n"
            "  where: %s:%d\n"
            "  read:  chapter %s, section \"%s\"  (build/grader/grader read %s)\n",
            pe_label(pe, sizeof pe), func, chapter, task, file, line, chapter, section, chapter);
    fflush(stderr);
    _exit(TSHMEM_EXIT_TODO);
}

/* What tshmem_check_pe says when pe is out of range (tshmem_internal.h). */
_Noreturn void tshmem_bad_pe(const char *func, int pe)
{
    tshmem_fail(func, "pe %d is out of range: this job has %d PEs, numbered 0 to %d. "
                      "Pass a PE number from 0 to tshmem_n_pes() - 1.",
                pe, tshmem_g.n_pes, tshmem_g.n_pes - 1);
}

void tshmem_check_team(const char *func, tshmem_team_t team)
{
    if (team < 0 || team >= TSHMEM_MAX_TEAMS || tshmem_g.teams[team].n_pes == 0)
        tshmem_fail(func, "team %d is not a team of this job. Use TSHMEM_TEAM_WORLD, "
                          "TSHMEM_TEAM_NODE or a team that a split returned.", team);
}

/* What tshmem_check_symmetric says when the range is not in this PE's symmetric heap. */
_Noreturn void tshmem_bad_symmetric(const char *func, const char *what, const void *addr,
                                    size_t nbytes)
{
    const char *p = addr, *lo = tshmem_g.slice;
    char size[32];
    if (!lo)
        tshmem_fail(func, "%s %p cannot be symmetric: this PE has no symmetric heap yet "
                          "(chapter 1.2 builds it in tshmem_heap_create).", what, addr);
    const char *heap = lo + TSHMEM_RESERVED_BYTES, *hi = heap + tshmem_g.heap_bytes;
    if (p >= lo && p < heap)
        tshmem_fail(func, "%s %p lies in the runtime's reserved area (offset %zu, %zu bytes), "
                          "not in the symmetric heap: the first %s of every slice hold the "
                          "runtime's barrier and collective flags, which this call would "
                          "overwrite or wait on. Use memory from tshmem_malloc.",
                    what, addr, (size_t)(p - lo), nbytes,
                    tshmem_bytes_str(TSHMEM_RESERVED_BYTES, size, sizeof size));
    if (p < lo || p >= hi)
        tshmem_fail(func, "%s %p is not in the symmetric heap (%p .. %p). Use memory from "
                          "tshmem_malloc for the remote side of every put, get and atomic.",
                    what, addr, (const void *)heap, (const void *)hi);
    if (nbytes > (size_t)(hi - p))
        tshmem_fail(func, "%s %p + %s runs %zu bytes past the end of the symmetric heap. "
                          "Check the size, or set TSHMEM_SYMMETRIC_SIZE larger.", what, addr,
                    tshmem_bytes_str(nbytes, size, sizeof size), nbytes - (size_t)(hi - p));
    tshmem_fail(func, "%s %p (%zu bytes) failed the symmetric-heap check.", what, addr, nbytes);
}

/* What tshmem_check_word says of an address that is not a multiple of 8. */
_Noreturn void tshmem_bad_alignment(const char *func, const char *what, const void *addr)
{
    tshmem_fail(func, "%s %p is not 8-byte aligned (it is %u bytes past a multiple of 8): a "
                      "signal or atomic reads and writes a whole uint64_t, which must start on "
                      "a multiple of 8, so pass the address of a uint64_t from tshmem_malloc.",
                what, addr, (unsigned)((uintptr_t)addr % 8));
}

void tshmem_check_cmp(const char *func, int cmp)
{
    if (cmp < TSHMEM_CMP_EQ || cmp > TSHMEM_CMP_LE)
        tshmem_fail(func, "comparison %d is not one of TSHMEM_CMP_EQ, _NE, _GT, _GE, _LT, _LE.",
                    cmp);
}

void tshmem_check_sig_op(const char *func, int sig_op)
{
    if (sig_op != TSHMEM_SIGNAL_SET && sig_op != TSHMEM_SIGNAL_ADD)
        tshmem_fail(func, "sig_op %d is neither TSHMEM_SIGNAL_SET nor TSHMEM_SIGNAL_ADD.", sig_op);
}

const char *tshmem_bytes_str(size_t bytes, char *buf, size_t len)
{
    static const char *unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 6) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%zu bytes", bytes);
    else
        snprintf(buf, len, "%.4g %s", v, unit[u]);
    return buf;
}

void tshmem_process_setup(void)
{
    /* The launcher (mpirun) is this process's parent. If it dies, a PE spinning on a flag
     * would never notice: ask the kernel to end the PE too. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* Where the kernel only lets ancestors debug a process (Ubuntu's ptrace_scope=1), the
     * grader, which is no ancestor of ours, could not attach gdb to a hung PE. */
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY);
    /* PEs on other machines are reached through Open MPI's TCP sockets. When such a PE dies,
     * this PE's next write to it raised SIGPIPE, and this PE died of it, sometimes before the
     * launcher had heard of the PE that really failed: the job then named this one. Ignored,
     * the write fails and the launcher names the lost PE. Only where nobody chose otherwise. */
    struct sigaction pipe_action;
    if (sigaction(SIGPIPE, NULL, &pipe_action) == 0 && pipe_action.sa_handler == SIG_DFL)
        signal(SIGPIPE, SIG_IGN);
}

void tshmem_check_same_size(const char *func, size_t size)
{
    /* Only under TSHMEM_DEBUG=1: it costs an allgather on every call. */
    if (!tshmem_env_flag("TSHMEM_DEBUG"))
        return;
    unsigned long long mine = size, *all = malloc(sizeof mine * (size_t)tshmem_g.n_pes);
    MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG, tshmem_g.comm);
    for (int pe = 1; pe < tshmem_g.n_pes; pe++)
        if (all[pe] != all[0]) {
            unsigned long long theirs = all[pe], first = all[0];
            free(all);
            tshmem_fail(func, "PE %d asked for %llu bytes but PE 0 asked for %llu. Every PE must "
                        "make the same symmetric allocations, with the same sizes, in the same "
                        "order.", pe, theirs, first);
        }
    free(all);
}
