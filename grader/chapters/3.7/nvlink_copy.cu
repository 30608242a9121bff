/* nvlink_copy.cu: chapter 3.7's NVLink copy study (book/3.7-gpu-moe.md, "Why 64 channels"), no
 * ring and no NVSHMEM around it: one process drives every GPU, and each GPU writes `bytes` into
 * the next GPU's memory at once (a ring of peers, over peer access), three ways: SM stores (a
 * copy kernel of 16-byte loads and stores, 4 in flight a thread, on 16 to 132 blocks), bulk
 * copies through the tensor memory accelerator (one thread a block: global -> shared -> the
 * peer's global, S stages of CHUNK bytes, on 8 to 132 blocks), and the copy engine
 * (cudaMemcpyAsync). Prints GB/s per GPU (bytes / the slowest GPU's time, median of 20) at
 * 16 MiB, 256 MiB and 1 GiB, then checks that the last copy landed whole.
 *   tools/gpu-nvlink [GPUS]   (builds it into build/gpu/nvlink_copy; default: every GPU) */
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <chrono>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "nvlink_copy: %s failed: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void sm_copy(int4 *d, const int4 *s, size_t n4)
{
    size_t per = (n4 + gridDim.x - 1) / gridDim.x, b = blockIdx.x * per, e = min(n4, b + per);
    size_t v = b + threadIdx.x, L = blockDim.x;
    for (; v + 3 * L < e; v += 4 * L) {
        int4 a = __ldcg(s + v), c = __ldcg(s + v + L), f = __ldcg(s + v + 2 * L), g = __ldcg(s + v + 3 * L);
        d[v] = a, d[v + L] = c, d[v + 2 * L] = f, d[v + 3 * L] = g;
    }
    for (; v < e; v += L) d[v] = __ldcg(s + v);
}

__device__ static inline unsigned smem_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

// One thread drives S stages of CHUNK bytes: load chunk i (bulk, completes on mbar[i % S]),
// store it to the peer (bulk group); a stage is refilled once its store has read it.
template <int S, int CHUNK>
__global__ void tma_copy(char *d, const char *s, size_t bytes)
{
    extern __shared__ __align__(128) char buf[];
    __shared__ __align__(8) unsigned long long mbar[S];
    size_t per = ((bytes + gridDim.x - 1) / gridDim.x + CHUNK - 1) / CHUNK * CHUNK;
    size_t b = blockIdx.x * per, e = min(bytes, b + per);
    if (threadIdx.x != 0 || b >= e) return;
    for (int i = 0; i < S; i++)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem_addr(&mbar[i])));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    size_t n = (e - b + CHUNK - 1) / CHUNK;
    unsigned phase = 0; // bit i: parity of stage i's next completion
    auto load = [&](size_t i) {
        int st = (int)(i % S);
        size_t off = b + i * CHUNK;
        unsigned len = (unsigned)min((size_t)CHUNK, e - off);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(smem_addr(&mbar[st])), "r"(len) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     :: "r"(smem_addr(buf + (size_t)st * CHUNK)), "l"(s + off), "r"(len), "r"(smem_addr(&mbar[st])) : "memory");
    };
    for (size_t i = 0; i < n && i < (size_t)S - 1; i++) load(i);
    for (size_t i = 0; i < n; i++) {
        size_t j = i + S - 1;
        if (j < n) {
            // stage j % S held chunk i - 1: its store must have read it
            asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
            load(j);
        }
        int st = (int)(i % S);
        unsigned done = 0, par = (phase >> st) & 1;
        while (!done)
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                         : "=r"(done) : "r"(smem_addr(&mbar[st])), "r"(par) : "memory");
        phase ^= 1u << st;
        size_t off = b + i * CHUNK;
        unsigned len = (unsigned)min((size_t)CHUNK, e - off);
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                     :: "l"(d + off), "r"(smem_addr(buf + (size_t)st * CHUNK)), "r"(len) : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    }
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

static int ng;
static std::vector<cudaStream_t> st;
static std::vector<char *> src, dst;
static std::vector<cudaEvent_t> e0, e1;

template <class F> static double med(F launch, size_t bytes, int reps = 20)
{
    std::vector<double> t;
    for (int r = 0; r < reps + 3; r++) {
        for (int g = 0; g < ng; g++) { CK(cudaSetDevice(g)); CK(cudaDeviceSynchronize()); }
        for (int g = 0; g < ng; g++) { CK(cudaSetDevice(g)); CK(cudaEventRecord(e0[g], st[g])); launch(g); CK(cudaEventRecord(e1[g], st[g])); }
        double worst = 0;
        for (int g = 0; g < ng; g++) {
            CK(cudaSetDevice(g)); CK(cudaEventSynchronize(e1[g]));
            float ms; CK(cudaEventElapsedTime(&ms, e0[g], e1[g]));
            worst = std::max(worst, (double)ms * 1e3);
        }
        if (r >= 3) t.push_back(worst);
    }
    std::sort(t.begin(), t.end());
    return bytes / t[t.size() / 2] / 1e3;
}

