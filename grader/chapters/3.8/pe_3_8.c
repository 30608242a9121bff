/* pe_3_8.c: the PE side of chapter 3.8's tests: the LoRA adapter cache in symmetric memory.
 *
 * Every test blob is rows of 8 words, and every row carries the blob's key and version (words 0
 * and 1), its row number (word 2) and a mix of the three (words 3 .. 7): a reader that sees two
 * versions in one blob has seen a torn one, and says which rows. Scenarios:
 *   basic      insert, pin from every PE, replace, a pin held across a replacement, evict
 *   torn       PE 0 replaces one key again and again while the others pin and read it
 *   full       a tenant's quota at one home full: inserts evict only unpinned entries (CLOCK);
 *              when every one is pinned, insert is refused
 *   quota      every PE inserts into one home for two tenants at once: never past a quota
 *   isolation  a tenant's calls on others' keys, forged and out-of-range references: refused,
 *              and every other tenant's bytes, versions and slot counts unchanged
 *   race       the slot CLOCK looks at changes tenant before CLOCK locks its set (made to
 *              happen by the cache's lock hook): CLOCK leaves the other tenant's entry
 *   serve      the serving loop over Zipf-drawn adapters against the one-process reference
 *   misuse     unknown keys, a blob larger than a slot, unpin without pin: a code and a sentence
 *   bad        a config the cache refuses (the job stops with a message)
 */
#include <errno.h>

#include "pe_test.h"
#include "tshmem_lora_cache.h"

#define ROW_WORDS 8

static uint64_t mixw(uint64_t key, uint64_t version, uint64_t row, int j)
{
    uint64_t z = key * 0x9e3779b97f4a7c15ull ^ version * 0xbf58476d1ce4e5b9ull ^ row ^
                 (uint64_t)j << 56;
    z ^= z >> 29;
    return z * 0x94d049bb133111ebull;
}

static void fill_blob(uint64_t *b, size_t bytes, uint64_t key, uint64_t version)
{
    for (size_t r = 0; r < bytes / (8 * ROW_WORDS); r++) {
        uint64_t *w = b + r * ROW_WORDS;
        w[0] = key, w[1] = version, w[2] = r;
        for (int j = 3; j < ROW_WORDS; j++)
            w[j] = mixw(key, version, r, j);
    }
}

/* 1 if every row of the blob is key's, version's; else one FAIL naming the first bad row and
 * the versions it saw. */
static int blob_ok(const char *what, const void *blob, size_t bytes, uint64_t key,
                   uint64_t version)
{
    const uint64_t *b = blob;
    for (size_t r = 0; r < bytes / (8 * ROW_WORDS); r++) {
        const uint64_t *w = b + r * ROW_WORDS;
        int good = w[0] == key && w[1] == version && w[2] == r;
        for (int j = 3; j < ROW_WORDS && good; j++)
            good = w[j] == mixw(key, version, r, j);
        if (!good) {
            FAIL("%s: key %#llx, pinned as version %llu: row %zu of %zu holds key %#llx, "
                 "version %llu%s: a torn or foreign blob. A reader must see one version, "
                 "whole: write a replacement into a second slot and publish it with one "
                 "compare-and-swap (copy, then swap), and never free or reuse a slot while it "
                 "is pinned", what, (unsigned long long)key, (unsigned long long)version, r,
                 bytes / (8 * ROW_WORDS), (unsigned long long)w[0], (unsigned long long)w[1],
                 w[1] == version ? " (its other words differ)" : "");
            return 0;
        }
    }
    return 1;
}

static tshmem_lora_cache_t *make_cache(int n_sets, int n_slots, size_t slot_bytes, int tenants,
                                       const int *quota)
{
    tshmem_lora_cache_config_t cfg = {.n_sets = n_sets, .n_slots = n_slots,
                                      .slot_bytes = slot_bytes, .n_tenants = tenants,
                                      .quota = quota};
    return tshmem_lora_cache_create(&cfg);
}

/* n keys from `from` up whose home is `home` (any home if -1), in distinct directory sets if
 * `distinct` (so that no set fills up: the test is about slots). */
static void keys_at(const tshmem_lora_cache_t *c, int home, int n, uint64_t from, int distinct,
                    uint64_t *out)
{
    int got = 0;
    for (uint64_t k = from; got < n; k++) {
        if (home >= 0 && tshmem_lora_cache_home(c, k) != home)
            continue;
        int clash = 0;
        for (int i = 0; i < got && distinct && !clash; i++)
            clash = tshmem_lora_cache_set(c, out[i]) == tshmem_lora_cache_set(c, k) &&
                    tshmem_lora_cache_home(c, out[i]) == tshmem_lora_cache_home(c, k);
        if (!clash)
            out[got++] = k;
    }
}

static const char *code_name(int rc)
{
    switch (rc) {
    case TSHMEM_LORA_OK: return "TSHMEM_LORA_OK";
    case TSHMEM_LORA_MISS: return "TSHMEM_LORA_MISS";
    case TSHMEM_LORA_EPERM: return "TSHMEM_LORA_EPERM";
    case TSHMEM_LORA_ENOENT: return "TSHMEM_LORA_ENOENT";
    case TSHMEM_LORA_EEXIST: return "TSHMEM_LORA_EEXIST";
    case TSHMEM_LORA_E2BIG: return "TSHMEM_LORA_E2BIG";
    case TSHMEM_LORA_EFULL: return "TSHMEM_LORA_EFULL";
    case TSHMEM_LORA_EBUSY: return "TSHMEM_LORA_EBUSY";
    case TSHMEM_LORA_EINVAL: return "TSHMEM_LORA_EINVAL";
    default: return "an unknown code";
    }
}

/* rc must be want; with a refusal, its sentence must hold every fragment of `needles`
 * (NULL-terminated). */
static int expect_rc(const char *call, tshmem_lora_tenant_t *t, int rc, int want,
                     const char *const *needles)
{
    const char *err = tshmem_lora_tenant_error(t);
    if (rc != want) {
        FAIL("%s returned %d (%s), expected %d (%s)%s%s", call, rc, code_name(rc), want,
             code_name(want), rc < 0 || rc == TSHMEM_LORA_MISS ? "; its sentence: " : "",
             rc < 0 || rc == TSHMEM_LORA_MISS ? err : "");
        /* The other PEs may wait in a barrier or for a pin this PE now holds by mistake: end
           the job here, so the wrong answer is the report, not a hang after it. */
        pe_stop_job();
        return 0;
    }
    for (; needles && *needles; needles++)
        if (!strstr(err, *needles)) {
            FAIL("%s was refused (%s) as it should be, but its sentence \"%s\" does not say "
                 "\"%s\": a refusal names the function, the tenant, the key and, where another "
                 "tenant owns the key, the owner", call, code_name(rc), err, *needles);
            return 0;
        }
    return 1;
}
#define NEED(...) ((const char *const[]){__VA_ARGS__, NULL})

