/* tshmem_internal.h: the runtime's private state and the helpers every chapter shares.
 *
 * This is course code: you read it, you do not edit it. Its sections follow the course, each
 * headed with the chapter that owns it and the folder where that chapter lives. Chapters fill
 * in the state (1.1 the PEs, nodes and teams; 1.2 the segment, slices and allocator) and later
 * chapters use it. The helpers marked "provided" are written for you: errors.c, settings.c,
 * calls.c and words.c (1.1), spin.c (1.4), thread.c (2.4) and the others their sections name. Two things come
 * after chapters that use them: the off-node calls that 1.3 and 1.4 make are chapter 2.5's,
 * and the reserved area at the start of every slice, which holds words of many chapters, is
 * laid out last.
 */
#ifndef TSHMEM_INTERNAL_H
#define TSHMEM_INTERNAL_H

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stddef.h>

#include "tshmem.h"

/* ---- 1.1: the runtime and its bootstrap (week1/1.1-init) ------------------------------------- */
#define TSHMEM_MAX_TEAMS    16    /* team handles 0 .. 15; 0 and 1 are WORLD and NODE */

struct tshmem_team {
    int n_pes;         /* members; 0 means this handle is not in use */
    int my_pe;         /* this PE's number in the team, -1 if not a member */
    int *pes;          /* pes[i] = the world PE number of team PE i */
    uint64_t sync_seq; /* how many times this PE entered tshmem_team_sync on this team */
};

struct tshmem_block;    /* 1.2: one block of the user heap (below) */
struct tshmem_reserved; /* 1.2: the runtime's words at the start of a slice (the last section) */

struct tshmem_state {
    /* 1.1: bootstrap */
    int initialized;       /* between tshmem_init and tshmem_finalize */
    int finalized;         /* tshmem_finalize has run */
    int mpi_owned;         /* tshmem_init called MPI_Init, so tshmem_finalize calls MPI_Finalize */
    int my_pe, n_pes;
    int debug;             /* TSHMEM_DEBUG=1: the extra checks (book "Debugging") */
    long hang_warn;        /* TSHMEM_HANG_WARN, checked and read once by tshmem_init */
    MPI_Comm comm;         /* the runtime's own copy of MPI_COMM_WORLD */
    MPI_Comm node_comm;    /* the PEs of this (virtual) node */
    int node, n_nodes;     /* this PE's node number, and how many nodes the job has */
    int *pe_node;          /* pe_node[pe]: node number of every PE */
    int *pe_local;         /* pe_local[pe]: index of every PE within its node */
    struct tshmem_team teams[TSHMEM_MAX_TEAMS];

    /* 1.2: symmetric heap */
    char segment_name[96]; /* "/tshmem-<uid>-<job>-<node>" while it exists in /dev/shm */
    char *segment;         /* this node's segment, mapped: one slice per PE of the node */
    size_t segment_bytes;
    size_t slice_bytes;    /* bytes per PE: TSHMEM_RESERVED_BYTES + the user heap, rounded up */
    size_t heap_bytes;     /* the user heap: TSHMEM_SYMMETRIC_SIZE bytes after the reserved area */
    char *slice;           /* this PE's own slice inside the segment */
    struct tshmem_reserved *reserved; /* == (void *)slice */
    struct tshmem_block *blocks;      /* the allocator's list of heap blocks */
};

extern struct tshmem_state tshmem_g;

void tshmem_require_live(const char *func);  /* stop unless between init and finalize */

/* The bootstrap barrier: MPI's, with full fences so that plain stores made before it are seen
 * by every PE after it. Used where chapter 1.4's barrier cannot be assumed (init, malloc). */
static inline void tshmem_boot_barrier(MPI_Comm comm)
{
    atomic_thread_fence(memory_order_seq_cst);
    MPI_Barrier(comm);
    atomic_thread_fence(memory_order_seq_cst);
}

