/* pe_3_2_zero.h: chapter 3.2's zero-copy receive, as pe_3_2's scenarios "zero" and "zero_bad"
 * (included by pe_3_2.c, after sleep_ms). */

/* What micro-batch k of a direction carries in element i: one float pattern per direction,
 * boundary and micro-batch, so that an overwritten or misplaced slot shows. */
static float zero_value(int bwd, int from_stage, uint64_t k, size_t i)
{
    return (float)((bwd ? 100000 : 0) + 1000 * from_stage + (int)(k % 512)) + 0.25f * (float)(i % 4);
}

/* Checks a held micro-batch where it lies: in its slot, with every element right. */
static int zero_slot_ok(const tshmem_pipe_t *p, const struct tshmem_pipe_dir *d, const float *got,
                        int bwd, int from, uint64_t k, const char *when)
{
    const float *slot = d->slots + (size_t)((k - 1) % (uint64_t)p->n_slots) * p->slot_elems;
    const char *what = bwd ? "gradient" : "activation";
    if (got != slot) {
        FAIL("stage %d: the zero-copy receive of %s %llu returned %p, but that micro-batch lies "
             "in slot %llu at %p: return the slot itself, not a copy", p->stage, what,
             (unsigned long long)k, (const void *)got,
             (unsigned long long)((k - 1) % (uint64_t)p->n_slots), (const void *)slot);
        return 0;
    }
    for (size_t i = 0; i < p->act_elems; i++)
        if (got[i] != zero_value(bwd, from, k, i)) {
            FAIL("stage %d, %s: element %zu of %s %llu (held in its slot) is %g, expected %g: "
                 "the sender overwrote a slot that was not released yet, or the data went to "
                 "the wrong slot", p->stage, when, i, what, (unsigned long long)k,
                 (double)got[i], (double)zero_value(bwd, from, k, i));
            return 0;
        }
    return 1;
}

/* One direction of every boundary, n micro-batches: each receiver holds as many slots as it may
 * (n_slots) and releases the oldest only when it needs room, after a short nap that gives a
 * sender which ignores the held slots the time to overwrite one; then it checks the released
 * micro-batch again. Returns 0 after a failure. */
static int zero_direction(tshmem_pipe_t *p, int bwd, int n, float *buf)
{
    struct tshmem_pipe_dir *d = bwd ? &p->bwd : &p->fwd;
    int s = p->stage, from = bwd ? s + 1 : s - 1;
    const float *held[TSHMEM_PIPE_MAX_SLOTS];
    uint64_t first = d->received + 1, sent0 = d->sent; /* numbering goes on from earlier phases */
    int n_held = 0;
    for (int j = 0; j < n; j++) {
        if (d->to_pe >= 0) {
            uint64_t k = sent0 + (uint64_t)j + 1;
            for (size_t i = 0; i < p->act_elems; i++)
                buf[i] = zero_value(bwd, s, k, i);
            (bwd ? tshmem_pipe_send_bwd : tshmem_pipe_send_fwd)(p, buf);
        }
        if (d->from_pe < 0)
            continue;
        uint64_t k = first + (uint64_t)j;
        if (n_held == p->n_slots) {
            sleep_ms(20);
            if (!zero_slot_ok(p, d, held[0], bwd, from, k - (uint64_t)n_held, "before release"))
                return 0;
            (bwd ? tshmem_pipe_release_bwd : tshmem_pipe_release_fwd)(p);
            memmove(held, held + 1, sizeof held[0] * (size_t)--n_held);
        }
        held[n_held] = (bwd ? tshmem_pipe_recv_bwd_ptr : tshmem_pipe_recv_fwd_ptr)(p);
        if (!zero_slot_ok(p, d, held[n_held], bwd, from, k, "on arrival"))
            return 0;
        n_held++;
    }
    for (int h = 0; h < n_held; h++) {
        if (!zero_slot_ok(p, d, held[h], bwd, from, first + (uint64_t)(n - n_held + h),
                          "before release"))
            return 0;
        (bwd ? tshmem_pipe_release_bwd : tshmem_pipe_release_fwd)(p);
    }
    return 1;
}

