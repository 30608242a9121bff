/* lora_cache.c: a sharded cache of blobs (LoRA adapters) in the symmetric heap, shared by
 * tenants, changed only with one-sided atomics, puts and gets.
 *
 * Chapter 3.8. Each key's home PE holds its directory entry and its blob (include/
 * tshmem_lora_cache.h draws the layout). The protocol, in four rules:
 *
 *   1. A slot's reference word is (generation << 32) | count. count is 1 for the directory's
 *      hold and one more per pin; a pin adds one by compare-and-swap only while the generation
 *      is the one the directory named and count >= 1. Whoever takes count from 1 to 0 frees
 *      the slot: generation + 1, owner 0, the tenant's usage - 1. A slot's bytes never change
 *      while count >= 1.
 *   2. A blob is written into a slot nobody else can see (claimed by CAS on its owner word,
 *      count 0), completed (tshmem_quiet), and only then published: count := 1, then the
 *      directory's `cur` := (generation, slot) by a store (insert) or a CAS (replace).
 *      Copy, then swap: a reader holds the old slot or the new one, never a half-written one.
 *   3. A tenant's slots at a home are counted by fetch-add on its usage word before it claims
 *      one: a count past the quota is undone and the tenant's own CLOCK evicts an unpinned
 *      entry of its own. Since the quotas sum to at most n_slots, a tenant under its quota
 *      always finds a free slot.
 *   4. Writers of a directory set (insert, evict) hold the set's lock word (CAS 0 -> PE + 1);
 *      readers and replacements never lock.
 *
 * Why copy-then-swap and not a seqlock: a seqlock lets the writer change the bytes in place and
 * makes the reader copy them out and check the sequence number afterwards, retrying if it
 * moved. Our readers read in place (zero-copy, for the whole time they compute with the
 * adapter), so the bytes must not change while anyone holds them: the writer takes a second
 * slot. The price is that slot while readers finish, which is why each quota is at least 2.
 */
#define TSHMEM_CHAPTER "3.8"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tshmem_internal.h"
#include "tshmem_lora_cache.h"

#define CACHE_MAGIC 0x6c6f726163616368ull  /* "loracach" */
#define TENANT_MAGIC 0x6c6f726174656e74ull /* "loratent" */

/* The home's words, one layout on every PE (offsets into one tshmem_malloc block). */
struct lc_entry {
    uint64_t key;    /* 0: free */
    uint64_t tenant; /* the owner + 1, written before cur */
    uint64_t cur;    /* 0: no blob (being filled or evicted); else (gen << 32) | (slot + 1) */
    uint64_t pad;
};
struct lc_set {
    uint64_t lock; /* 0, or the writer's PE + 1 */
    uint64_t pad[7];
    struct lc_entry way[TSHMEM_LORA_WAYS];
};
struct lc_slot {
    uint64_t ref;     /* (gen << 32) | count */
    uint64_t owner;   /* 0: free; else tenant + 1 */
    uint64_t key, version, length;
    uint64_t clock;   /* CLOCK's bit: set by a pin, cleared by the hand */
    uint64_t pad[2];
};
struct lc_tenant_words {
    uint64_t usage; /* slots this tenant holds (or is claiming) at this home */
    uint64_t hand;  /* its CLOCK hand over the home's slots */
    uint64_t pad[6];
};

struct tshmem_lora_cache {
    uint64_t magic;
    int n_sets, n_slots, n_tenants, n_pes;
    size_t slot_bytes;
    int quota[TSHMEM_LORA_MAX_TENANTS];
    char *region; /* symmetric */
    size_t sets_off, slots_off, tenants_off, data_off;
    char **near;  /* near[pe]: tshmem_ptr(region, pe), NULL off-node */
};

struct lc_pin {
    int used, home, slot;
    uint32_t gen;
    uint64_t key;
};
struct tshmem_lora_tenant {
    uint64_t magic;
    tshmem_lora_cache_t *cache;
    int id;
    char err[512];
    struct lc_pin pins[TSHMEM_LORA_MAX_PINS];
};

