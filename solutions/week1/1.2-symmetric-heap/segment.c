/* segment.c: the node's shared-memory segment, each PE's slice of it, and address translation.
 *
 * Chapter 1.2. The segment plays the part of NVLink peer memory: every PE of a node maps the
 * same POSIX shared-memory object, so a store into a peer's slice is a plain store. Symmetric
 * means that an object lives at the same offset in every PE's slice; tshmem_ptr turns "my copy"
 * into "PE pe's copy" by swapping the slice.
 */
#define TSHMEM_CHAPTER "1.2"
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

#include "tshmem_internal.h"

/* BEGIN SOLUTION (The segment): helpers that name, size, create and map the segment */
/* "/tshmem-<uid>-<job>-<node>": unique per user, job and node, so two jobs never collide. */
static void name_segment(char *name, size_t len)
{
    struct tshmem_state *g = &tshmem_g;
    char job[32] = "";
    snprintf(job, sizeof job, "%s", tshmem_env_str("TSHMEM_JOB_ID"));
    for (char *c = job; *c; c++)
        if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')
              || *c == '-'))
            *c = '_';
    if (!job[0]) { /* started without tshrun: PE 0's pid names the job */
        long pid = (long)getpid();
        MPI_Bcast(&pid, 1, MPI_LONG, 0, g->comm);
        snprintf(job, sizeof job, "p%ld", pid);
    }
    snprintf(name, len, "/tshmem-%u-%s-%d", (unsigned)getuid(), job, g->node);
}

/* Bytes per PE: the reserved area plus the heap the user asked for, rounded up to whole 2 MiB
 * units so that every slice starts on a 2 MiB boundary (see map_aligned). */
static size_t slice_size(size_t heap)
{
    if (heap < 4096)
        tshmem_fail("tshmem_init", "TSHMEM_SYMMETRIC_SIZE=%zu leaves no room for data: ask for at "
                    "least 4K of symmetric heap per PE (the default is 8M).", heap);
    if (heap > (SIZE_MAX / 4 - TSHMEM_RESERVED_BYTES))
        tshmem_fail("tshmem_init", "TSHMEM_SYMMETRIC_SIZE=%zu bytes is too large to map. Ask "
                    "for what your program needs, e.g. 1G.", heap);
    size_t bytes = TSHMEM_RESERVED_BYTES + heap;
    return (bytes + TSHMEM_SLICE_ALIGN - 1) / TSHMEM_SLICE_ALIGN * TSHMEM_SLICE_ALIGN;
}

/* Maps the segment at a 2 MiB-aligned address. mmap only promises page alignment, so reserve
 * a little more address space than needed, then map the segment over its aligned part. With
 * every slice aligned alike, an offset that is a multiple of A is an address that is a
 * multiple of A on every PE (for A up to 2 MiB): that is what tshmem_align relies on. */
static char *map_aligned(int fd, size_t bytes)
{
    size_t span = bytes + TSHMEM_SLICE_ALIGN;
    char *area = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (area == MAP_FAILED)
        return MAP_FAILED;
    uintptr_t aligned = ((uintptr_t)area + TSHMEM_SLICE_ALIGN - 1) & ~(uintptr_t)(TSHMEM_SLICE_ALIGN - 1);
    char *base = (char *)aligned;
    if (base > area)
        munmap(area, (size_t)(base - area));
    munmap(base + bytes, (size_t)(area + span - (base + bytes)));
    return mmap(base, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
}

/* The node leader creates the object, and reserves its memory now: tmpfs would accept any
 * size and kill us with SIGBUS at the first touch of a page it cannot supply. */
static int create_segment(const char *name, size_t bytes)
{
    char need[32], have[32];
    struct statvfs fs;
    if (statvfs("/dev/shm", &fs) == 0 && (size_t)fs.f_bavail * fs.f_frsize < bytes)
        tshmem_fail("tshmem_init", "/dev/shm has %s free, but this node's %d PEs need %s "
                    "(TSHMEM_SYMMETRIC_SIZE per PE). Set TSHMEM_SYMMETRIC_SIZE smaller, or give "
                    "/dev/shm more room (docker run --shm-size=1g).",
                    tshmem_bytes_str((size_t)fs.f_bavail * fs.f_frsize, have, sizeof have),
                    tshmem_g.teams[TSHMEM_TEAM_NODE].n_pes, tshmem_bytes_str(bytes, need, sizeof need));
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0)
        tshmem_fail("tshmem_init", "cannot create the shared-memory segment %s: %s. Is /dev/shm "
                    "mounted and writable?", name, strerror(errno));
    int rc = posix_fallocate(fd, 0, (off_t)bytes);
    if (rc != 0) {
        shm_unlink(name);
        tshmem_fail("tshmem_init", "cannot reserve %s for the segment %s in /dev/shm: %s. Set "
                    "TSHMEM_SYMMETRIC_SIZE smaller, or give /dev/shm more room.",
                    tshmem_bytes_str(bytes, need, sizeof need), name, strerror(rc));
    }
    return fd;
}
/* END SOLUTION */

