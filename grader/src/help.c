/* help.c: every command's --help, and what the commands share to read their arguments. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "help.h"
#include "roadmap.h"
#include "util.h"

struct command_help {
    const char *name, *text;
};

static const struct command_help helps[] = {
    {"test",
     "usage: grader test [CHAPTER | weekN | all] [--ref-deps] [--verbose] [--json]\n\n"
     "Builds your code and runs the chapters' tests, in the order of the chapter's tasks. With\n"
     "no chapter named, the chapter you are on (the first one not done yet; grader test all runs\n"
     "every chapter). Each test is shown with its points and, when\n"
     "it fails, a message that says which PE saw what and what to read next. Tests that stopped\n"
     "in the same unwritten function are listed under its message, shown once: the first one is\n"
     "what to write first. Progress is recorded; a chapter that passed before is run again when\n"
     "its files (or those of the chapters it builds on) changed since.\n\n"
     "  --ref-deps            take every earlier chapter from the reference solution, to go on\n"
     "                        when you are stuck on one\n"
     "  --verbose, -v         every test alone, with all of its message\n"
     "  --json                one JSON object per line, as the run goes (events: chapter,\n"
     "                        phase, test as each ends, chapter_end with every test in the\n"
     "                        chapter's order, recheck, summary)\n"
     "  --impl learner|solutions, --stub   (course maintainers) test the reference, or a\n"
     "                        chapter's generated stub (every test should then fail)\n\n"
     "Ends with the line `N passed, N failed`; exit status 0 when every test passed.\n"
     "Examples: grader test 1.3    grader test week1    grader test 1.4 --ref-deps\n"},
    {"watch",
     "usage: grader watch [CHAPTER] [--ref-deps]\n\n"
     "Runs the chapter's tests (by default the first one you have not finished), then again\n"
     "each time you save one of its files. When it passes, moves on to the next chapter\n"
     "(unless you named one). Keys: r or Enter runs the tests now (for file systems where\n"
     "change notifications do not arrive), q quits.\n"},
    {"hint",
     "usage: grader hint CHAPTER [--list]\n\n"
     "Shows the chapter's next hint, from a nudge to nearly the answer, together with the\n"
     "ones you have seen. Each call shows one more; the number you used is in your progress\n"
     "and on your card. --list shows the ones you have seen without taking another.\n"},
    {"read",
     "usage: grader read CHAPTER|PAGE\n\n"
     "Shows a page of the book in a pager ($PAGER, else less), as plain text when pandoc is\n"
     "installed, else as Markdown. Printed as it is when the output is not a terminal. A chapter\n"
     "is named by its id (grader read 1.3), any other page by its file name without .md\n"
     "(grader read debugging, performance, glossary...); an unknown name lists the pages.\n"
     "The text is folded to the terminal's width ($COLUMNS, else 100 when not a terminal); a\n"
     "table too wide for it is shown as a list, one item per row. Reading a chapter marks it\n"
     "read (the Doc column of the dashboard).\n"},
    {"reset",
     "usage: grader reset CHAPTER [--yes]\n\n"
     "Puts the chapter's files back to the stub you started from, after copying your files to\n"
     "a new folder .grader-backups/<chapter>-<date>-<time>/ (it says which). Asks first unless\n"
     "--yes is given; an older backup is never overwritten.\n"},
    {"card",
     "usage: grader card [--week N] [--format chat|markdown] [--json [--name NAME]]\n"
     "       grader card [--week N] --merge A.json B.json ... [--format markdown]\n\n"
     "Prints a progress card to paste in your study group's chat: a list with done (✅), in\n"
     "progress (🚧) and to do (⬜) per chapter, in bold where there is something to say:\n"
     "points, tests, TODOs left, the best benchmark ratios. It renders in Discord (no table)\n"
     "and fits one message. --week N shows one week. --format markdown prints the table form,\n"
     "for places that render tables (Code / Test / Points / Perf columns).\n"
     "--json prints the card's facts for a group card (--name NAME, else your user name).\n"
     "--merge puts several members' --json cards side by side in one group card: a line per\n"
     "member with an emoji per chapter and the day their card was made (with its age when it\n"
     "is two days old or more), then who is where in the chapters under way. When that does\n"
     "not fit one message, it says which --week N card shows the rest.\n"},
    {"session",
     "usage: grader session start \"GOAL\" | grader session end | grader session status\n\n"
     "A study session log. start notes the time, your goal and where you are; end prints a\n"
     "session card (time spent, chapters passed, tests fixed, hints used during the session)\n"
     "and keeps it in your progress; status shows the open session so far.\n"},
    {"bench",
     "usage: grader bench CHAPTER|all [--pes N] [--hosts H1,H2] [--quick] [--ref-deps]\n"
     "                    [--impl solutions]\n\n"
     "Runs the chapter's benchmark, where it has one: your code, the reference and MPI in the\n"
     "same run, over message sizes from 8 B to 64 MiB (--quick: a few sizes up to 1 MiB). Prints\n"
     "a table per operation and size: latency (us) and bus bandwidth (GB/s) of each, and speed\n"
     "ratios (above 1 is faster): yours against the reference, the reference against MPI.\n"
     "Writes a CSV under build/bench/, with a plot of bus bandwidth against size per operation\n"
     "(SVG and PNG, when gnuplot is installed), and keeps your best ratios (the Perf column).\n"
     "all runs every chapter that has a benchmark, one after the other.\n"
     "  --pes N           number of PEs (default 2)\n"
     "  --hosts H1,H2     run across these machines (tools/tshrun -H; README \"Two machines\"):\n"
     "                    chapter 2.5's off-node figures over a real network\n"
     "  --quick           a few sizes, seconds per chapter (make test runs this)\n"
     "  --ref-deps        build yours with every earlier chapter from the reference, as\n"
     "                    grader test --ref-deps does (your chapter's figures, when an earlier\n"
     "                    one is not written)\n"
     "  --impl solutions  the reference and MPI only: nothing of yours is built or recorded\n"},
    {"list", "usage: grader list\n\nThe roadmap: every chapter, its folder, and whether it is "
             "available yet.\n"},
    {"lists",
     "usage: grader lists --check | --write | --paths CHAPTER\n\n"
     "For maintainers. grader/course.json is the one list of chapters; the Makefile's chapter\n"
     "lists and targets, make help's weeks, the README's roadmap and book/pages.txt's chapters\n"
     "restate it between marker lines. --check says which file is out of date, --write rewrites\n"
     "them (tools/update-lists runs it), --paths prints the names of a chapter's places (its\n"
     "folder, page, suite, PE program, benchmark) as shell assignments.\n"},
    {"mutants",
     "usage: grader mutants [CHAPTER | CHAPTER/NAME ...]\n\n"
     "For maintainers (make mutants; make test runs it). Each mistake a chapter's page predicts\n"
     "is a patch of the reference, grader/chapters/X.Y/mutants/NAME.patch, whose header says\n"
     "the mistake (mistake:), the page's section (page:), the tests that catch it as the page\n"
     "names them (tests:, tests of the chapter's suite) and what the failure must say (expect:,\n"
     "one line or more). Each is built as a variant of the reference (make MUTANT=X.Y/NAME\n"
     "IMPL=solutions: only the patched files compile) and the tests it names run on it, two\n"
     "mutants side by side, stopping at the first failed test: a mutant passes when one of\n"
     "them fails by a check, not by a timeout, with a message holding every expect:\n"
     "fragment (each verdict shows how long the test took). Where none does, the whole suite\n"
     "runs on it for the report, which says whether another test would. A chapter needs at\n"
     "least two. Mutants of chapters that cannot run here (GPUs, PyTorch) are skipped, one line\n"
     "saying why (they must still apply). CHAPTER/NAME runs that mutant alone. Exit status 0\n"
     "when every mutant was caught.\n"},
    {"selftest",
     "usage: grader selftest [CHAPTER ...]\n\n"
     "The course's own checks (what `make test` runs): every suite passes on solutions/ and\n"
     "fails on each chapter's stub, the stubs are fresh, every mutant of the reference (grader\n"
     "mutants) is caught, the grader's unit tests and its\n"
     "end-to-end tests (commands, dashboard in tmux, watch mode) pass.\n"
     "With chapters (grader selftest 3.4): the course-wide checks and those chapters' only,\n"
     "without the benchmarks and the grader's own tests.\n"},
    {NULL, NULL},
};

void help(FILE *out, const char *command)
{
    for (int i = 0; command && helps[i].name; i++)
        if (!strcmp(helps[i].name, command)) {
            fputs(helps[i].text, out);
            return;
        }
    fprintf(out,
            "usage: grader [COMMAND] [options]\n\n"
            "With no command: the dashboard on a terminal, else a summary of your progress.\n\n"
            "  grader test [CHAPTER|weekN|all]   build your code and run the chapters' tests\n"
            "  grader watch [CHAPTER]            run them again each time you save a file\n"
            "  grader hint CHAPTER               the next hint: a nudge first, then closer\n"
            "  grader read CHAPTER               the chapter's page of the book, in a pager\n"
            "  grader reset CHAPTER              back to the stub (your files are kept aside)\n"
            "  grader card [--week N]            a progress card for your study group's chat\n"
            "  grader session start \"GOAL\"|end   a study session log and its card\n"
            "  grader bench CHAPTER              your code against the reference and MPI\n"
            "  grader list                       the roadmap\n"
            "  grader selftest                   the course's own checks (make test)\n\n"
            "CHAPTER is a roadmap id such as 1.3. Each command takes --help.\n"
            "Examples: grader test 1.3    grader test 2.2 --ref-deps    grader hint 1.3\n");
}

int wants_help(const char *command, int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            help(stdout, command);
            return 1;
        }
    return 0;
}

int bad_argument(const char *command, const char *arg)
{
    fprintf(stderr, "grader %s: unknown argument '%s' (try grader %s --help).\n", command, arg,
            command);
    return 2;
}

int cmd_list(const struct course *c, int argc, char **argv)
{
    if (wants_help("list", argc, argv))
        return 0;
    if (argc > 0)
        return bad_argument("list", argv[0]);
    int dir = 9, title = 7; /* the columns as wide as their longest entry: 80 columns */
    for (int i = 0; i < c->n; i++) {
        dir = (int)strlen(c->chapters[i].dir) > dir ? (int)strlen(c->chapters[i].dir) : dir;
        title = (int)strlen(c->chapters[i].title) > title ? (int)strlen(c->chapters[i].title)
                                                          : title;
    }
    printf("%-4s  %-*s  %-*s  %s\n", "id", dir, "directory", title, "chapter", "status");
    for (int i = 0; i < c->n; i++) {
        const struct chapter *ch = &c->chapters[i];
        printf("%-4s  %-*s  %-*s  %s\n", ch->id, dir, ch->dir, title, ch->title,
               !ch->available ? "coming" : ch->requires[0] ? "optional" : "available");
    }
    char ids[128], needs[512], line[800];
    if (roadmap_optional(c, ids, sizeof ids, needs, sizeof needs) > 0) {
        printf("\n");
        snprintf(line, sizeof line, "Optional: %s, left out of the chapters done and the points "
                                    "(%s).", ids, needs);
        print_wrapped(stdout, line, 79, 2);
    }
    return 0;
}
