/* suite_1_1.c: chapter 1.1, initialization: PE numbers, nodes, teams, lifecycle errors. */
#include <stdlib.h>

#include "suite.h"

#define CH "1.1"
#define PROG "pe_1_1"

/* Every PE's number is reported once; together they are 0 .. n-1, and everyone agrees on n. */
static void check_ids(int npes, const char *per_node)
{
    char env_k[64];
    snprintf(env_k, sizeof env_k, "TSHMEM_PES_PER_NODE=%s", per_node);
    struct pe_job job;
    job_runv(&job, CH, PROG, npes, "ids", NULL, ENV(env_k), 30);
    JOB_EXPECT_OK(&job);
    int k = atoi(per_node);
    for (int pe = 0; pe < npes; pe++) {
        const char *me = job_value(&job, pe, "me"), *n = job_value(&job, pe, "n");
        cr_assert(me && atoi(me) == pe, "1.1 ids on %d PEs: PE %d reported tshmem_my_pe() = %s; "
                  "PE numbers must be 0 .. %d, each exactly once", npes, pe, me ? me : "nothing",
                  npes - 1);
        cr_assert(n && atoi(n) == npes, "1.1 ids on %d PEs: PE %d reported tshmem_n_pes() = %s",
                  npes, pe, n ? n : "nothing");
        int first = k > 0 ? pe / k * k : 0;
        int size = k > 0 ? (first + k <= npes ? k : npes - first) : npes;
        const char *node_n = job_value(&job, pe, "node_n"), *node_me = job_value(&job, pe, "node_me");
        cr_assert(node_n && atoi(node_n) == size && node_me && atoi(node_me) == pe - first,
                  "1.1 ids on %d PEs with TSHMEM_PES_PER_NODE=%s: PE %d is PE %s of a node team "
                  "of %s, expected PE %d of %d", npes, per_node, pe, node_me ? node_me : "?",
                  node_n ? node_n : "?", pe - first, size);
        const char *wn = job_value(&job, pe, "world_n"), *wme = job_value(&job, pe, "world_me");
        cr_assert(wn && atoi(wn) == npes && wme && atoi(wme) == pe,
                  "1.1 ids on %d PEs: TSHMEM_TEAM_WORLD says PE %s of %s for PE %d", npes,
                  wme ? wme : "?", wn ? wn : "?", pe);
    }
    job_free(&job);
}

Test(ch1_1, ids_unique_and_dense, .description = "PE numbers are 0..n-1, each once; n_pes agrees")
{
    int pes[] = {1, 2, 3, 4, 8};
    for (int i = 0; i < 5; i++)
        check_ids(pes[i], "0");
}

Test(ch1_1, node_team_virtual_nodes,
     .description = "TSHMEM_PES_PER_NODE cuts the machine into nodes of consecutive PEs")
{
    check_ids(4, "2");
    check_ids(6, "3");
    check_ids(8, "4");
    check_ids(5, "2"); /* the last node is smaller */
    check_ids(3, "1");
}

Test(ch1_1, translate_pe, .description = "team_translate_pe between WORLD and NODE, -1 if absent")
{
    expect_ok_on(CH, PROG, "translate", NULL, NULL, 30, (int[]){1, 2, 4, END_PES});
    expect_ok_on(CH, PROG, "translate", NULL, ENV("TSHMEM_PES_PER_NODE=2"), 30,
                 (int[]){4, 5, END_PES});
    expect_ok_on(CH, PROG, "translate", NULL, ENV("TSHMEM_PES_PER_NODE=3"), 30,
                 (int[]){8, END_PES});
}

Test(ch1_1, call_before_init, .description = "a call before tshmem_init stops with a clear error")
{
    expect_error(CH, PROG, 2, "before_init", NULL, NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_my_pe: called before tshmem_init"));
}

Test(ch1_1, barrier_before_init_names_itself,
     .description = "tshmem_barrier_all before tshmem_init names tshmem_barrier_all, not a call inside it")
{
    expect_error(CH, PROG, 2, "before_init", ARGS("barrier"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_barrier_all: called before tshmem_init"));
}

Test(ch1_1, call_after_finalize, .description = "a call after tshmem_finalize stops with a clear error")
{
    expect_error(CH, PROG, 2, "after_finalize", NULL, NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_n_pes: called after tshmem_finalize"));
}

Test(ch1_1, init_twice, .description = "a second tshmem_init stops with a clear error")
{
    expect_error(CH, PROG, 1, "init_twice", NULL, NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_init: called a second time"));
}

Test(ch1_1, bad_team, .description = "an unknown team handle stops with a clear error")
{
    expect_error(CH, PROG, 2, "bad_team", NULL, NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_team_n_pes: team 42 is not a team"));
}

Test(ch1_1, global_exit, .description = "tshmem_global_exit ends every PE with its status")
{
    int pes[] = {1, 2, 4, 8};
    for (int i = 0; i < 4; i++) {
        struct pe_job job;
        job_run(&job, CH, PROG, pes[i], "global_exit", NULL, 30);
        cr_assert(!job.timed_out, "1.1 global_exit on %d PE(s): the job did not end:\n%s", pes[i],
                  job.hang_report);
        cr_assert(job.status == 7, "1.1 global_exit on %d PE(s): the job ended with status %d, "
                  "expected the 7 given to tshmem_global_exit\n%s", pes[i], job.status,
                  job_digest(&job));
        cr_assert(job_count(&job, "FAIL") == 0, "1.1 global_exit on %d PE(s): %s", pes[i],
                  job_digest(&job));
        job_free(&job);
    }
}

Test(ch1_1, global_exit_names_pe_and_status,
     .description = "tshmem_global_exit prints its own line, naming the PE and the status, before the launcher's")
{
    struct pe_job job;
    job_run(&job, CH, PROG, 4, "global_exit", NULL, 30);
    cr_assert(!job.timed_out, "1.1 global_exit on 4 PEs: the job did not end:\n%s", job.hang_report);
    cr_assert(job.status == 7 && job_count(&job, "tshmem: PE 3: tshmem_global_exit: ending every "
                                                 "PE of the job with status 7") == 1,
              "1.1 global_exit on 4 PEs: expected status 7 and one line \"tshmem: PE 3: "
              "tshmem_global_exit: ending every PE of the job with status 7.\" printed by PE 3 "
              "before the launcher's own report, which varies from run to run and names no PE; "
              "got status %d\n%s", job.status, job_digest(&job));
    job_free(&job);
}

Test(ch1_1, bad_setting_stops_init,
     .description = "a bad TSHMEM_HANG_WARN stops tshmem_init, naming the variable and its value")
{
    expect_error(CH, PROG, 2, "ids", NULL, ENV("TSHMEM_HANG_WARN=soon"), TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_init: TSHMEM_HANG_WARN='soon' is not a whole number"));
}

Test(ch1_1, keeps_programs_mpi, .description = "tshmem_finalize leaves MPI running if the program started it")
{
    expect_ok_on(CH, PROG, "mpi_first", NULL, NULL, 30, (int[]){1, 3, END_PES});
}
