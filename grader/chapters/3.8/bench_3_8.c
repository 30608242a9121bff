/* bench_3_8.c: chapter 3.8's benchmark: the LoRA adapter cache against the other places an
 * adapter can come from, in the same run.
 *
 *   op=lookup       a hit: tshmem_lora_cache_pin + unpin of a key whose home is PE 1 (PE 0 on
 *                   one PE), by PE 0, per call (100 calls per sample). impl=mpi: the same
 *                   protocol spelled with MPI RMA on a window at the home (MPI_Win_lock_all
 *                   once): get the set's keys, compare-and-swap the count up, get the header,
 *                   fetch-and-op the count down, each completed by MPI_Win_flush.
 *   op=switch_hH_rR an adapter switch: hidden H, rank R, bytes = layers x 2 x H x R x 4 for
 *                   1 .. 32 layers: PE 0 pins the adapter at home PE 1, copies it into its
 *                   working buffer (memcpy from ref.data on one node, a get otherwise) and
 *                   unpins. impl=memcpy copies the same bytes from private memory (the limit,
 *                   the table's baseline). Measured in the same run and printed in the "# switch"
 *                   line (the grader's table takes one baseline per operation): MPI_Get of them
 *                   from an MPI window at the home + flush; reading them from the adapter's file
 *                   in the page cache (file_warm), and after posix_fadvise(POSIX_FADV_DONTNEED)
 *                   and fdatasync (file_cold: from the disk, /var/tmp or TSHMEM_LORA_BENCH_DIR).
 *   op=serve        every PE serves batches of 16 Zipf(1.1) requests (hidden 256, rank 16, 2
 *                   layers, 64 adapters of 4 tenants, quota 8 slots per tenant and home), after
 *                   30 untimed batches (the steady state): impl=tshmem through the cache,
 *                   impl=file loading each switched adapter from its file; bytes = one adapter.
 *
 * "# " lines: per switch size, the ratios (vs_memcpy: memcpy's time over ours, 1.0 the
 * limit; vs_mpi; vs_file_warm; vs_file_cold) and whether it meets the roadmap's 100 us;
 *   # lookup hit_us=.. mpi_us=.. goal_us=2 home=.. zero_copy=..
 *   # hitrate quota=.. slots_per_home=.. adapters=64 zipf=1.1 hit_rate=..
 *   # serve pes=.. req_per_s_per_pe=.. file_req_per_s_per_pe=.. hit_rate=..
 *   # tenant t=.. requests=.. req_per_s=.. hit_rate=..   and   # fairness jain=..
 * By hand:
 *   make bench-programs IMPL=solutions && tools/tshrun -np 2 build/solutions/bin/bench_3_8
 * Across nodes on one machine (the tshmem path through chapter 2.5's transport, MPI on TCP):
 *   OMPI_MCA_btl=self,tcp OMPI_MCA_osc=ucx UCX_TLS=tcp,self TSHMEM_PES_PER_NODE=1 \
 *     tools/tshrun -np 2 build/solutions/bin/bench_3_8 --op switch_h1024_r16
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "bench.h"
#include "tshmem_lora_cache.h"

static int me, npes, home;
static uint64_t *served; /* symmetric: PE 0 sets it to iter + 1 on every PE when it is done */
static int serving;      /* PE 0 reaches the home through chapter 2.5's transport */

/* The other PEs, while PE 0 measures a tshmem operation across nodes: wait in a tshmem wait,
 * which serves chapter 2.5's requests (as a network card would), until PE 0 is done. On one
 * node there is nothing to serve (PE 0 reaches the home's words with loads, stores and
 * atomics; the home's CPU takes no part), so they go straight to the next iteration's barrier,
 * as they do for memcpy and MPI_Get. Were they to wait there too, an iteration's time, the
 * slowest PE's (bench.h), would be the last waiter's: PE 0's switch, then its stores to every
 * other PE's word, then that PE's wake-up from its wait: 0.1 to 0.3 us more per switch at 2 PEs
 * on the course's 2-core machine, and a store more for each further PE, none of it the
 * switch's. */