/* ---- Provided: addresses and one-sided words ------------------------------------------------ */
static inline struct lc_set *set_at(const tshmem_lora_cache_t *c, int s)
{
    return (struct lc_set *)(c->region + c->sets_off) + s;
}
static inline struct lc_slot *slot_at(const tshmem_lora_cache_t *c, int i)
{
    return (struct lc_slot *)(c->region + c->slots_off) + i;
}
static inline struct lc_tenant_words *tw_at(const tshmem_lora_cache_t *c, int t)
{
    return (struct lc_tenant_words *)(c->region + c->tenants_off) + t;
}
static inline char *data_at(const tshmem_lora_cache_t *c, int i)
{
    return c->region + c->data_off + (size_t)i * c->slot_bytes;
}
/* The home's twin of a symmetric address, or NULL where tshmem_ptr does not reach. */
static inline void *near_of(const tshmem_lora_cache_t *c, const void *sym, int home)
{
    char *n = c->near[home];
    return n ? n + ((const char *)sym - c->region) : NULL;
}
/* Atomics on the home's words: direct where tshmem_ptr reaches, tshmem's otherwise. */
static inline uint64_t w_load(const tshmem_lora_cache_t *c, uint64_t *w, int home)
{
    uint64_t *p = near_of(c, w, home);
    return p ? __atomic_load_n(p, __ATOMIC_ACQUIRE) : tshmem_uint64_atomic_fetch(w, home);
}
static inline void w_store(const tshmem_lora_cache_t *c, uint64_t *w, uint64_t v, int home)
{
    uint64_t *p = near_of(c, w, home);
    if (p)
        __atomic_store_n(p, v, __ATOMIC_RELEASE);
    else
        tshmem_uint64_atomic_set(w, v, home);
}
static inline uint64_t w_fadd(const tshmem_lora_cache_t *c, uint64_t *w, uint64_t v, int home)
{
    uint64_t *p = near_of(c, w, home);
    return p ? __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL)
             : tshmem_uint64_atomic_fetch_add(w, v, home);
}
/* Returns the old value: the swap happened if it equals cond. */
static inline uint64_t w_cas(const tshmem_lora_cache_t *c, uint64_t *w, uint64_t cond,
                             uint64_t v, int home)
{
    uint64_t *p = near_of(c, w, home);
    if (p) {
        __atomic_compare_exchange_n(p, &cond, v, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
        return cond;
    }
    return tshmem_uint64_atomic_compare_swap(w, cond, v, home);
}
static inline void put_bytes(const tshmem_lora_cache_t *c, void *sym, const void *src, size_t n,
                             int home)
{
    void *p = near_of(c, sym, home);
    if (p)
        memcpy(p, src, n);
    else
        tshmem_putmem(sym, src, n, home);
}
static inline void get_bytes(const tshmem_lora_cache_t *c, void *dest, const void *sym, size_t n,
                             int home)
{
    const void *p = near_of(c, sym, home);
    if (p)
        memcpy(dest, p, n);
    else
        tshmem_getmem(dest, sym, n, home);
}

/* A copy of a set's ways, or of a slot's header, in one go: word by word with atomic loads
 * where tshmem_ptr reaches, one get otherwise (a round trip per word would be a dozen across
 * nodes). The copy may mix moments (words change while it is taken): use it to find, then check
 * with an atomic (a compare-and-swap names the value it expects). */
static inline void load_ways(const tshmem_lora_cache_t *c, struct lc_set *set, int home,
                             struct lc_entry *out)
{
    if (near_of(c, set, home)) {
        for (int w = 0; w < TSHMEM_LORA_WAYS; w++) {
            /* cur first: an insert stores key, tenant, then cur; seeing its cur, we see them */
            out[w].cur = w_load(c, &set->way[w].cur, home);
            out[w].tenant = w_load(c, &set->way[w].tenant, home);
            out[w].key = w_load(c, &set->way[w].key, home);
        }
    } else {
        tshmem_getmem(out, set->way, sizeof set->way, home);
    }
}
static inline void load_header(const tshmem_lora_cache_t *c, struct lc_slot *sl, int home,
                               struct lc_slot *out)
{
    if (near_of(c, sl, home)) {
        out->ref = w_load(c, &sl->ref, home);
        out->owner = w_load(c, &sl->owner, home);
        out->key = w_load(c, &sl->key, home);
        out->version = w_load(c, &sl->version, home);
        out->length = w_load(c, &sl->length, home);
        out->clock = w_load(c, &sl->clock, home);
    } else {
        tshmem_getmem(out, sl, sizeof *sl, home);
    }
}

#define REF(gen, count) (((uint64_t)(gen) << 32) | (uint64_t)(count))
#define REF_GEN(r) ((uint32_t)((r) >> 32))
#define REF_COUNT(r) ((uint32_t)(r))
#define CUR(gen, slot) (((uint64_t)(gen) << 32) | (uint64_t)((slot) + 1))
#define CUR_GEN(c) ((uint32_t)((c) >> 32))
#define CUR_SLOT(c) ((int)(uint32_t)(c) - 1)

static inline uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static inline int home_of(const tshmem_lora_cache_t *c, uint64_t key)
{
    return (int)(mix(key) % (uint64_t)c->n_pes);
}
static inline int set_of(const tshmem_lora_cache_t *c, uint64_t key)
{
    return (int)((mix(key) / (uint64_t)c->n_pes) % (uint64_t)c->n_sets);
}

/* Provided: a refusal: the sentence goes into the handle, the code comes back. */
__attribute__((format(printf, 4, 5))) static int refuse(tshmem_lora_tenant_t *t, int code,
                                                        const char *func, const char *fmt, ...)
{
    int n = snprintf(t->err, sizeof t->err, "%s: PE %d, tenant %d: ", func, tshmem_g.my_pe,
                     t->id);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof t->err)
        vsnprintf(t->err + n, sizeof t->err - (size_t)n, fmt, ap);
    va_end(ap);
    return code;
}

