/* test_3_3.cu: chapter 3.3's tests, one scenario per run:
 *   mpirun -np 2 test_3_3 bootstrap|ring_shift|ring_bcast|allreduce|put
 * Rank 0 prints "PASS <scenario>" when every PE agrees; any PE prints "FAIL <scenario>: PE p:
 * ..." (index, expected and seen value) and the job stops with a non-zero status. */
#include "gpu_check.h"
#include <string.h>
#include <vector>

#define WAIT_S 30.0
static int me, npes;
static cudaStream_t st;

__global__ void fill_int(int *p, size_t n, int base)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = base + (int)i;
}

__global__ void fill_bytes(unsigned char *p, size_t n, unsigned salt)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = (unsigned char)(i * 131u + salt);
}

__global__ void fill_float(float *p, size_t n, int pe, int round)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = (float)((i * 7 + (size_t)pe * 3 + (size_t)round) % 64);
}

__global__ void add_float(float *acc, const float *p, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        acc[i] += p[i];
}

static void all_agree(void)
{
    TG_CUDA(cudaDeviceSynchronize());
    nvshmem_barrier_all();
}

static void test_bootstrap(void)
{
    if (nvshmem_n_pes() != npes || nvshmem_my_pe() != me)
        fail_now("NVSHMEM says PE %d of %d, expected PE %d of %d", nvshmem_my_pe(),
                 nvshmem_n_pes(), me, npes);
    int dev = -1;
    TG_CUDA(cudaGetDevice(&dev));
    std::vector<int> devs(npes);
    MPI_Allgather(&dev, 1, MPI_INT, devs.data(), 1, MPI_INT, MPI_COMM_WORLD);
    for (int q = 0; q < npes; q++)
        if (q != me && devs[q] == dev) fail_now("PEs %d and %d both use GPU %d: one PE per GPU", me, q, dev);
    size_t n = (1 << 20) + 3;
    int *buf = (int *)tg_malloc(n * sizeof(int));
    if (!buf) fail_now("tg_malloc(%zu) returned NULL", n * sizeof(int));
    int *again = (int *)tg_malloc(64);
    if (!again || again == buf) fail_now("a second tg_malloc returned %p (first %p)", (void *)again, (void *)buf);
    fill_int<<<64, 256>>>(buf, n, 1000000 * (me + 1));
    all_agree();
    if (tg_peer(buf, me) != buf) fail_now("tg_peer(buf, my own PE) is %p, expected buf itself %p", tg_peer(buf, me), (void *)buf);
    std::vector<int> h(n);
    for (int q = 0; q < npes; q++) {
        int *p = (int *)tg_peer(buf, q);
        TG_CUDA(cudaMemcpy(h.data(), p, n * sizeof(int), cudaMemcpyDefault));
        for (size_t i = 0; i < n; i++)
            if (h[i] != 1000000 * (q + 1) + (int)i)
                fail_now("reading PE %d's buffer through tg_peer: index %zu: expected %d, saw %d", q, i, 1000000 * (q + 1) + (int)i, h[i]);
    }
    all_agree();
    nvshmem_free(again);
    nvshmem_free(buf);
}

static void test_ring_shift(void)
{
    tg_ring_t r;
    tg_ring_create(&r);
    int *dst = (int *)tg_malloc(sizeof(int));
    int left = (me + npes - 1) % npes;
    for (int round = 0; round < 5; round++) {
        TG_CUDA(cudaMemset(dst, 0xff, sizeof(int)));
        all_agree();
        tg_ring_shift(&r, dst, 1000 * (round + 1) + me, st);
        finish(st, "tg_ring_shift", WAIT_S);
        int got;
        TG_CUDA(cudaMemcpy(&got, dst, sizeof got, cudaMemcpyDeviceToHost));
        if (got != 1000 * (round + 1) + left)
            fail_now("round %d: expected %d from PE %d, saw %d", round, 1000 * (round + 1) + left, left, got);
        all_agree();
    }
    nvshmem_free(dst);
    tg_ring_destroy(&r);
}

