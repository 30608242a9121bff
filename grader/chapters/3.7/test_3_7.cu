/* test_3_7.cu: chapter 3.7's tests, one scenario per run:
 *   mpirun -np N test_3_7 ring|dispatch|combine|layers|no_p2p|low_latency|allgather
 * Any number of PEs from 2 (on fewer GPUs than PEs, PEs share a GPU). Every PE generates every
 * PE's tokens and routing from the same formulas, so each can compute, on the host, what chapter
 * 3.1's CPU reference gives for them: the rows it must receive, in 3.1's order (local expert,
 * then source PE, then token, then slot), and its combined outputs, summed as 3.1's combine sums
 * (out[h] += w * row[h] in slot order, no fused multiply-add). The GPU results must be the same
 * bits. Rank 0 prints "PASS <test>"; a failure prints "FAIL <test>: PE p: ..." and stops. */
#define GPU_CHAPTER_H "tmoe.h"
#include "gpu_check.h"
#include <math.h>
#include <string.h>
#include <vector>

static int me, npes;
static cudaStream_t st;

static uint32_t mix(uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    uint32_t h = a * 0x9E3779B1u ^ (b + 0x7F4A7C15u) * 0x85EBCA77u ^ (c + 11) * 0xC2B2AE3Du ^ d * 0x27D4EB2Fu;
    h ^= h >> 15, h *= 0x2C1B3C6Du, h ^= h >> 12, h *= 0x297A2D39u, h ^= h >> 15;
    return h;
}

/* One layer's inputs, the same formulas on every PE. skew: every token goes to PE 0's experts. */
struct layer_in {
    int E, H, k, layer, skew;
    int tokens(int pe) const { return skew && pe == npes - 1 ? 0 : 40 + (int)(mix(pe, layer, 1, 2) % 200); }
    float x(int pe, int t, int h) const { return (float)((int)(mix(pe, t, h, layer) % 200001) - 100000) / 1024.0f; }
    int idx(int pe, int t, int s) const {
        uint32_t u = mix(pe, t, s + 100, layer);
        if (u % 8 == 0) return -1; /* an empty slot */
        int span = skew ? tm_first_expert(E, npes, 1) : E;
        return span > 0 ? (int)((u >> 3) % (uint32_t)span) : -1;
    }
    float w(int pe, int t, int s) const { return (float)(mix(pe, t, s + 200, layer) % 65536 + 1) / 65537.0f; }
};
static float scale(int e) { return 1.0f + (float)e / 64.0f; } /* the "expert": a multiply */

/* The expert step between dispatch and combine: row r of local expert l is multiplied by
 * scale(first + l), rounded once (the host model does the same). */
__global__ void expert_kernel(float *out, const float *in, int n_rows, int H, const int *offset,
                              int n_local, int first)
{
    for (int r = blockIdx.x; r < n_rows; r += gridDim.x) {
        int l = 0;
        while (l + 1 < n_local && offset[l + 1] <= r) l++;
        for (int h = threadIdx.x; h < H; h += blockDim.x)
            out[(size_t)r * H + h] = __fmul_rn(in[(size_t)r * H + h], 1.0f + (float)(first + l) / 64.0f);
    }
}

struct expected_row { int pe, t, s; };

/* What 3.1's dispatch gives PE me: its rows in order. */
static std::vector<expected_row> model_rows(const layer_in &in, int first, int n_local)
{
    std::vector<expected_row> rows;
    for (int l = 0; l < n_local; l++)
        for (int j = 0; j < npes; j++)
            for (int t = 0; t < in.tokens(j); t++)
                for (int s = 0; s < in.k; s++)
                    if (in.idx(j, t, s) == first + l) rows.push_back({ j, t, s });
    return rows;
}