static void cache_check(const char *func, const tshmem_lora_cache_t *c)
{
    tshmem_require_live(func);
    if (c == NULL || c->magic != CACHE_MAGIC)
        tshmem_fail(func, "PE %d passed %p, which is not a live cache: pass what "
                    "tshmem_lora_cache_create returned, before tshmem_lora_cache_destroy.",
                    tshmem_g.my_pe, (const void *)c);
}
static void tenant_check(const char *func, const tshmem_lora_tenant_t *t)
{
    tshmem_require_live(func);
    if (t == NULL || t->magic != TENANT_MAGIC)
        tshmem_fail(func, "PE %d passed %p, which is not an open tenant handle: pass what "
                    "tshmem_lora_tenant_open returned, before tshmem_lora_tenant_close.",
                    tshmem_g.my_pe, (const void *)t);
    cache_check(func, t->cache);
}

/* Provided, for the chapter's tests: NULL in any other program. When set, this PE calls it as
 * it is about to lock a directory set, so that a test can make other calls happen at that very
 * moment (as other PEs' calls may, by chance, on a loaded machine). */
void (*tshmem_lora_cache_lock_hook)(int home, int set);

/* Provided: the set's writer lock (CAS 0 -> PE + 1; backs off while another PE holds it). */
static inline void set_lock(const tshmem_lora_cache_t *c, struct lc_set *set, int home)
{
    if (tshmem_lora_cache_lock_hook)
        tshmem_lora_cache_lock_hook(home, (int)(set - set_at(c, 0)));
    struct tshmem_spin spin;
    tshmem_spin_init(&spin, "tshmem_lora_cache (a directory set's lock)", &set->lock);
    while (w_cas(c, &set->lock, 0, (uint64_t)tshmem_g.my_pe + 1, home) != 0)
        tshmem_spin_pause(&spin);
}
static inline void set_unlock(const tshmem_lora_cache_t *c, struct lc_set *set, int home)
{
    tshmem_quiet(); /* what we wrote under the lock is complete before the lock is free */
    w_store(c, &set->lock, 0, home);
}

