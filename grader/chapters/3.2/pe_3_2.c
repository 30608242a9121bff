/* pe_3_2.c: the PE side of chapter 3.2's tests: pipeline-parallel training over put_signal
 * handoffs, GPipe and 1F1B, against a single-process run of the same layers. */
#include <math.h>
#include <time.h>

#include "pe_test.h"
#include "tshmem_internal.h" /* white box: the runtime's team table */
#include "tshmem_pipe.h"

/* A team of `size` consecutive world PEs from `start`, made by hand as
 * tshmem_team_split_strided would make it, so that this chapter does not depend on 2.5. */
static tshmem_team_t team_by_hand(int start, int size)
{
    enum { HANDLE = 5 };
    struct tshmem_team *t = &tshmem_g.teams[HANDLE];
    t->pes = malloc(sizeof(int) * (size_t)tshmem_n_pes());
    t->n_pes = 0;
    t->my_pe = -1;
    t->sync_seq = 0;
    for (int pe = start; pe < tshmem_n_pes() && t->n_pes < size; pe++) {
        if (pe == tshmem_my_pe())
            t->my_pe = t->n_pes;
        t->pes[t->n_pes++] = pe;
    }
    return HANDLE;
}

#define SEED 2024u

static int parse_list(const char *list, int *out, int cap)
{
    int n = 0;
    char *copy = strdup(list), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t && n < cap; t = strtok_r(NULL, ",", &save))
        out[n++] = atoi(t);
    free(copy);
    return n;
}

static double (*schedule_named(const char *name))(tshmem_pipe_t *, struct tshmem_pipe_model *,
                                                  long, int)
{
    if (strcmp(name, "gpipe") == 0)
        return tshmem_pipe_gpipe;
    if (strcmp(name, "1f1b") == 0)
        return tshmem_pipe_1f1b;
    fprintf(stderr, "pe_3_2: no schedule named '%s' (gpipe, 1f1b)\n", name);
    exit(2);
}

/* The first float where a and b differ in their bits, or -1. */
static long first_difference(const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof(float)) != 0)
            return (long)i;
    return -1;
}

static int same_bits(const char *what, int step, int stage, const float *mine, const float *ref,
                     size_t n)
{
    long i = first_difference(mine, ref, n);
    if (i < 0)
        return 1;
    FAIL("step %d, stage %d: %s[%ld] is %.9g, the single-process run has %.9g: a wrong "
         "activation or gradient reached a stage (a slot overwritten before it was read, a "
         "handoff to the wrong PE), or a stage added its micro-batches' gradients in another "
         "order than 0, 1, 2, ...", step, stage, what, i, (double)mine[i], (double)ref[i]);
    return 0;
}

/* What a stage's counters must say after `done` micro-batches went through it in each
 * direction. */
static void check_counters(const tshmem_pipe_t *p, uint64_t done, int slots, int step)
{
    const struct tshmem_pipe_counters *c = p->counters;
    int s = p->stage, n = p->n_stages;
    uint64_t want_fs = s + 1 < n ? done : 0, want_fr = s > 0 ? done : 0;
    uint64_t want_bs = s > 0 ? done : 0, want_br = s + 1 < n ? done : 0;
    CHECK(c->fwd_sent == want_fs && c->fwd_received == want_fr && c->bwd_sent == want_bs &&
              c->bwd_received == want_br,
          "after step %d, stage %d of %d counts fwd sent %llu, received %llu, bwd sent %llu, "
          "received %llu; expected %llu, %llu, %llu, %llu (one handoff per micro-batch and "
          "direction)", step, s, n, (unsigned long long)c->fwd_sent,
          (unsigned long long)c->fwd_received, (unsigned long long)c->bwd_sent,
          (unsigned long long)c->bwd_received, (unsigned long long)want_fs,
          (unsigned long long)want_fr, (unsigned long long)want_bs, (unsigned long long)want_br);
    CHECK(c->fwd_ahead_max <= (uint64_t)slots && c->bwd_ahead_max <= (uint64_t)slots,
          "stage %d got %llu activations / %llu gradients ahead of its receiver, more than the "
          "%d slots: a send must wait for the credit of micro-batch seq - n_slots before it "
          "overwrites that slot", s, (unsigned long long)c->fwd_ahead_max,
          (unsigned long long)c->bwd_ahead_max, slots);
}

