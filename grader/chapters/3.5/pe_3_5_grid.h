/* pe_3_5_grid.h: pe_3_5's scenarios on a TP x DP grid, the 2D split, and the misuses. Included
 * once, by pe_3_5.c. */

/* Whether team holds exactly the world PEs pes[0 .. n-1], in that order. */
static int team_is(tshmem_team_t team, const int *pes, int n)
{
    if (team == TSHMEM_TEAM_INVALID || tshmem_team_n_pes(team) != n)
        return 0;
    for (int i = 0; i < n; i++)
        if (tshmem_team_translate_pe(team, i, TSHMEM_TEAM_WORLD) != pes[i])
            return 0;
    return 1;
}

static void describe(char *out, size_t len, tshmem_team_t team)
{
    size_t at = (size_t)snprintf(out, len, "{");
    int n = team == TSHMEM_TEAM_INVALID ? 0 : tshmem_team_n_pes(team);
    for (int i = 0; i < n && at < len; i++)
        at += (size_t)snprintf(out + at, len - at, "%s%d", i ? ", " : "",
                               tshmem_team_translate_pe(team, i, TSHMEM_TEAM_WORLD));
    if (at < len)
        snprintf(out + at, len - at, "}");
}

/* split2d XRANGES: for each xrange of the list (one split each, kept), the rows and columns of
 * WORLD laid out in rows of xrange. */
static void split2d(int argc, char **argv)
{
    int list[8], n_list = 0;
    char *copy = strdup(argc > 2 ? argv[2] : "2"), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok && n_list < 8;
         tok = strtok_r(NULL, ",", &save))
        list[n_list++] = atoi(tok);
    free(copy);
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes(), pes[64], k;
    for (int l = 0; l < n_list; l++) {
        int xr = list[l];
        STEP("xrange %d", xr);
        tshmem_team_t xt = TSHMEM_TEAM_INVALID, yt = TSHMEM_TEAM_INVALID;
        tshmem_team_split_2d(TSHMEM_TEAM_WORLD, xr, NULL, 0, &xt, NULL, 0, &yt);
        char seen[256];
        k = 0;
        for (int p = me / xr * xr; p < n && p < (me / xr + 1) * xr; p++)
            pes[k++] = p;
        describe(seen, sizeof seen, xt);
        CHECK(team_is(xt, pes, k), "xrange %d on %d PEs: PE %d's x-axis team is %s; expected "
              "its row, world PEs %d .. %d", xr, n, me, seen, pes[0], pes[k - 1]);
        k = 0;
        for (int p = me % xr; p < n; p += xr)
            pes[k++] = p;
        describe(seen, sizeof seen, yt);
        CHECK(team_is(yt, pes, k), "xrange %d on %d PEs: PE %d's y-axis team is %s; expected "
              "its column, world PEs %d, %d, ... (stride %d)", xr, n, me, seen, me % xr,
              me % xr + xr, xr);
    }
    tshmem_barrier_all();
    tshmem_finalize();
}

/* grid T H F ROWS STEPS [node]: T-way tensor parallelism on the x-axis teams of a 2D split (or,
 * with "node", on TSHMEM_TEAM_NODE, which must then equal the x-axis team), data parallelism on
 * the y-axis teams: replica d takes rows d x ROWS .. of each global batch. The shard's
 * gradients after tshmem_tp_dp_sync must equal the single-process block's, summed over the
 * replicas, bit for bit: with 1 or 2 replicas there is at most one addition, a + b = b + a,
 * whatever order the allreduce takes (with more, the bound of the book applies instead). */
static void grid(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: pe_3_5 grid T HIDDEN FFN ROWS STEPS [node]\n");
        exit(2);
    }
    int t = atoi(argv[2]), h = atoi(argv[3]), f = atoi(argv[4]), rows = atoi(argv[5]);
    int steps = atoi(argv[6]), node = argc > 7 && strcmp(argv[7], "node") == 0;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    tshmem_team_t xt, yt;
    tshmem_team_split_2d(TSHMEM_TEAM_WORLD, t, NULL, 0, &xt, NULL, 0, &yt);
    tshmem_team_t team = node ? TSHMEM_TEAM_NODE : xt;
    if (node) {
        int pes[64], k = 0;
        for (int i = 0; i < tshmem_team_n_pes(TSHMEM_TEAM_NODE) && k < 64; i++)
            pes[k++] = tshmem_team_translate_pe(TSHMEM_TEAM_NODE, i, TSHMEM_TEAM_WORLD);
        CHECK_OR_STOP(team_is(xt, pes, k), "PE %d: with TSHMEM_PES_PER_NODE=%d the x-axis team "
                      "of xrange %d should be this PE's node team", me, t, t);
    }
    int d = tshmem_team_my_pe(yt), D = tshmem_team_n_pes(yt);
    if (n % t != 0 || D > 2) {
        fprintf(stderr, "pe_3_5 grid: T must divide the PEs into 1 or 2 replicas\n");
        exit(2);
    }
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, me / t, me, &comm);
    tshmem_tp_config_t cfg = {.hidden = h, .ffn = f, .max_rows = rows, .seed = SEED};
    tshmem_tp_t *tp = tshmem_tp_create(team, &cfg);
    STEP("PE %d of %d: TP team PE %d of %d (units %d .. %d), DP replica %d of %d", me, n,
         tp->rank, tp->size, tp->mlp.first, tp->mlp.first + tp->mlp.cols - 1, d, D);
    struct tshmem_tp_mlp whole;
    tshmem_tp_mlp_init(&whole, h, f, 0, f, rows, SEED, NULL);
    float *sum = calloc(whole.n_grads, sizeof(float));
    struct pass p = pass_alloc(rows, h), q = pass_alloc(rows, h);
    for (int s = 0; s < steps; s++) {
        STEP("step %d", s);
        tshmem_tp_mlp_zero_grad(&tp->mlp);
        for (int k = 0; k < D; k++) { /* the whole block, replica by replica, in order */
            fill(k == d ? &p : &q, rows, h, s, k * rows);
            tshmem_tp_mlp_zero_grad(&whole);
            if (k == d) {
                if (!check_pass(tp, &whole, &p, rows, s, comm))
                    return;
            } else {
                tshmem_tp_reference_forward(&whole, q.x, rows, q.yref);
                tshmem_tp_reference_backward(&whole, q.dy, q.dxref);
            }
            for (size_t i = 0; i < whole.n_grads; i++)
                sum[i] = k == 0 ? whole.grads[i] : sum[i] + whole.grads[i];
        }
        tshmem_tp_dp_sync(tp, yt);
        if (!same_grads(&tp->mlp, &whole, sum, s))
            return;
        tshmem_tp_mlp_sgd(&tp->mlp, 0.1f);
        memcpy(whole.grads, sum, whole.n_grads * sizeof(float));
        tshmem_tp_mlp_sgd(&whole, 0.1f);
    }
    pass_free(&p), pass_free(&q), free(sum);
    tshmem_tp_mlp_free(&whole);
    tshmem_tp_destroy(tp);
    MPI_Comm_free(&comm);
    tshmem_finalize();
}