static int must(const char *call, tshmem_lora_tenant_t *t, int rc)
{
    return expect_rc(call, t, rc, TSHMEM_LORA_OK, NULL);
}

/* Pins key, checks its version and every row (read, and in place where data is set), unpins. */
static int pin_check(tshmem_lora_tenant_t *t, uint64_t key, uint64_t version, size_t bytes,
                     const tshmem_lora_cache_t *c)
{
    tshmem_lora_ref_t ref;
    char call[96];
    snprintf(call, sizeof call, "tshmem_lora_cache_pin(key %#llx)", (unsigned long long)key);
    if (!must(call, t, tshmem_lora_cache_pin(t, key, &ref)))
        return 0;
    int ok = 1;
    if (ref.version != version || ref.length != bytes || ref.key != key ||
        ref.home != tshmem_lora_cache_home(c, key)) {
        FAIL("pin of key %#llx gave version %llu, length %zu, key %#llx, home %d; expected "
             "version %llu, length %zu, home %d", (unsigned long long)key,
             (unsigned long long)ref.version, ref.length, (unsigned long long)ref.key, ref.home,
             (unsigned long long)version, bytes, tshmem_lora_cache_home(c, key));
        ok = 0;
    }
    void *copy = malloc(bytes);
    if (ok && must("tshmem_lora_cache_read", t, tshmem_lora_cache_read(t, &ref, 0, copy, bytes)))
        ok = blob_ok("tshmem_lora_cache_read", copy, bytes, key, version);
    if (ok && ref.data)
        ok = blob_ok("the zero-copy pointer ref.data", ref.data, bytes, key, version);
    free(copy);
    must("tshmem_lora_cache_unpin", t, tshmem_lora_cache_unpin(t, &ref));
    return ok;
}

/* ---- basic ------------------------------------------------------------------------------------ */
#define BASIC_KEYS 4
static uint64_t basic_key(int pe, int i) { return 1000u * (uint64_t)(pe + 1) + (uint64_t)i + 1; }
static size_t basic_len(int i, uint64_t version) { return 512 + 64 * (size_t)i + 64 * (size_t)version; }

static void basic(int argc, char **argv)
{
    (void)argc, (void)argv;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    tshmem_lora_cache_t *c = make_cache(16, 24, 2048, 2, (const int[]){12, 12});
    tshmem_lora_tenant_t *t[2] = {tshmem_lora_tenant_open(c, 0), tshmem_lora_tenant_open(c, 1)};
    uint64_t *blob = malloc(2048);
    STEP("insert");
    for (int i = 0; i < BASIC_KEYS; i++) {
        uint64_t k = basic_key(me, i);
        fill_blob(blob, basic_len(i, 1), k, 1);
        must("tshmem_lora_cache_insert", t[i % 2],
             tshmem_lora_cache_insert(t[i % 2], k, blob, basic_len(i, 1)));
    }
    expect_rc("tshmem_lora_cache_insert of a key already in the cache", t[0],
              tshmem_lora_cache_insert(t[0], basic_key(me, 0), blob, 64), TSHMEM_LORA_EEXIST,
              NEED("tshmem_lora_cache_insert", "in the cache already"));
    tshmem_barrier_all();
    STEP("pin every key from every PE");
    for (int p = 0; p < n; p++)
        for (int i = 0; i < BASIC_KEYS; i++)
            if (!pin_check(t[i % 2], basic_key(p, i), 1, basic_len(i, 1), c))
                break;
    tshmem_barrier_all();
    STEP("replace");
    for (int i = 0; i < BASIC_KEYS; i++) {
        uint64_t k = basic_key(me, i);
        fill_blob(blob, basic_len(i, 2), k, 2);
        must("tshmem_lora_cache_replace", t[i % 2],
             tshmem_lora_cache_replace(t[i % 2], k, blob, basic_len(i, 2)));
    }
    tshmem_barrier_all();
    for (int p = 0; p < n; p++)
        for (int i = 0; i < BASIC_KEYS; i++)
            if (!pin_check(t[i % 2], basic_key(p, i), 2, basic_len(i, 2), c))
                break;
    tshmem_barrier_all();
    STEP("a pin held across a replacement");
    {
        uint64_t k = basic_key(me, 0);
        tshmem_lora_ref_t held;
        if (must("tshmem_lora_cache_pin", t[0], tshmem_lora_cache_pin(t[0], k, &held))) {
            fill_blob(blob, basic_len(0, 3), k, 3);
            must("tshmem_lora_cache_replace (key pinned by this PE)", t[0],
                 tshmem_lora_cache_replace(t[0], k, blob, basic_len(0, 3)));
            uint64_t *copy = malloc(held.length);
            if (must("tshmem_lora_cache_read of the held blob", t[0],
                     tshmem_lora_cache_read(t[0], &held, 0, copy, held.length)))
                blob_ok("the blob pinned before the replacement (it must stay version 2 until "
                        "its unpin)", copy, held.length, k, 2);
            if (held.data)
                blob_ok("ref.data of the blob pinned before the replacement", held.data,
                        held.length, k, 2);
            free(copy);
            must("tshmem_lora_cache_unpin", t[0], tshmem_lora_cache_unpin(t[0], &held));
            pin_check(t[0], k, 3, basic_len(0, 3), c);
        }
    }
    tshmem_barrier_all();
    STEP("evict");
    must("tshmem_lora_cache_evict", t[1], tshmem_lora_cache_evict(t[1], basic_key(me, 1)));
    tshmem_barrier_all();
    for (int p = 0; p < n; p++) {
        tshmem_lora_ref_t ref;
        char call[96];
        snprintf(call, sizeof call, "tshmem_lora_cache_pin of evicted key %#llx",
                 (unsigned long long)basic_key(p, 1));
        expect_rc(call, t[1], tshmem_lora_cache_pin(t[1], basic_key(p, 1), &ref),
                  TSHMEM_LORA_MISS, NEED("not in the cache"));
    }
    expect_rc("a second tshmem_lora_cache_evict of the same key", t[1],
              tshmem_lora_cache_evict(t[1], basic_key(me, 1)), TSHMEM_LORA_ENOENT,
              NEED("tshmem_lora_cache_evict", "not in the cache"));
    tshmem_barrier_all();
    STEP("what my home holds");
    int live = 0, per[2] = {0, 0};
    for (int p = 0; p < n; p++)
        for (int i = 0; i < BASIC_KEYS; i++)
            if (i != 1 && tshmem_lora_cache_home(c, basic_key(p, i)) == me)
                live++, per[i % 2]++;
    tshmem_lora_home_stats_t s;
    tshmem_lora_cache_stats(c, me, &s);
    CHECK(s.live_entries == live && s.used_slots == live && s.pinned_slots == 0,
          "home PE %d: %d live entries, %d slots in use, %d pinned; expected %d, %d and 0: a "
          "slot that no entry and no pin holds must be freed (the last holder frees it: a "
          "replaced blob's slot by the directory's release or the last unpin)", me,
          s.live_entries, s.used_slots, s.pinned_slots, live, live);
    for (int k = 0; k < 2; k++)
        CHECK(s.tenant_slots[k] == per[k] && s.tenant_usage[k] == per[k],
              "home PE %d: tenant %d owns %d slots and its usage word says %d; expected %d: "
              "every freed slot takes one off its tenant's usage", me, k, s.tenant_slots[k],
              s.tenant_usage[k], per[k]);
    tshmem_barrier_all();
    free(blob);
    tshmem_lora_tenant_close(t[0]);
    tshmem_lora_tenant_close(t[1]);
    tshmem_lora_cache_destroy(c);
    tshmem_finalize();
}