/* The stash a schedule should have needed on stage s of p for m micro-batches. */
static int want_peak(const char *sched, int s, int p, int m)
{
    if (strcmp(sched, "gpipe") == 0)
        return m;
    return m < p - s ? m : p - s;
}

/* train SCHEDS MICROS STEPS SLOTS ROWS WIDTH [world|sub]: for each m of MICROS, STEPS steps
 * of each schedule of SCHEDS (alternating), all on one pipe with no reset; after each step,
 * this stage's gradients, loss and weights are compared bit for bit with the single-process
 * run of every stage, which each PE computes beside it. sub: the stages are world PEs 1..n-1,
 * and PE 0 only creates and destroys the pipe. */
static void train(int argc, char **argv)
{
    if (argc < 8) {
        fprintf(stderr, "usage: pe_3_2 train gpipe,1f1b MICROS STEPS SLOTS ROWS WIDTH [sub]\n");
        exit(2);
    }
    int micros[16];
    int n_micros = parse_list(argv[3], micros, 16);
    int steps = atoi(argv[4]), slots = atoi(argv[5]), rows = atoi(argv[6]), width = atoi(argv[7]);
    int sub = argc > 8 && strcmp(argv[8], "sub") == 0;
    char scheds[2][16];
    int n_scheds = 0;
    {
        char *copy = strdup(argv[2]), *save = NULL;
        for (char *t = strtok_r(copy, ",", &save); t && n_scheds < 2; t = strtok_r(NULL, ",", &save))
            snprintf(scheds[n_scheds++], sizeof scheds[0], "%s", t);
        free(copy);
    }
    const float lr = 0.05f;
    pe_init();
    tshmem_team_t team = sub ? team_by_hand(1, tshmem_n_pes() - 1) : TSHMEM_TEAM_WORLD;
    tshmem_pipe_config_t cfg = {.act_elems = (size_t)rows * (size_t)width, .n_slots = slots};
    tshmem_pipe_t *pipe = tshmem_pipe_create(team, &cfg);
    int s = tshmem_pipe_stage(pipe), p = tshmem_pipe_n_stages(pipe);
    if (s < 0) {
        STEP("not a stage: waiting to destroy the pipe");
        tshmem_pipe_destroy(pipe);
        tshmem_finalize();
        return;
    }
    STEP("stage %d of %d, %d slots, micro-batches of %d x %d", s, p, slots, rows, width);
    struct tshmem_pipe_model mine, *ref = calloc((size_t)p, sizeof *ref);
    tshmem_pipe_model_init(&mine, s, p, rows, width, SEED);
    for (int k = 0; k < p; k++)
        tshmem_pipe_model_init(&ref[k], k, p, rows, width, SEED);
    size_t ww = (size_t)width * (size_t)width;
    uint64_t done = 0;
    int step = 0;
    for (int mi = 0; mi < n_micros; mi++)
        for (int k = 0; k < steps; k++, step++) {
            int m = micros[mi];
            const char *sched = scheds[step % n_scheds];
            STEP("step %d: %s with %d micro-batches", step, sched, m);
            tshmem_pipe_model_zero_grad(&mine);
            double loss = schedule_named(sched)(pipe, &mine, step, m);
            for (int q = 0; q < p; q++)
                tshmem_pipe_model_zero_grad(&ref[q]);
            double want = tshmem_pipe_reference_step(ref, p, step, m);
            done += (uint64_t)m;
            if (s == p - 1)
                CHECK_OR_STOP(memcmp(&loss, &want, sizeof loss) == 0,
                              "step %d (%s, m = %d): the last stage's loss is %.17g, the "
                              "single-process run's %.17g", step, sched, m, loss, want);
            else
                CHECK_OR_STOP(loss == 0, "step %d: stage %d of %d returned loss %g: only the "
                              "last stage has a loss, the others return 0", step, s, p, loss);
            if (!same_bits("gW", step, s, mine.gW, ref[s].gW, ww) ||
                !same_bits("gb", step, s, mine.gb, ref[s].gb, (size_t)width))
                return;
            CHECK_OR_STOP(mine.stash_count == 0, "step %d: stage %d ends the step with %d "
                          "micro-batches stashed: every forward needs its backward", step, s,
                          mine.stash_count);
            int peak = want_peak(sched, s, p, m);
            CHECK_OR_STOP(mine.stash_peak == peak,
                          "step %d (%s, m = %d): stage %d of %d stashed at most %d "
                          "micro-batches, expected %d (%s)", step, sched, m, s, p,
                          mine.stash_peak, peak,
                          strcmp(sched, "gpipe") == 0
                              ? "GPipe runs every forward before the first backward"
                              : "1F1B warms up with p - s - 1 forwards, then alternates one "
                                "forward and one backward");
            check_counters(pipe, done, slots, step);
            if (pe_failures)
                return;
            tshmem_pipe_model_sgd(&mine, lr);
            for (int q = 0; q < p; q++)
                tshmem_pipe_model_sgd(&ref[q], lr);
            if (s == p - 1)
                VALUE("loss", "step %d %.6f", step, loss);
        }
    if (!same_bits("W", step, s, mine.W, ref[s].W, ww))
        return;
    tshmem_pipe_model_free(&mine);
    for (int k = 0; k < p; k++)
        tshmem_pipe_model_free(&ref[k]);
    free(ref);
    tshmem_pipe_destroy(pipe);
    tshmem_finalize();
}