/* ---- Create and destroy (provided) ---------------------------------------------------------- */
tshmem_lora_cache_t *tshmem_lora_cache_create(const tshmem_lora_cache_config_t *cfg)
{
    const char *func = __func__;
    tshmem_require_live(func);
    int me = tshmem_g.my_pe;
    if (cfg == NULL)
        tshmem_fail(func, "PE %d passed config = NULL: fill a tshmem_lora_cache_config_t "
                    "(n_sets, n_slots, slot_bytes, n_tenants, quota) and pass its address.", me);
    if (cfg->n_sets < 1 || cfg->n_slots < 2 || cfg->slot_bytes < 1 || cfg->n_tenants < 1 ||
        cfg->n_tenants > TSHMEM_LORA_MAX_TENANTS)
        tshmem_fail(func, "PE %d passed n_sets = %d, n_slots = %d, slot_bytes = %zu, n_tenants "
                    "= %d: n_sets and slot_bytes must be at least 1, n_slots at least 2, "
                    "n_tenants 1 .. %d.", me, cfg->n_sets, cfg->n_slots, cfg->slot_bytes,
                    cfg->n_tenants, TSHMEM_LORA_MAX_TENANTS);
    tshmem_lora_cache_t *c = calloc(1, sizeof *c);
    if (!c)
        tshmem_fail(func, "PE %d: out of private memory for the cache's handle.", me);
    long sum = 0;
    for (int t = 0; t < cfg->n_tenants; t++) {
        c->quota[t] = cfg->quota ? cfg->quota[t] : cfg->n_slots / cfg->n_tenants;
        if (c->quota[t] < 2)
            tshmem_fail(func, "PE %d: tenant %d's quota is %d slots: each tenant needs at least "
                        "2 (a replacement writes into a second slot while readers hold the "
                        "first). Give it more, or the cache more slots.", me, t, c->quota[t]);
        sum += c->quota[t];
    }
    if (sum > cfg->n_slots)
        tshmem_fail(func, "PE %d: the quotas add up to %ld slots, more than the %d slots of a "
                    "home: a tenant under its quota must always find a free slot. Lower the "
                    "quotas or raise n_slots.", me, sum, cfg->n_slots);
    long long mine[5] = {cfg->n_sets, cfg->n_slots, (long long)cfg->slot_bytes, cfg->n_tenants,
                         sum};
    long long hi[5], lo[5];
    MPI_Allreduce(mine, hi, 5, MPI_LONG_LONG, MPI_MAX, tshmem_g.comm);
    MPI_Allreduce(mine, lo, 5, MPI_LONG_LONG, MPI_MIN, tshmem_g.comm);
    for (int i = 0; i < 5; i++)
        if (hi[i] != lo[i])
            tshmem_fail(func, "PE %d passed a config whose %s differs from other PEs' (%lld to "
                        "%lld): every PE must pass the same config.", me,
                        (const char *[]){"n_sets", "n_slots", "slot_bytes", "n_tenants",
                                         "quota sum"}[i], lo[i], hi[i]);
    c->n_sets = cfg->n_sets;
    c->n_slots = cfg->n_slots;
    c->n_tenants = cfg->n_tenants;
    c->n_pes = tshmem_g.n_pes;
    c->slot_bytes = (cfg->slot_bytes + 63) & ~(size_t)63;
    c->sets_off = 0;
    c->slots_off = c->sets_off + (size_t)c->n_sets * sizeof(struct lc_set);
    c->tenants_off = c->slots_off + (size_t)c->n_slots * sizeof(struct lc_slot);
    c->data_off = c->tenants_off + (size_t)c->n_tenants * sizeof(struct lc_tenant_words);
    size_t bytes = c->data_off + (size_t)c->n_slots * c->slot_bytes;
    c->region = tshmem_align(64, bytes);
    if (!c->region)
        tshmem_fail(func, "PE %d: the symmetric heap has no room for the cache's %zu bytes "
                    "(%d slots of %zu): set TSHMEM_SYMMETRIC_SIZE larger.", me, bytes,
                    c->n_slots, c->slot_bytes);
    memset(c->region, 0, c->data_off);
    c->near = calloc((size_t)c->n_pes, sizeof *c->near);
    if (!c->near)
        tshmem_fail(func, "PE %d: out of private memory.", me);
    for (int pe = 0; pe < c->n_pes; pe++)
        c->near[pe] = tshmem_ptr(c->region, pe);
    c->magic = CACHE_MAGIC;
    tshmem_barrier_all(); /* every home's words are zero before anyone inserts */
    return c;
}

