#define _GNU_SOURCE
/* test_util.c: the path and text helpers: a path that does not fit is refused, never cut short,
 * and an appended text stops at the end of its buffer. */
#include <errno.h>

#include "unit.h"

Test(util, a_path_that_fits_is_formatted)
{
    char path[PATH_MAX];
    cr_assert_eq(path_format(path, "%s/%s", "/course", "week1"), 0);
    cr_assert_str_eq(path, "/course/week1");
}

Test(util, a_path_too_long_is_refused_not_cut)
{
    char path[PATH_MAX], *longer = malloc(PATH_MAX + 1);
    cr_assert(longer != NULL);
    memset(longer, 'a', PATH_MAX);
    longer[PATH_MAX] = '\0';
    errno = 0;
    cr_assert_eq(path_format(path, "/%s", longer), -1);
    cr_assert_eq(errno, ENAMETOOLONG);
    cr_assert_str_eq(path, "", "nothing may open a path cut short");
    free(longer);
}

Test(util, appendf_appends_and_says_when_it_cuts)
{
    char buf[12] = "a";
    cr_assert_eq(appendf(buf, sizeof buf, ", %s", "b"), 0);
    cr_assert_str_eq(buf, "a, b");
    cr_assert_eq(appendf(buf, sizeof buf, ", %d", 123456789), -1);
    cr_assert_str_eq(buf, "a, b, 12345", "what fits, and the NUL");
    cr_assert_eq(appendf(buf, sizeof buf, "%s", ""), 0, "nothing to add always fits");
}