static uint64_t peer_counter(const tshmem_pipe_t *p, const uint64_t *word, int stage)
{
    return tshmem_uint64_atomic_fetch(word, tshmem_team_translate_pe(p->team, stage,
                                                                     TSHMEM_TEAM_WORLD));
}

static void sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* gate SCHED SLOTS MICRO GATED: stage GATED holds at a gate before its step while the others
 * run theirs. Its upstream neighbour must send exactly as many micro-batches as the slots (or
 * the schedule) allow, then wait; every stage before it must stay within n_slots of the
 * stage after it; nothing may reach the stages after the gate. Then the gate opens and the
 * step must end like the single-process run. A PE that never stops sending, or one that
 * stops too early, is caught; no timing decides the outcome (the short sleep only gives a
 * wrong implementation time to run past its credits). */
static void gate(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: pe_3_2 gate gpipe|1f1b SLOTS MICRO GATED\n");
        exit(2);
    }
    const char *sched = argv[2];
    int slots = atoi(argv[3]), m = atoi(argv[4]), g = atoi(argv[5]);
    const int rows = 2, width = 8;
    pe_init();
    tshmem_pipe_config_t cfg = {.act_elems = (size_t)rows * width, .n_slots = slots};
    tshmem_pipe_t *pipe = tshmem_pipe_create(TSHMEM_TEAM_WORLD, &cfg);
    int s = tshmem_pipe_stage(pipe), p = tshmem_pipe_n_stages(pipe);
    if (g < 1 || g >= p) {
        fprintf(stderr, "pe_3_2 gate: GATED must be 1 .. %d\n", p - 1);
        exit(2);
    }
    struct tshmem_pipe_model mine;
    tshmem_pipe_model_init(&mine, s, p, rows, width, SEED);
    const struct tshmem_pipe_counters *c = pipe->counters; /* same address on every PE */
    double loss = 0;
    if (s == g) {
        int u = g - 1;
        /* How far the stage before the gate can go: its schedule sends forward until it
         * needs a gradient back (GPipe: never; 1F1B: after p - u forwards), and its slots
         * take n_slots micro-batches. */
        int limit = strcmp(sched, "gpipe") == 0 ? m : p - u < m ? p - u : m;
        int expect = slots < limit ? slots : limit;
        STEP("gate closed; waiting for stage %d to send %d micro-batches", u, expect);
        double t0 = MPI_Wtime();
        uint64_t seen;
        while ((seen = peer_counter(pipe, &c->fwd_sent, u)) < (uint64_t)expect &&
               MPI_Wtime() - t0 < 10)
            sleep_ms(1);
        CHECK_OR_STOP(seen >= (uint64_t)expect,
                      "stage %d sent only %llu micro-batches to the closed gate in 10 s, "
                      "expected %d: a sender may fill every free slot before it waits",
                      u, (unsigned long long)seen, expect);
        sleep_ms(30); /* a sender that ignores credits would run on now */
        seen = peer_counter(pipe, &c->fwd_sent, u);
        CHECK_OR_STOP(seen == (uint64_t)expect,
                      "stage %d sent %llu micro-batches to stage %d, which has not received "
                      "any: with %d slots it must stop at %d and wait for a credit", u,
                      (unsigned long long)seen, g, slots, expect);
        if (expect < limit) {
            uint64_t waiting = peer_counter(pipe, &c->fwd_sending, u);
            CHECK(waiting == (uint64_t)expect + 1,
                  "stage %d should be waiting to send micro-batch %d (no free slot), but its "
                  "send under way is %llu", u, expect + 1, (unsigned long long)waiting);
        }
        /* Every boundary before the gate: sent(i) <= received(i + 1) + slots. Read sent
         * first: received only grows, so a later read can only be larger. */
        for (int i = 0; i + 1 < g; i++) {
            uint64_t sent = peer_counter(pipe, &c->fwd_sent, i);
            uint64_t got = peer_counter(pipe, &c->fwd_received, i + 1);
            VALUE("boundary", "%d->%d sent %llu received %llu", i, i + 1,
                  (unsigned long long)sent, (unsigned long long)got);
            CHECK(sent <= got + (uint64_t)slots,
                  "stage %d sent %llu micro-batches, stage %d received %llu: more than %d "
                  "slots ahead", i, (unsigned long long)sent, i + 1, (unsigned long long)got,
                  slots);
        }
        for (int i = g + 1; i < p; i++) {
            uint64_t got = peer_counter(pipe, &c->fwd_received, i);
            CHECK(got == 0, "stage %d received %llu micro-batches while stage %d, before it, "
                  "was held at the gate", i, (unsigned long long)got, g);
        }
        VALUE("held", "stage %d sent %llu with the gate closed", u, (unsigned long long)seen);
        if (pe_failures)
            return;
        STEP("gate open");
    }
    loss = schedule_named(sched)(pipe, &mine, 0, m);
    struct tshmem_pipe_model *ref = calloc((size_t)p, sizeof *ref);
    for (int k = 0; k < p; k++)
        tshmem_pipe_model_init(&ref[k], k, p, rows, width, SEED);
    double want = tshmem_pipe_reference_step(ref, p, 0, m);
    if (s == p - 1)
        CHECK(memcmp(&loss, &want, sizeof loss) == 0,
              "after the gate opened: loss %.17g, the single-process run's %.17g", loss, want);
    same_bits("gW", 0, s, mine.gW, ref[s].gW, (size_t)width * width);
    check_counters(pipe, (uint64_t)m, slots, 0);
    for (int k = 0; k < p; k++)
        tshmem_pipe_model_free(&ref[k]);
    free(ref);
    tshmem_pipe_model_free(&mine);
    tshmem_pipe_destroy(pipe);
    tshmem_finalize();
}