template <int S, int CHUNK> static void tma_row(size_t bytes, int blocks)
{
    size_t smem = (size_t)S * CHUNK;
    for (int g = 0; g < ng; g++) {
        CK(cudaSetDevice(g));
        CK(cudaFuncSetAttribute(tma_copy<S, CHUNK>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    }
    double gbps = med([&](int g) {
        tma_copy<S, CHUNK><<<blocks, 32, smem, st[g]>>>(dst[(g + 1) % ng], src[g], bytes);
        CK(cudaGetLastError());
    }, bytes);
    printf("tma   stages=%d chunk=%6d blocks=%3d %10zu bytes: %7.1f GB/s\n", S, CHUNK, blocks, bytes, gbps);
}

int main(int argc, char **argv)
{
    int have = 0;
    CK(cudaGetDeviceCount(&have));
    ng = argc > 1 ? atoi(argv[1]) : have;
    if (argc > 2 || ng < 2 || ng > have) {
        fprintf(stderr, "nvlink_copy: GPUS = %s: give 2 to %d (the GPUs this machine has; each "
                "writes into the next)\n", argc > 1 ? argv[1] : "(all)", have);
        return 2;
    }
    for (int g = 0; g < ng; g++) {
        int ok = 0;
        CK(cudaDeviceCanAccessPeer(&ok, g, (g + 1) % ng));
        if (!ok) {
            fprintf(stderr, "nvlink_copy: GPU %d cannot map GPU %d's memory (no peer access "
                    "between them): the study needs NVLink or PCIe peer access\n", g, (g + 1) % ng);
            return 2;
        }
    }
    size_t maxb = (size_t)1 << 30;
    st.resize(ng), src.resize(ng), dst.resize(ng), e0.resize(ng), e1.resize(ng);
    for (int g = 0; g < ng; g++) {
        CK(cudaSetDevice(g));
        for (int p = 0; p < ng; p++) if (p != g) CK(cudaDeviceEnablePeerAccess(p, 0));
        CK(cudaStreamCreateWithFlags(&st[g], cudaStreamNonBlocking));
        CK(cudaMalloc(&src[g], maxb)); CK(cudaMalloc(&dst[g], maxb));
        CK(cudaMemset(src[g], g + 1, maxb)); CK(cudaMemset(dst[g], 0, maxb));
        CK(cudaEventCreate(&e0[g])); CK(cudaEventCreate(&e1[g]));
    }
    printf("# %d GPUs, each writes to the next\n", ng);
    for (size_t bytes : { (size_t)16 << 20, (size_t)256 << 20, (size_t)1 << 30 }) {
        double ce = med([&](int g) { CK(cudaMemcpyAsync(dst[(g + 1) % ng], src[g], bytes, cudaMemcpyDeviceToDevice, st[g])); }, bytes);
        printf("ce    %10zu bytes: %7.1f GB/s\n", bytes, ce);
        for (int blocks : { 16, 32, 48, 64, 96, 132 })
            for (int threads : { 512, 1024 }) {
                double gbps = med([&](int g) {
                    sm_copy<<<blocks, threads, 0, st[g]>>>((int4 *)dst[(g + 1) % ng], (const int4 *)src[g], bytes / 16);
                    CK(cudaGetLastError());
                }, bytes);
                printf("sm    threads=%4d blocks=%3d %10zu bytes: %7.1f GB/s\n", threads, blocks, bytes, gbps);
            }
        for (int blocks : { 8, 16, 32, 64, 132 }) {
            tma_row<4, 16384>(bytes, blocks);
            tma_row<8, 16384>(bytes, blocks);
            tma_row<4, 32768>(bytes, blocks);
        }
    }
    // check: the last copy landed whole (tma, 1 GiB): dst of GPU g+1 holds g + 1 everywhere
    std::vector<char> h(maxb);
    int bad = 0;
    for (int g = 0; g < ng; g++) {
        CK(cudaSetDevice((g + 1) % ng));
        CK(cudaMemcpy(h.data(), dst[(g + 1) % ng], maxb, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < maxb; i += 4099) bad += h[i] != (char)(g + 1);
    }
    printf("check: %s\n", bad ? "FAIL" : "PASS");
    return bad != 0;
}