/* ---- torn ------------------------------------------------------------------------------------- */
static void torn(int argc, char **argv)
{
    int rounds = argc > 2 ? atoi(argv[2]) : 200;
    size_t bytes = argc > 3 ? (size_t)atol(argv[3]) : 16384;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    tshmem_lora_cache_t *c = make_cache(8, 8, bytes, 1, (const int[]){8});
    tshmem_lora_tenant_t *t = tshmem_lora_tenant_open(c, 0);
    uint64_t *done = tshmem_calloc(1, sizeof(uint64_t));
    uint64_t key;
    keys_at(c, n - 1, 1, 77, 0, &key);
    uint64_t *blob = malloc(bytes), *copy = malloc(bytes);
    if (me == 0) {
        fill_blob(blob, bytes, key, 1);
        must("tshmem_lora_cache_insert", t, tshmem_lora_cache_insert(t, key, blob, bytes));
    }
    tshmem_barrier_all();
    long reads = 0;
    uint64_t last = 0, distinct = 0;
    if (me == 0) {
        STEP("writer: %d replacements of key %#llx (home PE %d)", rounds, (unsigned long long)key,
             n - 1);
        for (int v = 2; v <= rounds + 1; v++) {
            tshmem_lora_ref_t held;
            int hold = v % 8 == 0; /* sometimes hold the old blob across the replacement */
            if (hold && !must("tshmem_lora_cache_pin", t, tshmem_lora_cache_pin(t, key, &held)))
                break;
            fill_blob(blob, bytes, key, (uint64_t)v);
            if (!must("tshmem_lora_cache_replace", t, tshmem_lora_cache_replace(t, key, blob, bytes)))
                break;
            if (hold) {
                if (must("tshmem_lora_cache_read", t,
                         tshmem_lora_cache_read(t, &held, 0, copy, bytes)))
                    blob_ok("a blob pinned across a replacement", copy, bytes, key, held.version);
                if (held.data)
                    blob_ok("ref.data of a blob pinned across a replacement", held.data, bytes,
                            key, held.version);
                must("tshmem_lora_cache_unpin", t, tshmem_lora_cache_unpin(t, &held));
            }
            if (v % 16 == 0)
                sched_yield(); /* let the readers in, on an oversubscribed machine */
        }
        for (int p = 0; p < n; p++)
            tshmem_uint64_atomic_set(done, 1, p);
    } else {
        STEP("reader of key %#llx", (unsigned long long)key);
        int bad = 0;
        while ((tshmem_uint64_atomic_fetch(done, me) == 0 || reads < 3) && !bad) {
            tshmem_lora_ref_t ref;
            if (!must("tshmem_lora_cache_pin", t, tshmem_lora_cache_pin(t, key, &ref)))
                break;
            bad = !must("tshmem_lora_cache_read", t,
                        tshmem_lora_cache_read(t, &ref, 0, copy, bytes)) ||
                  !blob_ok("a reader's copy", copy, bytes, key, ref.version);
            if (!bad && ref.data) {
                sched_yield(); /* a writer that changes a pinned slot in place gets its chance */
                bad = !blob_ok("a reader's zero-copy view, read again while pinned", ref.data,
                               bytes, key, ref.version);
            }
            if (ref.version < last) {
                FAIL("key %#llx went back from version %llu to %llu: once a replacement is "
                     "published, no pin may find the older blob", (unsigned long long)key,
                     (unsigned long long)last, (unsigned long long)ref.version);
                bad = 1;
            }
            distinct += ref.version != last;
            last = ref.version;
            reads++;
            must("tshmem_lora_cache_unpin", t, tshmem_lora_cache_unpin(t, &ref));
        }
        VALUE("reads", "%ld", reads);
        VALUE("versions_seen", "%llu", (unsigned long long)distinct);
    }
    tshmem_barrier_all();
    tshmem_lora_home_stats_t s;
    tshmem_lora_cache_stats(c, n - 1, &s);
    CHECK(s.used_slots == 1 && s.live_entries == 1 && s.pinned_slots == 0 &&
              s.tenant_usage[0] == 1,
          "after %d replacements and every unpin, home PE %d holds %d slots (usage %d), %d "
          "live entries, %d pinned; expected 1, 1, 1, 0: each replaced blob's slot must be "
          "freed by its last holder", rounds, n - 1, s.used_slots, s.tenant_usage[0],
          s.live_entries, s.pinned_slots);
    tshmem_barrier_all();
    free(blob), free(copy);
    tshmem_free(done);
    tshmem_lora_tenant_close(t);
    tshmem_lora_cache_destroy(c);
    tshmem_finalize();
}

/* ---- full ------------------------------------------------------------------------------------- */
/* After a refused insert at tenant 0's full quota: its q keys and tenant 1's key are all there,
 * and the slot counts are as they were (q and 1). */
static void full_all_there(tshmem_lora_cache_t *c, tshmem_lora_tenant_t *t,
                           tshmem_lora_tenant_t *other, const uint64_t *keys, int q,
                           uint64_t theirs, const char *what)
{
    for (int i = 0; i <= q; i++) {
        tshmem_lora_tenant_t *h = i < q ? t : other;
        uint64_t key = i < q ? keys[i] : theirs;
        tshmem_lora_ref_t r;
        int rc = tshmem_lora_cache_pin(h, key, &r);
        if (rc == TSHMEM_LORA_OK) {
            tshmem_lora_cache_unpin(h, &r);
            continue;
        }
        FAIL("tenant %d's key %#llx is gone (pin: %s) after tenant 0's insert of %s was refused "
             "at its full quota: a refused call must change nothing: look in the key's "
             "directory set before claiming a slot (a claim at a full quota evicts an entry by "
             "CLOCK), and refuse there", i < q ? 0 : 1, (unsigned long long)key, code_name(rc),
             what);
        pe_stop_job();
        return;
    }
    tshmem_lora_home_stats_t s;
    tshmem_lora_cache_stats(c, 0, &s);
    CHECK(s.tenant_slots[0] == q && s.tenant_usage[0] == q && s.tenant_slots[1] == 1 &&
              s.tenant_usage[1] == 1,
          "after tenant 0's refused insert of %s, home PE 0: tenant 0 owns %d slots (usage %d), "
          "tenant 1 %d (usage %d); expected %d and 1, as before: a refused call must change "
          "nothing", what, s.tenant_slots[0], s.tenant_usage[0], s.tenant_slots[1],
          s.tenant_usage[1], q);
}