/* slow SCHED SLOW_STAGE US: one stage's compute takes US microseconds per micro-batch more
 * than the others' (a real slow stage, not a gate): the results must not change. */
static void slow(int argc, char **argv)
{
    const char *sched = argc > 2 ? argv[2] : "1f1b";
    int slow_stage = argc > 3 ? atoi(argv[3]) : 1;
    long us = argc > 4 ? atol(argv[4]) : 2000;
    const int rows = 3, width = 16, m = 6, slots = 1;
    pe_init();
    tshmem_pipe_config_t cfg = {.act_elems = (size_t)rows * width, .n_slots = slots};
    tshmem_pipe_t *pipe = tshmem_pipe_create(TSHMEM_TEAM_WORLD, &cfg);
    int s = tshmem_pipe_stage(pipe), p = tshmem_pipe_n_stages(pipe);
    struct tshmem_pipe_model mine, *ref = calloc((size_t)p, sizeof *ref);
    tshmem_pipe_model_init(&mine, s, p, rows, width, SEED);
    if (s == slow_stage)
        mine.fwd_us = us, mine.bwd_us = 2 * us;
    for (int k = 0; k < p; k++)
        tshmem_pipe_model_init(&ref[k], k, p, rows, width, SEED);
    for (int step = 0; step < 2; step++) {
        tshmem_pipe_model_zero_grad(&mine);
        double loss = schedule_named(sched)(pipe, &mine, step, m);
        for (int k = 0; k < p; k++)
            tshmem_pipe_model_zero_grad(&ref[k]);
        double want = tshmem_pipe_reference_step(ref, p, step, m);
        if (s == p - 1)
            CHECK_OR_STOP(memcmp(&loss, &want, sizeof loss) == 0,
                          "step %d with stage %d slow: loss %.17g, the single-process run's "
                          "%.17g", step, slow_stage, loss, want);
        if (!same_bits("gW", step, s, mine.gW, ref[s].gW, (size_t)width * width))
            return;
        check_counters(pipe, (uint64_t)(m * (step + 1)), slots, step);
    }
    tshmem_pipe_model_free(&mine);
    for (int k = 0; k < p; k++)
        tshmem_pipe_model_free(&ref[k]);
    free(ref);
    tshmem_pipe_destroy(pipe);
    tshmem_finalize();
}

