/* pe_2_1.c: the PE side of chapter 2.1's tests: communication buffers.
 *
 * Most scenarios take the buffer's shape as arguments: SCENARIO N_SLOTS SLOT_BYTES [more].
 * Every message carries bytes that depend on who sent it, to whom, and which message it is, so
 * that a lost, duplicated, reordered or torn message shows up as a wrong size or checksum.
 */
#include "pe_test.h"

#include <stdint.h>

static size_t arg_size(int argc, char **argv, int i, size_t fallback)
{
    return argc > i ? (size_t)strtoull(argv[i], NULL, 0) : fallback;
}

/* A small deterministic generator: both ends compute the same sizes from the same inputs. */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t draw(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    return mix(a * 1000003u ^ mix(b * 7919u ^ mix(c * 104729u ^ mix(d))));
}

/* The bytes of message `index` from src to dst. */
static void fill(unsigned char *p, size_t n, int src, int dst, uint64_t index)
{
    for (size_t i = 0; i < n; i++)
        p[i] = pattern(src, i, (int)(index * 31 + (uint64_t)dst));
}

static uint64_t checksum(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* Compares a received message with the expected one; one FAIL line that says which message,
 * what was expected and what was seen. Returns 1 if it matched. */
static int check_message(const char *what, int src, uint64_t index, const unsigned char *got,
                         size_t got_bytes, size_t want_bytes, unsigned char *want)
{
    int me = tshmem_my_pe();
    fill(want, want_bytes, src, me, index);
    if (got_bytes == want_bytes && memcmp(got, want, want_bytes) == 0)
        return 1;
    size_t at = 0;
    while (at < got_bytes && at < want_bytes && got[at] == want[at])
        at++;
    char diff[160] = "";
    if (at < got_bytes && at < want_bytes)
        snprintf(diff, sizeof diff, "; first difference at byte %zu: expected 0x%02x, saw 0x%02x",
                 at, want[at], got[at]);
    FAIL("%s: message #%llu from PE %d: expected %zu bytes with checksum %016llx, received %zu "
         "bytes with checksum %016llx%s (a lost, repeated, reordered or overwritten message: was "
         "a slot written again before the receiver gave back its credit?)",
         what, (unsigned long long)index, src, want_bytes,
         (unsigned long long)checksum(want, want_bytes), got_bytes,
         (unsigned long long)checksum(got, got_bytes), diff);
    return 0;
}

/* FIFO per pair: bursts that fill each ring, from every PE to every PE (itself included);
 * each message starts with its sequence number (as many low bytes of it as fit). */
static void fifo(int argc, char **argv)
{
    size_t n_slots = arg_size(argc, argv, 2, 4), slot = arg_size(argc, argv, 3, 64);
    int rounds = (int)arg_size(argc, argv, 4, 40);
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    tshmem_buffer_t *buf = tshmem_buffer_create(n_slots, slot);
    size_t cap = n_slots * slot, size = cap < 24 ? cap : 24;
    size_t chunks = (size + slot - 1) / slot, burst = n_slots / (chunks ? chunks : 1);
    uint64_t *next = calloc((size_t)n, sizeof *next), seq = 0;
    unsigned char msg[24], got[24];
    for (int r = 0; r < rounds; r++, seq += burst) {
        for (int d = 0; d < n; d++) {
            int to = (me + d) % n;
            for (uint64_t k = 0; k < burst; k++) {
                uint64_t s = seq + k;
                memcpy(msg, &s, sizeof s);
                memset(msg + 8, to, sizeof msg - 8);
                tshmem_buffer_send(buf, to, msg, size);
            }
        }
        for (int d = 0; d < n; d++) {
            int from = (me - d + n) % n;
            for (uint64_t k = 0; k < burst; k++) {
                memset(got, 0xee, sizeof got);
                size_t len = tshmem_buffer_recv(buf, from, got, sizeof got);
                uint64_t s = 0, want = next[from]++;
                memcpy(&s, got, size < 8 ? size : 8);
                uint64_t mask = size >= 8 ? ~0ull : (1ull << (8 * size)) - 1;
                CHECK_OR_STOP(len == size, "message #%llu from PE %d: received %zu bytes, "
                              "expected %zu", (unsigned long long)want, from, len, size);
                CHECK_OR_STOP(s == (want & mask), "message #%llu from PE %d carries sequence "
                              "number %llu, expected %llu: messages from one PE must be received "
                              "in the order they were sent", (unsigned long long)want, from,
                              (unsigned long long)s, (unsigned long long)(want & mask));
                CHECK_OR_STOP(size <= 8 || got[8] == (unsigned char)me, "message #%llu from PE "
                              "%d: byte 8 is %d, expected %d (the receiver's number)",
                              (unsigned long long)want, from, got[8], me);
            }
        }
    }
    VALUE("received", "%llu", (unsigned long long)(seq * (uint64_t)n));
    tshmem_buffer_destroy(buf);
    free(next);
    tshmem_finalize();
}

/* One message, fitting in the ring, from every PE to every PE each round: random sizes from 0
 * to a full ring, random order, send or reserve/commit, received through poll and recv. */
static void storm(int argc, char **argv)
{
    size_t n_slots = arg_size(argc, argv, 2, 4), slot = arg_size(argc, argv, 3, 256);
    int rounds = (int)arg_size(argc, argv, 4, 40);
    uint64_t seed = arg_size(argc, argv, 5, 1);
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    tshmem_buffer_t *buf = tshmem_buffer_create(n_slots, slot);
    size_t cap = n_slots * slot;
    unsigned char *out = malloc(cap + 1), *in = malloc(cap + 64), *want = malloc(cap + 1);
    int *order = malloc(sizeof(int) * (size_t)n), *left = malloc(sizeof(int) * (size_t)n);
    for (int r = 0; r < rounds; r++) {
        if (r % 10 == 0)
            STEP("round %d", r);
        for (int i = 0; i < n; i++)
            order[i] = i;
        for (int i = n - 1; i > 0; i--) { /* a different order of peers on every PE and round */
            int j = (int)(draw(seed, (uint64_t)me, (uint64_t)r, (uint64_t)i) % (uint64_t)(i + 1));
            int t = order[i];
            order[i] = order[j], order[j] = t;
        }
        for (int i = 0; i < n; i++) {
            int to = order[i];
            uint64_t h = draw(seed, (uint64_t)me, (uint64_t)to, (uint64_t)r);
            size_t size = (size_t)(h % (cap + 1));
            if (size <= slot && (h >> 40) % 2) {
                unsigned char *p = tshmem_buffer_reserve(buf, to, size);
                fill(p, size, me, to, (uint64_t)r);
                tshmem_buffer_commit(buf, to);
            } else {
                fill(out, size, me, to, (uint64_t)r);
                tshmem_buffer_send(buf, to, out, size);
            }
        }
        int n_left = n;
        for (int i = 0; i < n; i++)
            left[i] = order[(i + 3) % n];
        for (int pass = 0; n_left > 0; pass++) {
            int progress = 0;
            for (int i = 0; i < n_left; i++) {
                int from = left[i];
                /* Mostly poll; now and then block in recv on a sender that may not be ready. */
                uint64_t h = draw(seed, (uint64_t)me, (uint64_t)from, (uint64_t)(r * 7 + pass));
                int block = h % 5 == 0;
                if (!block && !tshmem_buffer_poll(buf, from))
                    continue;
                h = draw(seed, (uint64_t)from, (uint64_t)me, (uint64_t)r);
                size_t size = (size_t)(h % (cap + 1));
                size_t room = size + (size_t)(r % 3) * 17; /* max_bytes: the size or above */
                size_t len = tshmem_buffer_recv(buf, from, in, room);
                if (!check_message("storm", from, (uint64_t)r, in, len, size, want))
                    return;
                left[i--] = left[--n_left];
                progress = 1;
            }
            if (!progress)
                sched_yield();
        }
    }
    VALUE("rounds", "%d", rounds);
    tshmem_buffer_destroy(buf);
    free(out), free(in), free(want), free(order), free(left);
    tshmem_finalize();
}

/* Every PE but 0 sends COUNT messages of random sizes up to MAX bytes (several rings' worth)
 * to PE 0, which takes them from whoever is ready, sleeping SLOW_US after each if asked. */
static void many_to_one(int argc, char **argv)
{
    size_t n_slots = arg_size(argc, argv, 2, 4), slot = arg_size(argc, argv, 3, 256);
    uint64_t count = arg_size(argc, argv, 4, 100);
    useconds_t slow_us = (useconds_t)arg_size(argc, argv, 5, 0);
    size_t max = arg_size(argc, argv, 6, 3 * n_slots * slot + 5);
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    tshmem_buffer_t *buf = tshmem_buffer_create(n_slots, slot);
    unsigned char *msg = malloc(max + 1), *want = malloc(max + 1);
    if (me != 0) {
        for (uint64_t k = 0; k < count; k++) {
            size_t size = (size_t)(draw(7, (uint64_t)me, k, 0) % (max + 1));
            fill(msg, size, me, 0, k);
            tshmem_buffer_send(buf, 0, msg, size);
        }
        STEP("sent %llu messages", (unsigned long long)count);
    } else {
        uint64_t *next = calloc((size_t)n, sizeof *next), total = 0;
        uint64_t all = count * (uint64_t)(n - 1);
        for (int from = 1; total < all; from = from % (n - 1) + 1) {
            if (next[from] == count || !tshmem_buffer_poll(buf, from)) {
                sched_yield();
                continue;
            }
            uint64_t k = next[from]++;
            size_t size = (size_t)(draw(7, (uint64_t)from, k, 0) % (max + 1));
            size_t len = tshmem_buffer_recv(buf, from, msg, max);
            if (!check_message("many_to_one", from, k, msg, len, size, want))
                return;
            total++;
            if (slow_us)
                usleep(slow_us);
        }
        VALUE("received", "%llu", (unsigned long long)total);
        free(next);
    }
    tshmem_buffer_destroy(buf);
    free(msg), free(want);
    tshmem_finalize();
}

/* Sizes around the slot and ring boundaries, from PE 2i to PE 2i+1; an unpaired last PE sends
 * to itself the sizes that fit in its ring. Each is received with max_bytes equal to its size,
 * or (ROOMY = 1) with room for the largest: a later message that overwrote this one then shows
 * as the wrong bytes, not as a message too large for the buffer. */
static void chunks(int argc, char **argv)
{
    size_t n_slots = arg_size(argc, argv, 2, 4), slot = arg_size(argc, argv, 3, 1000);
    int roomy = arg_size(argc, argv, 4, 0) != 0;
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    tshmem_buffer_t *buf = tshmem_buffer_create(n_slots, slot);
    size_t cap = n_slots * slot;
    /* The largest: 1 MiB, or 4096 slots when slots are small (each slot is a hand-over). */
    size_t big = (slot >= 256 ? (1u << 20) : 4096 * slot) + 13;
    size_t sizes[] = {0,           1,       slot - 1, slot,         slot + 1,
                      2 * slot,    3 * slot + 7, cap - 1, cap,     cap + 1,
                      5 * cap + 3, 0,       big,                    1};
    size_t n_sizes = sizeof sizes / sizeof sizes[0];
    size_t most = big + 5 * cap + 64;
    unsigned char *msg = malloc(most), *want = malloc(most);
    int partner = me % 2 == 0 ? me + 1 : me - 1;
    for (size_t k = 0; k < n_sizes; k++) {
        if (partner >= n) { /* alone: to itself, within its ring */
            if (sizes[k] > cap)
                continue;
            fill(msg, sizes[k], me, me, k);
            tshmem_buffer_send(buf, me, msg, sizes[k]);
            size_t len = tshmem_buffer_recv(buf, me, msg, sizes[k]);
            if (!check_message("send to self", me, k, msg, len, sizes[k], want))
                return;
        } else if (me % 2 == 0) {
            fill(msg, sizes[k], me, partner, k);
            tshmem_buffer_send(buf, partner, msg, sizes[k]);
        } else {
            memset(msg, 0xee, roomy ? most : sizes[k] + 1);
            size_t len = tshmem_buffer_recv(buf, partner, msg, roomy ? most - 1 : sizes[k]);
            if (!check_message("chunks", partner, k, msg, len, sizes[k], want))
                return;
            CHECK_OR_STOP(msg[sizes[k]] == 0xee, "message #%zu from PE %d (%zu bytes): recv wrote "
                          "past the end of the message", k, partner, sizes[k]);
        }
    }
    tshmem_buffer_destroy(buf);
    free(msg), free(want);
    tshmem_finalize();
}

/* Zero copy mixed with send: bursts of one-slot messages to every PE, every other one written
 * in place through reserve/commit; the receiver must see one ordered stream. */
static void zero_copy(int argc, char **argv)
{
    size_t n_slots = arg_size(argc, argv, 2, 4), slot = arg_size(argc, argv, 3, 96);
    int rounds = (int)arg_size(argc, argv, 4, 30);
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    tshmem_buffer_t *buf = tshmem_buffer_create(n_slots, slot);
    unsigned char *msg = malloc(slot + 1), *want = malloc(slot + 1);
    uint64_t index = 0;
    for (int r = 0; r < rounds; r++) {
        for (int d = 0; d < n; d++) {
            int to = (me + d) % n;
            for (uint64_t k = index; k < index + n_slots; k++) {
                size_t size = (size_t)(k * 37 % (slot + 1));
                if (k % 2 == 0) {
                    unsigned char *p = tshmem_buffer_reserve(buf, to, size);
                    CHECK_OR_STOP(p != NULL, "tshmem_buffer_reserve(buf, %d, %zu) returned NULL",
                                  to, size);
                    fill(p, size, me, to, k);
                    tshmem_buffer_commit(buf, to);
                } else {
                    fill(msg, size, me, to, k);
                    tshmem_buffer_send(buf, to, msg, size);
                }
            }
        }
        for (int d = 0; d < n; d++) {
            int from = (me - d + n) % n;
            for (uint64_t k = index; k < index + n_slots; k++) {
                size_t len = tshmem_buffer_recv(buf, from, msg, slot);
                if (!check_message(k % 2 ? "send" : "reserve/commit", from, k, msg, len,
                                   (size_t)(k * 37 % (slot + 1)), want))
                    return;
            }
        }
        index += n_slots;
    }
    tshmem_buffer_destroy(buf);
    free(msg), free(want);
    tshmem_finalize();
}

/* Create, use and destroy buffers CYCLES times: a new buffer must start empty even where an
 * old one lay, and afterwards the heap must give back the very block it gave first. */
static void reuse(int argc, char **argv)
{
    int cycles = (int)arg_size(argc, argv, 2, 20);
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    size_t probe = 1u << 20;
    void *first = tshmem_malloc(probe);
    tshmem_free(first);
    unsigned char msg[200], want[200];
    for (int c = 0; c < cycles; c++) {
        size_t n_slots = 1 + (size_t)(c / 2 % 4), slot = (size_t)64 << (c / 2 % 3);
        tshmem_buffer_t *buf = tshmem_buffer_create(n_slots, slot);
        for (int pe = 0; pe < n; pe++)
            CHECK_OR_STOP(!tshmem_buffer_poll(buf, pe), "cycle %d: a new buffer (%zu slots of %zu "
                          "bytes) says a message from PE %d is waiting before anyone sent one: "
                          "create must start every counter at 0", c, n_slots, slot, pe);
        tshmem_barrier_all(); /* everyone has looked before anyone sends */
        size_t size = n_slots * slot < sizeof msg ? n_slots * slot : sizeof msg;
        for (int d = 0; d < n; d++) {
            int to = (me + d) % n;
            fill(msg, size, me, to, (uint64_t)c);
            tshmem_buffer_send(buf, to, msg, size);
        }
        for (int d = 0; d < n; d++) {
            int from = (me - d + n) % n;
            size_t len = tshmem_buffer_recv(buf, from, msg, sizeof msg);
            if (!check_message("reuse", from, (uint64_t)c, msg, len, size, want))
                return;
        }
        tshmem_buffer_destroy(buf);
    }
    void *again = tshmem_malloc(probe);
    CHECK(again == first, "after %d create/destroy cycles tshmem_malloc(1 MiB) returned %p, but "
          "%p before them: tshmem_buffer_destroy must give its whole block back to the heap",
          cycles, again, first);
    tshmem_free(again);
    tshmem_finalize();
}

/* poll, checked between barriers: round r, every PE sends r % (N_SLOTS + 1) messages to every
 * PE; after a barrier poll must say 1 exactly while messages from that PE are left. */
static void poll_waiting(int argc, char **argv)
{
    size_t n_slots = arg_size(argc, argv, 2, 3), slot = arg_size(argc, argv, 3, 32);
    int rounds = (int)arg_size(argc, argv, 4, 12);
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    tshmem_buffer_t *buf = tshmem_buffer_create(n_slots, slot);
    unsigned char msg[64] = {0};
    for (int r = 0; r < rounds; r++) {
        uint64_t k = (uint64_t)r % (n_slots + 1);
        for (int d = 0; d < n; d++)
            for (uint64_t i = 0; i < k; i++)
                tshmem_buffer_send(buf, (me + d) % n, msg, i % 2 ? slot : 1);
        tshmem_barrier_all(); /* every message of this round has arrived */
        for (int from = 0; from < n; from++) {
            for (uint64_t i = 0; i < k; i++) {
                CHECK_OR_STOP(tshmem_buffer_poll(buf, from) == 1, "round %d: PE %d sent %llu "
                              "messages and %llu are still waiting, but poll(%d) returned 0",
                              r, from, (unsigned long long)k, (unsigned long long)(k - i), from);
                tshmem_buffer_recv(buf, from, msg, sizeof msg);
            }
            CHECK_OR_STOP(tshmem_buffer_poll(buf, from) == 0, "round %d: all %llu messages from "
                          "PE %d were received, but poll(%d) returned 1", r,
                          (unsigned long long)k, from, from);
        }
        tshmem_barrier_all(); /* nobody sends the next round before everyone has polled */
    }
    tshmem_buffer_destroy(buf);
    tshmem_finalize();
}

/* The misuses of reserve and commit, from this PE towards PE 1. */
static void misuse_slots(tshmem_buffer_t *buf, const char *kind, const char *msg)
{
    if (strcmp(kind, "commit_without_reserve") == 0)
        tshmem_buffer_commit(buf, 1);
    else if (strcmp(kind, "reserve_twice") == 0) {
        tshmem_buffer_reserve(buf, 1, 8);
        tshmem_buffer_reserve(buf, 1, 8);
    } else {
        tshmem_buffer_reserve(buf, 1, 8);
        tshmem_buffer_send(buf, 1, msg, 8);
    }
}

/* Wrong uses; each must stop the program with a clear message before the FAIL line. */
static void bad(int argc, char **argv)
{
    const char *kind = argc > 2 ? argv[2] : "";
    pe_init();
    int me = tshmem_my_pe(), n = tshmem_n_pes();
    char msg[256] = "0123456789";
    if (strcmp(kind, "zero_slots") == 0)
        tshmem_buffer_create(0, 64);
    else if (strcmp(kind, "zero_slot_bytes") == 0)
        tshmem_buffer_create(4, 0);
    else if (strcmp(kind, "too_big_for_heap") == 0)
        tshmem_buffer_create(1024, 1u << 20);
    tshmem_buffer_t *buf = tshmem_buffer_create(2, 64);
    if (strcmp(kind, "send_pe") == 0)
        tshmem_buffer_send(buf, n, msg, 4);
    else if (strcmp(kind, "recv_pe") == 0)
        tshmem_buffer_recv(buf, -1, msg, sizeof msg);
    else if (strcmp(kind, "poll_pe") == 0)
        tshmem_buffer_poll(buf, n + 3);
    else if (strcmp(kind, "reserve_pe") == 0)
        tshmem_buffer_reserve(buf, -2, 8);
    else if (strcmp(kind, "null_buf") == 0)
        tshmem_buffer_send(NULL, 0, msg, 4);
    else if (strcmp(kind, "recv_too_small") == 0) {
        if (me == 0)
            tshmem_buffer_send(buf, 1, msg, 100);
        if (me == 1)
            tshmem_buffer_recv(buf, 0, msg, 10);
        tshmem_barrier_all(); /* PE 1 never arrives: its error ends the job */
    } else if (strcmp(kind, "commit_without_reserve") == 0 ||
               strcmp(kind, "reserve_twice") == 0 || strcmp(kind, "send_while_reserved") == 0) {
        /* PE 0 alone misuses its slots towards PE 1, so the error that ends the job is always
           PE 0's, naming PE 1 (were both PEs to err, either could be first and stop the other
           before it prints). PE 1 waits in the barrier that PE 0 never reaches. */
        if (me == 0)
            misuse_slots(buf, kind, msg);
        tshmem_barrier_all();
    } else if (strcmp(kind, "reserve_too_big") == 0)
        tshmem_buffer_reserve(buf, (me + 1) % n, 65);
    else if (strcmp(kind, "self_full") == 0) {
        for (int k = 0; k < 3; k++)
            tshmem_buffer_send(buf, me, msg, 8);
    } else if (strcmp(kind, "self_empty") == 0)
        tshmem_buffer_recv(buf, me, msg, sizeof msg);
    FAIL("the bad call '%s' was accepted", kind);
}

int main(int argc, char **argv)
{
    static const struct scenario list[] = {
        {"fifo", fifo},       {"storm", storm},         {"many_to_one", many_to_one},
        {"chunks", chunks},   {"zero_copy", zero_copy}, {"reuse", reuse},
        {"poll", poll_waiting}, {"bad", bad},         {NULL, NULL},
    };
    return pe_main(argc, argv, list);
}