/* -- Provided: errors and argument checks (week1/1.1-init/errors.c) ---------------------------- */
/* Prints "tshmem: PE <pe>: <func>: <message>" and stops the whole job with TSHMEM_EXIT_ERROR. */
_Noreturn void tshmem_fail(const char *func, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Prints "tshmem: PE <pe>: <func>: <message>" and carries on. */
void tshmem_warn(const char *func, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Called by a stub: names the chapter, the book section and the task, then stops the job. */
_Noreturn void tshmem_todo(const char *chapter, const char *section, const char *task,
                           const char *func, const char *file, int line);
#define TSHMEM_TODO(section, task)                                                           \
    tshmem_todo(TSHMEM_CHAPTER, section, task, __func__, __FILE__, __LINE__)

/* The two checks every put, get and atomic makes are inline: a compare or two on the way
 * through, where a call into errors.c was a visible part of an 8-byte put and quiet (the
 * figures: book/performance.md, "Why the waits and the proxy are tuned as they are"). Their
 * messages are out of line (tshmem_bad_*, which stop the job). */
_Noreturn void tshmem_bad_pe(const char *func, int pe);
_Noreturn void tshmem_bad_symmetric(const char *func, const char *what, const void *addr,
                                    size_t nbytes);
static inline void tshmem_check_pe(const char *func, int pe) /* 0 <= pe < n_pes */
{
    if (__builtin_expect(pe < 0 || pe >= tshmem_g.n_pes, 0))
        tshmem_bad_pe(func, pe);
}
/* tshmem_check_symmetric(func, what, addr, nbytes): the address check, inline, after the heap's
 * layout below (1.2). */
void tshmem_check_team(const char *func, tshmem_team_t team); /* a team handle in use */
void tshmem_check_cmp(const char *func, int cmp);         /* one of TSHMEM_CMP_* */
void tshmem_check_sig_op(const char *func, int sig_op);   /* TSHMEM_SIGNAL_SET or _ADD */
/* Under TSHMEM_DEBUG=1: stops unless every PE passed the same size (collective). */
void tshmem_check_same_size(const char *func, size_t size);
/* Writes "12 KiB", "3.5 MiB" into buf, for messages. */
const char *tshmem_bytes_str(size_t bytes, char *buf, size_t len);
/* Asks the kernel to kill this PE if its launcher dies, so a crash never leaves orphans, lets
 * the grader's debugger attach to take a hang report's backtrace, and ignores SIGPIPE (a write
 * to a dead peer's socket must not kill this PE before the launcher names the dead one). */
void tshmem_process_setup(void);

/* -- Provided: settings (week1/1.1-init/settings.c) -------------------------------------------- */
/* Every TSHMEM_* variable is described in one table there; bad values stop with a message. */
size_t tshmem_env_size(const char *name);   /* "64M" -> 67108864 */
long tshmem_env_int(const char *name);
const char *tshmem_env_str(const char *name);
int tshmem_env_flag(const char *name);      /* 0/1 */
void tshmem_env_print(void);                /* the table with current values (TSHMEM_DEBUG=1) */
void tshmem_env_check(void); /* tshmem_init: every setting's value is valid, or it stops */

/* -- Provided: collective calls as every PE records them (week1/1.1-init/calls.c) -------------
 * Every collective of the API (barriers, tshmem_malloc and tshmem_free, the reductions,
 * fcollect, broadcast, splits, tshmem_finalize ...) opens with TSHMEM_COLLECTIVE, in the code
 * around your task. It does three things:
 *   - it marks the calling thread as inside the runtime (tshmem_call_now) until the call
 *     returns, and only then may put, get, signal and wait reach the reserved area
 *     (tshmem_check_symmetric, 1.2): the runtime's flags are out of a program's reach;
 *   - it records the call in this PE's reserved area (struct tshmem_call_records): its number
 *     on the team and the arguments every PE must pass alike, so that a PE can compare its call
 *     with a peer's: at the end of a call whose arguments changed since the last one (one
 *     peer's record), during a long wait (the team's records: a mismatch stops the job, the PEs
 *     that have not arrived go into the hang warning), and under TSHMEM_DEBUG=1 on entry, with
 *     every team PE (book "Debugging" has the table of what is checked when);
 *   - it names the call in hang warnings: a wait inside it says which collective waits, on
 *     which team, and for whom.
 * Calls made inside another (a barrier's team_sync, the hierarchical allreduce's own
 * collectives) only mark the thread: the program's call is the one recorded. */
enum tshmem_fn {
    TSHMEM_FN_BARRIER_ALL, TSHMEM_FN_BARRIER, TSHMEM_FN_SYNC_ALL, TSHMEM_FN_TEAM_SYNC,
    TSHMEM_FN_MALLOC, TSHMEM_FN_CALLOC, TSHMEM_FN_ALIGN, TSHMEM_FN_FREE, TSHMEM_FN_FINALIZE,
    TSHMEM_FN_RING_SHIFT, TSHMEM_FN_RING_BROADCAST, TSHMEM_FN_RING_TOKEN,
    TSHMEM_FN_RING_BROADCAST_PIPELINED,
    TSHMEM_FN_ALLREDUCE, TSHMEM_FN_FLOAT_SUM_REDUCE, TSHMEM_FN_DOUBLE_SUM_REDUCE,
    TSHMEM_FN_INT64_SUM_REDUCE, TSHMEM_FN_FLOAT_MAX_REDUCE,
    TSHMEM_FN_FCOLLECTMEM, TSHMEM_FN_FCOLLECTMEM_ALGO, TSHMEM_FN_BROADCASTMEM,
    TSHMEM_FN_BROADCASTMEM_ALGO,
    TSHMEM_FN_ALLREDUCE_NB, TSHMEM_FN_FCOLLECTMEM_NB,
    TSHMEM_FN_TEAM_SPLIT_STRIDED, TSHMEM_FN_TEAM_DESTROY,
    TSHMEM_FN_ALLTOALLMEM, TSHMEM_FN_ALLTOALLMEM_ALGO,
    TSHMEM_FN_REDUCESCATTER, TSHMEM_FN_FLOAT_SUM_REDUCESCATTER,
    TSHMEM_FN_DOUBLE_SUM_REDUCESCATTER,
    TSHMEM_FN_COUNT
};
/* One call in progress on this thread (on its stack). */
struct tshmem_call {
    enum tshmem_fn fn;
    tshmem_team_t team;
    uint64_t number;           /* its number on the team, 1, 2, 3 ...; 0: not recorded */
    uint64_t a, b, c;          /* what every PE must pass alike (calls.c's table names them) */
    int compare_at_end;        /* compare with a peer when the call ends (calls.c says when) */
    struct tshmem_call *outer; /* the call this one runs inside, or NULL */
};
/* The calls this thread is in, innermost first; NULL in the program's own code. */
extern _Thread_local struct tshmem_call *tshmem_call_now __attribute__((tls_model("initial-exec")));
/* The record and the comparisons, out of line: only for the program's own call. */
void tshmem_call_record(struct tshmem_call *call);
void tshmem_call_end(struct tshmem_call *call);
/* Inline, because every collective pays them: a few stores, and a call for the record. */
static inline void tshmem_call_enter(struct tshmem_call *call, enum tshmem_fn fn,
                                     tshmem_team_t team, uint64_t a, uint64_t b, uint64_t c)
{
    *call = (struct tshmem_call){fn, team, 0, a, b, c, 0, tshmem_call_now};
    tshmem_call_now = call;
    if (!call->outer)
        tshmem_call_record(call);
}
static inline void tshmem_call_leave(struct tshmem_call *call)
{
    if (call->compare_at_end)
        tshmem_call_end(call); /* still marked as inside the call meanwhile */
    tshmem_call_now = call->outer;
}
/* A helper thread doing a call's work (2.4's progress thread): the mark and the name, no
 * record (the program's thread made it when it started the call). */
static inline void tshmem_call_enter_work(struct tshmem_call *call, enum tshmem_fn fn,
                                          tshmem_team_t team)
{
    *call = (struct tshmem_call){fn, team, 0, 0, 0, 0, 0, tshmem_call_now};
    tshmem_call_now = call;
}
/* Opens the call for the rest of the enclosing block; it ends when the block does, however the
 * function returns. At most one per block. */
#define TSHMEM_COLLECTIVE(fn, team, a, b, c)                                                  \
    struct tshmem_call tshmem_call_ __attribute__((cleanup(tshmem_call_leave)));             \
    tshmem_call_enter(&tshmem_call_, fn, team, (uint64_t)(a), (uint64_t)(b), (uint64_t)(c))
#define TSHMEM_COLLECTIVE_WORK(fn, team)                                                      \
    struct tshmem_call tshmem_call_ __attribute__((cleanup(tshmem_call_leave)));             \
    tshmem_call_enter_work(&tshmem_call_, fn, team)
/* For spin.c: called once in a while by a wait that has lasted long. Inside a collective it
 * reads the team's records and stops the job if a PE is in the same call with other arguments
 * (or in another collective); when `report` is set it warns, naming the call, the word `addr`
 * and the PEs that have not arrived. Returns 0 outside a collective (spin.c then warns the
 * plain way). */
int tshmem_call_check_wait(const void *addr, long waited_s, int report);
/* "the barrier flag of round 1 on TSHMEM_TEAM_WORLD, which team PE 1 (world PE 1) writes": what
 * a word of the segment is, for messages (week1/1.1-init/words.c). */
const char *tshmem_word_str(const void *addr, char *buf, size_t len);
/* Stops the call if [addr, addr + nbytes) starts in the reserved area: for a collective whose
 * own check of a buffer (tshmem_check_symmetric) runs while its call is open. */
void tshmem_refuse_reserved(const char *func, const char *what, const void *addr, size_t nbytes);

/* ---- 1.2: the symmetric heap (week1/1.2-symmetric-heap) -------------------------------------- */
#define TSHMEM_HEAP_ALIGN   256   /* every tshmem_malloc block starts on a 256-byte boundary */
#define TSHMEM_SLICE_ALIGN  (2u << 20) /* slices start on 2 MiB boundaries: tshmem_align up to
                                        * 2 MiB gives the same offset on every PE */
#define TSHMEM_RESERVED_BYTES (2u << 20) /* the runtime's own words at the start of each slice */

/* 1.1's address check (errors.c says what it prints): addr .. addr + nbytes lies in this PE's
 * symmetric heap, the user part of its slice after the runtime's reserved area. One subtraction
 * and two compares, the unsigned wrap-around making "below the heap" a huge offset too.
 *
 * The runtime's own barriers and collectives reach their words in the reserved area through the
 * same public calls (tshmem_signal_op on a barrier flag), so a range outside the heap gets a
 * second test before it is refused: it passes if it lies in the reserved area while this thread
 * runs one of the runtime's collective calls (tshmem_call_now, 1.1), never for a program's own
 * put, get, atomic or signal. Why a marker rather than internal copies of put, signal and wait
 * for the runtime's use: the calls a learner writes in 1.3 and 1.4 stay the ones that every
 * later chapter builds on, the user heap's test stays as cheap as it was, and the same marker
 * tells a hang warning which collective a wait belongs to. */
static inline void tshmem_check_symmetric(const char *func, const char *what, const void *addr,
                                          size_t nbytes)
{
    uintptr_t off = (uintptr_t)addr - ((uintptr_t)tshmem_g.slice + TSHMEM_RESERVED_BYTES);
    if (__builtin_expect(off > tshmem_g.heap_bytes || nbytes > tshmem_g.heap_bytes - off, 0)) {
        uintptr_t at = (uintptr_t)addr - (uintptr_t)tshmem_g.slice; /* from the slice's start */
        if (!tshmem_call_now || !tshmem_g.slice || at >= TSHMEM_RESERVED_BYTES ||
            nbytes > TSHMEM_RESERVED_BYTES - at)
            tshmem_bad_symmetric(func, what, addr, nbytes);
    }
}

/* One block of the user heap. The blocks, in offset order, cover the whole user heap; every PE
 * keeps its own list in private memory, and because every PE makes the same calls in the same
 * order, the lists are equal and so are the offsets (chapter 1.2). */
struct tshmem_block {
    size_t offset; /* from the start of the slice */
    size_t size;
    int used;
    struct tshmem_block *next;
};

void tshmem_heap_create(void);               /* create and map this node's segment */
void tshmem_heap_destroy(void);              /* unmap it */
void *tshmem_heap_peer(const void *addr, int pe); /* addr's twin on pe; NULL if off-node */

/* ---- 1.3: put and get (week1/1.3-put-get) ---------------------------------------------------- */
/* rma.c reaches a PE of its node through tshmem_heap_peer (1.2) and checks its arguments with
 * tshmem_check_pe and tshmem_check_symmetric (1.1); a PE on another node through chapter 2.5's
 * tshmem_offnode_put, _get and _quiet (below), which stop with a message that names 2.5 until
 * it is written. Nothing of its own here. */

/* ---- 1.4: signals, atomics, barriers and waits (week1/1.4-signals-barriers) ------------------ */
#define TSHMEM_CACHE_LINE   64    /* one flag per cache line: two writers never share a line */
#define TSHMEM_MAX_ROUNDS   24    /* enough dissemination rounds for 2^24 PEs */

/* A word that one PE writes and another waits on, alone on its cache line. */
struct tshmem_flag {
    _Alignas(TSHMEM_CACHE_LINE) uint64_t value;
    char pad[TSHMEM_CACHE_LINE - sizeof(uint64_t)];
};

/* A uint64_t of the symmetric heap seen as a C11 atomic object. The heap is plain memory that
 * every PE maps; all concurrent accesses to a signal word go through this view. */
static inline _Atomic uint64_t *tshmem_atomic(const uint64_t *word)
{
    return (_Atomic uint64_t *)(uintptr_t)word;
}

/* A signal or atomic word: symmetric (tshmem_check_symmetric) and 8-byte aligned, since it is
 * read and written as one C11 atomic uint64_t. Inline; the message is out of line (errors.c). */
_Noreturn void tshmem_bad_alignment(const char *func, const char *what, const void *addr);
static inline void tshmem_check_word(const char *func, const char *what, const uint64_t *addr)
{
    tshmem_check_symmetric(func, what, addr, sizeof *addr);
    if (__builtin_expect((uintptr_t)addr % sizeof *addr != 0, 0))
        tshmem_bad_alignment(func, what, addr);
}

/* The atomics of atomic.c, by kind; chapter 2.5's requests carry them across nodes. */
enum tshmem_amo {
    TSHMEM_AMO_FETCH, TSHMEM_AMO_SET, TSHMEM_AMO_ADD, TSHMEM_AMO_FETCH_ADD,
    TSHMEM_AMO_SWAP, TSHMEM_AMO_COMPARE_SWAP
};

/* -- Provided: spin-waits that back off (week1/1.4-signals-barriers/spin.c) -------------------- */
struct tshmem_spin {
    unsigned long spins;
    double started;     /* seconds, when the wait began spinning for long */
    const char *func;
    const void *addr;
    int warned;
};
void tshmem_spin_init(struct tshmem_spin *spin, const char *func, const void *addr);
/* One turn of a wait loop: cpu pause at first, then sched_yield, then short sleeps; says what
 * it waits for after TSHMEM_HANG_WARN seconds. */
void tshmem_spin_pause(struct tshmem_spin *spin);
/* The CPU's hint that this thread is spinning (x86 pause, ARM yield): the core lets its other
 * hardware thread run, and the wait's loads do not flood the memory system. */
static inline void tshmem_cpu_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}
/* One turn of a wait of this PE, besides the look at its word, for a chapter that gives waits
 * more to do (2.5: serve the requests of other nodes). `turn` counts a short wait's turns from
 * 1; TSHMEM_WAIT_LONG is a long wait's look, once in 64 of its sleeps, which must not pause.
 * Returns 1 when it took the turn (it served something, so the wait looks at once, or it paused
 * its own way), 0 to let tshmem_spin_pause pause as on one node. */
typedef int tshmem_wait_hook_fn(unsigned long turn);
#define TSHMEM_WAIT_LONG 0ul
/* NULL, or the hook every wait calls (spin.c says why a pointer). A chapter sets it with a
 * release store once the state its hook reads is written; spin.c loads it with acquire. */
extern tshmem_wait_hook_fn *_Atomic tshmem_wait_hook;

/* ---- 1.5: the ring (week1/1.5-ring) ---------------------------------------------------------- */
/* The ring programs keep their flags in the reserved area (ring[], the last section); nothing
 * of their own here. */

/* ---- 2.1: communication buffers (week2/2.1-buffers) ------------------------------------------
 * One tshmem_malloc block per buffer, with the same layout on every PE:
 *
 *   tail[0 .. n_pes-1]   tail[s] on PE r: slots that sender s has filled in r's ring for s.
 *                        Written only by s (a release store after the slot), read by r.
 *   head[0 .. n_pes-1]   head[r] on PE s: slots that receiver r has emptied of its ring for s,
 *                        the credits. Written only by r (after reading the slot), read by s.
 *   ring[0 .. n_pes-1]   ring[s] on PE r: n_slots slots that only s writes and only r reads.
 *
 * A slot is a header (one cache line) followed by slot_bytes of payload. Every counter counts
 * slots since the buffer was created and only grows; slot number k sits at k % n_slots. */
#define TSHMEM_BUFFER_MAGIC 0x62756666657221ull /* "buffer!": a live tshmem_buffer_t */

struct tshmem_slot_header {
    _Alignas(TSHMEM_CACHE_LINE) uint64_t bytes; /* payload bytes in this slot (<= slot_bytes) */
    uint64_t msg_bytes;                         /* bytes of the whole message */
    uint64_t chunk;                             /* 0 in a message's first slot, then 1, 2, ... */
    uint64_t last;                              /* 1 in a message's last slot */
};

struct tshmem_buffer {
    uint64_t magic;       /* TSHMEM_BUFFER_MAGIC while the buffer lives */
    size_t n_slots, slot_bytes;
    size_t slot_stride;   /* header + payload, rounded up to whole cache lines */
    size_t ring_bytes;    /* n_slots * slot_stride */
    int n_pes;
    void *block;          /* the symmetric block (tshmem_malloc) */
    struct tshmem_flag *tail, *head; /* in the block, as above */
    char *rings;          /* in the block: ring s starts at rings + s * ring_bytes */
    /* Private to this PE: what it has done and what it last saw, per peer. */
    uint64_t *sent;       /* sent[r]: slots this PE filled in r's ring (the tail it wrote) */
    uint64_t *head_seen;  /* head_seen[r]: the credits it last read from its head[r] */
    uint64_t *taken;      /* taken[s]: slots it emptied from its ring for s (the head it wrote) */
    uint64_t *tail_seen;  /* tail_seen[s]: the tail[s] it last read */
    size_t *reserved;     /* reserved[r]: bytes of an open reserve to r, or TSHMEM_NO_RESERVE */
    char **staging;       /* staging[r]: slot_bytes of private memory for a zero-copy send to a
                           * PE off this node (allocated at its first reserve), else NULL */
};
#define TSHMEM_NO_RESERVE ((size_t)-1)

/* Provided (week2/2.1-buffers/buffer.c): stops with a clear message unless buf is a live buffer. */
void tshmem_buffer_check(const char *func, const tshmem_buffer_t *buf);

/* ---- 2.2: the allreduce algorithms (week2/2.2-allreduce) ------------------------------------ */
#define TSHMEM_COLL_MAX_PES 256   /* per-source words of the collectives' flag areas */
#define TSHMEM_SCRATCH_BYTES (1u << 20) /* per PE: where collectives receive partial results */

/* The flags of one team's collectives (2.2, 2.3). Every word has exactly one writer (named
 * beside it) and only ever grows: a call waits for "at least this sequence number", so no flag
 * is reset between calls. */
struct tshmem_coll_flags {
    struct tshmem_flag ring_data;                  /* written by my ring predecessor */
    struct tshmem_flag ring_ack;                   /* written by my ring successor */
    struct tshmem_flag round[TSHMEM_MAX_ROUNDS];   /* round r: written by that round's partner */
    struct tshmem_flag extra[8];                   /* the algorithm's own (non-power-of-two fix-up) */
    _Alignas(TSHMEM_CACHE_LINE) uint64_t from[TSHMEM_COLL_MAX_PES]; /* from[i]: written by team PE i */
};

/* Recursive doubling's eager area (2.2), one per team: a call that fits one of its slots lands
 * here and needs no entry signal. It is cut as the scratch is (round r, parity x at slot
 * 2r + x; the extra's data after them, where the team has extras), the slot a multiple of 64
 * bytes, so the largest such call depends on the team's size: 3008 bytes on 2 PEs, 960 on 8,
 * 704 on 16. Only recursive doubling on this team writes it, and round r of the team's k-th
 * small call lands at parity k % 2: a partner can be one such call ahead of me, never two (it
 * needs my round-r piece of the next one first). */
#define TSHMEM_RD_EAGER_BYTES 6016
struct tshmem_rd_eager {
    _Alignas(TSHMEM_CACHE_LINE) char area[TSHMEM_RD_EAGER_BYTES];
};

/* One allreduce call, checked once (tshmem_reduce_begin in allreduce.c) and handed to one of
 * the algorithms. Every PE of the team describes the same call. */
struct tshmem_reduce_call {
    const char *func;            /* the public function the user called, for messages */
    tshmem_team_t team;
    const struct tshmem_team *t; /* t->pes[j]: the world PE number of team PE j */
    int me, n;                   /* this PE's number in the team, and the team's size */
    char *dest;
    const char *source;          /* == dest when the call is in place */
    size_t count, elem, bytes;   /* elements, bytes per element, count * elem */
    enum tshmem_dtype dtype;
    enum tshmem_op op;
    int on_node;                 /* 1 if every team PE shares this node (tshmem_ptr reaches it) */
    uint64_t seq;                /* this call's number on this team: 1, 2, 3, ... on every PE */
    struct tshmem_coll_flags *flags; /* the team's reduce flags (this PE's copy) */
};

/* The value a flag of this call carries at step `step`: the call number in the high 48 bits
 * (years of back-to-back calls), the step in the low 16. Later calls, and later steps of a call,
 * always compare greater, so a flag only grows and a wait for ">= tag" can never be satisfied
 * by an older call. No call takes 2^16 steps: tshmem_reduce_begin refuses more than
 * TSHMEM_REDUCE_MAX_BYTES, and the pieces and chunks of every algorithm are at least 32 KiB
 * (or few). */
#define TSHMEM_TAG_STEP_BITS 16
#define TSHMEM_REDUCE_MAX_BYTES ((size_t)1 << 31) /* 2 GiB per call */
static inline uint64_t tshmem_coll_tag(uint64_t seq, uint64_t step)
{
    return seq << TSHMEM_TAG_STEP_BITS | step;
}

void tshmem_reduce_begin(struct tshmem_reduce_call *c, const char *func, tshmem_team_t team,
                         void *dest, const void *source, size_t count, enum tshmem_dtype dtype,
                         enum tshmem_op op);
/* Every other team PE's from[me] = tag(seq, step); wait until every from[j] >= tag(seq, step). */
void tshmem_reduce_announce(const struct tshmem_reduce_call *c, uint64_t step);
void tshmem_reduce_wait_all(const struct tshmem_reduce_call *c, uint64_t step);
/* Team PE j's copy of [addr, addr + len) of a symmetric object: a direct pointer into its
 * slice when it shares our node, else the bytes fetched with tshmem_getmem into bounce. */
const void *tshmem_reduce_peek(const struct tshmem_reduce_call *c, int j, const void *addr,
                               size_t len, void *bounce);
int tshmem_allreduce_oneshot(const struct tshmem_reduce_call *c);            /* oneshot.c */
int tshmem_allreduce_recursive_doubling(const struct tshmem_reduce_call *c); /* recursive_doubling.c */
int tshmem_allreduce_ring(const struct tshmem_reduce_call *c);               /* ring.c */
int tshmem_allreduce_twoshot(const struct tshmem_reduce_call *c);            /* twoshot.c */

/* -- Provided: local reduction arithmetic (week2/2.2-allreduce/combine.c) ---------------------- */
size_t tshmem_dtype_size(enum tshmem_dtype dtype);  /* 0 if dtype is not a TSHMEM_DTYPE_* */
/* inout[i] = inout[i] (op) in[i] for i < count; inout and in do not overlap. */
void tshmem_reduce_local(enum tshmem_dtype dtype, enum tshmem_op op, void *inout, const void *in,
                         size_t count);
/* out[i] = a[i] (op) b[i] for i < count; out may be a or b, and overlaps neither otherwise. */
void tshmem_reduce_local3(enum tshmem_dtype dtype, enum tshmem_op op, void *out, const void *a,
                          const void *b, size_t count);

/* ---- 2.3: fcollect and broadcast (week2/2.3-allgather) --------------------------------------- */
/* One-shot fcollect (2.3): a PE copies a piece of its block here and publishes it; its peers
 * read it from here. Two per team, used in turn, so a PE never waits for its readers. */
#define TSHMEM_STAGE_BYTES 4096
struct tshmem_stage {
    struct tshmem_flag ready; /* written by this PE only: the tag of the piece now in data */
    _Alignas(TSHMEM_CACHE_LINE) char data[TSHMEM_STAGE_BYTES];
};

/* -- Provided: what fcollect and broadcast share (week2/2.3-allgather/collect.c) --------------- */
/* One call of a chapter 2.3 collective, as this member of the team sees it. */
struct tshmem_collect_call {
    const char *func;                /* the public function, for messages */
    tshmem_team_t team;
    const struct tshmem_team *t;     /* t->pes[i]: the world PE number of team PE i */
    int me, n;                       /* my team PE number, and the team's size */
    uint64_t seq;                    /* this call's number on this team: 1, 2, 3 ... */
    struct tshmem_coll_flags *flags; /* tshmem_g.reserved->collect[team]: my copy of the team's
                                      * flag words; a peer's twin has the same address */
};
/* Starts a call: stops unless tshmem is live, the team exists and this PE is a member, then
 * numbers the call. Collectives on a team are called in the same order on every member, so
 * every member gives the same call the same number. */
void tshmem_collect_begin(struct tshmem_collect_call *call, const char *func, tshmem_team_t team);
/* The value a 2.3 signal carries: the call's number above, a step or chunk count below. It
 * grows from step to step and from call to call, so a waiter asks for "at least this" (GE). */
static inline uint64_t tshmem_collect_tag(uint64_t seq, uint64_t step)
{
    return seq << 32 | step;
}
/* The steps of a word from[i] (written by team PE i only) within one call. */
enum {
    TSHMEM_COLLECT_CREDIT = 0, /* "I am in this call: you may write into my dest" */
    TSHMEM_COLLECT_DATA = 1,   /* "my data is in your dest" / "my buffer is ready to read" */
    TSHMEM_COLLECT_DONE = 2    /* "I have finished reading your memory" */
};
/* The world PE number of team PE i (what put, get and signal_op take). */
static inline int tshmem_collect_pe(const struct tshmem_collect_call *call, int i)
{
    return call->t->pes[i];
}
/* Stops unless [addr, addr + nbytes) is symmetric and lies inside one tshmem_malloc block:
 * "dest too small" is caught here, not as a corrupted neighbour block. */
void tshmem_collect_check_room(const char *func, const char *what, const void *addr,
                               size_t nbytes);
/* The team's PEs grouped by node, for the hybrid algorithms. Groups are numbered in the order
 * of their first team PE; the members of group g are member[first[g]] .. member[first[g+1]-1],
 * in team order, and the first of them is the group's leader. */
struct tshmem_collect_nodes {
    int n_groups, my_group;
    int group_of[TSHMEM_COLL_MAX_PES];  /* team PE -> its group */
    int first[TSHMEM_COLL_MAX_PES + 1];
    int member[TSHMEM_COLL_MAX_PES];
};
void tshmem_collect_nodes(const struct tshmem_collect_call *call, struct tshmem_collect_nodes *nodes);
/* For tests on one machine: when not 0, tshmem_collect_nodes groups the team's PEs as if they
 * were on different nodes: k > 0 makes runs of k consecutive team PEs, k < 0 puts team PE i in
 * group i mod -k. Every PE must set the same value. Memory stays shared, so the hybrid's
 * leaders' ring and pulls run for real before chapter 2.5. 0 (the default): the real nodes. */
extern int tshmem_collect_test_groups;

/* -- The selector (week2/2.3-allgather/select.c) ----------------------------------------------- */
enum tshmem_collect_op { TSHMEM_COLLECT_FCOLLECT, TSHMEM_COLLECT_BROADCAST };
/* The algorithm TSHMEM_ALGO_AUTO runs for this call; nbytes is the size per PE (fcollect) or the
 * message (broadcast). Every member picks the same one: it depends on collective arguments only. */
enum tshmem_algo tshmem_collect_select(enum tshmem_collect_op op,
                                       const struct tshmem_collect_call *call, size_t nbytes);

/* ---- 2.4: non-blocking collectives (week2/2.4-overlap) --------------------------------------
 * A request is one non-blocking collective: checked and numbered by the program's thread
 * (tshmem_allreduce_nb, tshmem_fcollectmem_nb), carried out by the progress thread
 * (tshmem_nb_allreduce_run), waited for by the program. Requests live in a fixed pool of
 * TSHMEM_MAX_REQUESTS. */
#define TSHMEM_REQUEST_MAGIC 0x6e622d7265717565ull /* "nb-reque": a request in use */
enum tshmem_nb_kind {
    TSHMEM_NB_ALLREDUCE, /* tshmem_allreduce_nb (2.4) */
    TSHMEM_NB_FCOLLECT   /* tshmem_fcollectmem_nb (3.4's true allgather): call.bytes is each
                          * PE's block, call.dest holds n of them; dtype and op unused */
};
struct tshmem_request {
    uint64_t magic;                 /* TSHMEM_REQUEST_MAGIC while in use, 0 when free */
    enum tshmem_nb_kind kind;
    struct tshmem_reduce_call call; /* the checked call; call.seq is the first chunk number */
    size_t n_chunks;                /* how many chunk numbers the call takes */
    size_t bytes;                   /* what it brings into dest (an allreduce: its vector; an
                                     * fcollect: n blocks): "small" means this (request.c) */
    int done;                       /* set by the progress thread, under the queue's lock */
    struct tshmem_request *next;    /* the queue of requests waiting for the progress thread */
};
/* What the progress thread runs for one request (nb_allreduce.c): an allreduce's reduce-scatter
 * then allgather, chunk by chunk, through the double-buffered nb_landing zone; an fcollect goes
 * on to tshmem_nb_fcollect_run. */
void tshmem_nb_allreduce_run(const struct tshmem_request *req);
/* 3.4 (week3/3.4-zero/fcollect_nb.c): a non-blocking fcollect's one chunk number, carried out by
 * the progress thread: every PE's block put straight into every team PE's dest. */
void tshmem_nb_fcollect_run(const struct tshmem_request *req);
/* How many chunks a call of `bytes` bytes of elem-byte elements takes on a team of n PEs. */
size_t tshmem_nb_chunks(size_t bytes, size_t elem, int n);
/* Called by tshmem_finalize first: stops if requests are in flight, then ends the thread. */
void tshmem_progress_finalize(void);
/* How many non-blocking collectives this PE has started (for the training step's checks). */
uint64_t tshmem_nb_started(void);

/* The flags of one team's non-blocking allreduces (2.4), apart from the blocking ones' so that
 * the progress thread and the program never share a word. Each value is a chunk number of the
 * team's non-blocking calls (1, 2, 3, ... over every call), so it only grows; from[i] style:
 * word [i] is written by team PE i only. */
struct tshmem_nb_flags {
    _Alignas(TSHMEM_CACHE_LINE) uint64_t grant[TSHMEM_COLL_MAX_PES];  /* "my landing buffer for
                                                                       * chunk c is free" (an
                                                                       * fcollect: "my dest") */
    _Alignas(TSHMEM_CACHE_LINE) uint64_t piece[TSHMEM_COLL_MAX_PES];  /* "my piece of chunk c is
                                                                       * in your landing zone" */
    _Alignas(TSHMEM_CACHE_LINE) uint64_t gather[TSHMEM_COLL_MAX_PES]; /* "my sum of chunk c is
                                                                       * in your dest" (an
                                                                       * fcollect: "my block") */
};
#define TSHMEM_NB_LANDING_BYTES (128u << 10) /* per landing buffer; there are two (2.4) */
#define TSHMEM_NB_RD_BYTES 8192u /* a non-blocking allreduce whose n vectors fit in this takes
                                  * recursive doubling (2.4) */

/* -- Provided: helper threads (week2/2.4-overlap/thread.c) ------------------------------------- */
/* How a helper thread takes a core when it is woken (tshmem_thread_start), and where it runs. */
enum tshmem_thread_policy {
    TSHMEM_THREAD_PREEMPTS,     /* the default policy: woken, it takes a core at once */
    TSHMEM_THREAD_DEFERS,       /* SCHED_BATCH: it waits until a core is idle or given up (a
                                 * wait that yields or sleeps, a time slice that ends) */
    TSHMEM_THREAD_DEFERS_BOUND, /* SCHED_BATCH where the PE is bound to one core, else the
                                 * default */
    TSHMEM_THREAD_OFF_MY_CORE = 8, /* added to one of the above: never on the caller's core,
                                    * where it would only take turns with the caller */
};
/* Starts a helper thread of this PE named `name` (up to 15 characters: what top -H, ps -L and
 * gdb show). When the PE is bound to a single core, as Open MPI binds 2 PEs on 2 cores, the
 * thread may run on every online core: on the program's core alone it would wait out the
 * program's time slices whenever the program computes or blocks in an MPI call. 2.5's
 * proxy DEFERS: its wake-ups, mostly naps that find nothing, took the core from program threads
 * that were serving requests themselves (and from MPI's own runs in the benchmarks). 2.4's
 * progress thread DEFERS_BOUND: on the program's core it took the core from a program about to
 * carry the request out itself in tshmem_wait; with a core to spare it needs the default. 3.2's
 * copy helper PREEMPTS | OFF_MY_CORE: the caller waits for its half of the copy.
 * Returns 0, or pthread_create's error. */
int tshmem_thread_start(pthread_t *thread, void *(*main)(void *), void *arg, const char *name,
                        int policy);

/* ---- 2.5: the off-node path (week2/2.5-multi-node) -----------------------------------------
 * The calls of 1.3 and 1.4 come here when tshmem_heap_peer answers NULL (the PE is on another
 * node). Until chapter 2.5 is written they stop with a message that names it. The transport's
 * own state, and its two locks with the order in which a thread may hold them, are in the
 * chapter's transport.h (provided). */
void tshmem_offnode_put(void *dest, const void *source, size_t nbytes, int pe);
void tshmem_offnode_get(void *dest, const void *source, size_t nbytes, int pe);
void tshmem_offnode_signal(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
uint64_t tshmem_offnode_amo(enum tshmem_amo op, uint64_t *dest, uint64_t value, uint64_t cond,
                            int pe);
void tshmem_offnode_quiet(void);
/* Serves the off-node requests that have arrived for this PE, if no other thread of ours is
 * doing so; a no-op on one node. Every wait loop calls it through tshmem_spin_pause's wait hook
 * (1.4), so a PE that waits takes its requests without waiting for its proxy thread
 * (provided). Returns how many it served (0 or 1). */
int tshmem_offnode_progress(void);
/* Sleeps until a request is posted to this PE (its doorbell), the link's first held request
 * falls due, or most_ns pass (transport.c). */
void tshmem_offnode_sleep(uint64_t most_ns);
/* Called by tshmem_init after the heap exists: when some PE is on another node, sets the wait
 * hook (1.4) and starts the proxy thread (provided). */
void tshmem_transport_start(void);
/* Called first thing by tshmem_finalize: frees the split teams, completes this PE's off-node
 * operations, waits until every PE has done so, then stops the proxy thread and clears the
 * wait hook (provided). */
void tshmem_transport_stop(void);
/* 2.6's one-sided network (week2/2.6-ucx-network): where it runs, each tshmem_offnode_* call
 * above hands its work to the tshmem_ucx_* call of its name (ucx.c). tshmem_transport_start asks
 * tshmem_ucx_start first (network.c, provided): 1 when TSHMEM_NET allows UCX and it starts, 0
 * to run the proxy; tshmem_transport_stop calls tshmem_ucx_stop, a no-op where it did not run. */
int tshmem_ucx_start(void);
void tshmem_ucx_stop(void);
extern int tshmem_ucx_running; /* tshmem_ucx_start returned 1, until tshmem_ucx_stop */
static inline int tshmem_ucx_active(void) { return tshmem_ucx_running; }
void tshmem_ucx_put(void *dest, const void *source, size_t nbytes, int pe);
void tshmem_ucx_get(void *dest, const void *source, size_t nbytes, int pe);
void tshmem_ucx_signal(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
uint64_t tshmem_ucx_amo(enum tshmem_amo op, uint64_t *dest, uint64_t value, uint64_t cond, int pe);
void tshmem_ucx_quiet(void);
/* 2.5 teams (week2/2.5-multi-node/team.c): a split of parent into the groups of PEs that pass
 * the same colour (>= 0), numbered by key; TSHMEM_TEAM_INVALID for a colour < 0. Collective
 * over parent. */
tshmem_team_t tshmem_team_split_color(const char *func, tshmem_team_t parent, int color, int key);
void tshmem_teams_release(void); /* at finalize: the split teams' communicators */
/* 2.5's link model (week2/2.5-multi-node/link.c, provided): TSHMEM_LINK's network card between
 * virtual nodes. Times are ns of CLOCK_MONOTONIC; a due time of 0 means no link model. */
uint64_t tshmem_now_ns(void);
void tshmem_link_setup(int n_pes);        /* reads TSHMEM_LINK (tshmem_transport_start) */
int tshmem_link_on(void);
uint64_t tshmem_link_stamp(size_t bytes); /* sender: the arrival time of a transfer given now */
uint64_t tshmem_link_served_due(uint64_t due, int answered, size_t back);
void tshmem_link_sleep_until(uint64_t t);
void tshmem_precise_sleeps(void);        /* this thread's sleeps end within 1 us (timer slack) */
/* Target (under the serve lock): requests taken before they are due wait in the link. */
void tshmem_link_hold(void *msg, int from, uint64_t due);
int tshmem_link_holds(int from);          /* a request of `from` is held */
void *tshmem_link_next(int *from);        /* the next due one in order, or NULL */
uint64_t tshmem_link_next_due(void);      /* 0: none held (any thread) */
void tshmem_link_nap(unsigned long turn); /* a wait's turn: sleep until then, or a nap */
/* 2.5 (week2/2.5-multi-node/hierarchical.c): node allreduce, leaders' allreduce, node broadcast,
 * on teams split from c->team at its first call; forget destroys those teams. */
int tshmem_allreduce_hierarchical(const struct tshmem_reduce_call *c);
void tshmem_allreduce_hierarchical_forget(tshmem_team_t team);

/* ---- 3.1: MoE dispatch and combine (week3/3.1-moe-alltoall) ----------------------------------
 * One tshmem_malloc block per handle, the same layout on every PE (moe.c lays it out):
 *
 *   count_sig[j]       written by team PE j only: the layer number L once its expert counts of
 *                      layer L are in my count box. It is also j's grant: j sends it on entering
 *                      dispatch L, when j is done with layer L - 1's buffers.
 *   rows_in            rows that have landed in my recv buffer, every layer so far (SIGNAL_ADD
 *                      by every sender, a run of rows at a time)
 *   back_in            expert outputs that have landed in my back buffer, every layer so far
 *   count_box[2][j][e] team PE j's row count for expert e; layer L uses box L % 2
 *   recv_meta[r]       (token, slot) of recv row r on its home PE
 *   recv[r]            the dispatched rows, grouped by local expert (hidden floats each)
 *   back[t * k + s]    the expert output of my token t, slot s, returned by combine
 *
 * The counters only grow: a PE waits for "at least the total expected up to this layer". */
#define TSHMEM_MOE_MAGIC 0x6d6f652d6c617972ull /* "moe-layr": a live tshmem_moe_t */
struct tshmem_moe {
    uint64_t magic;
    tshmem_team_t team;
    const struct tshmem_team *t; /* t->pes[j]: the world PE of team PE j */
    int me, n;                   /* my team PE number, the team's size */
    int E, H, k, max_tokens;     /* the config */
    int first_expert, n_local;   /* my experts: first_expert .. first_expert + n_local - 1 */
    size_t cap_rows;             /* rows the recv buffer holds: world PEs x max_tokens x k */
    size_t row_bytes;            /* H floats */
    /* The symmetric block and its parts (same offsets on every PE). */
    void *block;
    struct tshmem_flag *count_sig, *rows_in, *back_in;
    int32_t *count_box;          /* [2][n][E] */
    int32_t *recv_meta;          /* [cap_rows][2] */
    float *recv, *back;          /* [cap_rows][H], [max_tokens * k][H] */
    /* Private: the layer, the cumulative totals this PE waits for, the last dispatch. */
    uint64_t layer;              /* dispatch calls so far: 1, 2, 3, ... on every member */
    uint64_t rows_expected;      /* rows due in my recv buffer, every layer up to this one */
    uint64_t back_expected;      /* outputs due in my back buffer, every layer up to this one */
    int dispatched;              /* 1 between a dispatch and its combine */
    int T;                       /* tokens of the last dispatch */
    int *idx;                    /* [max_tokens * k]: its topk_idx */
    float *weights;              /* [max_tokens * k]: its topk_weights */
    int *cursor, *start;         /* [E]: scratch for dispatch */
    int *order;                  /* [max_tokens * k]: scratch, my (t, s) pairs by expert */
    int32_t *meta_out;           /* [max_tokens * k][2]: scratch, a run's (token, slot) pairs */
    int n_rows;                  /* rows received by the last dispatch */
    int *expert_count, *expert_offset; /* [n_local], [n_local + 1] */
    int *src_pe, *src_token, *src_slot; /* [cap_rows] */
};
/* Provided (moe.c): stops with a clear message unless moe is a live handle made on a team that
 * this PE belongs to. */
void tshmem_moe_check(const char *func, const tshmem_moe_t *moe);
/* The first expert that team PE p owns (p = n gives E): p * E / n. */
static inline int tshmem_moe_first_expert(int E, int n, int p)
{
    return (int)((int64_t)p * E / n);
}

/* tshmem_alltoallmem's words on one team (3.1): from[i] is written by team PE i only, with
 * tshmem_collect_tag(call, CREDIT) ("you may write into my dest") and then (call, DATA) ("my
 * block is in your dest"); the call number only grows, so no word is ever reset. */
struct tshmem_alltoall_flags {
    _Alignas(TSHMEM_CACHE_LINE) uint64_t from[TSHMEM_COLL_MAX_PES];
};

/* tshmem_alltoallmem's one-shot stage (3.1), its own and not 2.3's: the reuse argument counts
 * the calls that go through one area. A PE copies its whole source (n blocks) into its stage
 * and publishes it; every peer reads its own block out of it. Two per team, used in turn by
 * one-shot call number, so a PE never waits for its readers. */
#define TSHMEM_A2A_STAGE_BYTES 8192 /* n x nbytes up to this goes one-shot */
struct tshmem_a2a_stage {
    struct tshmem_flag ready; /* written by this PE only: the one-shot call now in data */
    _Alignas(TSHMEM_CACHE_LINE) char data[TSHMEM_A2A_STAGE_BYTES];
};

/* What a PE records of its collective calls on one team (1.1's calls.c): call k in slot k % 2,
 * written by its PE only, read by the others. A PE can be one call ahead of a peer that compares
 * with it, not two (calls.c says why), so two slots keep the call the peer asks about. */
struct tshmem_call_record {
    uint64_t number; /* the call's number on the team; TSHMEM_CALL_WRITING added while written */
    uint32_t fn;     /* enum tshmem_fn */
    uint32_t c;
    uint64_t a, b;
};
#define TSHMEM_CALL_WRITING (UINT64_C(1) << 63)
struct tshmem_call_records {
    _Alignas(TSHMEM_CACHE_LINE) struct tshmem_call_record slot[2];
};

/* ---- The reserved area: every chapter's words at the start of a slice (1.2) ------------------ */
/* The start of every PE's slice: symmetric words the runtime itself uses. The user heap begins
 * TSHMEM_RESERVED_BYTES into the slice. */
struct tshmem_reserved {
    struct tshmem_flag sync[TSHMEM_MAX_TEAMS][TSHMEM_MAX_ROUNDS]; /* team_sync rounds (1.4) */
    struct tshmem_flag ring[16];                            /* the ring programs (1.5) */
    struct tshmem_coll_flags reduce[TSHMEM_MAX_TEAMS];     /* allreduce (2.2) */
    struct tshmem_coll_flags collect[TSHMEM_MAX_TEAMS];    /* fcollect and broadcast (2.3) */
    struct tshmem_stage stage[TSHMEM_MAX_TEAMS][2];        /* one-shot fcollect (2.3) */
    _Alignas(TSHMEM_HEAP_ALIGN) char scratch[TSHMEM_SCRATCH_BYTES]; /* collectives' landing zone */
    struct tshmem_nb_flags nb[TSHMEM_MAX_TEAMS];           /* non-blocking allreduce (2.4) */
    _Alignas(TSHMEM_HEAP_ALIGN) char nb_landing[2][TSHMEM_NB_LANDING_BYTES]; /* its landing
                                                            * zone, double-buffered (2.4) */
    struct tshmem_alltoall_flags alltoall[TSHMEM_MAX_TEAMS]; /* tshmem_alltoallmem (3.1) */
    struct tshmem_a2a_stage alltoall_stage[TSHMEM_MAX_TEAMS][2]; /* its one-shot (3.1) */
    struct tshmem_rd_eager rd_eager[TSHMEM_MAX_TEAMS];     /* small allreduces (2.2) */
    struct tshmem_call_records calls[TSHMEM_MAX_TEAMS];    /* every collective call (1.1) */
};
_Static_assert(sizeof(struct tshmem_reserved) <= TSHMEM_RESERVED_BYTES,
               "the reserved area outgrew TSHMEM_RESERVED_BYTES");

#endif /* TSHMEM_INTERNAL_H */