#include "pe_3_2_zero.h"

/* bad KIND: one misuse; the runtime must stop the job with a message. */
static void bad(int argc, char **argv)
{
    const char *kind = argc > 2 ? argv[2] : "";
    pe_init();
    int me = tshmem_my_pe();
    tshmem_pipe_config_t cfg = {.act_elems = 16, .n_slots = TSHMEM_PIPE_DEFAULT_SLOTS};
    if (strcmp(kind, "slots0") == 0) {
        cfg.n_slots = 0;
        tshmem_pipe_create(TSHMEM_TEAM_WORLD, &cfg);
    } else if (strcmp(kind, "slots_many") == 0) {
        cfg.n_slots = TSHMEM_PIPE_MAX_SLOTS + 1;
        tshmem_pipe_create(TSHMEM_TEAM_WORLD, &cfg);
    } else if (strcmp(kind, "elems0") == 0) {
        cfg.act_elems = 0;
        tshmem_pipe_create(TSHMEM_TEAM_WORLD, &cfg);
    } else if (strcmp(kind, "too_large") == 0) {
        cfg.act_elems = (size_t)1 << 40;
        tshmem_pipe_create(TSHMEM_TEAM_WORLD, &cfg);
    } else if (strcmp(kind, "null_config") == 0) {
        tshmem_pipe_create(TSHMEM_TEAM_WORLD, NULL);
    } else if (strcmp(kind, "bad_team") == 0) {
        tshmem_pipe_create(9, &cfg);
    } else if (strcmp(kind, "send_past_last") == 0 || strcmp(kind, "recv_before_first") == 0) {
        tshmem_pipe_t *pipe = tshmem_pipe_create(TSHMEM_TEAM_WORLD, &cfg);
        float buf[16] = {0};
        int last = tshmem_pipe_n_stages(pipe) - 1;
        if (kind[0] == 's' && tshmem_pipe_stage(pipe) == last)
            tshmem_pipe_send_fwd(pipe, buf);
        if (kind[0] == 'r' && tshmem_pipe_stage(pipe) == 0)
            tshmem_pipe_recv_fwd(pipe, buf);
        tshmem_barrier_all(); /* the other PEs wait here to be stopped */
    } else if (strcmp(kind, "model_mismatch") == 0) {
        tshmem_pipe_t *pipe = tshmem_pipe_create(TSHMEM_TEAM_WORLD, &cfg);
        struct tshmem_pipe_model m;
        tshmem_pipe_model_init(&m, tshmem_pipe_stage(pipe), tshmem_pipe_n_stages(pipe), 3, 7,
                               SEED);
        tshmem_pipe_1f1b(pipe, &m, 0, 4);
    } else if (strcmp(kind, "not_member") == 0) { /* PE 0 is outside a team of PEs 1..n-1 */
        tshmem_pipe_t *pipe = tshmem_pipe_create(team_by_hand(1, tshmem_n_pes() - 1), &cfg);
        float buf[16] = {0};
        if (me == 0)
            tshmem_pipe_send_bwd(pipe, buf);
        tshmem_barrier_all();
    } else if (strcmp(kind, "negative_micro") == 0) {
        tshmem_pipe_t *pipe = tshmem_pipe_create(TSHMEM_TEAM_WORLD, &cfg);
        struct tshmem_pipe_model m;
        tshmem_pipe_model_init(&m, tshmem_pipe_stage(pipe), tshmem_pipe_n_stages(pipe), 2, 8,
                               SEED);
        tshmem_pipe_gpipe(pipe, &m, 0, -3);
    } else {
        fprintf(stderr, "pe_3_2 bad: no misuse named '%s'\n", kind);
        exit(2);
    }
    FAIL("PE %d: the misuse (%s) returned instead of stopping with an error", me, kind);
}

int main(int argc, char **argv)
{
    static const struct scenario list[] = {
        {"train", train}, {"gate", gate},         {"slow", slow},
        {"bad", bad},     {"zero", zero},         {"zero_bad", zero_bad}, {NULL, NULL},
    };
    return pe_main(argc, argv, list);
}
