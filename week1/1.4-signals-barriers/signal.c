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

/* TODO (chapter 1.4, "Waiting"): the comparison that wait_until and test evaluate */

void tshmem_signal_op(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
{
    tshmem_require_live(__func__);
    (void)sig_addr; (void)signal; (void)sig_op; (void)pe;
    TSHMEM_TODO("Signals", "check the arguments, then SET or ADD signal into sig_addr's twin on pe, with release order");
}

void tshmem_putmem_signal(void *dest, const void *source, size_t nbytes, uint64_t *sig_addr,
                          uint64_t signal, int sig_op, int pe)
{
    tshmem_require_live(__func__);
    (void)dest; (void)source; (void)nbytes; (void)sig_addr; (void)signal; (void)sig_op; (void)pe;
    TSHMEM_TODO("Signals", "put the data, then update the signal so that the data is visible first");
}

void tshmem_putmem_signal_nbi(void *dest, const void *source, size_t nbytes, uint64_t *sig_addr,
                              uint64_t signal, int sig_op, int pe)
{
    tshmem_require_live(__func__);
    (void)dest; (void)source; (void)nbytes; (void)sig_addr; (void)signal; (void)sig_op; (void)pe;
    TSHMEM_TODO("Signals", "the non-blocking form: the signal must still follow the data");
}

uint64_t tshmem_signal_fetch(const uint64_t *sig_addr)
{
    tshmem_require_live(__func__);
    (void)sig_addr;
    TSHMEM_TODO("Signals", "read this PE's own signal word with acquire order");
}

void tshmem_uint64_wait_until(uint64_t *ivar, int cmp, uint64_t cmp_value)
{
    tshmem_require_live(__func__);
    (void)ivar; (void)cmp; (void)cmp_value;
    TSHMEM_TODO("Waiting", "spin with back-off until *ivar compares true against cmp_value");
}

uint64_t tshmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value)
{
    tshmem_require_live(__func__);
    (void)sig_addr; (void)cmp; (void)cmp_value;
    TSHMEM_TODO("Waiting", "wait like tshmem_uint64_wait_until, then return the value that satisfied it");
}

int tshmem_uint64_test(uint64_t *ivar, int cmp, uint64_t cmp_value)
{
    tshmem_require_live(__func__);
    (void)ivar; (void)cmp; (void)cmp_value;
    TSHMEM_TODO("Waiting", "one acquire read: 1 if the comparison holds now, else 0");
}
