/* bench_pair.h: the ping-pong that chapters 2.5 and 2.6 both measure across nodes: PE 0 and its
 * peer on the other node, put-with-signal back and forth (one round trip), against MPI_Send and
 * MPI_Recv between the same two PEs. Every other PE sits the measurement out.
 *
 * A benchmark's context keeps the fields these read; each of its run functions passes them.
 */
#ifndef BENCH_PAIR_H
#define BENCH_PAIR_H

#include "bench.h"

/* The two PEs of the pair. */
static inline int bench_in_pair(int me, int peer) { return me == 0 || me == peer; }

/* One round trip of `bytes`: PE 0 puts msg into buf at the peer and sets sig[0] to the
 * iteration's number, the peer waits for it and answers the same way through sig[1]. */
static inline void bench_pair_pingpong(char *buf, const char *msg, size_t bytes, uint64_t *sig,
                                       int me, int peer, int iter)
{
    if (!bench_in_pair(me, peer))
        return;
    uint64_t seq = (uint64_t)iter + 1;
    if (me == 0) {
        tshmem_putmem_signal(buf, msg, bytes, &sig[0], seq, TSHMEM_SIGNAL_SET, peer);
        tshmem_signal_wait_until(&sig[1], TSHMEM_CMP_GE, seq);
    } else {
        tshmem_signal_wait_until(&sig[0], TSHMEM_CMP_GE, seq);
        tshmem_putmem_signal(buf, msg, bytes, &sig[1], seq, TSHMEM_SIGNAL_SET, 0);
    }
}

/* MPI's round trip between the same two PEs: MPI_Send, then MPI_Recv of the answer. */
static inline void bench_pair_mpi_pingpong(char *msg, size_t bytes, int me, int peer)
{
    if (me == 0) {
        MPI_Send(msg, (int)bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
        MPI_Recv(msg, (int)bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (me == peer) {
        MPI_Recv(msg, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(msg, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
}

#endif