static void test_ring_bcast(void)
{
    tg_ring_t r;
    tg_ring_create(&r);
    size_t sizes[] = { 0, 1, 15, 4097, (1 << 20) + 3, (size_t)64 << 20 };
    size_t maxb = (size_t)64 << 20;
    unsigned char *buf = (unsigned char *)tg_malloc(maxb + 64);
    std::vector<unsigned char> h(maxb + 64);
    int roots[] = { 0, npes - 1, npes / 2 };
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++)
        for (int ri = 0; ri < 3; ri++) {
            size_t bytes = sizes[k];
            int root = roots[ri];
            unsigned salt = (unsigned)(k * 7 + ri * 3 + root);
            if (me == root) fill_bytes<<<256, 256>>>(buf, bytes, salt);
            else TG_CUDA(cudaMemset(buf, 0xEE, maxb + 64));
            all_agree();
            tg_ring_bcast(&r, buf, bytes, root, st);
            finish(st, "tg_ring_bcast", WAIT_S);
            TG_CUDA(cudaMemcpy(h.data(), buf, bytes + 1, cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < bytes; i++)
                if (h[i] != (unsigned char)(i * 131u + salt))
                    fail_now("broadcast of %zu bytes from root %d: index %zu: expected %u, saw %u", bytes, root, i, (unsigned char)(i * 131u + salt), h[i]);
            if (me != root && h[bytes] != 0xEE)
                fail_now("broadcast of %zu bytes from root %d wrote past the end: index %zu: expected 0xEE, saw %u", bytes, root, bytes, h[bytes]);
            all_agree();
        }
    nvshmem_free(buf);
    tg_ring_destroy(&r);
}

