/* schedule.c: the order in which a stage runs its micro-batches: GPipe and 1F1B.
 *
 * Chapter 3.2. Both schedules run the same work on stage s of p: for every micro-batch one
 * forward (receive the activation from stage s - 1, or make the input on stage 0; compute;
 * send to stage s + 1 unless last) and one backward (receive the gradient from stage s + 1,
 * or take it from the loss on the last stage; compute; send to stage s - 1 unless first).
 * They differ only in the order:
 *
 *   GPipe: F0 F1 ... F(m-1), then B0 B1 ... B(m-1). Every stage stashes all m micro-batches.
 *   1F1B:  w = min(p - s - 1, m) forwards (warm-up); then F(i) B(i - w) in turn (steady
 *          state); then the last w backwards (cool-down). Stage s stashes at most p - s.
 *
 * Both run the backwards in micro-batch order, so every stage adds its gradients in the same
 * order as the single-process run (stage.c), and the results are equal bit for bit. The bubble
 * is the same, (p - 1) / (m + p - 1) of the step; what 1F1B saves is memory.
 */
#define TSHMEM_CHAPTER "3.2"
#include "tshmem_internal.h"
#include "tshmem_pipe.h"

/* Provided: the checks both schedules start with, then the model's step begins. */
static void schedule_begin(const char *func, tshmem_pipe_t *p, struct tshmem_pipe_model *m,
                           long step, int n_micro)
{
    tshmem_require_live(func);
    if (p == NULL || p->magic != TSHMEM_PIPE_MAGIC)
        tshmem_fail(func, "PE %d passed %p, which is not a live pipe: pass what "
                    "tshmem_pipe_create returned.", tshmem_g.my_pe, (void *)p);
    if (p->stage < 0)
        tshmem_fail(func, "PE %d is not a member of the pipe's team: only its PEs are stages.",
                    tshmem_g.my_pe);
    if (m == NULL)
        tshmem_fail(func, "PE %d passed model = NULL: pass this stage's tshmem_pipe_model.",
                    tshmem_g.my_pe);
    if (m->stage != p->stage || m->n_stages != p->n_stages)
        tshmem_fail(func, "PE %d is stage %d of %d, but its model is stage %d of %d: "
                    "initialize the model with tshmem_pipe_stage and tshmem_pipe_n_stages.",
                    tshmem_g.my_pe, p->stage, p->n_stages, m->stage, m->n_stages);
    if (m->act_elems != p->act_elems)
        tshmem_fail(func, "PE %d: the model's micro-batch has %zu floats (rows x width) but the "
                    "pipe carries %zu: create the pipe with act_elems = rows x width.",
                    tshmem_g.my_pe, m->act_elems, p->act_elems);
    if (n_micro < 0)
        tshmem_fail(func, "PE %d passed n_micro = %d: a step has 0 or more micro-batches.",
                    tshmem_g.my_pe, n_micro);
    tshmem_pipe_model_begin(m, step, n_micro);
}

/* One micro-batch's forward on this stage, from receiving its input to sending its output. */
void tshmem_pipe_forward_step(tshmem_pipe_t *p, struct tshmem_pipe_model *m, int mb)
{
    (void)p; (void)m; (void)mb;
    TSHMEM_TODO("A micro-batch's steps", "input (stage 0: tshmem_pipe_model_input into m->x; else the zero-copy receive from the stage before), tshmem_pipe_model_forward into m->y, release the input's slot, send m->y on unless this is the last stage");
}

/* One micro-batch's backward on this stage. */
void tshmem_pipe_backward_step(tshmem_pipe_t *p, struct tshmem_pipe_model *m, int mb)
{
    (void)p; (void)m; (void)mb;
    TSHMEM_TODO("A micro-batch's steps", "gradient (last stage: NULL, the loss gives it; else the zero-copy receive from the stage after), tshmem_pipe_model_backward into m->dx (NULL on stage 0), release the gradient's slot, send m->dx back unless this is stage 0");
}

double tshmem_pipe_gpipe(tshmem_pipe_t *pipe, struct tshmem_pipe_model *model, long step,
                         int n_micro)
{
    schedule_begin(__func__, pipe, model, step, n_micro);
    TSHMEM_TODO("GPipe", "every forward in micro-batch order, then every backward in micro-batch order");
    return pipe->stage + 1 == pipe->n_stages ? model->loss : 0.0;
}

double tshmem_pipe_1f1b(tshmem_pipe_t *pipe, struct tshmem_pipe_model *model, long step,
                        int n_micro)
{
    schedule_begin(__func__, pipe, model, step, n_micro);
    TSHMEM_TODO("1F1B", "warm-up of w = min(n_stages - stage - 1, n_micro) forwards; then forward w + i and backward i in turn; then the last w backwards");
    return pipe->stage + 1 == pipe->n_stages ? model->loss : 0.0;
}
