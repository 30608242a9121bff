/* suite_2_5.c: chapter 2.5, multi-node: the proxy transport across virtual nodes, teams from a
 * split, hierarchical allreduce, and what happens when a PE dies or forgets to finalize.
 * Layouts: TSHMEM_PES_PER_NODE=k on n PEs makes nodes of k consecutive PEs (2x2 is n=4, k=2). */
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>

#include "suite.h"

#define CH "2.5"
#define PROG "pe_2_5"

/* This suite grades the proxy: every job runs on it, whichever network would be the default
 * (chapter 2.6's suite runs the same scenarios on its UCX network). */
__attribute__((constructor)) static void on_the_proxy(void) { setenv("TSHMEM_NET", "proxy", 1); }

struct layout {
    int npes;
    const char *per_node; /* TSHMEM_PES_PER_NODE=... */
};
static const struct layout L2x2 = {4, "TSHMEM_PES_PER_NODE=2"};
static const struct layout L2x3 = {6, "TSHMEM_PES_PER_NODE=3"};
static const struct layout L4x2 = {8, "TSHMEM_PES_PER_NODE=2"};
static const struct layout L3_2 = {5, "TSHMEM_PES_PER_NODE=2"}; /* nodes of 2, 2, 1 */
static const struct layout L2x1 = {2, "TSHMEM_PES_PER_NODE=1"};

/* Runs the scenario on one layout, with up to two more settings, and expects success. */
static void ok_on(struct layout l, const char *scenario, const char *const *args,
                  const char *extra)
{
    const char *const env[] = {l.per_node, extra, NULL};
    expect_ok_on(CH, PROG, scenario, args, env, 30, (int[]){l.npes, END_PES});
}

Test(ch2_5, put_get_across_nodes, .description = "put and get of 0, 1, 4097, 16384, 16385, 65536 bytes, blocking and nbi, to every PE at 2x2, 2x3 and 4x2")
{
    /* 16384 and 16385: on either side of the reference's inline limit on one machine. */
    ok_on(L2x2, "rma", ARGS("0", "1", "4097", "16384", "16385", "65536"), NULL);
    ok_on(L2x3, "rma", ARGS("0", "1", "4097"), NULL);
    ok_on(L4x2, "rma", ARGS("1", "4097"), NULL);
}

Test(ch2_5, put_get_large_chunked, .description = "put and get of several MiB (more than one chunk, odd sizes) across nodes")
{
    ok_on(L2x1, "rma", ARGS("3145731", "2097152"), "TSHMEM_SYMMETRIC_SIZE=16M");
    ok_on(L2x2, "rma", ARGS("1048583"), "TSHMEM_SYMMETRIC_SIZE=16M");
}

Test(ch2_5, put_signal_data_before_signal, .description = "put_signal across nodes: whoever sees the signal sees the data (SET and ADD, blocking and nbi)")
{
    ok_on(L2x2, "signal", ARGS("300", "1000"), NULL);
    ok_on(L2x3, "signal", ARGS("100", "0"), NULL);
    ok_on(L2x1, "signal", ARGS("10", "2500000"), "TSHMEM_SYMMETRIC_SIZE=16M");
}

Test(ch2_5, fence_order_and_quiet_completion, .description = "puts to one PE across nodes land in order across fences; quiet completes nbi puts")
{
    ok_on(L2x2, "fence", ARGS("300"), NULL);
    ok_on(L4x2, "fence", ARGS("100"), NULL);
}

Test(ch2_5, nonblocking_allreduce_across_nodes, .description = "2.4's progress thread and the program's thread talk to the other node at the same time: requests, blocking allreduces and puts all land right")
{
    /* pe_2_4's "busy": non-blocking allreduces in flight while the program runs blocking ones
     * and puts to its neighbour. Across nodes both threads send through your transport. */
    const char *const env1[] = {L2x1.per_node, NULL}, *const env2[] = {L2x2.per_node, NULL};
    expect_ok_on(CH, "pe_2_4", "busy", ARGS("-"), env1, 40, (int[]){L2x1.npes, END_PES});
    expect_ok_on(CH, "pe_2_4", "busy", ARGS("-"), env2, 40, (int[]){L2x2.npes, END_PES});
}

Test(ch2_5, helper_threads_leave_a_bound_core, .description = "a PE bound to one core: its proxy and progress threads carry their names, may run on every core, and do not preempt its program when woken")
{
    ok_on(L2x1, "bound", NULL, NULL);
    ok_on(L2x2, "bound", NULL, NULL);
}

Test(ch2_5, two_threads_reach_another_node, .description = "two threads of each PE put, quiet, get and fetch_add across nodes at once: no message crosses another thread's")
{
    ok_on(L2x1, "threads", ARGS("300"), NULL);
    ok_on(L2x2, "threads", ARGS("150"), NULL);
}