/* bad KIND: one misuse; the runtime must stop the job with a message. */
static void bad(int argc, char **argv)
{
    const char *kind = argc > 2 ? argv[2] : "";
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    tshmem_tp_config_t cfg = {.hidden = 8, .ffn = 16, .max_rows = 4, .seed = SEED};
    float buf[64] = {0};
    tshmem_team_t xt, yt;
    if (strcmp(kind, "bad_team") == 0) {
        tshmem_tp_create(9, &cfg);
    } else if (strcmp(kind, "null_config") == 0) {
        tshmem_tp_create(TSHMEM_TEAM_WORLD, NULL);
    } else if (strcmp(kind, "hidden0") == 0) {
        cfg.hidden = 0;
        tshmem_tp_create(TSHMEM_TEAM_WORLD, &cfg);
    } else if (strcmp(kind, "ffn_small") == 0) {
        cfg.ffn = n - 1;
        tshmem_tp_create(TSHMEM_TEAM_WORLD, &cfg);
    } else if (strcmp(kind, "mismatch") == 0) {
        cfg.ffn = me == 1 ? 24 : 16;
        tshmem_tp_create(TSHMEM_TEAM_WORLD, &cfg);
    } else if (strcmp(kind, "shard_outside") == 0) {
        tshmem_tp_t *tp = tshmem_tp_create(TSHMEM_TEAM_WORLD, &cfg);
        tshmem_tp_shard(tp, n, NULL);
    } else if (strcmp(kind, "not_member") == 0) { /* PE n-1 is outside a team of 0 .. n-2 */
        tshmem_team_t team;
        tshmem_team_split_strided(TSHMEM_TEAM_WORLD, 0, 1, n - 1, NULL, 0, &team);
        tshmem_tp_t *tp = tshmem_tp_create(team, &cfg);
        if (me == n - 1)
            tshmem_tp_forward(tp, buf, 1, buf + 32);
        tshmem_barrier_all();
    } else if (strcmp(kind, "rows") == 0) {
        tshmem_tp_t *tp = tshmem_tp_create(TSHMEM_TEAM_WORLD, &cfg);
        tshmem_tp_forward(tp, buf, 9, buf + 32);
    } else if (strcmp(kind, "backward_first") == 0) {
        tshmem_tp_t *tp = tshmem_tp_create(TSHMEM_TEAM_WORLD, &cfg);
        tshmem_tp_backward(tp, buf, buf + 32);
    } else if (strcmp(kind, "dp_overlap") == 0 || strcmp(kind, "dp_mixed") == 0) {
        /* 2 x 2: TP teams {0, 1} and {2, 3}. WORLD overlaps a TP team; {0, 3} mixes shards. */
        tshmem_team_split_2d(TSHMEM_TEAM_WORLD, 2, NULL, 0, &xt, NULL, 0, &yt);
        tshmem_tp_t *tp = tshmem_tp_create(xt, &cfg);
        tshmem_team_t dp = TSHMEM_TEAM_WORLD;
        if (kind[3] == 'm')
            tshmem_team_split_strided(TSHMEM_TEAM_WORLD, 0, 3, 2, NULL, 0, &dp);
        if (dp != TSHMEM_TEAM_INVALID)
            tshmem_tp_dp_sync(tp, dp);
        tshmem_barrier_all();
    } else if (strcmp(kind, "xrange0") == 0 || strcmp(kind, "xrange_big") == 0) {
        tshmem_team_split_2d(TSHMEM_TEAM_WORLD, kind[6] == '0' ? 0 : n + 1, NULL, 0, &xt, NULL,
                             0, &yt);
    } else {
        fprintf(stderr, "pe_3_5 bad: no misuse named '%s'\n", kind);
        exit(2);
    }
    FAIL("PE %d: the misuse (%s) returned instead of stopping with an error", me, kind);
}
