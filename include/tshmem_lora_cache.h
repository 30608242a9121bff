/* tshmem_lora_cache.h: a parameter cache of LoRA adapters in symmetric memory, shared by many
 * tenants (chapter 3.8).
 *
 * A LoRA adapter changes a model's linear layer y = x W into y = x W + (x A) B, with A of
 * hidden x r and B of r x hidden floats per layer (r, the rank, 8 to 64). A server keeps
 * hundreds of adapters and switches between them from batch to batch; this cache keeps them in
 * the symmetric heap, sharded over the PEs, so that any PE reads any adapter without asking its
 * home's CPU.
 *
 * Every key (a 64-bit number, not 0) has a home PE, tshmem_lora_cache_home(key). The home holds
 *   - a directory of n_sets sets of TSHMEM_LORA_WAYS entries: the key, its tenant, and `cur`,
 *     one word naming the slot that holds the key's blob now (its number and generation);
 *   - a slab of n_slots slots of slot_bytes each, each with a header: a reference word (the
 *     slot's generation and how many hold it: 1 for the directory, 1 for each pin), its owner
 *     tenant, key, version, length and CLOCK bit;
 *   - per tenant, how many of its slots are in use there (against its quota) and a CLOCK hand.
 * Every operation is one-sided: atomics and gets or puts on the home's words (tshmem_ptr where
 * it reaches, chapter 2.5's transport otherwise); the home's program takes no part.
 *
 * Tenants are numbered 0 .. n_tenants - 1 at creation; quota[t] is how many slots tenant t may
 * hold at each home (their sum at most n_slots, each at least 2: a replacement needs a second
 * slot while readers hold the first). A program acts for a tenant through a handle from
 * tshmem_lora_tenant_open; a handle may only read, pin, replace and evict its tenant's keys.
 *
 * Every call on a handle returns TSHMEM_LORA_OK (0), TSHMEM_LORA_MISS (1: the key is not in
 * the cache) or a negative TSHMEM_LORA_E* code; a refusal leaves every entry as it was (with
 * one exception, at insert below) and tshmem_lora_tenant_error(t) says why, in a sentence naming the function, the tenant, the key
 * (as %#llx) and, where another tenant owns it, the owner ("belongs to tenant 1"); the chapter's
 * page lists the words each refusal holds. The program goes on serving.
 */
#ifndef TSHMEM_LORA_CACHE_H
#define TSHMEM_LORA_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "tshmem.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TSHMEM_LORA_WAYS 4        /* entries per directory set */
#define TSHMEM_LORA_MAX_TENANTS 64
#define TSHMEM_LORA_MAX_PINS 64   /* pins one tenant handle may hold at once */

enum {
    TSHMEM_LORA_OK = 0,
    TSHMEM_LORA_MISS = 1,      /* pin, read: the key is not in the cache (insert it) */
    TSHMEM_LORA_EPERM = -1,    /* the key belongs to another tenant */
    TSHMEM_LORA_ENOENT = -2,   /* replace, evict: the key is not in the cache */
    TSHMEM_LORA_EEXIST = -3,   /* insert: the key is in the cache already (replace it) */
    TSHMEM_LORA_E2BIG = -4,    /* the blob is larger than a slot */
    TSHMEM_LORA_EFULL = -5,    /* every slot of the tenant's quota at the home is pinned, or
                                * the key's directory set is full */
    TSHMEM_LORA_EBUSY = -6,    /* evict: the entry is pinned */
    TSHMEM_LORA_EINVAL = -7    /* a reference this handle did not pin (forged, out of range,
                                * unpinned already), or a bad argument */
};

typedef struct tshmem_lora_cache tshmem_lora_cache_t;
typedef struct tshmem_lora_tenant tshmem_lora_tenant_t;

typedef struct {
    int n_sets;        /* directory sets per home PE (entries: n_sets x TSHMEM_LORA_WAYS) */
    int n_slots;       /* slab slots per home PE */
    size_t slot_bytes; /* bytes per slot: the largest blob */
    int n_tenants;     /* 1 .. TSHMEM_LORA_MAX_TENANTS */
    const int *quota;  /* [n_tenants]: slots per home; NULL: n_slots / n_tenants each */
} tshmem_lora_cache_config_t;