static void test_allreduce(void)
{
    size_t cap = (size_t)64 << 20; /* 256 MiB of floats */
    float *data = (float *)tg_malloc((cap + 4) * sizeof(float));
    std::vector<float> h(cap + 4);
    const size_t one = TG_AR_ONESHOT_MAX / sizeof(float); /* the most floats one shot takes */
    size_t counts[] = { 0, 1, 3, 4, 5, 1000, 4097, one - 1, one, one + 1, 1000003, cap };
    /* Few blocks with the default chunks (small calls one shot), the most blocks with the
     * smallest chunks and the ring for every size, the most blocks one shot up to its largest
     * size. Columns: blocks, threads, min_chunk (0: default), oneshot_max in bytes (-1: default). */
    long shapes[3][4] = { { 8, 256, 0, -1 }, { TG_AR_MAX_CTAS, 1024, 1001, 0 },
                          { TG_AR_MAX_CTAS, 1024, 0, TG_AR_ONESHOT_MAX } };
    for (auto &shape : shapes) {
    tg_allreduce_t ar;
    tg_allreduce_create(&ar, cap, (int)shape[0], (int)shape[1]);
    if (shape[2]) ar.min_chunk = (size_t)shape[2];
    if (shape[3] >= 0) ar.oneshot_max = (size_t)shape[3];
    for (size_t k = 0; k < sizeof counts / sizeof *counts; k++)
        for (int round = 0; round < 2; round++) {
            size_t n = counts[k];
            fill_float<<<256, 256>>>(data, n, me, round);
            TG_CUDA(cudaMemset(data + n, 0, 4 * sizeof(float)));
            all_agree();
            tg_allreduce(&ar, data, n, st);
            finish(st, "tg_allreduce", WAIT_S);
            TG_CUDA(cudaMemcpy(h.data(), data, (n + 1) * sizeof(float), cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < n; i++) {
                float want = 0;
                for (int p = 0; p < npes; p++) want += (float)((i * 7 + (size_t)p * 3 + (size_t)round) % 64);
                if (h[i] != want)
                    fail_now("allreduce of %zu floats (%s; %ld blocks of %ld threads), call %d: index %zu: expected %g, saw %g", n, n * sizeof(float) <= ar.oneshot_max ? "one shot" : "the ring", shape[0], shape[1], round + 1, i, want, h[i]);
            }
            if (h[n] != 0) fail_now("allreduce of %zu floats wrote past the end: index %zu: expected 0, saw %g", n, n, h[n]);
            all_agree();
        }
    tg_allreduce_destroy(&ar);
    }
    /* Calls back to back on the stream, no host barrier between them: a PE may start call r + 1
     * while another still sums call r (the one-shot path's two landing areas). After each call
     * its result is added into acc, which must then hold the sum over the calls. */
    const int calls = 12;
    float *acc;
    TG_CUDA(cudaMalloc(&acc, one * 2 * sizeof(float)));
    for (size_t n : { (size_t)1000, one + 1 }) {
        tg_allreduce_t ar;
        tg_allreduce_create(&ar, cap, TG_AR_MAX_CTAS, 1024);
        TG_CUDA(cudaMemset(acc, 0, n * sizeof(float)));
        all_agree();
        for (int r = 0; r < calls; r++) {
            fill_float<<<256, 256, 0, st>>>(data, n, me, r);
            tg_allreduce(&ar, data, n, st);
            add_float<<<256, 256, 0, st>>>(acc, data, n);
        }
        finish(st, "tg_allreduce, calls back to back", WAIT_S);
        TG_CUDA(cudaMemcpy(h.data(), acc, n * sizeof(float), cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < n; i++) {
            float want = 0;
            for (int r = 0; r < calls; r++)
                for (int p = 0; p < npes; p++) want += (float)((i * 7 + (size_t)p * 3 + (size_t)r) % 64);
            if (h[i] != want)
                fail_now("%d allreduces of %zu floats (%s) back to back on one stream: the sum of their results at index %zu: expected %g, saw %g (a call read a landing area or flag that the next call had already reused?)", calls, n, n * sizeof(float) <= ar.oneshot_max ? "one shot" : "the ring", i, want, h[i]);
        }
        all_agree();
        tg_allreduce_destroy(&ar);
    }
    TG_CUDA(cudaFree(acc));
    nvshmem_free(data);
}

static void test_put(void)
{
    size_t maxb = (size_t)64 << 20;
    unsigned char *dest = (unsigned char *)tg_malloc(maxb + 64), *src;
    TG_CUDA(cudaMalloc(&src, maxb + 64));
    std::vector<unsigned char> h(maxb + 64);
    size_t sizes[] = { 1, 17, 65536 + 5, (1 << 20) * 3 + 1, ((size_t)16 << 20) + 3, maxb };
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    struct { const char *name; void (*put)(void *, const void *, size_t, int, cudaStream_t); } puts[] = {
        { "tg_put_sm", tg_put_sm }, { "tg_put", tg_put } };
    for (auto &p : puts)
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t bytes = sizes[k];
        fill_bytes<<<256, 256>>>(src, bytes, (unsigned)(k * 5 + me));
        TG_CUDA(cudaMemset(dest, 0, maxb + 64));
        all_agree();
        p.put(dest, src, bytes, right, st);
        finish(st, p.name, WAIT_S);
        all_agree();
        TG_CUDA(cudaMemcpy(h.data(), dest, bytes + 1, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < bytes; i++)
            if (h[i] != (unsigned char)(i * 131u + (unsigned)(k * 5 + left)))
                fail_now("%s of %zu bytes from PE %d: index %zu: expected %u, saw %u", p.name, bytes, left, i, (unsigned char)(i * 131u + (unsigned)(k * 5 + left)), h[i]);
        if (h[bytes] != 0) fail_now("%s of %zu bytes wrote past the end: index %zu: expected 0, saw %u", p.name, bytes, bytes, h[bytes]);
        all_agree();
    }
    TG_CUDA(cudaFree(src));
    nvshmem_free(dest);
}

int main(int argc, char **argv)
{
    struct { const char *name; void (*fn)(void); } tests[] = {
        { "bootstrap", test_bootstrap }, { "ring_shift", test_ring_shift },
        { "ring_bcast", test_ring_bcast }, { "allreduce", test_allreduce }, { "put", test_put },
    };
    setenv("NVSHMEM_SYMMETRIC_SIZE", "2G", 0);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &npes);
    g_test = argc > 1 ? argv[1] : "?";
    for (auto &t : tests)
        if (argc == 2 && strcmp(argv[1], t.name) == 0) {
            tg_init();
            TG_CUDA(cudaStreamCreate(&st));
            t.fn();
            TG_CUDA(cudaStreamDestroy(st));
            tg_finalize();
            if (me == 0) printf("PASS %s\n", t.name);
            fflush(stdout);
            MPI_Finalize();
            return 0;
        }
    if (me == 0) {
        fprintf(stderr, "usage: mpirun -np 2 test_3_3 TEST, TEST one of:");
        for (auto &t : tests) fprintf(stderr, " %s", t.name);
        fprintf(stderr, "\n");
    }
    MPI_Finalize();
    return 2;
}