void tshmem_lora_cache_destroy(tshmem_lora_cache_t *c)
{
    cache_check(__func__, c);
    tshmem_free(c->region); /* a barrier first: nobody still reads the slots */
    free(c->near);
    c->magic = 0;
    free(c);
}

int tshmem_lora_cache_home(const tshmem_lora_cache_t *c, uint64_t key)
{
    cache_check(__func__, c);
    return home_of(c, key);
}

int tshmem_lora_cache_set(const tshmem_lora_cache_t *c, uint64_t key)
{
    cache_check(__func__, c);
    return set_of(c, key);
}

int tshmem_lora_cache_n_tenants(const tshmem_lora_cache_t *c)
{
    cache_check(__func__, c);
    return c->n_tenants;
}

tshmem_lora_tenant_t *tshmem_lora_tenant_open(tshmem_lora_cache_t *c, int tenant)
{
    cache_check(__func__, c);
    if (tenant < 0 || tenant >= c->n_tenants)
        tshmem_fail(__func__, "PE %d asked for tenant %d: this cache has tenants 0 .. %d.",
                    tshmem_g.my_pe, tenant, c->n_tenants - 1);
    tshmem_lora_tenant_t *t = calloc(1, sizeof *t);
    if (!t)
        tshmem_fail(__func__, "PE %d: out of private memory.", tshmem_g.my_pe);
    t->magic = TENANT_MAGIC;
    t->cache = c;
    t->id = tenant;
    return t;
}

const char *tshmem_lora_tenant_error(const tshmem_lora_tenant_t *t)
{
    tenant_check(__func__, t);
    return t->err;
}

void tshmem_lora_cache_stats(tshmem_lora_cache_t *c, int home, tshmem_lora_home_stats_t *s)
{
    cache_check(__func__, c);
    tshmem_check_pe(__func__, home);
    memset(s, 0, sizeof *s);
    for (int i = 0; i < c->n_sets; i++)
        for (int w = 0; w < TSHMEM_LORA_WAYS; w++)
            s->live_entries += w_load(c, &set_at(c, i)->way[w].cur, home) != 0;
    for (int i = 0; i < c->n_slots; i++) {
        uint64_t owner = w_load(c, &slot_at(c, i)->owner, home);
        if (owner) {
            s->used_slots++;
            if (owner <= (uint64_t)c->n_tenants)
                s->tenant_slots[owner - 1]++;
        }
        s->pinned_slots += REF_COUNT(w_load(c, &slot_at(c, i)->ref, home)) > 1;
    }
    for (int t = 0; t < c->n_tenants; t++)
        s->tenant_usage[t] = (int)w_load(c, &tw_at(c, t)->usage, home);
}

/* ---- Slots: free, claim, CLOCK ------------------------------------------------------------- */
/* Provided: the last holder lets a slot go (rule 1). ref is the word it took to 0. */
static inline void free_slot(const tshmem_lora_cache_t *c, int home, int i, uint32_t gen)
{
    struct lc_slot *sl = slot_at(c, i);
    uint64_t owner = w_load(c, &sl->owner, home);
    w_store(c, &sl->ref, REF(gen + 1, 0), home); /* stale pinners now see another generation */
    w_store(c, &sl->owner, 0, home);              /* claimable */
    if (owner >= 1 && owner <= (uint64_t)c->n_tenants)
        w_fadd(c, &tw_at(c, (int)owner - 1)->usage, (uint64_t)-1, home);
}