void tshmem_heap_create(void)
{
    /* BEGIN SOLUTION (The segment): create the node's segment (leader), map it on every PE of the node, unlink it, find this PE's slice */
    struct tshmem_state *g = &tshmem_g;
    int leader = g->pe_local[g->my_pe] == 0;
    int node_pes = g->teams[TSHMEM_TEAM_NODE].n_pes;
    g->heap_bytes = tshmem_env_size("TSHMEM_SYMMETRIC_SIZE");
    g->slice_bytes = slice_size(g->heap_bytes);
    g->segment_bytes = g->slice_bytes * (size_t)node_pes;
    name_segment(g->segment_name, sizeof g->segment_name);

    int fd = leader ? create_segment(g->segment_name, g->segment_bytes) : -1;
    tshmem_boot_barrier(g->node_comm); /* the object exists before the others open it */
    if (!leader)
        fd = shm_open(g->segment_name, O_RDWR, 0);
    if (fd < 0)
        tshmem_fail("tshmem_init", "cannot open the segment %s that the node leader created: %s.",
                    g->segment_name, strerror(errno));
    g->segment = map_aligned(fd, g->segment_bytes);
    if (g->segment == MAP_FAILED)
        tshmem_fail("tshmem_init", "cannot map the %zu-byte segment %s: %s.", g->segment_bytes,
                    g->segment_name, strerror(errno));
    close(fd);
    /* Once every PE has mapped it, the name is no longer needed: unlink it now, so that a
     * crash from here on can never leave a segment behind in /dev/shm. */
    tshmem_boot_barrier(g->node_comm);
    if (leader)
        shm_unlink(g->segment_name);
    tshmem_boot_barrier(g->node_comm); /* gone from /dev/shm before any PE returns */
    g->slice = g->segment + (size_t)g->pe_local[g->my_pe] * g->slice_bytes;
    g->reserved = (struct tshmem_reserved *)g->slice;
    g->blocks = NULL; /* the allocator starts with an empty heap (alloc.c) */
    /* END SOLUTION, stub: return; */
}

void tshmem_heap_destroy(void)
{
    /* BEGIN SOLUTION (The segment): unmap the segment and forget the heap */
    struct tshmem_state *g = &tshmem_g;
    while (g->blocks) {
        struct tshmem_block *next = g->blocks->next;
        free(g->blocks);
        g->blocks = next;
    }
    if (g->segment)
        munmap(g->segment, g->segment_bytes);
    g->segment = g->slice = NULL;
    g->reserved = NULL;
    g->segment_bytes = g->slice_bytes = g->heap_bytes = 0;
    /* END SOLUTION, stub: return; */
}

void *tshmem_heap_peer(const void *addr, int pe)
{
    /* BEGIN SOLUTION (Translating addresses): addr's twin in PE pe's slice, NULL if pe is on another node */
    struct tshmem_state *g = &tshmem_g;
    if (g->pe_node[pe] != g->node)
        return NULL;
    size_t offset = (size_t)((const char *)addr - g->slice);
    return g->segment + (size_t)g->pe_local[pe] * g->slice_bytes + offset;
    /* END SOLUTION */
}

void *tshmem_ptr(const void *dest, int pe)
{
    tshmem_require_live(__func__);
    /* BEGIN SOLUTION (Translating addresses): check pe and dest, then return dest's twin on pe (NULL off-node) */
    tshmem_check_pe(__func__, pe);
    tshmem_check_symmetric(__func__, "dest", dest, 0);
    return tshmem_heap_peer(dest, pe);
    /* END SOLUTION */
}

int tshmem_addr_accessible(const void *addr, int pe)
{
    tshmem_require_live(__func__);
    /* BEGIN SOLUTION (Translating addresses): 1 if addr is in the symmetric heap (the slice after the reserved area) and pe is a PE of the job */
    const char *p = addr, *heap = tshmem_g.slice + TSHMEM_RESERVED_BYTES;
    return pe >= 0 && pe < tshmem_g.n_pes && tshmem_g.slice && p >= heap &&
           p < heap + tshmem_g.heap_bytes;
    /* END SOLUTION */
}
