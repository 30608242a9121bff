/* sweep.h: nothing of a stopped run is left running, and nothing of it stays in /dev/shm. */
#ifndef GRADER_SWEEP_H
#define GRADER_SWEEP_H

/* Stops every process whose environment has TSHMEM_GRADER_RUN=tag (what a run started, even
 * where it left its process group), and removes what they leave in /dev/shm. */
void sweep_run(const char *tag);

#endif