static void full(int argc, char **argv)
{
    (void)argc, (void)argv;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    int q = n + 3;
    tshmem_lora_cache_t *c = make_cache(64, 2 * q, 256, 2, (const int[]){q, q});
    tshmem_lora_tenant_t *t = tshmem_lora_tenant_open(c, 0), *other = tshmem_lora_tenant_open(c, 1);
    uint64_t keys[64];
    keys_at(c, 0, 2 * q + 3, 31, 1, keys);
    uint64_t blob[32];
    if (me == 0) {
        STEP("fill tenant 0's quota (%d slots) at home PE 0", q);
        for (int i = 0; i < q; i++) {
            fill_blob(blob, sizeof blob, keys[i], 1);
            must("tshmem_lora_cache_insert", t, tshmem_lora_cache_insert(t, keys[i], blob, sizeof blob));
        }
        STEP("refused inserts at the full quota change nothing");
        uint64_t theirs = keys[2 * q + 2];
        fill_blob(blob, sizeof blob, theirs, 1);
        must("tshmem_lora_cache_insert for tenant 1", other,
             tshmem_lora_cache_insert(other, theirs, blob, sizeof blob));
        char hex[32], call[200];
        snprintf(hex, sizeof hex, "%#llx", (unsigned long long)theirs);
        snprintf(call, sizeof call, "tenant 0's tshmem_lora_cache_insert of tenant 1's key %s, "
                 "its own quota full", hex);
        expect_rc(call, t, tshmem_lora_cache_insert(t, theirs, blob, sizeof blob),
                  TSHMEM_LORA_EPERM, NEED("tshmem_lora_cache_insert", hex, "belongs to tenant 1"));
        full_all_there(c, t, other, keys, q, theirs, "tenant 1's key");
        snprintf(hex, sizeof hex, "%#llx", (unsigned long long)keys[q - 1]);
        snprintf(call, sizeof call, "tenant 0's tshmem_lora_cache_insert of its own key %s, its "
                 "quota full", hex);
        fill_blob(blob, sizeof blob, keys[q - 1], 1);
        expect_rc(call, t, tshmem_lora_cache_insert(t, keys[q - 1], blob, sizeof blob),
                  TSHMEM_LORA_EEXIST, NEED("tshmem_lora_cache_insert", hex, "in the cache already"));
        full_all_there(c, t, other, keys, q, theirs, "its own key");
    }
    tshmem_barrier_all();
    tshmem_lora_ref_t held;
    must("tshmem_lora_cache_pin", t, tshmem_lora_cache_pin(t, keys[me], &held));
    tshmem_barrier_all();
    if (me == 0) {
        STEP("%d more inserts, %d entries pinned", q, n);
        for (int i = q; i < 2 * q; i++) {
            fill_blob(blob, sizeof blob, keys[i], 1);
            char call[120];
            snprintf(call, sizeof call, "tshmem_lora_cache_insert of key %#llx into a full "
                     "quota with unpinned entries (CLOCK must evict one)",
                     (unsigned long long)keys[i]);
            must(call, t, tshmem_lora_cache_insert(t, keys[i], blob, sizeof blob));
            tshmem_lora_home_stats_t s;
            tshmem_lora_cache_stats(c, 0, &s);
            CHECK(s.tenant_slots[0] <= q, "tenant 0 holds %d slots at home PE 0, past its quota "
                  "of %d", s.tenant_slots[0], q);
        }
        STEP("the pinned entries are still there");
        for (int p = 0; p < n; p++) {
            tshmem_lora_ref_t r;
            int rc = tshmem_lora_cache_pin(t, keys[p], &r);
            if (rc == TSHMEM_LORA_MISS) {
                FAIL("key %#llx, pinned by PE %d the whole time, was evicted: eviction must "
                     "take only unpinned entries (a slot whose count is 1, the directory's "
                     "hold alone)", (unsigned long long)keys[p], p);
                pe_stop_job(); /* its owner's unpin would wait on a slot now reused */
            } else if (must("tshmem_lora_cache_pin", t, rc))
                tshmem_lora_cache_unpin(t, &r);
        }
        int live = 0;
        tshmem_lora_ref_t all[64];
        int n_all = 0;
        for (int i = 0; i < 2 * q; i++) {
            tshmem_lora_ref_t r;
            if (tshmem_lora_cache_pin(t, keys[i], &r) == TSHMEM_LORA_OK)
                live++, all[n_all++] = r;
        }
        CHECK(live == q, "after %d inserts into a quota of %d, %d of tenant 0's keys are in the "
              "cache; expected exactly %d (a full quota evicts one entry per insert)", 2 * q, q,
              live, q);
        STEP("every entry pinned: insert is refused");
        fill_blob(blob, sizeof blob, keys[2 * q], 1);
        expect_rc("tshmem_lora_cache_insert with every entry of the quota pinned", t,
                  tshmem_lora_cache_insert(t, keys[2 * q], blob, sizeof blob),
                  TSHMEM_LORA_EFULL, NEED("tshmem_lora_cache_insert", "tenant 0", "pinned"));
        fill_blob(blob, sizeof blob, keys[2 * q + 1], 1);
        must("tshmem_lora_cache_insert for tenant 1 (its own quota is free)", other,
             tshmem_lora_cache_insert(other, keys[2 * q + 1], blob, sizeof blob));
        for (int i = 0; i < n_all; i++)
            tshmem_lora_cache_unpin(t, &all[i]);
    }
    tshmem_barrier_all();
    must("tshmem_lora_cache_unpin", t, tshmem_lora_cache_unpin(t, &held));
    tshmem_barrier_all();
    if (me == 0) {
        tshmem_lora_home_stats_t s;
        tshmem_lora_cache_stats(c, 0, &s);
        CHECK(s.pinned_slots == 0 && s.tenant_slots[0] == q && s.tenant_usage[0] == q,
              "at the end home PE 0 has %d pinned slots, tenant 0 owns %d (usage %d); expected "
              "0 and %d", s.pinned_slots, s.tenant_slots[0], s.tenant_usage[0], q);
    }
    tshmem_barrier_all();
    tshmem_lora_tenant_close(t);
    tshmem_lora_tenant_close(other);
    tshmem_lora_cache_destroy(c);
    tshmem_finalize();
}

