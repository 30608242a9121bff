/* pe_1_1.c: the PE side of chapter 1.1's tests: PE numbers, nodes, teams, lifecycle errors. */
#include "pe_test.h"

/* The node layout the test expects: virtual nodes of k consecutive PEs, or one node. */
static int expected_node_size(int pe, int n)
{
    const char *k_env = getenv("TSHMEM_PES_PER_NODE");
    int k = k_env ? atoi(k_env) : 0;
    if (k <= 0)
        return n;
    int first = pe / k * k;
    return (first + k <= n) ? k : n - first;
}

static int expected_node_first(int pe)
{
    const char *k_env = getenv("TSHMEM_PES_PER_NODE");
    int k = k_env ? atoi(k_env) : 0;
    return k <= 0 ? 0 : pe / k * k;
}

static void ids(int argc, char **argv)
{
    (void)argc, (void)argv;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    VALUE("me", "%d", me);
    VALUE("n", "%d", n);
    VALUE("node_me", "%d", tshmem_team_my_pe(TSHMEM_TEAM_NODE));
    VALUE("node_n", "%d", tshmem_team_n_pes(TSHMEM_TEAM_NODE));
    VALUE("world_me", "%d", tshmem_team_my_pe(TSHMEM_TEAM_WORLD));
    VALUE("world_n", "%d", tshmem_team_n_pes(TSHMEM_TEAM_WORLD));
    int mpi_rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
    CHECK(me == mpi_rank, "tshmem_my_pe() returned %d but this process is MPI rank %d", me,
          mpi_rank);
    int node_n = tshmem_team_n_pes(TSHMEM_TEAM_NODE);
    int want = expected_node_size(me, n);
    CHECK(node_n == want, "the node team has %d PEs, expected %d (TSHMEM_PES_PER_NODE=%s)", node_n,
          want, getenv("TSHMEM_PES_PER_NODE") ? getenv("TSHMEM_PES_PER_NODE") : "unset");
    int node_me = tshmem_team_my_pe(TSHMEM_TEAM_NODE);
    CHECK(node_me == me - expected_node_first(me),
          "tshmem_team_my_pe(TSHMEM_TEAM_NODE) is %d, expected %d", node_me,
          me - expected_node_first(me));
    pe_sync();
    tshmem_finalize();
}

static void translate(int argc, char **argv)
{
    (void)argc, (void)argv;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes(), first = expected_node_first(me);
    int size = expected_node_size(me, n);
    for (int j = 0; j < size; j++) {
        int w = tshmem_team_translate_pe(TSHMEM_TEAM_NODE, j, TSHMEM_TEAM_WORLD);
        CHECK(w == first + j, "translate_pe(NODE, %d, WORLD) = %d, expected %d", j, w, first + j);
    }
    for (int pe = 0; pe < n; pe++) {
        int t = tshmem_team_translate_pe(TSHMEM_TEAM_WORLD, pe, TSHMEM_TEAM_NODE);
        int want = (pe >= first && pe < first + size) ? pe - first : -1;
        CHECK(t == want, "translate_pe(WORLD, %d, NODE) = %d, expected %d (%s)", pe, t, want,
              want < 0 ? "that PE is on another node" : "same node");
        int same = tshmem_team_translate_pe(TSHMEM_TEAM_WORLD, pe, TSHMEM_TEAM_WORLD);
        CHECK(same == pe, "translate_pe(WORLD, %d, WORLD) = %d, expected %d", pe, same, pe);
    }
    int bad[] = {-1, n, n + 5};
    for (int i = 0; i < 3; i++) {
        int t = tshmem_team_translate_pe(TSHMEM_TEAM_WORLD, bad[i], TSHMEM_TEAM_NODE);
        CHECK(t == -1, "translate_pe(WORLD, %d, NODE) = %d for a PE that does not exist, "
                       "expected -1", bad[i], t);
    }
    CHECK(tshmem_team_my_pe(TSHMEM_TEAM_INVALID) == -1, "team_my_pe(TSHMEM_TEAM_INVALID) != -1");
    CHECK(tshmem_team_n_pes(TSHMEM_TEAM_INVALID) == -1, "team_n_pes(TSHMEM_TEAM_INVALID) != -1");
    CHECK(tshmem_team_translate_pe(TSHMEM_TEAM_INVALID, 0, TSHMEM_TEAM_WORLD) == -1,
          "translate_pe(TSHMEM_TEAM_INVALID, 0, WORLD) != -1");
    pe_sync();
    tshmem_finalize();
}

static void before_init(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[2], "barrier") == 0) { /* a collective: it names itself */
        STEP("calling tshmem_barrier_all before tshmem_init");
        tshmem_barrier_all();
        FAIL("tshmem_barrier_all() before tshmem_init returned instead of stopping with an error");
        return;
    }
    STEP("calling tshmem_my_pe before tshmem_init");
    int me = tshmem_my_pe();
    FAIL("tshmem_my_pe() before tshmem_init returned %d instead of stopping with an error", me);
}

static void after_finalize(int argc, char **argv)
{
    (void)argc, (void)argv;
    pe_init();
    tshmem_finalize();
    STEP("calling tshmem_n_pes after tshmem_finalize");
    int n = tshmem_n_pes();
    FAIL("tshmem_n_pes() after tshmem_finalize returned %d instead of stopping with an error", n);
}

static void init_twice(int argc, char **argv)
{
    (void)argc, (void)argv;
    pe_init();
    tshmem_init();
    FAIL("a second tshmem_init returned instead of stopping with an error");
}

static void bad_team(int argc, char **argv)
{
    (void)argc, (void)argv;
    pe_init();
    int n = tshmem_team_n_pes(42);
    FAIL("tshmem_team_n_pes(42) returned %d instead of stopping with an error", n);
}

/* The last PE ends the job while every other PE is blocked elsewhere. */
static void global_exit(int argc, char **argv)
{
    (void)argc, (void)argv;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    pe_sync();
    if (me == n - 1) {
        STEP("calling tshmem_global_exit(7)");
        tshmem_global_exit(7);
        FAIL("tshmem_global_exit returned");
        return;
    }
    STEP("blocked in MPI_Recv, waiting to be ended");
    int never;
    MPI_Recv(&never, 1, MPI_INT, n - 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    FAIL("PE %d was not ended by tshmem_global_exit", me);
}

/* A program that started MPI itself keeps it after tshmem_finalize. */
static void mpi_first(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    pe_init();
    int n = tshmem_n_pes();
    tshmem_finalize();
    int finalized = 1, sum = 0, one = 1;
    MPI_Finalized(&finalized);
    CHECK(!finalized, "tshmem_finalize finalized MPI, but the program had called MPI_Init itself");
    if (!finalized) {
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(sum == n, "MPI_Allreduce after tshmem_finalize gave %d, expected %d", sum, n);
        MPI_Finalize();
    }
}

int main(int argc, char **argv)
{
    static const struct scenario list[] = {
        {"ids", ids},
        {"translate", translate},
        {"before_init", before_init},
        {"after_finalize", after_finalize},
        {"init_twice", init_twice},
        {"bad_team", bad_team},
        {"global_exit", global_exit},
        {"mpi_first", mpi_first},
        {NULL, NULL},
    };
    return pe_main(argc, argv, list);
}