/* zero SLOTS N: every boundary forward, then backward, N micro-batches each, received with the
 * zero-copy calls and held as long as the slots allow; then a copying receive in each direction
 * (it must follow the zero-copy ones' numbering), and the counters. */
static void zero(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: pe_3_2 zero SLOTS N\n");
        exit(2);
    }
    int slots = atoi(argv[2]), n = atoi(argv[3]);
    pe_init();
    tshmem_pipe_config_t cfg = {.act_elems = 40, .n_slots = slots};
    tshmem_pipe_t *p = tshmem_pipe_create(TSHMEM_TEAM_WORLD, &cfg);
    int s = p->stage, ps = p->n_stages;
    float *buf = malloc(cfg.act_elems * sizeof(float));
    STEP("stage %d of %d, %d slot(s), %d micro-batches each way, held in their slots", s, ps,
         slots, n);
    if (!zero_direction(p, 0, n, buf) || !zero_direction(p, 1, n, buf))
        return;
    STEP("a copying receive after the zero-copy ones");
    for (int bwd = 0; bwd < 2; bwd++) {
        struct tshmem_pipe_dir *d = bwd ? &p->bwd : &p->fwd;
        if (d->to_pe >= 0) {
            for (size_t i = 0; i < cfg.act_elems; i++)
                buf[i] = zero_value(bwd, s, d->sent + 1, i);
            (bwd ? tshmem_pipe_send_bwd : tshmem_pipe_send_fwd)(p, buf);
        }
        if (d->from_pe >= 0) {
            uint64_t k = d->received + 1;
            (bwd ? tshmem_pipe_recv_bwd : tshmem_pipe_recv_fwd)(p, buf);
            CHECK_OR_STOP(buf[cfg.act_elems - 1] == zero_value(bwd, bwd ? s + 1 : s - 1, k,
                                                                 cfg.act_elems - 1),
                          "stage %d: the copying receive after %d zero-copy ones got %g, "
                          "expected micro-batch %llu's %g", s, n, (double)buf[cfg.act_elems - 1],
                          (unsigned long long)k,
                          (double)zero_value(bwd, bwd ? s + 1 : s - 1, k, cfg.act_elems - 1));
        }
    }
    check_counters(p, (uint64_t)n + 1, slots, 0);
    if (pe_failures)
        return;
    free(buf);
    tshmem_pipe_destroy(p);
    tshmem_finalize();
}

/* zero_bad KIND: a misuse of the zero-copy receive; the runtime must stop with a message. */
static void zero_bad(int argc, char **argv)
{
    const char *kind = argc > 2 ? argv[2] : "";
    pe_init();
    tshmem_pipe_config_t cfg = {.act_elems = 16, .n_slots = 1};
    tshmem_pipe_t *p = tshmem_pipe_create(TSHMEM_TEAM_WORLD, &cfg);
    float buf[16] = {0};
    if (strcmp(kind, "release_unheld") == 0) {
        if (p->stage == 1)
            tshmem_pipe_release_fwd(p);
    } else if (strcmp(kind, "recv_before_first") == 0) {
        if (p->stage == 0)
            tshmem_pipe_recv_fwd_ptr(p);
    } else if (strcmp(kind, "hold_too_many") == 0 || strcmp(kind, "copy_while_held") == 0) {
        if (p->stage == 0) {
            tshmem_pipe_send_fwd(p, buf); /* one micro-batch: it fills the only slot */
        } else {
            tshmem_pipe_recv_fwd_ptr(p);
            if (kind[0] == 'h')
                tshmem_pipe_recv_fwd_ptr(p); /* would wait for ever: the slot is held */
            else
                tshmem_pipe_recv_fwd(p, buf); /* its credit would free the held slot */
        }
    } else {
        fprintf(stderr, "pe_3_2 zero_bad: no misuse named '%s'\n", kind);
        exit(2);
    }
    tshmem_barrier_all(); /* the other PE waits here to be stopped */
    FAIL("PE %d: the misuse (%s) returned instead of stopping with an error", tshmem_my_pe(),
         kind);
}
