/* signal.c: signals, put-with-signal, and waiting for a word to change.
 *
 * Chapter 1.4. A signal is a uint64_t in the symmetric heap that one PE updates atomically and
 * another waits on. The whole point is ordering: a receiver that sees the signal must also see
 * the data that was put before it. C11 release/acquire gives exactly that: the sender's release
 * store cannot become visible before its earlier stores, and the receiver's acquire load keeps
 * its later loads (of the data) from running ahead of it.
 */
#define TSHMEM_CHAPTER "1.4"
#include "tshmem_internal.h"

/* BEGIN SOLUTION (Waiting): the comparison that wait_until and test evaluate */
static int holds(uint64_t value, int cmp, uint64_t cmp_value)
{
    switch (cmp) {
    case TSHMEM_CMP_EQ: return value == cmp_value;
    case TSHMEM_CMP_NE: return value != cmp_value;
    case TSHMEM_CMP_GT: return value > cmp_value;
    case TSHMEM_CMP_GE: return value >= cmp_value;
    case TSHMEM_CMP_LT: return value < cmp_value;
    default:            return value <= cmp_value;
    }
}
/* END SOLUTION */

void tshmem_signal_op(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
{
    tshmem_require_live(__func__);
    /* BEGIN SOLUTION (Signals): check the arguments, then SET or ADD signal into sig_addr's twin on pe, with release order */
    tshmem_check_pe(__func__, pe);
    tshmem_check_word(__func__, "sig_addr", sig_addr);
    tshmem_check_sig_op(__func__, sig_op);
    uint64_t *peer = tshmem_heap_peer(sig_addr, pe);
    if (!peer) {
        tshmem_offnode_signal(sig_addr, signal, sig_op, pe);
        return;
    }
    /* Release: every store this PE made before (the data of a put_signal, above all) is
     * visible to a PE that reads this signal with acquire. */
    if (sig_op == TSHMEM_SIGNAL_SET)
        atomic_store_explicit(tshmem_atomic(peer), signal, memory_order_release);
    else
        atomic_fetch_add_explicit(tshmem_atomic(peer), signal, memory_order_release);
    /* END SOLUTION */
}

void tshmem_putmem_signal(void *dest, const void *source, size_t nbytes, uint64_t *sig_addr,
                          uint64_t signal, int sig_op, int pe)
{
    tshmem_require_live(__func__);
    /* BEGIN SOLUTION (Signals): put the data, then update the signal so that the data is visible first */
    tshmem_putmem(dest, source, nbytes, pe);
    tshmem_signal_op(sig_addr, signal, sig_op, pe);
    /* END SOLUTION */
}

void tshmem_putmem_signal_nbi(void *dest, const void *source, size_t nbytes, uint64_t *sig_addr,
                              uint64_t signal, int sig_op, int pe)
{
    tshmem_require_live(__func__);
    /* BEGIN SOLUTION (Signals): the non-blocking form: the signal must still follow the data */
    tshmem_putmem_signal(dest, source, nbytes, sig_addr, signal, sig_op, pe);
    /* END SOLUTION */
}

uint64_t tshmem_signal_fetch(const uint64_t *sig_addr)
{
    tshmem_require_live(__func__);
    /* BEGIN SOLUTION (Signals): read this PE's own signal word with acquire order */
    tshmem_check_word(__func__, "sig_addr", sig_addr);
    return atomic_load_explicit(tshmem_atomic(sig_addr), memory_order_acquire);
    /* END SOLUTION */
}

void tshmem_uint64_wait_until(uint64_t *ivar, int cmp, uint64_t cmp_value)
{
    tshmem_require_live(__func__);
    /* BEGIN SOLUTION (Waiting): spin with back-off until *ivar compares true against cmp_value */
    tshmem_check_word(__func__, "ivar", ivar);
    tshmem_check_cmp(__func__, cmp);
    struct tshmem_spin spin;
    tshmem_spin_init(&spin, __func__, ivar);
    /* Acquire on every read: once the condition holds, whatever the writer stored before its
     * release is visible to the code after this loop. */
    while (!holds(atomic_load_explicit(tshmem_atomic(ivar), memory_order_acquire), cmp, cmp_value))
        tshmem_spin_pause(&spin);
    /* END SOLUTION */
}

uint64_t tshmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value)
{
    tshmem_require_live(__func__);
    /* BEGIN SOLUTION (Waiting): wait like tshmem_uint64_wait_until, then return the value that satisfied it */
    tshmem_check_word(__func__, "sig_addr", sig_addr);
    tshmem_check_cmp(__func__, cmp);
    struct tshmem_spin spin;
    tshmem_spin_init(&spin, __func__, sig_addr);
    for (;;) {
        uint64_t v = atomic_load_explicit(tshmem_atomic(sig_addr), memory_order_acquire);
        if (holds(v, cmp, cmp_value))
            return v;
        tshmem_spin_pause(&spin);
    }
    /* END SOLUTION */
}

int tshmem_uint64_test(uint64_t *ivar, int cmp, uint64_t cmp_value)
{
    tshmem_require_live(__func__);
    /* BEGIN SOLUTION (Waiting): one acquire read: 1 if the comparison holds now, else 0 */
    tshmem_check_word(__func__, "ivar", ivar);
    tshmem_check_cmp(__func__, cmp);
    return holds(atomic_load_explicit(tshmem_atomic(ivar), memory_order_acquire), cmp, cmp_value);
    /* END SOLUTION */
}
