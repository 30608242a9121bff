/* hash.h: FNV-1a, the one hash of the grader and its harness: the fingerprint of a learner's
 * files (grader/src/code.c) and the names of the shared jobs' files (job.c). */
#ifndef TSHMEM_GRADER_HASH_H
#define TSHMEM_GRADER_HASH_H

#include <stddef.h>
#include <stdint.h>

#define FNV_START 0xcbf29ce484222325ULL

/* 64-bit FNV-1a of len bytes, continued from h (FNV_START for the first). */
static inline uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

#endif