static void others_wait(int iter)
{
    if (me != 0 && serving)
        tshmem_uint64_wait_until(served, TSHMEM_CMP_GE, (uint64_t)iter + 1);
}
static void done_waiting(int iter)
{
    for (int pe = 1; pe < npes && serving; pe++)
        tshmem_uint64_atomic_set(served, (uint64_t)iter + 1, pe);
}

static void die(const char *what)
{
    fprintf(stderr, "bench_3_8: PE %d: %s: %s\n", me, what, strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die("malloc");
    return p;
}

/* A key whose home is `pe`. */
static uint64_t key_at(tshmem_lora_cache_t *c, int pe, uint64_t from)
{
    while (tshmem_lora_cache_home(c, from) != pe)
        from++;
    return from;
}

/* ---- lookup ------------------------------------------------------------------------------------ */
enum { INNER = 100 };

struct lookup_ctx {
    tshmem_lora_cache_t *c;
    tshmem_lora_tenant_t *t;
    uint64_t key;
    MPI_Win win;
    uint64_t *winbuf; /* the home's directory set (4 x 4 words) and slot header (8 words) */
};

static void lookup_tshmem(void *p, int iter)
{
    struct lookup_ctx *x = p;
    if (me != 0) {
        others_wait(iter);
        return;
    }
    for (int i = 0; i < INNER; i++) {
        tshmem_lora_ref_t r;
        if (tshmem_lora_cache_pin(x->t, x->key, &r) != TSHMEM_LORA_OK) {
            fprintf(stderr, "bench_3_8: %s\n", tshmem_lora_tenant_error(x->t));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        tshmem_lora_cache_unpin(x->t, &r);
    }
    done_waiting(iter);
}

static void lookup_mpi(void *p, int iter)
{
    (void)iter;
    struct lookup_ctx *x = p;
    if (me != 0)
        return;
    uint64_t set[16], hdr[8], one = 1, minus = (uint64_t)-1, old, r = (uint64_t)1 << 32 | 1;
    for (int i = 0; i < INNER; i++) {
        MPI_Get(set, 16, MPI_UINT64_T, home, 0, 16, MPI_UINT64_T, x->win);
        MPI_Win_flush(home, x->win);
        uint64_t want = r + one;
        MPI_Compare_and_swap(&want, &r, &old, MPI_UINT64_T, home, 16, x->win);
        MPI_Win_flush(home, x->win);
        MPI_Get(hdr, 8, MPI_UINT64_T, home, 16, 8, MPI_UINT64_T, x->win);
        MPI_Win_flush(home, x->win);
        MPI_Fetch_and_op(&minus, &old, MPI_UINT64_T, home, 16, MPI_SUM, x->win);
        MPI_Win_flush(home, x->win);
    }
}

static struct bench_result per_call(struct bench_result r)
{
    r.median_us /= INNER, r.min_us /= INNER, r.max_us /= INNER;
    return r;
}

static void bench_lookup(const struct bench_opts *o)
{
    if (!bench_wanted(o, "lookup"))
        return;
    int quota[1] = {4};
    tshmem_lora_cache_config_t cfg = {.n_sets = 16, .n_slots = 4, .slot_bytes = 4096,
                                      .n_tenants = 1, .quota = quota};
    struct lookup_ctx x = {.c = tshmem_lora_cache_create(&cfg)};
    x.t = tshmem_lora_tenant_open(x.c, 0);
    x.key = key_at(x.c, home, 1);
    char blob[4096] = {1};
    if (me == 0 && tshmem_lora_cache_insert(x.t, x.key, blob, sizeof blob) != TSHMEM_LORA_OK)
        die(tshmem_lora_tenant_error(x.t));
    MPI_Win_allocate(24 * sizeof(uint64_t), sizeof(uint64_t), MPI_INFO_NULL, MPI_COMM_WORLD,
                     &x.winbuf, &x.win);
    memset(x.winbuf, 0, 24 * sizeof(uint64_t));
    x.winbuf[16] = (uint64_t)1 << 32 | 1;
    MPI_Win_lock_all(0, x.win);
    MPI_Barrier(MPI_COMM_WORLD);
    int iters = o->iters > 0 ? o->iters : o->quick ? 20 : 200;
    struct bench_result rt = per_call(bench_measure((struct bench_fn){NULL, lookup_tshmem, &x}, iters));
    bench_report("lookup", "tshmem", 8, iters, rt, 1);
    struct bench_result rm = per_call(bench_measure((struct bench_fn){NULL, lookup_mpi, &x}, iters));
    bench_report("lookup", "mpi", 8, iters, rm, 1);
    if (me == 0) {
        tshmem_lora_ref_t r;
        tshmem_lora_cache_pin(x.t, x.key, &r);
        printf("# lookup hit_us=%.3f mpi_us=%.3f goal_us=2 meets_goal=%s home=%d zero_copy=%s\n",
               rt.median_us, rm.median_us, rt.median_us < 2 ? "yes" : "no", home,
               r.data ? "yes" : "no");
        tshmem_lora_cache_unpin(x.t, &r);
        fflush(stdout);
    }
    MPI_Win_unlock_all(x.win);
    MPI_Win_free(&x.win);
    tshmem_lora_tenant_close(x.t);
    tshmem_lora_cache_destroy(x.c);
}

/* ---- switch ------------------------------------------------------------------------------------ */
struct switch_ctx {
    tshmem_lora_tenant_t *t;
    uint64_t key;
    size_t bytes;
    char *dst;
    float *src;
    MPI_Win win;
    char *winbuf;
    int fd;
};

static void switch_tshmem(void *p, int iter)
{
    struct switch_ctx *x = p;
    if (me != 0) {
        others_wait(iter);
        return;
    }
    tshmem_lora_ref_t r;
    if (tshmem_lora_cache_pin(x->t, x->key, &r) != TSHMEM_LORA_OK)
        die(tshmem_lora_tenant_error(x->t));
    if (r.data)
        memcpy(x->dst, r.data, x->bytes);
    else
        tshmem_lora_cache_read(x->t, &r, 0, x->dst, x->bytes);
    tshmem_lora_cache_unpin(x->t, &r);
    done_waiting(iter);
}

static void switch_memcpy(void *p, int iter)
{
    struct switch_ctx *x = p;
    if (me == 0) {
        x->src[0] = (float)iter; /* not served from a previous result */
        memcpy(x->dst, x->src, x->bytes);
    }
}

static void switch_mpi(void *p, int iter)
{
    (void)iter;
    struct switch_ctx *x = p;
    if (me != 0)
        return;
    for (size_t off = 0; off < x->bytes;) { /* MPI counts are ints: 1 GiB pieces */
        int n = (int)(x->bytes - off > (1u << 30) ? 1u << 30 : x->bytes - off);
        MPI_Get(x->dst + off, n, MPI_BYTE, home, (MPI_Aint)off, n, MPI_BYTE, x->win);
        off += (size_t)n;
    }
    MPI_Win_flush(home, x->win);
}

static void file_read(struct switch_ctx *x)
{
    for (size_t off = 0; off < x->bytes;) {
        ssize_t r = pread(x->fd, x->dst + off, x->bytes - off, (off_t)off);
        if (r <= 0)
            die("pread of the adapter's file");
        off += (size_t)r;
    }
}

static void switch_file(void *p, int iter)
{
    (void)iter;
    struct switch_ctx *x = p;
    if (me == 0)
        file_read(x);
}

static void drop_cache(void *p, int iter)
{
    (void)iter;
    struct switch_ctx *x = p;
    if (me == 0)
        posix_fadvise(x->fd, 0, 0, POSIX_FADV_DONTNEED);
}

static void bench_switch(const struct bench_opts *o, tshmem_lora_cache_t *c,
                         tshmem_lora_tenant_t *t, int hidden, int rank, const int *layers,
                         int n_layers, const char *dir, char *winbuf, MPI_Win win)
{
    char op[40];
    snprintf(op, sizeof op, "switch_h%d_r%d", hidden, rank);
    if (!bench_wanted(o, op))
        return;
    for (int k = 0; k < n_layers; k++) {
        struct switch_ctx x = {.t = t, .win = win, .winbuf = winbuf, .fd = -1};
        x.bytes = tshmem_lora_adapter_bytes(hidden, rank, layers[k]);
        x.key = key_at(c, home, 1000u * (uint64_t)hidden + 10u * (uint64_t)rank + (uint64_t)k);
        x.dst = xmalloc(x.bytes);
        x.src = xmalloc(x.bytes);
        int id = hidden * 1000 + rank * 10 + k;
        tshmem_lora_adapter_fill(x.src, hidden, rank, layers[k], 38, id, 1);
        if (me == home)
            memcpy(winbuf, x.src, x.bytes); /* MPI_Get's source: the same bytes at the home */
        if (me == 0) {
            if (tshmem_lora_cache_insert(t, x.key, x.src, x.bytes) != TSHMEM_LORA_OK)
                die(tshmem_lora_tenant_error(t));
            if (tshmem_lora_adapter_write(dir, id, x.src, x.bytes) != 0)
                die("writing the adapter's file");
            char path[512];
            tshmem_lora_adapter_path(path, sizeof path, dir, id);
            x.fd = open(path, O_RDONLY);
            if (x.fd < 0)
                die(path);
            fdatasync(x.fd);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        int iters = o->iters > 0 ? o->iters : o->quick ? 20 : x.bytes <= (4u << 20) ? 100 : 20;
        /* An untimed round of the switch and of memcpy first: whichever of them ran first
         * after the setup (the insert, the file's write and fdatasync) read up to 2x slower
         * over all its iterations at 512 KiB on the course's machine, the switch or memcpy
         * alike, and the second one measured never did. */
        bench_measure((struct bench_fn){NULL, switch_tshmem, &x}, iters / 4 + 1);
        bench_measure((struct bench_fn){NULL, switch_memcpy, &x}, iters / 4 + 1);
        struct bench_result rt = bench_measure((struct bench_fn){NULL, switch_tshmem, &x}, iters);
        bench_report(op, "tshmem", x.bytes, iters, rt, 1);
        struct bench_result rc = bench_measure((struct bench_fn){NULL, switch_memcpy, &x}, iters);
        bench_report(op, "memcpy", x.bytes, iters, rc, 1);
        struct bench_result rm = bench_measure((struct bench_fn){NULL, switch_mpi, &x}, iters);
        struct bench_result rw = bench_measure((struct bench_fn){NULL, switch_file, &x}, iters);
        int cold_iters = o->quick ? 3 : 5;
        struct bench_result rf =
            bench_measure((struct bench_fn){drop_cache, switch_file, &x}, cold_iters);
        if (me == 0) {
            printf("# switch hidden=%d rank=%d layers=%d bytes=%zu us=%.1f memcpy_us=%.1f "
                   "mpi_get_us=%.1f file_warm_us=%.1f file_cold_us=%.1f vs_memcpy=%.2f "
                   "vs_mpi=%.2f vs_file_warm=%.1f vs_file_cold=%.1f within_100us=%s "
                   "GBps=%.2f\n", hidden, rank, layers[k], x.bytes, rt.median_us,
                   rc.median_us, rm.median_us, rw.median_us, rf.median_us,
                   rc.median_us / rt.median_us, rm.median_us / rt.median_us,
                   rw.median_us / rt.median_us, rf.median_us / rt.median_us,
                   rt.median_us <= 100 ? "yes" : "no", (double)x.bytes / (rt.median_us * 1e3));
            fflush(stdout);
            tshmem_lora_cache_evict(t, x.key);
            close(x.fd);
            char path[512];
            tshmem_lora_adapter_path(path, sizeof path, dir, id);
            unlink(path);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        free(x.dst), free(x.src);
    }
}

/* ---- the serving loop: hit rate against cache size, requests per second, fairness ------------- */
enum { S_HIDDEN = 256, S_RANK = 16, S_LAYERS = 2, S_ADAPTERS = 64, S_TENANTS = 4, S_BATCH = 16 };

static void draw(uint64_t *rng, int *ids, float *x, int hidden, int b)
{
    for (int i = 0; i < S_BATCH; i++) {
        ids[i] = tshmem_lora_zipf(rng, S_ADAPTERS, 1.1);
        for (int j = 0; j < hidden; j += 7)
            x[(size_t)i * hidden + j] = (float)((b + i + j) % 11) * 0.01f;
    }
}

/* impl=file: the same batches, grouped as the server groups them, each adapter of a batch
 * read once from its file (warm: in the page cache after the first batches). */
static void serve_from_files(const tshmem_lora_server_config_t *cfg, const float *W, float *blob,
                             const int *ids, const float *x, float *y, float *tmp, float *next)
{
    size_t bytes = tshmem_lora_adapter_bytes(cfg->hidden, cfg->rank, cfg->layers);
    size_t hr = (size_t)cfg->hidden * cfg->rank, h = (size_t)cfg->hidden;
    for (int i = 0; i < S_BATCH; i++) {
        int first = 1;
        for (int j = 0; j < i && first; j++)
            first = ids[j] != ids[i];
        if (!first)
            continue; /* served with its group */
        if (tshmem_lora_adapter_read(cfg->dir, ids[i], blob, bytes) != (long)bytes)
            die("reading an adapter's file");
        for (int k = i; k < S_BATCH; k++) {
            if (ids[k] != ids[i])
                continue;
            memcpy(y + k * h, x + k * h, h * sizeof(float));
            for (int l = 0; l < cfg->layers; l++) {
                const float *A = blob + (size_t)l * 2 * hr, *B = A + hr;
                tshmem_lora_linear(y + k * h, 1, cfg->hidden, W + (size_t)l * h * h, A, B,
                                   cfg->rank, tmp, next);
                memcpy(y + k * h, next, h * sizeof(float));
            }
        }
    }
}

static void write_adapters(const char *dir, int hidden, int rank, int layers)
{
    if (me == 0) {
        size_t bytes = tshmem_lora_adapter_bytes(hidden, rank, layers);
        float *a = xmalloc(bytes);
        for (int id = 0; id < S_ADAPTERS; id++) {
            tshmem_lora_adapter_fill(a, hidden, rank, layers, 38, id, 1);
            if (tshmem_lora_adapter_write(dir, id, a, bytes) != 0)
                die("writing an adapter's file");
        }
        free(a);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void remove_adapters(const char *dir)
{
    if (me == 0)
        for (int id = 0; id < S_ADAPTERS; id++) {
            char path[512];
            tshmem_lora_adapter_path(path, sizeof path, dir, id);
            unlink(path);
        }
}

static tshmem_lora_cache_t *serve_cache(int quota, size_t bytes)
{
    int q[S_TENANTS];
    for (int t = 0; t < S_TENANTS; t++)
        q[t] = quota;
    tshmem_lora_cache_config_t cfg = {.n_sets = 64, .n_slots = S_TENANTS * quota,
                                      .slot_bytes = bytes, .n_tenants = S_TENANTS, .quota = q};
    return tshmem_lora_cache_create(&cfg);
}

static void bench_hitrate(const struct bench_opts *o, const char *dir)
{
    if (!bench_wanted(o, "hitrate"))
        return;
    int hidden = 16, rank = 2, layers = 1, batches = o->quick ? 20 : 200;
    write_adapters(dir, hidden, rank, layers);
    size_t bytes = tshmem_lora_adapter_bytes(hidden, rank, layers);
    for (int quota = 2; quota <= 16; quota *= 2) {
        tshmem_lora_cache_t *c = serve_cache(quota, bytes);
        tshmem_lora_server_config_t cfg = {.hidden = hidden, .rank = rank, .layers = layers,
                                           .n_adapters = S_ADAPTERS, .seed = 38, .dir = dir,
                                           .max_rows = S_BATCH};
        tshmem_lora_server_t *s = tshmem_lora_server_create(c, &cfg);
        float *x = xmalloc(sizeof(float) * S_BATCH * hidden), *y = xmalloc(sizeof(float) * S_BATCH * hidden);
        memset(x, 0, sizeof(float) * S_BATCH * hidden);
        int ids[S_BATCH];
        uint64_t rng = 0x243f6a8885a308d3ull * (uint64_t)(me + 1);
        for (int b = 0; b < batches; b++) {
            draw(&rng, ids, x, hidden, b);
            if (tshmem_lora_serve_batch(s, ids, S_BATCH, x, y) != 0)
                die("tshmem_lora_serve_batch");
        }
        unsigned long long mine[2] = {s->hits, s->misses}, all[2];
        MPI_Reduce(mine, all, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        if (me == 0) {
            printf("# hitrate quota=%d slots_per_home=%d cached_fraction=%.2f adapters=%d "
                   "zipf=1.1 switches=%llu hit_rate=%.3f\n", quota, S_TENANTS * quota,
                   (double)(S_TENANTS * quota * npes) / S_ADAPTERS, S_ADAPTERS,
                   all[0] + all[1], (double)all[0] / (double)(all[0] + all[1]));
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        tshmem_lora_server_destroy(s);
        tshmem_lora_cache_destroy(c);
        free(x), free(y);
    }
    remove_adapters(dir);
}

struct serve_ctx {
    tshmem_lora_server_t *s;
    int ids[S_BATCH];
    float *x, *y, *blob, *tmp, *next;
    uint64_t rng;
};

static void serve_prepare(void *p, int iter)
{
    struct serve_ctx *x = p;
    draw(&x->rng, x->ids, x->x, S_HIDDEN, iter);
}

static void serve_cache_run(void *p, int iter)
{
    (void)iter;
    struct serve_ctx *x = p;
    if (tshmem_lora_serve_batch(x->s, x->ids, S_BATCH, x->x, x->y) != 0)
        die("tshmem_lora_serve_batch");
}

static void serve_file_run(void *p, int iter)
{
    (void)iter;
    struct serve_ctx *x = p;
    serve_from_files(&x->s->cfg, x->s->W, x->blob, x->ids, x->x, x->y, x->tmp, x->next);
}

static void bench_serve(const struct bench_opts *o, const char *dir)
{
    if (!bench_wanted(o, "serve"))
        return;
    write_adapters(dir, S_HIDDEN, S_RANK, S_LAYERS);
    size_t bytes = tshmem_lora_adapter_bytes(S_HIDDEN, S_RANK, S_LAYERS);
    tshmem_lora_cache_t *c = serve_cache(8, bytes);
    tshmem_lora_server_config_t cfg = {.hidden = S_HIDDEN, .rank = S_RANK, .layers = S_LAYERS,
                                       .n_adapters = S_ADAPTERS, .seed = 38, .dir = dir,
                                       .max_rows = S_BATCH};
    struct serve_ctx x = {.s = tshmem_lora_server_create(c, &cfg),
                          .rng = 0x13198a2e03707344ull * (uint64_t)(me + 1)};
    x.x = xmalloc(sizeof(float) * S_BATCH * S_HIDDEN);
    x.y = xmalloc(sizeof(float) * S_BATCH * S_HIDDEN);
    memset(x.x, 0, sizeof(float) * S_BATCH * S_HIDDEN);
    x.blob = xmalloc(bytes);
    x.tmp = xmalloc(sizeof(float) * S_RANK);
    x.next = xmalloc(sizeof(float) * S_HIDDEN);
    int iters = o->iters > 0 ? o->iters : o->quick ? 10 : 60;
    /* The steady state: the cache filled by earlier batches (their misses inserted the
     * adapters), the files in the page cache. A server runs for hours; its first batches,
     * which miss on every adapter, are not what it serves at. */
    for (int b = 0; b < 30; b++) {
        serve_prepare(&x, b);
        serve_cache_run(&x, b);
    }
    x.s->hits = x.s->misses = 0;
    for (int t = 0; t < S_TENANTS; t++)
        x.s->tenant_requests[t] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    struct bench_result rt = bench_measure((struct bench_fn){serve_prepare, serve_cache_run, &x}, iters);
    bench_report("serve", "tshmem", bytes, iters, rt, 1);
    struct bench_result rf = bench_measure((struct bench_fn){serve_prepare, serve_file_run, &x}, iters);
    bench_report("serve", "file", bytes, iters, rf, 1);
    /* Per tenant, summed over the PEs: requests, and the time they took (a batch's time shared
     * by its requests). */
    unsigned long long mine[2 + S_TENANTS], all[2 + S_TENANTS];
    mine[0] = x.s->hits, mine[1] = x.s->misses;
    for (int t = 0; t < S_TENANTS; t++)
        mine[2 + t] = x.s->tenant_requests[t];
    MPI_Reduce(mine, all, 2 + S_TENANTS, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0) {
        double per_pe = S_BATCH / (rt.median_us * 1e-6), file_per_pe = S_BATCH / (rf.median_us * 1e-6);
        unsigned long long total = 0;
        for (int t = 0; t < S_TENANTS; t++)
            total += all[2 + t];
        printf("# serve pes=%d batch=%d hidden=%d rank=%d layers=%d req_per_s_per_pe=%.0f "
               "req_per_s_all=%.0f file_req_per_s_per_pe=%.0f speedup_vs_file=%.2f "
               "hit_rate=%.3f\n", npes, S_BATCH, S_HIDDEN, S_RANK, S_LAYERS, per_pe,
               per_pe * npes, file_per_pe, per_pe / file_per_pe,
               (double)all[0] / (double)(all[0] + all[1]));
        double sum = 0, sq = 0;
        for (int t = 0; t < S_TENANTS; t++) {
            double share = total ? (double)all[2 + t] / (double)total : 0;
            double rate = share * per_pe * npes;
            printf("# tenant t=%d requests=%llu share=%.3f req_per_s=%.0f\n", t, all[2 + t],
                   share, rate);
            sum += rate, sq += rate * rate;
        }
        /* Jain's index of the tenants' request rates: 1 when equal, 1/T when one has all. The
         * Zipf draw favours tenant 0 (adapter 0 is the most popular): this says how much. */
        printf("# fairness jain=%.3f tenants=%d\n", sq > 0 ? sum * sum / (S_TENANTS * sq) : 0,
               S_TENANTS);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    tshmem_lora_server_destroy(x.s);
    tshmem_lora_cache_destroy(c);
    free(x.x), free(x.y), free(x.blob), free(x.tmp), free(x.next);
    remove_adapters(dir);
}

int main(int argc, char **argv)
{
    struct bench_opts o = bench_args(argc, argv);
    static const int layers_full[] = {1, 4, 32}, layers_quick[] = {1, 4};
    static const int ranks_full[] = {8, 16, 64}, ranks_quick[] = {8, 64};
    static const int hidden_full[] = {1024, 4096}, hidden_quick[] = {1024};
    const int *layers = o.quick ? layers_quick : layers_full, *ranks = o.quick ? ranks_quick : ranks_full;
    const int *hiddens = o.quick ? hidden_quick : hidden_full;
    int n_layers = o.quick ? 2 : 3, n_ranks = o.quick ? 2 : 3, n_hidden = o.quick ? 1 : 2;
    size_t biggest = tshmem_lora_adapter_bytes(hiddens[n_hidden - 1], ranks[n_ranks - 1],
                                               layers[n_layers - 1]);
    bench_heap(2 * biggest + (8u << 20)); /* two slots of the largest adapter, and the rest */
    tshmem_init();
    me = tshmem_my_pe(), npes = tshmem_n_pes(), home = npes > 1 ? 1 : 0;
    char dir[512] = "";
    if (me == 0) {
        const char *base = getenv("TSHMEM_LORA_BENCH_DIR");
        snprintf(dir, sizeof dir, "%s/tshmem-lora-bench-XXXXXX", base && *base ? base : "/var/tmp");
        if (!mkdtemp(dir))
            die(dir);
    }
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    served = tshmem_calloc(1, sizeof(uint64_t));
    serving = me == 0 && tshmem_ptr(served, home) == NULL;
    MPI_Bcast(&serving, 1, MPI_INT, 0, MPI_COMM_WORLD);
    bench_lookup(&o);
    int quota[1] = {2};
    tshmem_lora_cache_config_t cfg = {.n_sets = 64, .n_slots = 2, .slot_bytes = biggest,
                                      .n_tenants = 1, .quota = quota};
    tshmem_lora_cache_t *c = tshmem_lora_cache_create(&cfg);
    tshmem_lora_tenant_t *t = tshmem_lora_tenant_open(c, 0);
    char *winbuf;
    MPI_Win win;
    MPI_Win_allocate((MPI_Aint)biggest, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &winbuf, &win);
    MPI_Win_lock_all(0, win);
    for (int h = 0; h < n_hidden; h++)
        for (int r = 0; r < n_ranks; r++)
            bench_switch(&o, c, t, hiddens[h], ranks[r], layers, n_layers, dir, winbuf, win);
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    tshmem_lora_tenant_close(t);
    tshmem_lora_cache_destroy(c);
    bench_hitrate(&o, dir);
    bench_serve(&o, dir);
    if (me == 0)
        rmdir(dir);
    tshmem_barrier_all();
    tshmem_finalize();
    return 0;
}
