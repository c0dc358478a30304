/* Low-rank products in the fused kernel (docs/notebook.md, 2026-12-03): per sequence, the bilinear term of a
 * rank-r student's operator, forward and backward, computed two ways with the kernel's own
 * products (this file #includes _fused_step.c, so the tiles and loops are the kernel's):
 *
 *   dense     (the kernel today): A = Q Kᵀ formed once per step; per sequence
 *             U = x A, Z = U xᵀ; backward dU = dZ x, dA += xᵀ dU            2 n d² + 2 n² d MACs
 *   factored: per sequence a = x Q, b = x K, Z = a bᵀ; backward da = dZ b, db = dZᵀ a,
 *             dQ += xᵀ da, dK += xᵀ db                                     4 n d r + 3 n² r MACs
 *
 * Prints one line per r: seconds per sequence of each (median of interleaved repeats, one
 * thread). Run by benchmarks/bench_lowrank.py. */
#include "../src/entropic_bound/_fused_step.c"
#include <stdio.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* values of order `scale`, deterministic; accumulators are reset every repeat, so nothing
 * overflows or turns subnormal (either would time the FPU's slow paths, not the products) */
static float *buf(int count, float scale) {
    float *p = aligned_alloc(64, sizeof(float) * ((count + 15) / 16 * 16));
    for (int i = 0; i < count; i++)
        p[i] = scale * ((float)((i * 2654435761u) % 1000) / 500.0f - 1.0f);
    return p;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    const int n = argc > 1 ? atoi(argv[1]) : 64, d = argc > 2 ? atoi(argv[2]) : 64;
    const int seqs = argc > 3 ? atoi(argv[3]) : 2000, reps = argc > 4 ? atoi(argv[4]) : 5;
    float *X = buf(seqs * n * d, 1.0f), *A = buf(d * d, 0.01f), *dA = buf(d * d, 0.0f);
    float *xT = buf(n * d, 0), *U = buf(n * d, 0), *Z = buf(n * n, 0), *dU = buf(n * d, 0);
    float *dZ = buf(n * n, 0.01f), *Q = buf(d * d, 0.1f), *K = buf(d * d, 0.1f);
    float *dQ = buf(d * d, 0), *dK = buf(d * d, 0);
    float *a = buf(n * d, 0), *b = buf(n * d, 0), *bT = buf(n * d, 0), *da = buf(n * d, 0);
    float *db = buf(n * d, 0);
    float sink = 0;
    const int ranks[] = {1, 2, 4, 8, 16, 32, 64};
    for (int ri = 0; ri < 7; ri++) {
        const int r = ranks[ri];
        if (r > d) break;
        double tdense[32], tfact[32];
        for (int rep = 0; rep < reps; rep++) {
            memset(dA, 0, sizeof(float) * d * d);
            memset(dQ, 0, sizeof(float) * d * d);
            memset(dK, 0, sizeof(float) * d * d);
            double t0 = now();
            for (int s = 0; s < seqs; s++) {
                const float *x = X + (size_t)s * n * d;
                transpose(n, d, x, xT);
                gemm_rows(n, d, d, x, A, U, 0);
                gemm_rows(n, d, n, U, xT, Z, 0);
                gemm_rows(n, n, d, dZ, x, dU, 0);
                gemm_tn_acc(d, n, d, x, dU, dA);
            }
            double t1 = now();
            for (int s = 0; s < seqs; s++) {
                const float *x = X + (size_t)s * n * d;
                gemm_rows(n, d, r, x, Q, a, 0);
                gemm_rows(n, d, r, x, K, b, 0);
                transpose(n, r, b, bT);
                gemm_rows(n, r, n, a, bT, Z, 0);
                gemm_rows(n, n, r, dZ, b, da, 0);
                gemm(n, n, r, dZ, 1, n, a, db, 0); /* db = dZᵀ a */
                gemm_tn_acc(d, n, r, x, da, dQ);
                gemm_tn_acc(d, n, r, x, db, dK);
            }
            double t2 = now();
            tdense[rep] = (t1 - t0) / seqs;
            tfact[rep] = (t2 - t1) / seqs;
            sink += Z[0] + dA[0] + dQ[0] + dK[0];
        }
        qsort(tdense, reps, sizeof(double), cmp);
        qsort(tfact, reps, sizeof(double), cmp);
        double md = tdense[reps / 2], mf = tfact[reps / 2];
        double fd = 2.0 * (2.0 * n * d * d + 2.0 * n * n * d), ff = 2.0 * (4.0 * n * d * r + 3.0 * n * n * r);
        printf("{\"n\": %d, \"d\": %d, \"r\": %d, \"dense_us\": %.3f, \"factored_us\": %.3f, "
               "\"speedup_factored\": %.2f, \"dense_gflops\": %.1f, \"factored_gflops\": %.1f}\n",
               n, d, r, 1e6 * md, 1e6 * mf, md / mf, fd / md / 1e9, ff / mf / 1e9);
    }
    return sink == 12345.0f;
}
