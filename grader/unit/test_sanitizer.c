#define _GNU_SOURCE
/* test_sanitizer.c: a sanitizer's report in a job's output: the failure message shows its head
 * and names the file that keeps the whole output; a failure without one reads as before. */
#include "job.h"
#include "unit.h"

#define ASAN_REPORT                                                                                \
    "=================================================================\n"                          \
    "==8014==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000018\n"            \
    "READ of size 9 at 0x602000000018 thread T0\n"                                                 \
    "    #0 0x7f0 in __interceptor_memcpy\n"                                                       \
    "    #1 0x55e in put_sizes grader/chapters/1.3/pe_1_3.c:39\n"                                            \
    "\n"                                                                                           \
    "0x602000000018 is located 0 bytes to the right of 8-byte region\n"                            \
    "SUMMARY: AddressSanitizer: heap-buffer-overflow grader/chapters/1.3/pe_1_3.c:39 in put_sizes\n"         \
    "Shadow bytes around the buggy address:\n"                                                     \
    "  0x0c047fff8000: fa fa 00 fa fa fa\n"

static char root[] = "/tmp/tshmem-unit-san-XXXXXX";

static void make_root(void)
{
    cr_assert(mkdtemp(root) != NULL, "cannot create a temp folder");
    setenv("TSHMEM_ROOT", root, 1);
}

static void remove_root(void)
{
    remove_tree(root);
}

static struct pe_job job_with(const char *output, int status)
{
    return (struct pe_job){.chapter = "1.3", .scenario = "put", .npes = 2, .status = status,
                           .seconds = 1.5, .output = (char *)output};
}

/* The path the message names, copied out of it. */
static char *named_file(const char *msg)
{
    const char *p = strstr(msg, "in full: ");
    cr_assert(p != NULL, "the message names no file:\n%s", msg);
    p += strlen("in full: ");
    return strndup(p, strcspn(p, ")"));
}

Test(sanitizer, message_shows_the_report_head_and_names_the_whole_output, .init = make_root,
     .fini = remove_root)
{
    struct pe_job job = job_with("pe 0: step start pid=8013\npe 1: step start pid=8014\n"
                                 "pe 0: done\n" ASAN_REPORT,
                                 1);
    char *msg = job_problem_ok(&job);
    cr_assert(msg != NULL);
    cr_assert(strstr(msg, "a sanitizer reported an error in PE 1:") != NULL, "%s", msg);
    cr_assert(strstr(msg, "ERROR: AddressSanitizer: heap-buffer-overflow") != NULL, "%s", msg);
    cr_assert(strstr(msg, "#1 0x55e in put_sizes grader/chapters/1.3/pe_1_3.c:39") != NULL, "%s", msg);
    cr_assert(strstr(msg, "SUMMARY: AddressSanitizer") != NULL, "%s", msg);
    cr_assert(strstr(msg, "Shadow bytes") == NULL, "past the SUMMARY line:\n%s", msg);
    char *path = named_file(msg), *text = NULL;
    cr_assert(strncmp(path, root, strlen(root)) == 0, "%s is not under %s", path, root);
    cr_assert(strstr(path, "/build/sanitizer/1.3-put-") != NULL, "%s", path);
    FILE *f = fopen(path, "r");
    cr_assert(f != NULL, "the message names %s, which does not exist", path);
    size_t cap = 0;
    cr_assert(getdelim(&text, &cap, '\0', f) > 0);
    fclose(f);
    cr_assert(strstr(text, "Shadow bytes around the buggy address") != NULL, "%s", text);
    free(text), free(path), free(msg);
}

Test(sanitizer, long_report_keeps_its_summary, .init = make_root, .fini = remove_root)
{
    char out[8192] = "pe 0: step start pid=77\n==77==ERROR: LeakSanitizer: detected memory leaks\n";
    for (int i = 0; i < 60; i++)
        snprintf(out + strlen(out), sizeof out - strlen(out), "    #%d 0x1 in frame_%d\n", i, i);
    strcat(out, "SUMMARY: AddressSanitizer: 960 byte(s) leaked in 7 allocation(s).\n");
    struct pe_job job = job_with(out, 1);
    char *msg = job_problem_ok(&job);
    cr_assert(strstr(msg, "in PE 0:") != NULL, "%s", msg);
    cr_assert(strstr(msg, "frame_30") != NULL && strstr(msg, "frame_50") == NULL, "%s", msg);
    cr_assert(strstr(msg, "more lines of the report left out") != NULL, "%s", msg);
    cr_assert(strstr(msg, "SUMMARY: AddressSanitizer: 960 byte(s) leaked") != NULL, "%s", msg);
    free(msg);
}

Test(sanitizer, ubsan_and_tsan_reports_are_found, .init = make_root, .fini = remove_root)
{
    cr_assert(job_sanitizer_report("x\na.c:41:17: runtime error: signed integer overflow\n"));
    const char *tsan =
        "pe 1: step start pid=3492\nWARNING: ThreadSanitizer: data race (pid=3492)\n";
    struct pe_job job = job_with(tsan, 66);
    cr_assert_eq(job_sanitizer_pe(&job, job_sanitizer_report(tsan)), 1);
    cr_assert_null(job_sanitizer_report("pe 0: FAIL the value was 3\ntshmem: PE 0: error\n"));
}

Test(sanitizer, failure_without_a_report_reads_as_before, .init = make_root, .fini = remove_root)
{
    struct pe_job job = job_with("pe 0: step start pid=5\nsome crash text\n", 1);
    char *msg = job_problem_ok(&job);
    cr_assert(strstr(msg, "the job failed (a PE exited with a nonzero status):") != NULL, "%s",
              msg);
    cr_assert(strstr(msg, "some crash text") != NULL, "%s", msg);
    cr_assert(strstr(msg, "sanitizer") == NULL, "%s", msg);
    struct stat st;
    char dir[sizeof root + 32];
    snprintf(dir, sizeof dir, "%s/build/sanitizer", root);
    cr_assert(stat(dir, &st) != 0, "%s was created for a failure without a report", dir);
    free(msg);
}