/* y against 3.1's combine: out[h] += w * row[h], slot by slot, the expert a multiply. */
static void check_combined(const layer_in &in, const float *y, const char *what)
{
    int T = in.tokens(me), k = in.k, H = in.H;
    std::vector<float> hy((size_t)T * H + 1);
    TM_CUDA(cudaMemcpy(hy.data(), y, (size_t)T * H * 4, cudaMemcpyDeviceToHost));
    for (int t = 0; t < T; t++)
        for (int h = 0; h < H; h++) {
            volatile float acc = 0.0f; /* 3.1's combine: out[h] += w * row[h], slot by slot */
            for (int s = 0; s < k; s++) {
                int e = in.idx(me, t, s);
                if (e < 0) continue;
                volatile float row = in.x(me, t, h) * scale(e);
                volatile float prod = in.w(me, t, s) * row;
                acc = acc + prod;
            }
            float a = acc;
            if (memcmp(&hy[(size_t)t * H + h], &a, 4) != 0)
                fail_now("%s: y[token %d][%d]: expected %.9g (chapter 3.1's sum), saw %.9g%s", what, t, h, a, hy[(size_t)t * H + h], fabsf(a - hy[(size_t)t * H + h]) <= 1e-5f * fabsf(a) ? " (right up to rounding: the slot order, or a fused multiply-add, differs from 3.1's)" : "");
        }
}

/* One layer through tm_dispatch, the expert kernel and tm_combine, checked against the model. */
static void run_layer(tm_moe_t *moe, const layer_in &in, int check_rows, const char *what)
{
    int T = in.tokens(me), k = in.k, H = in.H;
    std::vector<float> hx((size_t)T * H + 1), hw((size_t)T * k + 1);
    std::vector<int> hi((size_t)T * k + 1);
    for (int t = 0; t < T; t++) {
        for (int h = 0; h < H; h++) hx[(size_t)t * H + h] = in.x(me, t, h);
        for (int s = 0; s < k; s++) hi[(size_t)t * k + s] = in.idx(me, t, s), hw[(size_t)t * k + s] = in.w(me, t, s);
    }
    float *x, *w, *y, *out;
    int *idx, *offset;
    TM_CUDA(cudaMalloc(&x, hx.size() * 4));
    TM_CUDA(cudaMalloc(&w, hw.size() * 4));
    TM_CUDA(cudaMalloc(&idx, hi.size() * 4));
    TM_CUDA(cudaMalloc(&y, ((size_t)T * H + 1) * 4));
    TM_CUDA(cudaMemcpy(x, hx.data(), hx.size() * 4, cudaMemcpyHostToDevice));
    TM_CUDA(cudaMemcpy(w, hw.data(), hw.size() * 4, cudaMemcpyHostToDevice));
    TM_CUDA(cudaMemcpy(idx, hi.data(), hi.size() * 4, cudaMemcpyHostToDevice));
    float *recv;
    tm_layout_t lay;
    tm_dispatch(moe, x, T, idx, w, &recv, &lay, st);
    std::vector<expected_row> want = model_rows(in, moe->first_expert, moe->n_local);
    if (lay.n_rows != (int)want.size())
        fail_now("%s: tm_dispatch says %d rows arrived here, chapter 3.1's layout gives %zu", what, lay.n_rows, want.size());
    for (int l = 0, at = 0; l < lay.n_local_experts; l++) {
        int c = 0;
        for (auto &r : want) c += in.idx(r.pe, r.t, r.s) == lay.first_expert + l;
        if (lay.expert_count[l] != c || lay.expert_offset[l] != at)
            fail_now("%s: local expert %d: count %d at offset %d, expected %d at %d", what, l, lay.expert_count[l], lay.expert_offset[l], c, at);
        at += c;
    }
    int R = lay.n_rows;
    TM_CUDA(cudaMalloc(&out, ((size_t)R * H + 1) * 4));
    TM_CUDA(cudaMalloc(&offset, (lay.n_local_experts + 1) * sizeof(int)));
    TM_CUDA(cudaMemcpyAsync(offset, lay.expert_offset, (lay.n_local_experts + 1) * sizeof(int), cudaMemcpyHostToDevice, st));
    if (R) expert_kernel<<<256, 256, 0, st>>>(out, recv, R, H, offset, lay.n_local_experts, lay.first_expert);
    finish(st, "tm_dispatch", 60);
    if (check_rows && R) {
        std::vector<float> hr((size_t)R * H);
        std::vector<int> pe(R), tok(R), slot(R);
        TM_CUDA(cudaMemcpy(hr.data(), recv, hr.size() * 4, cudaMemcpyDeviceToHost));
        TM_CUDA(cudaMemcpy(pe.data(), lay.src_pe, R * 4, cudaMemcpyDeviceToHost));
        TM_CUDA(cudaMemcpy(tok.data(), lay.src_token, R * 4, cudaMemcpyDeviceToHost));
        TM_CUDA(cudaMemcpy(slot.data(), lay.src_slot, R * 4, cudaMemcpyDeviceToHost));
        for (int r = 0; r < R; r++) {
            const expected_row &e = want[r];
            if (pe[r] != e.pe || tok[r] != e.t || slot[r] != e.s)
                fail_now("%s: received row %d: layout says (PE %d, token %d, slot %d), chapter 3.1's order puts (PE %d, token %d, slot %d) there: rows are grouped by local expert, then source PE, then token, then slot", what, r, pe[r], tok[r], slot[r], e.pe, e.t, e.s);
            for (int h = 0; h < H; h++) {
                float v = in.x(e.pe, e.t, h);
                if (memcmp(&hr[(size_t)r * H + h], &v, 4) != 0)
                    fail_now("%s: received row %d (PE %d's token %d), float %d: expected %.9g, saw %.9g", what, r, e.pe, e.t, h, v, hr[(size_t)r * H + h]);
                }
        }
    }
    tm_combine(moe, out, y, st);
    finish(st, "tm_combine", 60);
    check_combined(in, y, what);
    cudaFree(x), cudaFree(w), cudaFree(idx), cudaFree(y), cudaFree(out), cudaFree(offset);
}