/* Drops one hold of slot i (a pin, or the directory's); frees it if that was the last. */
static inline void release_slot(const tshmem_lora_cache_t *c, int home, int i)
{
    (void)c; (void)home; (void)i;
    TSHMEM_TODO("Pinning and reading", "fetch-add -1 on the slot's reference word; if the count was 1, free_slot with its generation");
}

static inline int find_way(const tshmem_lora_cache_t *c, struct lc_set *set, int home, uint64_t key)
{
    for (int w = 0; w < TSHMEM_LORA_WAYS; w++)
        if (w_load(c, &set->way[w].key, home) == key)
            return w;
    return -1;
}

/* Takes entry (set, way) of key out of the directory if its blob is unpinned, with the set
 * locked by the caller. Returns TSHMEM_LORA_OK, TSHMEM_LORA_EBUSY (pinned) or
 * TSHMEM_LORA_ENOENT (no blob there now). */
static inline int evict_locked(const tshmem_lora_cache_t *c, int home, struct lc_set *set, int way)
{
    (void)c; (void)home; (void)set; (void)way;
    TSHMEM_TODO("Eviction: CLOCK over unpinned entries", "read cur; a pinned slot (count above 1) is refused; CAS cur to 0, clear key and tenant, then release the directory's hold");
}

/* CLOCK over tenant t's slots at home: evicts one of its unpinned entries, giving a second
 * chance to those pinned since the hand last passed. 1 if it evicted one; 0 if none could go
 * because its whole quota here is pinned; -1 if none could go now for a moment's reason (a slot
 * of t being written or freed, count 0; another PE evicting the same one): try again. */
static inline int clock_evict(const tshmem_lora_cache_t *c, int t, int home)
{
    (void)c; (void)t; (void)home;
    TSHMEM_TODO("Eviction: CLOCK over unpinned entries", "two turns of the hand (fetch-add on the tenant's hand word): skip others' and free slots and pinned ones, clear a set CLOCK bit, else evict the slot's entry under its set's lock; none: 0 if quota[t] of t's slots are pinned (count them), else -1 (a moment's view: try again)");
}

/* A free slot for tenant t at home, within its quota: its number, its count still 0 (nobody
 * sees it yet), or -1 with a refusal when every slot of its quota there is pinned. */
static inline int claim_slot(tshmem_lora_tenant_t *tn, int home, const char *func, uint64_t key)
{
    (void)tn; (void)home; (void)func; (void)key;
    TSHMEM_TODO("Claiming a slot", "fetch-add 1 on the tenant's usage at the home; past the quota: undo it and clock_evict (none: refuse EFULL) and try again; then CAS a free slot's owner from 0 to t + 1");
}

/* Provided: writes a claimed slot (rule 2: header and bytes, completed, then count 1) and
 * returns the generation it is published under. */
static inline uint32_t fill_slot(const tshmem_lora_cache_t *c, int home, int i, uint64_t key,
                          uint64_t version, const void *blob, size_t length)
{
    struct lc_slot *sl = slot_at(c, i);
    w_store(c, &sl->key, key, home);
    w_store(c, &sl->version, version, home);
    w_store(c, &sl->length, length, home);
    w_store(c, &sl->clock, 1, home);
    put_bytes(c, data_at(c, i), blob, length, home);
    tshmem_quiet();
    uint32_t gen = REF_GEN(w_load(c, &sl->ref, home));
    w_store(c, &sl->ref, REF(gen, 1), home);
    return gen;
}

