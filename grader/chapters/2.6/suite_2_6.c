/* suite_2_6.c: chapter 2.6, the one-sided network on UCX. Its own program (pe_2_6) checks which
 * network a job takes and each kind of call once; then the cross-node scenarios of chapters 2.4
 * and 2.5 (pe_2_4, pe_2_5) run again on this network, so every behaviour the proxy was graded
 * on holds here too. Chapter 2.5's suite grades the proxy (it sets TSHMEM_NET=proxy), this one
 * the UCX network: together they prove both, without running any job twice on one network.
 * Layouts: TSHMEM_PES_PER_NODE=k on n PEs makes nodes of k consecutive PEs (2x2 is n=4, k=2). */
#include <stdlib.h>

#include "suite.h"

#define CH "2.6"

/* Every job of this suite runs on the UCX network unless a test says otherwise. */
__attribute__((constructor)) static void on_ucx(void) { setenv("TSHMEM_NET", "ucx", 1); }

struct layout {
    int npes;
    const char *per_node;
};
static const struct layout L2x1 = {2, "TSHMEM_PES_PER_NODE=1"};
static const struct layout L2x2 = {4, "TSHMEM_PES_PER_NODE=2"};
static const struct layout L2x3 = {6, "TSHMEM_PES_PER_NODE=3"};
static const struct layout L4x2 = {8, "TSHMEM_PES_PER_NODE=2"};
static const struct layout L3_2 = {5, "TSHMEM_PES_PER_NODE=2"}; /* nodes of 2, 2, 1 */

static void ok_on(struct layout l, const char *prog, const char *scenario,
                  const char *const *args, const char *extra)
{
    const char *const env[] = {l.per_node, extra, NULL};
    expect_ok_on(CH, prog, scenario, args, env, 40, (int[]){l.npes, END_PES});
}

Test(ch2_6, every_call_once_on_ucx, .description = "put, get, signal SET and ADD, and every atomic (fetch, set, add, fetch-add, swap, compare-swap) across nodes with known answers, on the UCX network: asked for, and by default")
{
    ok_on(L2x1, "pe_2_6", "network", ARGS("ucx"), NULL);
    ok_on(L2x2, "pe_2_6", "network", ARGS("ucx"), "TSHMEM_NET=");     /* the default */
    ok_on(L2x1, "pe_2_6", "network", ARGS("proxy"), "TSHMEM_NET=proxy"); /* still there */
}

Test(ch2_6, put_get_across_nodes, .description = "2.5's put and get of 0 B to 3 MiB, blocking and nbi, to every PE at 2x1, 2x2, 2x3 and 4x2, on UCX")
{
    ok_on(L2x2, "pe_2_5", "rma", ARGS("0", "1", "4097", "16385", "65536"), NULL);
    ok_on(L2x3, "pe_2_5", "rma", ARGS("1", "4097"), NULL);
    ok_on(L4x2, "pe_2_5", "rma", ARGS("1", "4097"), NULL);
    ok_on(L2x1, "pe_2_5", "rma", ARGS("3145731"), "TSHMEM_SYMMETRIC_SIZE=16M");
}

Test(ch2_6, put_signal_data_before_signal, .description = "2.5's put_signal across nodes on UCX: whoever sees the signal sees the data (the fence between them)")
{
    ok_on(L2x2, "pe_2_5", "signal", ARGS("300", "1000"), NULL);
    ok_on(L2x1, "pe_2_5", "signal", ARGS("10", "2500000"), "TSHMEM_SYMMETRIC_SIZE=16M");
}

Test(ch2_6, fence_order_and_quiet_completion, .description = "2.5's fence and quiet across nodes on UCX: puts to one PE land in order; quiet (a worker flush) completes them")
{
    /* Quiet alone first: after it, an MPI message (no call of tshmem) finds every byte there.
     * Over TCP, where a put travels after the call returns (cross-memory attach, UCX's path
     * between processes of one host, writes it during the call). */
    ok_on(L2x1, "pe_2_6", "quiet_then_message", ARGS("3", "2097152"), "UCX_TLS=tcp,self");
    ok_on(L2x2, "pe_2_5", "fence", ARGS("300"), NULL);
    ok_on(L4x2, "pe_2_5", "fence", ARGS("100"), NULL);
}

Test(ch2_6, atomics_under_contention, .description = "2.5's fetch_add and compare_swap from every PE of both nodes on one word, on UCX: no update lost")
{
    ok_on(L2x2, "pe_2_5", "atomics", ARGS("300"), NULL);
    ok_on(L4x2, "pe_2_5", "atomics", ARGS("50"), NULL);
}