/* The expert step on the padded buffer: region (l, j) is local expert l's. */
__global__ void expert_ll_kernel(float *out, const float *in, size_t rows, int H, size_t per_expert,
                                 int first)
{
    for (size_t r = blockIdx.x; r < rows; r += gridDim.x)
        for (int h = threadIdx.x; h < H; h += blockDim.x)
            out[r * H + h] = __fmul_rn(in[r * H + h], 1.0f + (float)(first + (int)(r / per_expert)) / 64.0f);
}

/* One layer through tm_dispatch_ll: every region's count and rows (PE j's rows for the expert,
 * in token and slot order, from the region's first row), then tm_combine_ll's sums. */
static void run_layer_ll(tm_moe_t *moe, const layer_in &in, const char *what)
{
    int T = in.tokens(me), k = in.k, H = in.H, M = moe->max_tokens, nl = moe->n_local;
    std::vector<float> hx((size_t)T * H + 1), hw((size_t)T * k + 1);
    std::vector<int> hi((size_t)T * k + 1);
    for (int t = 0; t < T; t++) {
        for (int h = 0; h < H; h++) hx[(size_t)t * H + h] = in.x(me, t, h);
        for (int s = 0; s < k; s++) hi[(size_t)t * k + s] = in.idx(me, t, s), hw[(size_t)t * k + s] = in.w(me, t, s);
    }
    float *x, *w, *y, *out, *recv;
    int *idx;
    const int *count;
    size_t rows = (size_t)nl * npes * M;
    TM_CUDA(cudaMalloc(&x, hx.size() * 4));
    TM_CUDA(cudaMalloc(&w, hw.size() * 4));
    TM_CUDA(cudaMalloc(&idx, hi.size() * 4));
    TM_CUDA(cudaMalloc(&y, ((size_t)T * H + 1) * 4));
    TM_CUDA(cudaMalloc(&out, (rows * H + 1) * 4));
    TM_CUDA(cudaMemcpy(x, hx.data(), hx.size() * 4, cudaMemcpyHostToDevice));
    TM_CUDA(cudaMemcpy(w, hw.data(), hw.size() * 4, cudaMemcpyHostToDevice));
    TM_CUDA(cudaMemcpy(idx, hi.data(), hi.size() * 4, cudaMemcpyHostToDevice));
    tm_dispatch_ll(moe, x, T, idx, w, &recv, &count, st);
    if (rows) expert_ll_kernel<<<256, 256, 0, st>>>(out, recv, rows, H, (size_t)npes * M, moe->first_expert);
    finish(st, "tm_dispatch_ll", 60);
    std::vector<int> hc((size_t)nl * npes + 1);
    std::vector<float> hr(rows * H + 1);
    TM_CUDA(cudaMemcpy(hc.data(), count, (size_t)nl * npes * 4, cudaMemcpyDeviceToHost));
    TM_CUDA(cudaMemcpy(hr.data(), recv, rows * H * 4, cudaMemcpyDeviceToHost));
    for (int l = 0; l < nl; l++)
        for (int j = 0; j < npes; j++) {
            int e = moe->first_expert + l, i = 0;
            for (int t = 0; t < in.tokens(j); t++)
                for (int s = 0; s < k; s++) {
                    if (in.idx(j, t, s) != e) continue;
                    const float *row = &hr[(((size_t)l * npes + j) * M + i) * H];
                    for (int h = 0; h < H; h++) {
                        float v = in.x(j, t, h);
                        if (i < M && memcmp(&row[h], &v, 4) != 0)
                            fail_now("%s: expert %d, region of PE %d, row %d: should be PE %d's token %d (slot %d), float %d: expected %.9g, saw %.9g (rows of a region are in token and slot order, from its first row)", what, e, j, i, j, t, s, h, v, row[h]);
                    }
                    i++;
                }
            if (hc[(size_t)l * npes + j] != i)
                fail_now("%s: recv_count for expert %d from PE %d is %d, PE %d routed %d rows to it", what, e, j, hc[(size_t)l * npes + j], j, i);
        }
    tm_combine_ll(moe, out, y, st);
    finish(st, "tm_combine_ll", 60);
    check_combined(in, y, what);
    cudaFree(x), cudaFree(w), cudaFree(idx), cudaFree(y), cudaFree(out);
}