/* ---- quota ------------------------------------------------------------------------------------ */
static void quota(int argc, char **argv)
{
    int per_pe = argc > 2 ? atoi(argv[2]) : 24;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    const int q[2] = {3, 5};
    tshmem_lora_cache_t *c = make_cache(64, 8, 256, 2, q);
    tshmem_lora_tenant_t *t[2] = {tshmem_lora_tenant_open(c, 0), tshmem_lora_tenant_open(c, 1)};
    uint64_t *keys = malloc(sizeof(uint64_t) * (size_t)per_pe), blob[32];
    keys_at(c, 0, per_pe, 100000u * (uint64_t)(me + 1), 0, keys);
    tshmem_barrier_all();
    STEP("%d inserts into home PE 0 from each of %d PEs", per_pe, n);
    int set_full = 0;
    for (int i = 0; i < per_pe; i++) {
        int k = i % 2;
        fill_blob(blob, sizeof blob, keys[i], 1);
        int rc = tshmem_lora_cache_insert(t[k], keys[i], blob, sizeof blob);
        if (rc == TSHMEM_LORA_EFULL && strstr(tshmem_lora_tenant_error(t[k]), "directory set"))
            set_full++; /* four keys of one set: allowed, and counted */
        else if (!must("tshmem_lora_cache_insert", t[k], rc))
            break;
        tshmem_lora_home_stats_t s;
        tshmem_lora_cache_stats(c, 0, &s);
        for (int j = 0; j < 2; j++)
            if (s.tenant_slots[j] > q[j]) {
                /* Stop the job now: a cache past its quotas soon has no free slot at all, and
                 * an insert would look for one for ever. */
                FAIL("tenant %d held %d slots at home PE 0 at one moment, past its quota of %d: "
                     "claim a slot only after a fetch-add on the tenant's usage word found it "
                     "under the quota (and undo the add when it did not)", j, s.tenant_slots[j],
                     q[j]);
                fflush(stdout);
                tshmem_global_exit(1);
            }
    }
    VALUE("set_full", "%d", set_full);
    tshmem_barrier_all();
    if (me == 0) {
        tshmem_lora_home_stats_t s;
        tshmem_lora_cache_stats(c, 0, &s);
        for (int j = 0; j < 2; j++)
            CHECK(s.tenant_slots[j] == q[j] && s.tenant_usage[j] == q[j],
                  "after %d inserts from %d PEs, tenant %d owns %d slots at home PE 0 and its "
                  "usage word says %d; expected both %d (a full quota, nothing leaked)",
                  per_pe * n, n, j, s.tenant_slots[j], s.tenant_usage[j], q[j]);
        CHECK(s.live_entries == s.used_slots && s.pinned_slots == 0,
              "home PE 0: %d live entries for %d used slots, %d pinned: every used slot must "
              "belong to one entry at rest", s.live_entries, s.used_slots, s.pinned_slots);
    }
    tshmem_barrier_all();
    free(keys);
    tshmem_lora_tenant_close(t[0]);
    tshmem_lora_tenant_close(t[1]);
    tshmem_lora_cache_destroy(c);
    tshmem_finalize();
}

/* ---- isolation -------------------------------------------------------------------------------- */
static uint64_t fnv(const void *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
    return h;
}

struct snapshot {
    uint64_t hash[2][64], version[2][64];
    tshmem_lora_home_stats_t home[64];
};

static void take(tshmem_lora_cache_t *c, tshmem_lora_tenant_t **t, struct snapshot *s, int n)
{
    uint64_t copy[64];
    for (int p = 0; p < n; p++) {
        for (int k = 1; k <= 2; k++) {
            tshmem_lora_ref_t r;
            uint64_t key = 5000u * (uint64_t)k + (uint64_t)p;
            if (!must("tshmem_lora_cache_pin (the owner)", t[k], tshmem_lora_cache_pin(t[k], key, &r)))
                continue;
            tshmem_lora_cache_read(t[k], &r, 0, copy, r.length);
            s->hash[k - 1][p] = fnv(copy, r.length);
            s->version[k - 1][p] = r.version;
            tshmem_lora_cache_unpin(t[k], &r);
        }
    }
    tshmem_barrier_all(); /* every PE's pins undone before anyone counts */
    for (int p = 0; p < n; p++)
        tshmem_lora_cache_stats(c, p, &s->home[p]);
    tshmem_barrier_all();
}