/* Provided: the checks every call with a key and a blob starts with. */
static int key_blob_check(tshmem_lora_tenant_t *t, const char *func, uint64_t key,
                          const void *blob, size_t length)
{
    if (key == 0)
        return refuse(t, TSHMEM_LORA_EINVAL, func, "key 0 is reserved (a free entry): use "
                      "keys from 1.");
    if (blob == NULL && length > 0)
        return refuse(t, TSHMEM_LORA_EINVAL, func, "key %#llx: blob = NULL with length %zu.",
                      (unsigned long long)key, length);
    if (length > t->cache->slot_bytes)
        return refuse(t, TSHMEM_LORA_E2BIG, func, "key %#llx: a blob of %zu bytes is larger "
                      "than a slot (%zu bytes): create the cache with a larger slot_bytes, or "
                      "split the adapter.", (unsigned long long)key, length,
                      t->cache->slot_bytes);
    return 0;
}

/* ---- Insert ---------------------------------------------------------------------------------- */
int tshmem_lora_cache_insert(tshmem_lora_tenant_t *tn, uint64_t key, const void *blob,
                             size_t length)
{
    const char *func = __func__;
    tenant_check(func, tn);
    int bad = key_blob_check(tn, func, key, blob, length);
    if (bad)
        return bad;
    TSHMEM_TODO("Inserting: claim an entry", "two turns of the key's set, each under its lock: the key there already: refuse (another tenant's: EPERM naming the owner, else EEXIST); no free way: EFULL; else on the first turn unlock, claim_slot and fill_slot (version 1), and on the second store key, tenant, then cur; a refusal on the second turn gives the slot back");
}

/* ---- Pin, read, unpin ------------------------------------------------------------------------ */
static struct lc_pin *find_pin(tshmem_lora_tenant_t *t, const tshmem_lora_ref_t *r)
{
    for (int i = 0; i < TSHMEM_LORA_MAX_PINS; i++) {
        struct lc_pin *p = &t->pins[i];
        if (p->used && p->home == r->home && p->slot == r->slot && p->gen == r->gen &&
            p->key == r->key)
            return p;
    }
    return NULL;
}

int tshmem_lora_cache_pin(tshmem_lora_tenant_t *tn, uint64_t key, tshmem_lora_ref_t *ref)
{
    const char *func = __func__;
    tenant_check(func, tn);
    if (ref == NULL)
        return refuse(tn, TSHMEM_LORA_EINVAL, func, "key %#llx: ref = NULL: pass a "
                      "tshmem_lora_ref_t to fill.", (unsigned long long)key);
    struct lc_pin *rec = NULL;
    for (int i = 0; i < TSHMEM_LORA_MAX_PINS && !rec; i++)
        if (!tn->pins[i].used)
            rec = &tn->pins[i];
    if (!rec)
        return refuse(tn, TSHMEM_LORA_EINVAL, func, "key %#llx: this handle holds %d pins "
                      "already, the most it may: unpin some first.", (unsigned long long)key,
                      TSHMEM_LORA_MAX_PINS);
    TSHMEM_TODO("Pinning and reading", "copy the key's set (load_ways) and find its way (none or cur 0: MISS); another tenant's: EPERM naming the owner, before touching anything; CAS the slot's count up only if its generation is cur's and count >= 1 (guess count 1 first; else look again); check the header's key and owner after pinning (load_header); set the CLOCK bit if clear; fill ref (data = tshmem_ptr's twin, or NULL)");
    *rec = (struct lc_pin){.used = 1, .home = ref->home, .slot = ref->slot, .gen = ref->gen,
                           .key = key};
    return TSHMEM_LORA_OK;
}

