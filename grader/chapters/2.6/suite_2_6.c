/* suite_2_6.c: chapter 2.6, A one-sided network on UCX.
 * NEW-CHAPTER: what the tests check, against what. */
#include "suite.h"

#define CH "2.6"
#define PROG "pe_2_6"

/* NEW-CHAPTER: no test yet. One Test() per behaviour the learner must get right, each with a
 * description that says what it checks, and a failure message that teaches, e.g.
 *   Test(ch2_6, first_task, .description = "tshmem_ucx_network_first on 2 and 4 PEs")
 *   {
 *       expect_ok_on(CH, PROG, "first", ARGS("1"), NULL, 30, (int[]){2, 4, END_PES});
 *   }
 * Several tests that run one scenario with one argument changed (an algorithm each) can share
 * a job that runs them all: expect_ok_shared (suite.h; MAINTAINING.md, "Keeping make test
 * fast"). Then give its points and three hints in grader/course.json. */
