/* bench_3_6.c: chapter 3.6's benchmark is Python (grader/chapters/3.6/bench_3_6.py); this is the same
 * launcher as the PE program's (grader/chapters/3.6/pe_3_6.c), which picks the script by its own name. */
#include "pe_3_6.c"