Test(ch2_5, atomics_under_contention, .description = "fetch_add and compare_swap from every PE of both nodes on one word: no update lost")
{
    ok_on(L2x2, "atomics", ARGS("300"), NULL);
    ok_on(L2x3, "atomics", ARGS("100"), NULL);
    ok_on(L4x2, "atomics", ARGS("50"), NULL);
}

Test(ch2_5, barrier_phases_across_nodes, .description = "barrier_all completes every PE's off-node puts of the phase, 30 phases, on 2x2, 2x3, 4x2, 2+2+1")
{
    ok_on(L2x2, "barrier", ARGS("30"), NULL);
    ok_on(L2x3, "barrier", ARGS("20"), NULL);
    ok_on(L4x2, "barrier", ARGS("20"), NULL);
    ok_on(L3_2, "barrier", ARGS("20"), NULL);
}

Test(ch2_5, allreduce_hierarchical_layouts, .description = "TSHMEM_ALGO_HIERARCHICAL: exact int64 sums, in place too, 4 calls, at 2x2, 2x3, 4x2, 2+2+1")
{
    ok_on(L2x2, "allreduce", ARGS("hierarchical", "1000", "4"), NULL);
    ok_on(L2x3, "allreduce", ARGS("hierarchical", "333", "4"), NULL);
    ok_on(L4x2, "allreduce", ARGS("hierarchical", "100", "4"), NULL);
    ok_on(L3_2, "allreduce", ARGS("hierarchical", "7", "4"), NULL);
}

Test(ch2_5, allreduce_auto_across_nodes, .description = "the selector across nodes (small, large, typed float max), and flat ring and RD through the proxy")
{
    ok_on(L2x2, "allreduce", ARGS("auto", "1", "3"), NULL);
    ok_on(L2x2, "allreduce", ARGS("auto", "300001", "2"), NULL);
    ok_on(L2x2, "allreduce", ARGS("ring", "5001", "2"), NULL);
    ok_on(L2x3, "allreduce", ARGS("rd", "77", "2"), NULL);
}

Test(ch2_5, fcollect_broadcast_across_nodes, .description = "fcollect and broadcast (every root), auto and hybrid, over real virtual nodes")
{
    ok_on(L2x2, "collect", ARGS("hybrid", "70001"), NULL);
    ok_on(L2x3, "collect", ARGS("auto", "777"), NULL);
    ok_on(L4x2, "collect", ARGS("hybrid", "999"), NULL);
    ok_on(L4x2, "collect", ARGS("ring", "100"), NULL);
}

Test(ch2_5, tcp_loopback, .description = "with every MPI message over TCP loopback (TSHMEM_TRANSPORT=tcp): put/get, put_signal, atomics, allreduce")
{
    /* 60000 rides in its header's message over TCP (the reference inlines up to 64 KiB less
     * the header there), 65536 and 100000 do not. */
    ok_on(L2x2, "rma", ARGS("1", "60000", "65536", "100000"), "TSHMEM_TRANSPORT=tcp");
    ok_on(L2x2, "signal", ARGS("100", "4096"), "TSHMEM_TRANSPORT=tcp");
    ok_on(L2x1, "signal", ARGS("50", "60000"), "TSHMEM_TRANSPORT=tcp");
    ok_on(L2x2, "atomics", ARGS("50"), "TSHMEM_TRANSPORT=tcp");
    ok_on(L2x3, "allreduce", ARGS("auto", "1000", "2"), "TSHMEM_TRANSPORT=tcp");
}

Test(ch2_5, link_model_same_results, .description = "across a modeled network card (TSHMEM_LINK=1.25GB/s,5us) every result is the same: put/get, put_signal, fence order, atomics, allreduce, 2.4's requests")
{
    /* The link holds each request until its arrival time, a put's bytes in a copy: what
     * arrives late must still be applied in each sender's order, and never lost. */
    const char *link = "TSHMEM_LINK=1.25GB/s,5us";
    ok_on(L2x2, "rma", ARGS("1", "4097", "100000"), link);
    ok_on(L2x1, "signal", ARGS("100", "70000"), link);
    ok_on(L2x2, "fence", ARGS("100"), link);
    ok_on(L2x2, "atomics", ARGS("30"), link);
    ok_on(L2x2, "allreduce", ARGS("auto", "100000", "2"), link);
    const char *const env[] = {L2x1.per_node, link, NULL};
    expect_ok_on(CH, "pe_2_4", "busy", ARGS("-"), env, 40, (int[]){L2x1.npes, END_PES});
}