/* A pinned blob. While it is pinned its bytes do not change and its slot is not reused: data
 * points at them where tshmem_ptr reaches the home (zero-copy), else it is NULL and
 * tshmem_lora_cache_read copies them. The fields are for reading: the cache finds its own
 * record of the pin from them and refuses one it did not give out. */
typedef struct {
    uint64_t key;
    uint64_t version; /* 1 on insert, one more at each replacement */
    size_t length;    /* the blob's bytes */
    int home, slot;
    uint32_t gen;     /* the slot's generation when it was pinned */
    const void *data; /* the blob in the home's slot, or NULL off-node */
} tshmem_lora_ref_t;

/* Collective over TSHMEM_TEAM_WORLD, the same config on every PE. */
tshmem_lora_cache_t *tshmem_lora_cache_create(const tshmem_lora_cache_config_t *config);
void tshmem_lora_cache_destroy(tshmem_lora_cache_t *cache);
int  tshmem_lora_cache_home(const tshmem_lora_cache_t *cache, uint64_t key);
int  tshmem_lora_cache_set(const tshmem_lora_cache_t *cache, uint64_t key); /* its directory set */
int  tshmem_lora_cache_n_tenants(const tshmem_lora_cache_t *cache);

/* Local: a handle acting for tenant `tenant`; close drops the pins it still holds. */
tshmem_lora_tenant_t *tshmem_lora_tenant_open(tshmem_lora_cache_t *cache, int tenant);
void tshmem_lora_tenant_close(tshmem_lora_tenant_t *t);
const char *tshmem_lora_tenant_error(const tshmem_lora_tenant_t *t); /* the last refusal */

/* insert: a new key with its blob (version 1), in a free slot of the tenant's quota at the
 * key's home, evicting the tenant's own unpinned entries by CLOCK when its quota there is
 * used up. It looks in the key's directory set before it claims a slot, so the key there
 * already (EEXIST, or EPERM: another tenant's) or a full set (EFULL) is refused before any
 * eviction. The exception: when another PE inserts the same key (or fills the set) between
 * that look and the publication, the insert is refused after its claim, which at a full quota
 * has evicted one of its own tenant's unpinned entries (the one CLOCK would take next); other
 * tenants' entries are never touched. replace: the key's blob becomes this one, version + 1, written into a second slot
 * and published with one compare-and-swap: a reader sees the old blob or the new one, whole.
 * evict: the key leaves the cache (refused while it is pinned). */
int tshmem_lora_cache_insert(tshmem_lora_tenant_t *t, uint64_t key, const void *blob,
                             size_t length);
int tshmem_lora_cache_replace(tshmem_lora_tenant_t *t, uint64_t key, const void *blob,
                              size_t length);
int tshmem_lora_cache_evict(tshmem_lora_tenant_t *t, uint64_t key);
/* pin: look the key up and hold its current blob (a fetch-add on its slot's count); unpin
 * lets it go (the last holder of a replaced or evicted blob frees its slot). read copies
 * nbytes from byte offset of a pinned blob into dest (a get off-node, memcpy on it). */
int tshmem_lora_cache_pin(tshmem_lora_tenant_t *t, uint64_t key, tshmem_lora_ref_t *ref);
int tshmem_lora_cache_unpin(tshmem_lora_tenant_t *t, tshmem_lora_ref_t *ref);
int tshmem_lora_cache_read(tshmem_lora_tenant_t *t, const tshmem_lora_ref_t *ref,
                           size_t offset, void *dest, size_t nbytes);

/* What a home holds, for tests and the benchmark (gets of its words; not atomic as a whole). */
typedef struct {
    int live_entries;   /* directory entries with a blob */
    int used_slots;     /* slots owned by some tenant */
    int tenant_slots[TSHMEM_LORA_MAX_TENANTS]; /* slots owned per tenant */
    int tenant_usage[TSHMEM_LORA_MAX_TENANTS]; /* the quota counters */
    int pinned_slots;   /* slots with a count above 1 (pinned now) */
} tshmem_lora_home_stats_t;
void tshmem_lora_cache_stats(tshmem_lora_cache_t *cache, int home, tshmem_lora_home_stats_t *s);
/* For the chapter's tests (NULL otherwise): called as this PE is about to lock directory set
 * `set` of home `home`, so that a test can make other calls happen at that moment. */