Test(ch2_6, barrier_and_collectives_across_nodes, .description = "2.5's barrier phases, hierarchical and automatic allreduce, fcollect and broadcast, and team splits across nodes, on UCX")
{
    ok_on(L3_2, "pe_2_5", "barrier", ARGS("20"), NULL);
    ok_on(L2x3, "pe_2_5", "allreduce", ARGS("hierarchical", "333", "4"), NULL);
    ok_on(L2x2, "pe_2_5", "allreduce", ARGS("auto", "300001", "2"), NULL);
    ok_on(L4x2, "pe_2_5", "collect", ARGS("hybrid", "999"), NULL);
    ok_on(L2x2, "pe_2_5", "split", NULL, NULL);
}

Test(ch2_6, threads_share_the_worker, .description = "two threads of each PE, and 2.4's progress thread beside the program, reach the other node at once through one SERIALIZED worker")
{
    ok_on(L2x1, "pe_2_5", "threads", ARGS("300"), NULL);
    ok_on(L2x2, "pe_2_4", "busy", ARGS("-"), NULL);
}

Test(ch2_6, tcp_needs_the_target_helper, .description = "every off-node byte over TCP (UCX_TLS=tcp,self): the target's helper thread and waits apply the operations; put/get, put_signal, atomics, allreduce, and an idle PE stays cheap")
{
    const char *tcp = "TSHMEM_TRANSPORT=tcp";
    ok_on(L2x2, "pe_2_5", "rma", ARGS("1", "60000", "100000"), tcp);
    ok_on(L2x1, "pe_2_5", "signal", ARGS("50", "60000"), tcp);
    ok_on(L2x2, "pe_2_5", "atomics", ARGS("50"), tcp);
    ok_on(L2x3, "pe_2_5", "allreduce", ARGS("auto", "1000", "2"), tcp);
    ok_on(L4x2, "pe_2_5", "idle", NULL, tcp);
}

Test(ch2_6, link_model_same_results, .description = "across a modeled card (TSHMEM_LINK=1.25GB/s,5us) on UCX: put/get, put_signal, fence order, atomics, allreduce and 2.4's requests give the same results")
{
    const char *link = "TSHMEM_LINK=1.25GB/s,5us";
    ok_on(L2x2, "pe_2_5", "rma", ARGS("1", "4097", "100000"), link);
    ok_on(L2x1, "pe_2_5", "signal", ARGS("100", "70000"), link);
    ok_on(L2x2, "pe_2_5", "fence", ARGS("100"), link);
    ok_on(L2x2, "pe_2_5", "atomics", ARGS("30"), link);
    ok_on(L2x1, "pe_2_4", "busy", ARGS("-"), link);
}

Test(ch2_6, ucx_that_cannot_start_is_named, .description = "where UCX cannot reach the other node (UCX_TLS=self) the job says so in one sentence naming the host and UCX's reason and runs on the proxy; with TSHMEM_NET=ucx it stops; a TSHMEM_NET that is no network is refused")
{
    struct pe_job job;
    job_runv(&job, CH, "pe_2_6", 2, "network", ARGS("proxy"),
             ENV(L2x1.per_node, "TSHMEM_NET=", "UCX_TLS=self"), 40);
    JOB_EXPECT_OK(&job);
    cr_assert(job_count(&job, "UCX could not start on host") == 1 &&
                  job_count(&job, "unreachable") >= 1,
              "2.6: with UCX_TLS=self no UCX transport reaches the other node. The job should "
              "run on the proxy and say why once (\"UCX could not start on host ... "
              "(tshmem_ucx_connect: Destination is unreachable)\"):\n%s", job_digest(&job));
    job_free(&job);
    expect_error(CH, "pe_2_6", 2, "network", ARGS("ucx"), ENV(L2x1.per_node, "UCX_TLS=self"),
                 TSHMEM_EXIT_ERROR, ARGS("TSHMEM_NET=ucx", "could not start on host", "unreachable"));
    expect_error(CH, "pe_2_6", 2, "network", ARGS("ucx"),
                 ENV(L2x1.per_node, "TSHMEM_NET=infiniband"), TSHMEM_EXIT_ERROR,
                 ARGS("TSHMEM_NET='infiniband' is not a network"));
}

Test(ch2_6, finalize_skipped_is_reported, .description = "a PE that leaves main without tshmem_finalize while others reach its memory through UCX is named; the job ends")
{
    expect_error(CH, "pe_2_5", 4, "no_finalize", NULL, ENV(L2x2.per_node), TSHMEM_EXIT_ERROR,
                 ARGS("PE 3", "without calling tshmem_finalize"));
}