/* Provided: a reference must be one this handle pinned and has not unpinned. */
static int ref_check(tshmem_lora_tenant_t *t, const char *func, const tshmem_lora_ref_t *r,
                     struct lc_pin **pin)
{
    const tshmem_lora_cache_t *c = t->cache;
    if (r == NULL)
        return refuse(t, TSHMEM_LORA_EINVAL, func, "ref = NULL: pass a reference from "
                      "tshmem_lora_cache_pin.");
    if (r->home < 0 || r->home >= c->n_pes || r->slot < 0 || r->slot >= c->n_slots)
        return refuse(t, TSHMEM_LORA_EINVAL, func, "key %#llx: home PE %d, slot %d is outside "
                      "the cache (PEs 0 .. %d, slots 0 .. %d): the reference did not come from "
                      "tshmem_lora_cache_pin; nothing was read or changed.",
                      (unsigned long long)r->key, r->home, r->slot, c->n_pes - 1,
                      c->n_slots - 1);
    if ((*pin = find_pin(t, r)) == NULL)
        return refuse(t, TSHMEM_LORA_EINVAL, func, "key %#llx (home PE %d, slot %d): tenant "
                      "%d holds no pin of it (unpin without pin, a second unpin, or a reference "
                      "that tshmem_lora_cache_pin did not give this handle): nothing was read or "
                      "changed.", (unsigned long long)r->key, r->home, r->slot, t->id);
    return 0;
}

int tshmem_lora_cache_unpin(tshmem_lora_tenant_t *tn, tshmem_lora_ref_t *ref)
{
    tenant_check(__func__, tn);
    struct lc_pin *pin = NULL;
    int bad = ref_check(tn, __func__, ref, &pin);
    if (bad)
        return bad;
    pin->used = 0;
    release_slot(tn->cache, ref->home, ref->slot);
    ref->data = NULL;
    return TSHMEM_LORA_OK;
}

int tshmem_lora_cache_read(tshmem_lora_tenant_t *tn, const tshmem_lora_ref_t *ref,
                           size_t offset, void *dest, size_t nbytes)
{
    tenant_check(__func__, tn);
    struct lc_pin *pin = NULL;
    int bad = ref_check(tn, __func__, ref, &pin);
    if (bad)
        return bad;
    if (offset > ref->length || nbytes > ref->length - offset || (dest == NULL && nbytes))
        return refuse(tn, TSHMEM_LORA_EINVAL, __func__, "key %#llx: bytes %zu .. %zu are "
                      "outside its blob of %zu bytes (or dest is NULL).",
                      (unsigned long long)ref->key, offset, offset + nbytes, ref->length);
    TSHMEM_TODO("Pinning and reading", "copy from the pinned slot: get_bytes from the slot's data at offset");
    return TSHMEM_LORA_OK;
}

void tshmem_lora_tenant_close(tshmem_lora_tenant_t *t)
{
    tenant_check(__func__, t);
    for (int i = 0; i < TSHMEM_LORA_MAX_PINS; i++)
        if (t->pins[i].used) {
            t->pins[i].used = 0;
            release_slot(t->cache, t->pins[i].home, t->pins[i].slot);
        }
    t->magic = 0;
    free(t);
}

/* ---- Replace and evict ----------------------------------------------------------------------- */
int tshmem_lora_cache_replace(tshmem_lora_tenant_t *tn, uint64_t key, const void *blob,
                              size_t length)
{
    const char *func = __func__;
    tenant_check(func, tn);
    int bad = key_blob_check(tn, func, key, blob, length);
    if (bad)
        return bad;
    TSHMEM_TODO("Replacing: copy, then swap", "pin the current blob (MISS: ENOENT; EPERM as pin says it); claim a second slot and fill it with version + 1; CAS the entry's cur from the old (gen, slot) to the new; on success release the directory's hold on the old slot, else free the new one and try again; unpin the old");
}

int tshmem_lora_cache_evict(tshmem_lora_tenant_t *tn, uint64_t key)
{
    const char *func = __func__;
    tenant_check(func, tn);
    if (key == 0)
        return refuse(tn, TSHMEM_LORA_EINVAL, func, "key 0 is reserved (a free entry).");
    TSHMEM_TODO("Eviction: CLOCK over unpinned entries", "lock the set; no such key: ENOENT; another tenant's: EPERM naming the owner; else evict_locked (EBUSY: a sentence, pinned); unlock");
}