extern void (*tshmem_lora_cache_lock_hook)(int home, int set);

/* ---- The serving loop (lora_serve.c) ---------------------------------------------------------
 * An adapter's blob: for each of `layers` layers, A (hidden x rank floats, row-major) then B
 * (rank x hidden floats). The base model: `layers` square layers W_l (hidden x hidden), drawn
 * from a seed. A request runs a row x through every layer: x <- x W_l + (x A_l) B_l. */
size_t tshmem_lora_adapter_bytes(int hidden, int rank, int layers);
/* Adapter `id`'s numbers (a hash of seed, id and the index), version `version` scaling them. */
void tshmem_lora_adapter_fill(float *blob, int hidden, int rank, int layers, unsigned seed,
                              int id, int version);
/* The adapter's file in dir: "<dir>/adapter-<id>.bin". write: 0 on success; read: the bytes
 * read (the whole file), -1 with errno set on failure. */
int  tshmem_lora_adapter_path(char *buf, size_t len, const char *dir, int id);
int  tshmem_lora_adapter_write(const char *dir, int id, const float *blob, size_t bytes);
long tshmem_lora_adapter_read(const char *dir, int id, void *buf, size_t bytes);
/* One layer on `rows` rows: y = x W + (x A) B, in a fixed order (the reference's bits). */
void tshmem_lora_linear(const float *x, int rows, int hidden, const float *W, const float *A,
                        const float *B, int rank, float *tmp, float *y);
/* A Zipf(s) draw over 0 .. n - 1 (0 the most frequent) from *state (xorshift). */
int  tshmem_lora_zipf(uint64_t *state, int n, double s);

typedef struct tshmem_lora_server tshmem_lora_server_t;
typedef struct {
    int hidden, rank, layers;
    int n_adapters;      /* adapter ids 0 .. n_adapters - 1; key id + 1; tenant id % n_tenants */
    unsigned seed;       /* the base model's W and the adapters' numbers */
    const char *dir;     /* where the adapters' files are */
    int max_rows;        /* the most requests one batch takes */
} tshmem_lora_server_config_t;
struct tshmem_lora_server {
    tshmem_lora_server_config_t cfg;
    tshmem_lora_cache_t *cache;
    tshmem_lora_tenant_t **tenants; /* one handle per tenant of the cache */
    int n_tenants;
    float *W;                       /* layers x hidden x hidden */
    float *x, *y, *tmp;             /* max_rows x hidden each (tmp: max_rows x rank) */
    void *staging;                  /* one adapter's bytes: a file's, or a copy from off-node */
    int *order;                     /* max_rows: a batch's requests grouped by adapter */
    /* What the loop has done (the tests and the benchmark read these). */
    uint64_t batches, requests, hits, misses, file_loads, copies, zero_copy;
    uint64_t *tenant_requests;      /* [n_tenants] */
};
/* Local (every PE makes its own; the cache is shared). */
tshmem_lora_server_t *tshmem_lora_server_create(tshmem_lora_cache_t *cache,
                                                const tshmem_lora_server_config_t *config);
void tshmem_lora_server_destroy(tshmem_lora_server_t *s);
/* Serves n requests: request i runs row i of x (n x hidden) through the model with adapter
 * adapter[i] and writes row i of y. Each adapter of the batch is switched in once, through the
 * cache (a miss loads its file and inserts it). Returns 0, or -1 if an adapter could neither
 * be found nor loaded (the message is on stderr). */
int tshmem_lora_serve_batch(tshmem_lora_server_t *s, const int *adapter, int n, const float *x,
                            float *y);
/* The one-process reference: the same request with the adapter read from its file. */
int tshmem_lora_reference(const tshmem_lora_server_config_t *config, const float *W, int adapter,
                          const float *x, float *y);
/* The base model's weights of the config's seed (layers x hidden x hidden floats). */
void tshmem_lora_base_fill(float *W, int hidden, int layers, unsigned seed);

#ifdef __cplusplus
}
#endif
#endif /* TSHMEM_LORA_CACHE_H */