/* The ring: every PE streams to its right neighbour while it receives from its left one, in
 * messages of one slot, many more messages than slots (the sender waits for the tail), several
 * calls in a row (the counters carry on), both write paths. */
static void test_ring_path(int p2p)
{
    tm_ring_t r;
    tm_ring_create(&r, 4, 4096);
    r.p2p = p2p && r.p2p;
    size_t maxb = (1 << 20) + 5;
    unsigned char *src, *dst;
    TM_CUDA(cudaMalloc(&src, maxb + 64));
    TM_CUDA(cudaMalloc(&dst, maxb + 64));
    std::vector<unsigned char> h(maxb + 64), hs(maxb);
    size_t sizes[] = { 1, 17, 4096, 4096 * 3 + 5, 4096 * 4 + 1, maxb };
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    for (size_t c = 0; c < sizeof sizes / sizeof *sizes; c++) {
        size_t bytes = sizes[c];
        for (size_t i = 0; i < bytes; i++) hs[i] = (unsigned char)(i * 131u + c * 7 + me);
        TM_CUDA(cudaMemcpy(src, hs.data(), bytes, cudaMemcpyHostToDevice));
        TM_CUDA(cudaMemset(dst, 0xEE, maxb + 64));
        tm_ring_stream(&r, right, src, left, dst, bytes, st);
        finish(st, "tm_ring_stream", 60);
        TM_CUDA(cudaMemcpy(h.data(), dst, bytes + 1, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < bytes; i++)
            if (h[i] != (unsigned char)(i * 131u + c * 7 + left))
                fail_now("ring (%s path), call %zu, %zu bytes from PE %d: byte %zu (message %zu, slot %zu): expected %u, saw %u", p2p ? "nvshmem_ptr" : "put-with-signal", c + 1, bytes, left, i, i / 4096 + 1, (i / 4096) % 4, (unsigned char)(i * 131u + c * 7 + left), h[i]);
        if (h[bytes] != 0xEE) fail_now("ring: call %zu of %zu bytes wrote past the end of dst", c + 1, bytes);
    }
    /* Three channels (rings) at once: every message goes through ring m % 3, the first sizes
     * leave some channels without any; then every channel there may be (TM_MAX_CHANNELS: a
     * stream that starts more than 16 is launched with the rings' larger set). */
    for (int nch : { 3, TM_MAX_CHANNELS }) {
        tm_ring_t rs[TM_MAX_CHANNELS];
        for (int x = 0; x < nch; x++) {
            tm_ring_create(&rs[x], 2, 4096);
            rs[x].p2p = p2p && rs[x].p2p;
        }
        for (size_t c = 0; c < sizeof sizes / sizeof *sizes; c++) {
            size_t bytes = sizes[c];
            for (size_t i = 0; i < bytes; i++) hs[i] = (unsigned char)(i * 37u + c * 5 + nch + me);
            TM_CUDA(cudaMemcpy(src, hs.data(), bytes, cudaMemcpyHostToDevice));
            TM_CUDA(cudaMemset(dst, 0xEE, maxb + 64));
            tm_ring_stream_channels(rs, nch, right, src, left, dst, bytes, st);
            finish(st, "tm_ring_stream_channels", 60);
            TM_CUDA(cudaMemcpy(h.data(), dst, bytes + 1, cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < bytes; i++)
                if (h[i] != (unsigned char)(i * 37u + c * 5 + nch + left))
                    fail_now("ring over %d channels (%s path), call %zu, %zu bytes from PE %d: byte %zu (channel %zu): expected %u, saw %u", nch, p2p ? "nvshmem_ptr" : "put-with-signal", c + 1, bytes, left, i, (i / 4096) % nch, (unsigned char)(i * 37u + c * 5 + nch + left), h[i]);
            if (h[bytes] != 0xEE) fail_now("ring over %d channels: call %zu of %zu bytes wrote past the end of dst", nch, c + 1, bytes);
        }
        for (int x = 0; x < nch; x++) tm_ring_destroy(&rs[x]);
    }
    TM_CUDA(cudaFree(src));
    TM_CUDA(cudaFree(dst));
    tm_ring_destroy(&r);
}

static void test_ring(void) { test_ring_path(1); }

static void test_dispatch(void)
{
    tm_config_t c = { 64, 256, 6, 256 };
    tm_moe_t *moe = tm_moe_create(&c);
    run_layer(moe, layer_in{ 64, 256, 6, 1, 0 }, 1, "dispatch, E=64, top-6");
    tm_moe_destroy(moe);
}

static void test_combine(void)
{
    tm_config_t c = { 16, 512, 4, 256 };
    tm_moe_t *moe = tm_moe_create(&c);
    run_layer(moe, layer_in{ 16, 512, 4, 2, 0 }, 0, "combine, E=16, top-4");
    tm_moe_destroy(moe);
}

/* Five layers back to back with no barrier, a skewed one (every token to PE 0's experts, the
 * last PE with no tokens), and a layer with fewer experts than PEs (some PEs own none). */
static void test_layers(void)
{
    tm_config_t c = { 8, 128, 6, 256 };
    tm_moe_t *moe = tm_moe_create(&c);
    for (int L = 0; L < 5; L++)
        run_layer(moe, layer_in{ 8, 128, 6, 10 + L, L == 2 }, 1, L == 2 ? "layer 3 of 5 (skewed)" : "layers back to back");
    tm_moe_destroy(moe);
    tm_config_t one = { 1, 64, 2, 256 };
    moe = tm_moe_create(&one);
    run_layer(moe, layer_in{ 1, 64, 2, 20, 0 }, 1, "one expert for all PEs");
    run_layer(moe, layer_in{ 1, 64, 2, 21, 0 }, 1, "one expert for all PEs, second layer");
    tm_moe_destroy(moe);
}

/* Every byte through NVSHMEM's puts (what a peer on another node gets): TMOE_NO_P2P=1. */
static void test_no_p2p(void)
{
    setenv("TMOE_NO_P2P", "1", 1);
    test_ring_path(0);
    tm_config_t c = { 32, 256, 6, 256 };
    tm_moe_t *moe = tm_moe_create(&c);
    if (moe->p2p) fail_now("TMOE_NO_P2P=1 is set, but tm_moe_create left the nvshmem_ptr path on");
    for (int L = 0; L < 3; L++) run_layer(moe, layer_in{ 32, 256, 6, 30 + L, L == 1 }, 1, "puts only (TMOE_NO_P2P=1)");
    tm_moe_destroy(moe);
}

/* Low-latency layers back to back (one skewed: the last PE sends nothing), with a normal layer
 * between them on the same handle. */
static void test_low_latency(void)
{
    tm_config_t c = { 32, 256, 6, 256 };
    tm_moe_t *moe = tm_moe_create(&c);
    run_layer_ll(moe, layer_in{ 32, 256, 6, 40, 0 }, "low-latency layer 1");
    run_layer_ll(moe, layer_in{ 32, 256, 6, 41, 1 }, "low-latency layer 2 (skewed)");
    run_layer(moe, layer_in{ 32, 256, 6, 42, 0 }, 1, "a normal layer after low-latency ones");
    run_layer_ll(moe, layer_in{ 32, 256, 6, 43, 0 }, "low-latency after a normal layer");
    tm_moe_destroy(moe);
}

/* The allgather: parts of 1 byte to 1 MiB + 3, each through both paths (oneshot_max set to
 * take the call one shot, or 0 for the ring), in place and from a separate buffer, calls back to
 * back with no barrier (the landing areas of odd and even calls are reused), every byte of every
 * PE's part checked, and nothing written past the output. */
static unsigned char ag_byte(int pe, size_t i, int call) { return (unsigned char)(i * 29u + (unsigned)call * 11u + (unsigned)pe * 101u + 3u); }
static void test_allgather_path(int p2p)
{
    size_t parts[] = { 1, 17, 4096, 4096 * 5 + 3, 100000, (1 << 20) + 3 }, cap = (1 << 20) + 3;
    tm_allgather_t ag;
    tm_allgather_create(&ag, cap, 2);
    ag.p2p = p2p && ag.p2p;
    for (tm_ring_t &x : ag.rings) x.p2p = p2p && x.p2p;
    size_t outb = (size_t)npes * cap + 64;
    unsigned char *in, *out;
    TM_CUDA(cudaMalloc(&in, cap + 64));
    TM_CUDA(cudaMalloc(&out, outb));
    std::vector<unsigned char> hin(cap), h(outb);
    int call = 0;
    for (int path = 0; path < 2; path++)      /* 0: one shot, 1: the ring */
        for (int inplace = 0; inplace < 2; inplace++)
            for (size_t part : parts) {
                call++;
                ag.oneshot_max = path == 0 ? (size_t)npes * cap : 0;
                const char *pname = path == 0 ? "one shot" : "ring";
                if (path == 0 && part > ag.area) fail_now("allgather: tm_allgather_create made landing areas of %zu bytes for parts of up to %zu", ag.area, cap);
                for (size_t i = 0; i < part; i++) hin[i] = ag_byte(me, i, call);
                TM_CUDA(cudaMemset(out, 0xEE, outb));
                unsigned char *src = inplace ? out + (size_t)me * part : in;
                TM_CUDA(cudaMemcpy(src, hin.data(), part, cudaMemcpyHostToDevice));
                tm_allgather(&ag, src, out, part, st);
                if (call % 3 != 0) { /* most calls back to back: only every third is waited for */
                    size_t again = part; /* a second call of the same size right away */
                    tm_allgather(&ag, src, out, again, st);
                }
                finish(st, "tm_allgather", 60);
                TM_CUDA(cudaMemcpy(h.data(), out, (size_t)npes * part + 1, cudaMemcpyDeviceToHost));
                for (int p = 0; p < npes; p++)
                    for (size_t i = 0; i < part; i++)
                        if (h[(size_t)p * part + i] != ag_byte(p, i, call))
                            fail_now("allgather (%s, %s path, %s), call %d, parts of %zu bytes: byte %zu of PE %d's part: expected %u, saw %u%s", pname, p2p ? "nvshmem_ptr" : "put-with-signal", inplace ? "in place" : "separate in", call, part, i, p, ag_byte(p, i, call), h[(size_t)p * part + i], h[(size_t)p * part + i] == 0xEE ? " (never written)" : "");
                if (h[(size_t)npes * part] != 0xEE) fail_now("allgather (%s): call %d, parts of %zu bytes, wrote past the end of out", pname, call, part);
                MPI_Barrier(MPI_COMM_WORLD); /* nobody rewrites in or out while a peer checks */
            }
    /* The default selector takes the small parts one shot and the large ones by the ring. */
    ag.oneshot_max = TM_AG_ONESHOT_MAX;
    for (size_t part : { (size_t)64, cap }) {
        call++;
        for (size_t i = 0; i < part; i++) hin[i] = ag_byte(me, i, call);
        TM_CUDA(cudaMemcpy(in, hin.data(), part, cudaMemcpyHostToDevice));
        tm_allgather(&ag, in, out, part, st);
        finish(st, "tm_allgather", 60);
        TM_CUDA(cudaMemcpy(h.data(), out, (size_t)npes * part, cudaMemcpyDeviceToHost));
        for (int p = 0; p < npes; p++)
            for (size_t i = 0; i < part; i++)
                if (h[(size_t)p * part + i] != ag_byte(p, i, call))
                    fail_now("allgather (the default selector), parts of %zu bytes: byte %zu of PE %d's part: expected %u, saw %u", part, i, p, ag_byte(p, i, call), h[(size_t)p * part + i]);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    tm_allgather_destroy(&ag);
    TM_CUDA(cudaFree(in));
    TM_CUDA(cudaFree(out));
}
static void test_allgather(void)
{
    test_allgather_path(1);
    test_allgather_path(0);
}

int main(int argc, char **argv)
{
    struct { const char *name; void (*fn)(void); } tests[] = {
        { "ring", test_ring }, { "dispatch", test_dispatch }, { "combine", test_combine },
        { "layers", test_layers }, { "no_p2p", test_no_p2p }, { "low_latency", test_low_latency },
        { "allgather", test_allgather },
    };
    setenv("NVSHMEM_SYMMETRIC_SIZE", "1G", 0);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &npes);
    g_test = argc > 1 ? argv[1] : "?";
    for (auto &t : tests)
        if (argc == 2 && strcmp(argv[1], t.name) == 0) {
            if (npes < 2) fail_now("the tests need at least 2 PEs (mpirun -np 2), not %d", npes);
            tm_init();
            TM_CUDA(cudaStreamCreate(&st));
            t.fn();
            TM_CUDA(cudaStreamDestroy(st));
            tm_finalize();
            if (me == 0) printf("PASS %s\n", t.name);
            fflush(stdout);
            MPI_Finalize();
            return 0;
        }
    if (me == 0) {
        fprintf(stderr, "usage: mpirun -np N test_3_7 TEST, TEST one of:");
        for (auto &t : tests) fprintf(stderr, " %s", t.name);
        fprintf(stderr, "\n");
    }
    MPI_Finalize();
    return 2;
}