Test(ch2_5, team_split_strided_nodes_and_leaders, .description = "tshmem_team_split_strided: node teams and the leaders' team, numbering, translate, sync and allreduce on them, destroy")
{
    ok_on(L2x2, "split", NULL, NULL);
    ok_on(L2x3, "split", NULL, NULL);
    ok_on(L4x2, "split", NULL, NULL);
    ok_on(L3_2, "split", NULL, NULL);
}

Test(ch2_5, team_split_bad_arguments, .description = "a split that does not fit the parent, a stride of 0 members, destroying WORLD: clear errors")
{
    const char *const env[] = {L2x2.per_node, NULL};
    expect_error(CH, PROG, 4, "split_bad", ARGS("size"), env, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_team_split_strided", "size 5", "do not fit"));
    expect_error(CH, PROG, 4, "split_bad", ARGS("stride"), env, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_team_split_strided", "stride 4"));
    expect_error(CH, PROG, 4, "split_bad", ARGS("destroy_world"), env, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_team_destroy", "TSHMEM_TEAM_WORLD"));
}

Test(ch2_5, team_split_mismatch_is_named, .description = "a split whose size differs between PEs stops, naming both PEs and both sizes (with and without TSHMEM_DEBUG=1)")
{
    const char *const needles[] = {"tshmem_team_split_strided: PE ", "PE 0 passed size 4 and PE ",
                                   "passed size 2 to tshmem_team_split_strided", NULL};
    expect_error(CH, PROG, 4, "split_mismatch", NULL, ENV(L2x2.per_node), TSHMEM_EXIT_ERROR,
                 needles);
    expect_error(CH, PROG, 4, "split_mismatch", NULL, ENV(L2x2.per_node, "TSHMEM_DEBUG=1"),
                 TSHMEM_EXIT_ERROR, needles);
}

Test(ch2_5, team_handles_run_out, .description = "splitting in a loop runs out of team handles with a clear error, not a corrupted flag area")
{
    const char *const env[] = {L2x2.per_node, NULL};
    expect_error(CH, PROG, 4, "split_bad", ARGS("exhaust"), env, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_team_split_strided", "no team handle left"));
}

Test(ch2_5, idle_proxy_backs_off, .description = "8 PEs on 4 virtual nodes: an idle PE and its proxy thread use little CPU, and the job ends quickly")
{
    struct pe_job job;
    job_runv(&job, CH, PROG, L4x2.npes, "idle", NULL, ENV(L4x2.per_node), 30);
    JOB_EXPECT_OK(&job);
    cr_assert(job.seconds < 20 * job_timeout_scale(), "2.5 idle on 8 PEs took %.1f s: does a "
              "wait spin?", job.seconds);
    job_free(&job);
}

Test(ch2_5, finalize_skipped_is_reported, .description = "a PE that leaves main without tshmem_finalize while others reach it is named; the job ends")
{
    expect_error(CH, PROG, 4, "no_finalize", NULL, ENV(L2x2.per_node), TSHMEM_EXIT_ERROR,
                 ARGS("PE 3", "without calling tshmem_finalize"));
}

/* 1 if pid is a live process (a zombie counts as gone). */
static int alive(int pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

Test(ch2_5, killed_pe_ends_job_cleanly, .description = "PE 1 killed in the middle of a stream of off-node puts: the job ends naming it, nothing left in /dev/shm or the process table")
{
    char id[64];
    unique_job_id(id, sizeof id, "kill");
    struct pe_job job;
    job_runv(&job, CH, PROG, 4, "kill", ARGS("50"), ENV(L2x2.per_node, id), 30);
    cr_assert(!job.timed_out, "2.5 kill: the job hung after PE 1 was killed:\n%s",
              job.hang_report ? job.hang_report : job_digest(&job));
    cr_assert(job.status != 0 && job_count(&job, "FAIL") == 0, "2.5 kill: %s", job_digest(&job));
    cr_assert(job_count(&job, "pe 1: step raising SIGKILL") == 1 &&
                  job_count(&job, "rank 1") >= 1 && job_count(&job, "signal 9") >= 1,
              "2.5 kill: PE 1 should have died by SIGKILL in the middle of its puts and the "
              "launcher should name it (\"rank 1 ... signal 9\"):\n%s", job_digest(&job));
    int left = shm_entries(id + strlen("TSHMEM_JOB_ID="));
    cr_assert(left == 0, "2.5 kill: %d entries of the job remain in /dev/shm", left);
    for (const char *p = job.output; (p = strstr(p, "step start pid=")); p++) {
        int pid = atoi(p + strlen("step start pid="));
        cr_assert(!alive(pid), "2.5 kill: PE process %d is still running after the job ended",
                  pid);
    }
    job_free(&job);
}