static void isolation(int argc, char **argv)
{
    (void)argc, (void)argv;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    tshmem_lora_cache_t *c = make_cache(32, 12, 512, 3, (const int[]){4, 4, 4});
    tshmem_lora_tenant_t *t[3];
    for (int k = 0; k < 3; k++)
        t[k] = tshmem_lora_tenant_open(c, k);
    uint64_t blob[64];
    for (int k = 1; k <= 2; k++) {
        uint64_t key = 5000u * (uint64_t)k + (uint64_t)me;
        fill_blob(blob, sizeof blob, key, 1);
        must("tshmem_lora_cache_insert", t[k], tshmem_lora_cache_insert(t[k], key, blob, sizeof blob));
    }
    tshmem_barrier_all();
    static struct snapshot before, after;
    take(c, t, &before, n);
    tshmem_barrier_all();
    STEP("tenant 0 on the other tenants' keys");
    for (int p = 0; p < n; p++)
        for (int k = 1; k <= 2; k++) {
            uint64_t key = 5000u * (uint64_t)k + (uint64_t)p;
            char hex[32], owner[32];
            snprintf(hex, sizeof hex, "%#llx", (unsigned long long)key);
            snprintf(owner, sizeof owner, "belongs to tenant %d", k);
            tshmem_lora_ref_t r;
            fill_blob(blob, sizeof blob, key, 99);
            expect_rc("tenant 0's tshmem_lora_cache_pin of another tenant's key", t[0],
                      tshmem_lora_cache_pin(t[0], key, &r), TSHMEM_LORA_EPERM,
                      NEED("tshmem_lora_cache_pin", "tenant 0", hex, owner));
            expect_rc("tenant 0's tshmem_lora_cache_replace of another tenant's key", t[0],
                      tshmem_lora_cache_replace(t[0], key, blob, sizeof blob), TSHMEM_LORA_EPERM,
                      NEED("tshmem_lora_cache_replace", "tenant 0", hex, owner));
            expect_rc("tenant 0's tshmem_lora_cache_evict of another tenant's key", t[0],
                      tshmem_lora_cache_evict(t[0], key), TSHMEM_LORA_EPERM,
                      NEED("tshmem_lora_cache_evict", "tenant 0", hex, owner));
            expect_rc("tenant 0's tshmem_lora_cache_insert of another tenant's key", t[0],
                      tshmem_lora_cache_insert(t[0], key, blob, sizeof blob), TSHMEM_LORA_EPERM,
                      NEED("tshmem_lora_cache_insert", "tenant 0", hex, owner));
        }
    STEP("forged references");
    {
        uint64_t key = 5000u + (uint64_t)me;
        tshmem_lora_ref_t r, f;
        uint64_t copy[64];
        if (must("tshmem_lora_cache_pin", t[1], tshmem_lora_cache_pin(t[1], key, &r))) {
            expect_rc("tenant 0 reading through tenant 1's reference", t[0],
                      tshmem_lora_cache_read(t[0], &r, 0, copy, 64), TSHMEM_LORA_EINVAL,
                      NEED("tshmem_lora_cache_read", "tenant 0", "holds no pin"));
            expect_rc("tenant 2 unpinning tenant 1's reference", t[2],
                      tshmem_lora_cache_unpin(t[2], &r), TSHMEM_LORA_EINVAL,
                      NEED("tshmem_lora_cache_unpin", "tenant 2", "holds no pin"));
            f = r, f.slot = 12 + 3;
            expect_rc("a reference with slot 15 of 12", t[1],
                      tshmem_lora_cache_read(t[1], &f, 0, copy, 64), TSHMEM_LORA_EINVAL,
                      NEED("tshmem_lora_cache_read", "slot 15", "outside"));
            f = r, f.slot = -1;
            expect_rc("a reference with slot -1", t[1], tshmem_lora_cache_unpin(t[1], &f),
                      TSHMEM_LORA_EINVAL, NEED("tshmem_lora_cache_unpin", "slot -1", "outside"));
            f = r, f.home = n;
            expect_rc("a reference with a home past the last PE", t[1],
                      tshmem_lora_cache_read(t[1], &f, 0, copy, 64), TSHMEM_LORA_EINVAL,
                      NEED("outside"));
            f = r, f.slot = (r.slot + 1) % 12;
            expect_rc("a reference moved to the next slot", t[1],
                      tshmem_lora_cache_read(t[1], &f, 0, copy, 64), TSHMEM_LORA_EINVAL,
                      NEED("holds no pin"));
            must("tshmem_lora_cache_unpin", t[1], tshmem_lora_cache_unpin(t[1], &r));
        }
    }
    tshmem_barrier_all();
    take(c, t, &after, n);
    for (int p = 0; p < n; p++) {
        for (int k = 0; k < 2; k++)
            CHECK(before.hash[k][p] == after.hash[k][p] && before.version[k][p] == after.version[k][p],
                  "tenant %d's key %llu changed (version %llu -> %llu, bytes %s) while tenant 0 "
                  "only made calls that were refused: a refused call must change nothing", k + 1,
                  (unsigned long long)(5000u * (uint64_t)(k + 1) + (uint64_t)p),
                  (unsigned long long)before.version[k][p], (unsigned long long)after.version[k][p],
                  before.hash[k][p] == after.hash[k][p] ? "the same" : "different");
        for (int k = 0; k < 3; k++)
            CHECK(before.home[p].tenant_slots[k] == after.home[p].tenant_slots[k] &&
                      before.home[p].tenant_usage[k] == after.home[p].tenant_usage[k],
                  "home PE %d: tenant %d's slots went from %d (usage %d) to %d (usage %d) over "
                  "refused calls: check the owner before claiming anything", p, k,
                  before.home[p].tenant_slots[k], before.home[p].tenant_usage[k],
                  after.home[p].tenant_slots[k], after.home[p].tenant_usage[k]);
        CHECK(after.home[p].pinned_slots == 0, "home PE %d: %d slots still pinned after every "
              "pin was undone", p, after.home[p].pinned_slots);
    }
    tshmem_barrier_all();
    for (int k = 0; k < 3; k++)
        tshmem_lora_tenant_close(t[k]);
    tshmem_lora_cache_destroy(c);
    tshmem_finalize();
}

/* ---- race: the slot CLOCK looks at changes tenant before CLOCK locks its set ------------------ */
/* Tenant 0's quota at home PE 0 is full: key K2 pinned, key K1 its only candidate. Its insert of
 * K3 runs CLOCK, which reads slot i's key (K1) and locks K1's set. Just before that lock (the
 * cache's lock hook), this PE does what other PEs could do by chance at that moment: tenant 0
 * evicts K1 (slot i is free) and tenant 1 inserts a key of the same number, K1, which takes the
 * first free slot, slot i again. K1's way now names slot i, but tenant 1: CLOCK must leave it. */
static struct {
    tshmem_lora_tenant_t *t0, *u;
    uint64_t key;
    int set, fired, evict_rc, insert_rc;
    uint64_t blob[32];
} race_at;

static void race_hook(int home, int set)
{
    if (home != 0 || set != race_at.set)
        return;
    tshmem_lora_cache_lock_hook = NULL; /* once: the calls below lock sets too */
    race_at.fired = 1;
    race_at.evict_rc = tshmem_lora_cache_evict(race_at.t0, race_at.key);
    fill_blob(race_at.blob, sizeof race_at.blob, race_at.key, 1);
    race_at.insert_rc = tshmem_lora_cache_insert(race_at.u, race_at.key, race_at.blob,
                                                 sizeof race_at.blob);
}

