#define TSHMEM_CHAPTER "1.1"

int tshmem_n_pes(void)
{
    return tshmem_state.npes;
    /* END SOLUTION */
}
