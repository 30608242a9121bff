#define _GNU_SOURCE
/* test_backtrace.c: where a hung PE was, from gdb's "thread apply all bt": a PE inside a wait
 * (the runtime's, MPI's, a blocking call) is told apart from one running code of its own (a
 * loop that never ends), which the hang report names with its function and file:line. */
#include <string.h>

#include "job.h"
#include "unit.h"

/* A PE in a wait that never ends: the runtime's wait loop, backing off in usleep. */
#define BT_WAIT                                                                                    \
    "Thread 2 (Thread 0x7f1 (LWP 12)):\n"                                                          \
    "#0  0x00007f2 in epoll_wait () from /lib/x86_64-linux-gnu/libc.so.6\n"                        \
    "#1  0x00007f3 in ?? () from /usr/lib/x86_64-linux-gnu/libevent_core.so\n"                     \
    "\n"                                                                                           \
    "Thread 1 (Thread 0x7f4 (LWP 11)):\n"                                                          \
    "#0  0x00007f5 in __GI___clock_nanosleep (clock_id=0) at "                                      \
    "../sysdeps/unix/sysv/linux/clock_nanosleep.c:78\n"                                            \
    "#1  0x00007f6 in __GI___nanosleep () at ../sysdeps/unix/sysv/linux/nanosleep.c:25\n"          \
    "#2  0x00007f7 in usleep (useconds=100) at ../sysdeps/posix/usleep.c:31\n"                     \
    "#3  0x0000551 in tshmem_spin_pause (spin=0x7ffd) at week1/1.4-signals-barriers/spin.c:120\n"  \
    "#4  0x0000552 in tshmem_uint64_wait_until (ivar=0x7f8, cmp=0, value=1) at "                   \
    "week1/1.4-signals-barriers/signal.c:84\n"                                                     \
    "#5  0x0000553 in hang (argc=0, argv=0x0) at grader/unit/fixtures/pe_hang.c:11\n"              \
    "#6  0x0000554 in pe_main (argc=3, argv=0x7ffe, list=0x555) at grader/pe/pe_test.h:90\n"       \
    "#7  0x0000555 in main (argc=3, argv=0x7ffe) at grader/unit/fixtures/pe_hang.c:30\n"

/* A PE spinning in a function of the learner's, with no wait on its stack. */
#define BT_OWN                                                                                     \
    "Thread 1 (Thread 0x7f4 (LWP 11)):\n"                                                          \
    "#0  0x0000561 in heap_find_block (heap=0x7f9, size=64) at "                                   \
    "week1/1.2-symmetric-heap/alloc.c:57\n"                                                        \
    "#1  0x0000562 in tshmem_malloc (size=64) at week1/1.2-symmetric-heap/alloc.c:102\n"           \
    "#2  0x0000563 in alloc_sizes (argc=0, argv=0x0) at grader/chapters/1.2/pe_1_2.c:40\n"         \
    "#3  0x0000564 in pe_main (argc=3, argv=0x7ffe, list=0x555) at grader/pe/pe_test.h:90\n"       \
    "#4  0x0000565 in main (argc=3, argv=0x7ffe) at grader/chapters/1.2/pe_1_2.c:200\n"            \
    "#5  0x0000566 in __libc_start_call_main () at ../sysdeps/nptl/libc_start_call_main.h:58\n"

/* Stopped inside memcpy, called in a loop of its own: still its own code. */
#define BT_OWN_IN_LIBC                                                                             \
    "Thread 1 (Thread 0x7f4 (LWP 11)):\n"                                                          \
    "#0  __memmove_avx_unaligned_erms () at ../sysdeps/x86_64/multiarch/memmove-vec.S:300\n"       \
    "#1  0x0000571 in ring_shift (buf=0x1, n=8) at week1/1.5-ring/ring.c:33\n"                     \
    "#2  0x0000572 in main (argc=3, argv=0x7ffe) at grader/chapters/1.5/pe_1_5.c:90\n"

/* Blocked in MPI (a PE in tshmem_init's MPI_Init, say) is a wait. */
#define BT_MPI                                                                                     \
    "Thread 1 (Thread 0x7f4 (LWP 11)):\n"                                                          \
    "#0  0x00007f2 in poll () from /lib/x86_64-linux-gnu/libc.so.6\n"                              \
    "#1  0x00007f3 in opal_progress () from /usr/lib/x86_64-linux-gnu/libopen-pal.so.40\n"         \
    "#2  0x00007f4 in PMPI_Allreduce () from /usr/lib/x86_64-linux-gnu/libmpi.so.40\n"             \
    "#3  0x0000581 in tshmem_init () at week1/1.1-init/init.c:40\n"                                \
    "#4  0x0000582 in main (argc=3, argv=0x7ffe) at grader/chapters/1.1/pe_1_1.c:90\n"

Test(backtrace, a_wait_is_a_wait)
{
    char own[256] = "unchanged";
    cr_assert_eq(job_backtrace_kind(BT_WAIT, own, sizeof own), JOB_WHERE_WAIT,
                 "a PE in tshmem_uint64_wait_until and usleep is waiting");
    cr_assert_str_empty(own, "no place of its own is named for a wait: '%s'", own);
    cr_assert_eq(job_backtrace_kind(BT_MPI, own, sizeof own), JOB_WHERE_WAIT,
                 "a PE blocked in MPI (opal_progress, PMPI_Allreduce) is waiting");
    char *text = job_backtrace_text(BT_WAIT);
    cr_assert(text && strstr(text, "tshmem_uint64_wait_until"), "the wait is rendered: %s",
              text ? text : "(null)");
    free(text);
}

Test(backtrace, a_loop_of_its_own_is_named)
{
    char own[256] = "";
    cr_assert_eq(job_backtrace_kind(BT_OWN, own, sizeof own), JOB_WHERE_OWN,
                 "a PE in heap_find_block <- tshmem_malloc, with no wait on its stack, runs its "
                 "own code");
    cr_assert_str_eq(own, "heap_find_block (week1/1.2-symmetric-heap/alloc.c:57)",
                     "the innermost function of its own and its file:line are named");
    cr_assert_eq(job_backtrace_kind(BT_OWN_IN_LIBC, own, sizeof own), JOB_WHERE_OWN,
                 "a loop of its own stopped inside memcpy is still its own code");
    cr_assert_str_eq(own, "ring_shift (week1/1.5-ring/ring.c:33)",
                     "the C library's frame is passed over for the first of the program");
}

Test(backtrace, nothing_to_read)
{
    char own[64];
    cr_assert_eq(job_backtrace_kind("", own, sizeof own), JOB_WHERE_UNKNOWN,
                 "no frame: neither a wait nor a loop");
    cr_assert_eq(job_backtrace_kind("ptrace: Operation not permitted.\n", own, sizeof own),
                 JOB_WHERE_UNKNOWN, "gdb could not attach: unknown");
}
