/* offnode.c: the off-node path, for PEs on another (virtual) node.
 *
 * Provided: you do not need to edit this file. A PE on another node shares no memory with us,
 * so tshmem_heap_peer returns NULL for it and the calls of chapters 1.3 and 1.4 come here. Over
 * a real network this is the proxy thread of chapter 2.5; until that chapter exists, every
 * off-node access stops with a message that says so.
 */
#include "tshmem_internal.h"

_Noreturn static void needs_proxy(const char *func, int pe)
{
    tshmem_fail(func, "PE %d is on node %d and this PE is on node %d: reaching another node "
                "needs the proxy transport of chapter 2.5. Run with every PE on one node (unset "
                "TSHMEM_PES_PER_NODE) until then.", pe, tshmem_g.pe_node[pe], tshmem_g.node);
}

void tshmem_offnode_put(void *dest, const void *source, size_t nbytes, int pe)
{
    (void)dest, (void)source, (void)nbytes;
    needs_proxy("tshmem_putmem", pe);
}

void tshmem_offnode_get(void *dest, const void *source, size_t nbytes, int pe)
{
    (void)dest, (void)source, (void)nbytes;
    needs_proxy("tshmem_getmem", pe);
}

void tshmem_offnode_signal(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
{
    (void)sig_addr, (void)signal, (void)sig_op;
    needs_proxy("tshmem_signal_op", pe);
}

uint64_t tshmem_offnode_amo(enum tshmem_amo op, uint64_t *dest, uint64_t value, uint64_t cond,
                            int pe)
{
    (void)op, (void)dest, (void)value, (void)cond;
    needs_proxy("tshmem_uint64_atomic", pe);
}

void tshmem_offnode_quiet(void)
{
    /* Nothing can be outstanding: no off-node operation ever started. */
}