static void race(int argc, char **argv)
{
    (void)argc, (void)argv;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    tshmem_lora_cache_t *c = make_cache(16, 4, 256, 2, (const int[]){2, 2});
    tshmem_lora_tenant_t *t = tshmem_lora_tenant_open(c, 0), *u = tshmem_lora_tenant_open(c, 1);
    race_at.t0 = tshmem_lora_tenant_open(c, 0);
    race_at.u = u;
    uint64_t k[4], blob[32]; /* K2, tenant 1's U1, K1, K3: at home PE 0, in four sets */
    keys_at(c, 0, 4, 900, 1, k);
    if (me == n - 1) {
        STEP("tenant 0: key %#llx pinned, key %#llx unpinned, quota full; tenant 1: key %#llx",
             (unsigned long long)k[0], (unsigned long long)k[2], (unsigned long long)k[1]);
        tshmem_lora_tenant_t *who[3] = {t, u, t};
        for (int i = 0; i < 3; i++) {
            fill_blob(blob, sizeof blob, k[i], 1);
            must("tshmem_lora_cache_insert", who[i],
                 tshmem_lora_cache_insert(who[i], k[i], blob, sizeof blob));
        }
        tshmem_lora_ref_t held, r;
        must("tshmem_lora_cache_pin", t, tshmem_lora_cache_pin(t, k[0], &held));
        int slot_i = -1;
        if (must("tshmem_lora_cache_pin", t, tshmem_lora_cache_pin(t, k[2], &r))) {
            slot_i = r.slot;
            tshmem_lora_cache_unpin(t, &r);
        }
        STEP("tenant 0 inserts key %#llx; as its CLOCK locks key %#llx's set, tenant 0 evicts "
             "it and tenant 1 inserts it", (unsigned long long)k[3], (unsigned long long)k[2]);
        race_at.key = k[2];
        race_at.set = tshmem_lora_cache_set(c, k[2]);
        tshmem_lora_cache_lock_hook = race_hook;
        fill_blob(blob, sizeof blob, k[3], 1);
        must("tenant 0's tshmem_lora_cache_insert at its full quota", t,
             tshmem_lora_cache_insert(t, k[3], blob, sizeof blob));
        tshmem_lora_cache_lock_hook = NULL;
        CHECK(race_at.fired, "tenant 0's insert at its full quota (key %#llx pinned) never locked "
              "the set of key %#llx, its only unpinned entry: CLOCK evicts under the set's lock "
              "(set_lock)", (unsigned long long)k[0], (unsigned long long)k[2]);
        if (race_at.fired) {
            CHECK(race_at.evict_rc == TSHMEM_LORA_OK && race_at.insert_rc == TSHMEM_LORA_OK,
                  "while tenant 0's CLOCK waited to lock its set, tenant 0's evict of key %#llx "
                  "returned %s and tenant 1's insert of it %s; expected both TSHMEM_LORA_OK",
                  (unsigned long long)k[2], code_name(race_at.evict_rc),
                  code_name(race_at.insert_rc));
            int rc = tshmem_lora_cache_pin(u, k[2], &r);
            if (rc == TSHMEM_LORA_MISS)
                FAIL("tenant 1's key %#llx (slot %d) was evicted by tenant 0's insert: tenant 0's "
                     "CLOCK read slot %d's key and, before it locked the key's set, the slot was "
                     "freed and taken by tenant 1 for that key. CLOCK evicted another tenant's "
                     "entry: under the set's lock, check that the way still names slot i and "
                     "tenant t", (unsigned long long)k[2], slot_i, slot_i);
            else if (must("tenant 1's tshmem_lora_cache_pin of its key", u, rc)) {
                VALUE("same_slot", "%d", r.slot == slot_i);
                uint64_t copy[32];
                if (must("tshmem_lora_cache_read", u,
                         tshmem_lora_cache_read(u, &r, 0, copy, sizeof copy)))
                    blob_ok("tenant 1's key after tenant 0's insert", copy, sizeof copy, k[2], 1);
                tshmem_lora_cache_unpin(u, &r);
            }
        }
        for (int i = 0; i < 4; i++) {
            tshmem_lora_tenant_t *h = i == 1 || i == 2 ? u : t;
            if (i == 2)
                continue; /* checked above */
            if (must("tshmem_lora_cache_pin", h, tshmem_lora_cache_pin(h, k[i], &r)))
                tshmem_lora_cache_unpin(h, &r);
        }
        must("tshmem_lora_cache_unpin", t, tshmem_lora_cache_unpin(t, &held));
        tshmem_lora_home_stats_t s;
        tshmem_lora_cache_stats(c, 0, &s);
        CHECK(s.tenant_slots[0] == 2 && s.tenant_usage[0] == 2 && s.tenant_slots[1] == 2 &&
                  s.tenant_usage[1] == 2 && s.pinned_slots == 0,
              "home PE 0: tenant 0 owns %d slots (usage %d), tenant 1 %d (usage %d), %d pinned; "
              "expected 2, 2, 2, 2 and 0", s.tenant_slots[0], s.tenant_usage[0],
              s.tenant_slots[1], s.tenant_usage[1], s.pinned_slots);
    }
    tshmem_barrier_all();
    tshmem_lora_tenant_close(race_at.t0);
    tshmem_lora_tenant_close(t);
    tshmem_lora_tenant_close(u);
    tshmem_lora_cache_destroy(c);
    tshmem_finalize();
}

/* ---- serve ------------------------------------------------------------------------------------ */
static float xval(int pe, int b, int i, int j)
{
    uint64_t z = ((uint64_t)pe << 48) ^ ((uint64_t)b << 32) ^ ((uint64_t)i << 16) ^ (uint64_t)j;
    z = (z ^ (z >> 31)) * 0x7fb5d329728ea185ull;
    z ^= z >> 27;
    return (float)((double)(z >> 11) * 0x1p-53 - 0.5);
}

static void serve(int argc, char **argv)
{
    if (argc < 9) {
        fprintf(stderr, "serve HIDDEN RANK LAYERS ADAPTERS BATCHES BATCH QUOTA\n");
        exit(2);
    }
    int hidden = atoi(argv[2]), rank = atoi(argv[3]), layers = atoi(argv[4]);
    int adapters = atoi(argv[5]), batches = atoi(argv[6]), batch = atoi(argv[7]);
    int quota = atoi(argv[8]);
    pe_init();
    int me = tshmem_my_pe();
    char dir[64] = "";
    if (me == 0) {
        snprintf(dir, sizeof dir, "/tmp/tshmem-lora-XXXXXX");
        if (!mkdtemp(dir)) {
            FAIL("mkdtemp(/tmp/tshmem-lora-XXXXXX) failed: %s", strerror(errno));
            dir[0] = 0;
        }
    }
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    size_t bytes = tshmem_lora_adapter_bytes(hidden, rank, layers);
    if (me == 0 && dir[0]) {
        float *a = malloc(bytes);
        for (int id = 0; id < adapters; id++) {
            tshmem_lora_adapter_fill(a, hidden, rank, layers, 38, id, 1);
            if (tshmem_lora_adapter_write(dir, id, a, bytes) != 0)
                FAIL("writing adapter %d into %s: %s", id, dir, strerror(errno));
        }
        free(a);
    }
    tshmem_barrier_all();
    tshmem_lora_cache_t *c = make_cache(32, 2 * quota, bytes, 2, (const int[]){quota, quota});
    tshmem_lora_server_config_t cfg = {.hidden = hidden, .rank = rank, .layers = layers,
                                       .n_adapters = adapters, .seed = 38, .dir = dir,
                                       .max_rows = batch};
    tshmem_lora_server_t *s = tshmem_lora_server_create(c, &cfg);
    float *x = malloc(sizeof(float) * (size_t)batch * hidden);
    float *y = malloc(sizeof(float) * (size_t)batch * hidden), *ref = malloc(sizeof(float) * hidden);
    int *ids = malloc(sizeof(int) * (size_t)batch), bad = 0;
    uint64_t rng = 0x51ed270b27f31d2bull ^ (uint64_t)(me + 1) * 0x9e3779b97f4a7c15ull;
    for (int b = 0; b < batches && !bad && dir[0]; b++) {
        for (int i = 0; i < batch; i++) {
            ids[i] = tshmem_lora_zipf(&rng, adapters, 1.1);
            for (int j = 0; j < hidden; j++)
                x[(size_t)i * hidden + j] = xval(me, b, i, j);
        }
        if (tshmem_lora_serve_batch(s, ids, batch, x, y) != 0) {
            FAIL("tshmem_lora_serve_batch returned -1 on batch %d (its message is above)", b);
            break;
        }
        for (int i = 0; i < batch && !bad; i++) {
            if (tshmem_lora_reference(&cfg, s->W, ids[i], x + (size_t)i * hidden, ref) != 0) {
                FAIL("the reference could not read adapter %d's file", ids[i]);
                bad = 1;
            }
            for (int j = 0; j < hidden && !bad; j++)
                if (memcmp(&ref[j], &y[(size_t)i * hidden + j], sizeof(float)) != 0) {
                    FAIL("batch %d, request %d (adapter %d): y[%d] = %.9g, the one-process "
                         "reference (adapter read from its file) has %.9g: the served adapter's "
                         "bytes are not the file's (another adapter's blob, a torn or stale "
                         "slot, or a copy of the wrong length)", b, i, ids[i], j,
                         (double)y[(size_t)i * hidden + j], (double)ref[j]);
                    bad = 1;
                }
        }
    }
    VALUE("requests", "%llu", (unsigned long long)s->requests);
    VALUE("hits", "%llu", (unsigned long long)s->hits);
    VALUE("misses", "%llu", (unsigned long long)s->misses);
    VALUE("zero_copy", "%llu", (unsigned long long)s->zero_copy);
    VALUE("copies", "%llu", (unsigned long long)s->copies);
    CHECK(bad || s->requests == (uint64_t)batches * (uint64_t)batch,
          "served %llu requests of %d", (unsigned long long)s->requests, batches * batch);
    unsigned long long mine[2] = {s->hits, s->misses}, all[2];
    MPI_Allreduce(mine, all, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(bad || (all[0] > 0 && all[1] > 0),
          "%llu hits and %llu misses over every PE's %d batches of Zipf-drawn adapters: "
          "expected both (a pin of an adapter inserted earlier is a hit, a first use a miss)",
          all[0], all[1], batches);
    tshmem_barrier_all();
    tshmem_lora_server_destroy(s);
    tshmem_lora_cache_destroy(c);
    if (me == 0 && dir[0])
        for (int id = 0; id < adapters; id++) {
            char path[128];
            if (tshmem_lora_adapter_path(path, sizeof path, dir, id) == 0)
                unlink(path);
        }
    if (me == 0 && dir[0])
        rmdir(dir);
    free(x), free(y), free(ref), free(ids);
    tshmem_finalize();
}

/* ---- misuse ----------------------------------------------------------------------------------- */
static void misuse(int argc, char **argv)
{
    (void)argc, (void)argv;
    pe_init();
    int me = tshmem_my_pe();
    tshmem_lora_cache_t *c = make_cache(8, 4, 256, 1, NULL);
    tshmem_lora_tenant_t *t = tshmem_lora_tenant_open(c, 0);
    uint64_t key = 700u + (uint64_t)me, blob[48];
    fill_blob(blob, 256, key, 1);
    must("tshmem_lora_cache_insert", t, tshmem_lora_cache_insert(t, key, blob, 256));
    expect_rc("tshmem_lora_cache_insert of 384 bytes into slots of 256", t,
              tshmem_lora_cache_insert(t, key + 1000, blob, 384), TSHMEM_LORA_E2BIG,
              NEED("tshmem_lora_cache_insert", "384 bytes", "larger than a slot"));
    expect_rc("tshmem_lora_cache_replace with 384 bytes", t,
              tshmem_lora_cache_replace(t, key, blob, 384), TSHMEM_LORA_E2BIG,
              NEED("tshmem_lora_cache_replace", "larger than a slot"));
    expect_rc("tshmem_lora_cache_replace of an unknown key", t,
              tshmem_lora_cache_replace(t, key + 1000, blob, 64), TSHMEM_LORA_ENOENT,
              NEED("tshmem_lora_cache_replace", "tenant 0", "not in the cache"));
    expect_rc("tshmem_lora_cache_evict of an unknown key", t,
              tshmem_lora_cache_evict(t, key + 1000), TSHMEM_LORA_ENOENT,
              NEED("tshmem_lora_cache_evict", "not in the cache"));
    tshmem_lora_ref_t r;
    expect_rc("tshmem_lora_cache_pin of an unknown key", t,
              tshmem_lora_cache_pin(t, key + 1000, &r), TSHMEM_LORA_MISS,
              NEED("tshmem_lora_cache_pin", "not in the cache"));
    tshmem_lora_ref_t never = {.key = key, .home = tshmem_lora_cache_home(c, key)};
    expect_rc("tshmem_lora_cache_unpin of a reference never pinned", t,
              tshmem_lora_cache_unpin(t, &never), TSHMEM_LORA_EINVAL,
              NEED("tshmem_lora_cache_unpin", "unpin without pin"));
    if (must("tshmem_lora_cache_pin", t, tshmem_lora_cache_pin(t, key, &r))) {
        expect_rc("tshmem_lora_cache_evict of a pinned key", t, tshmem_lora_cache_evict(t, key),
                  TSHMEM_LORA_EBUSY, NEED("tshmem_lora_cache_evict", "pinned"));
        tshmem_lora_ref_t copy = r;
        must("tshmem_lora_cache_unpin", t, tshmem_lora_cache_unpin(t, &r));
        expect_rc("a second tshmem_lora_cache_unpin of the same reference", t,
                  tshmem_lora_cache_unpin(t, &copy), TSHMEM_LORA_EINVAL,
                  NEED("unpin without pin"));
        uint64_t out[8];
        expect_rc("tshmem_lora_cache_read after the unpin", t,
                  tshmem_lora_cache_read(t, &copy, 0, out, sizeof out), TSHMEM_LORA_EINVAL,
                  NEED("tshmem_lora_cache_read", "holds no pin"));
        must("tshmem_lora_cache_evict once unpinned", t, tshmem_lora_cache_evict(t, key));
    }
    tshmem_barrier_all();
    tshmem_lora_tenant_close(t);
    tshmem_lora_cache_destroy(c);
    tshmem_finalize();
}

/* ---- bad: configs the cache refuses (the job stops) ------------------------------------------ */
static void bad(int argc, char **argv)
{
    const char *what = argc > 2 ? argv[2] : "";
    pe_init();
    /* A correct cache first: the chapter's own code runs before the refusal is tested. */
    tshmem_lora_cache_t *ok = make_cache(4, 4, 64, 1, NULL);
    tshmem_lora_tenant_t *t = tshmem_lora_tenant_open(ok, 0);
    uint64_t blob[8];
    fill_blob(blob, 64, 9, 1);
    if (tshmem_my_pe() == 0) /* one insert of key 9: a second would be refused, as it exists */
        must("tshmem_lora_cache_insert", t, tshmem_lora_cache_insert(t, 9, blob, 64));
    tshmem_barrier_all();
    if (strcmp(what, "quota_sum") == 0)
        make_cache(4, 8, 64, 2, (const int[]){5, 4});
    else if (strcmp(what, "quota_small") == 0)
        make_cache(4, 8, 64, 2, (const int[]){1, 4});
    else if (strcmp(what, "tenant") == 0)
        tshmem_lora_tenant_open(ok, 3);
    FAIL("scenario bad %s: the call returned instead of stopping the job", what);
    tshmem_finalize();
}

int main(int argc, char **argv)
{
    static const struct scenario list[] = {
        {"basic", basic}, {"torn", torn}, {"full", full}, {"quota", quota},
        {"isolation", isolation}, {"race", race}, {"serve", serve}, {"misuse", misuse}, {"bad", bad},
        {NULL, NULL}};
    return pe_main(argc, argv, list);
}
