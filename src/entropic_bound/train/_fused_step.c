/* One training step of many attention students, forward and backward fused per sequence.
 *
 * Every ladder rung's operator is M(X) = act(bias + X A Xᵀ) with act = softmax or identity
 * (entropic_bound.mixing.operator_terms). For each student s and each of its B minibatch
 * sequences x = X[rows[s, b]] (n × d) this computes, with every intermediate in L1 cache,
 *
 *   Z = bias + x A xᵀ,  M = act(Z),  H = M x,  Ŷ = H V,  E = Ŷ − y,  loss_s = mean(E²)
 *
 * and, unless only the loss is asked for (evaluation), the gradients of loss_s with respect to
 * A, bias and V:
 *
 *   G = 2E/(B n d),  dV += Hᵀ G,  dH = G Vᵀ,  dM = dH xᵀ,
 *   dZ = M ⊙ (dM − rowsum(M ⊙ dM)) (softmax) or dM (identity),
 *   dbias += dZ,  dA += xᵀ (dZ x).
 *
 * A student of low rank r can instead give its bilinear term in factored form, A = Qa Kaᵀ
 * (Qa, Ka: d × r): then Z = bias + (x Qa)(x Ka)ᵀ and the kernel returns the gradients of the
 * factors, dQa += xᵀ dZ (x Ka) and dKa += xᵀ dZᵀ (x Qa), in place of dA: 4ndr + 3n²r
 * multiply-adds per sequence instead of 2nd² + 2n²d (fewer for r ≤ d/4; benchmarks/bench_lowrank.c).
 *
 * Students are independent: each is computed by one thread in a fixed order, so the result of
 * a student does not depend on the thread count or on which other students share the call.
 * All products are written as "row += scalar × row" over contiguous rows, which the compiler
 * turns into vector FMAs (register tiles where a row is a multiple of the vector width).
 *
 * Built and loaded by entropic_bound/fused.py (gcc -O3 -march=native -fopenmp); no Python or
 * torch headers, so the build takes about two seconds.
 */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RESTRICT __restrict__
#define INLINE static inline __attribute__((always_inline))

/* ---- the machine's vector ------------------------------------------------------------------
 * VW floats: 16 where AVX-512 gives 32 registers of 16 floats, else 8 (AVX2: 16 registers of
 * 8). A 16-float generic vector on AVX2 is lowered to register pairs that no longer fit and
 * spill to the stack (6-7x slower on an AMD EPYC at d = 16 and 64, benchmarks/bench_train.py).
 * Every element is computed by the same operations in the same order at either width, and
 * every a·b + c is one FMA (fused.py builds with --param=avoid-fma-max-bits=0: GCC's tuning
 * for AMD Zen otherwise splits the FMAs of loop-carried sums of ≤ 256 bits into a multiply and
 * an add, so that results depended on the CPU and the vector width), so results are bitwise
 * the same at either width. */
#if defined(__AVX512F__)
#define VW 16
#else
#define VW 8
#endif
typedef float vf __attribute__((vector_size(4 * VW), aligned(4)));
typedef int32_t vi __attribute__((vector_size(4 * VW)));

/* ---- small matrix products -------------------------------------------------------------
 * out[r, :] (+)= Σ_k a(r, k) · b[k, :] with a(r, k) = a[r·ars + k·aks] (a or aᵀ, no copy),
 * b: K × cols and out: rows × cols row-major. Where cols is a multiple of VW the product runs
 * on register tiles of RB rows × CB vectors (8 independent FMA chains, enough to hide the FMA
 * latency); other sizes take a plain loop. Every output element sums over k in order with one
 * FMA per term: the tiling does not change it. */
#define TILE_KERNEL(RB, CB)                                                                    \
    INLINE void tile_##RB##_##CB(const int K, const int cols, const float *RESTRICT a,         \
                                 const int ars, const int aks, const float *RESTRICT b,         \
                                 float *RESTRICT out, const int accumulate) {                   \
        vf acc[RB][CB];                                                                         \
        _Pragma("GCC unroll 8") for (int r = 0; r < RB; r++)                                    \
            _Pragma("GCC unroll 8") for (int c = 0; c < CB; c++)                                \
                acc[r][c] = accumulate ? *(const vf *)(out + r * cols + VW * c) : (vf){0};      \
        for (int k = 0; k < K; k++) {                                                           \
            vf bv[CB];                                                                          \
            _Pragma("GCC unroll 8") for (int c = 0; c < CB; c++)                                \
                bv[c] = *(const vf *)(b + k * cols + VW * c);                                   \
            _Pragma("GCC unroll 8") for (int r = 0; r < RB; r++) {                              \
                const float ark = a[r * ars + k * aks];                                         \
                _Pragma("GCC unroll 8") for (int c = 0; c < CB; c++) acc[r][c] += ark * bv[c];  \
            }                                                                                   \
        }                                                                                       \
        _Pragma("GCC unroll 8") for (int r = 0; r < RB; r++)                                    \
            _Pragma("GCC unroll 8") for (int c = 0; c < CB; c++)                                \
                *(vf *)(out + r * cols + VW * c) = acc[r][c];                                   \
    }
TILE_KERNEL(8, 1)
TILE_KERNEL(1, 1)
#if VW == 8
TILE_KERNEL(6, 2)
TILE_KERNEL(4, 2)
TILE_KERNEL(1, 2)
#endif

/* rows r, r + RB, … of the column block at c0 on RB × CB tiles, while RB rows are left */
#define TILES(RB, CB)                                                                          \
    for (; r + RB <= rows; r += RB)                                                            \
    tile_##RB##_##CB(K, cols, a + r * ars, ars, aks, b + c0, out + r * cols + c0, accumulate)

INLINE void gemm(const int rows, const int K, const int cols, const float *RESTRICT a,
                 const int ars, const int aks, const float *RESTRICT b, float *RESTRICT out,
                 const int accumulate) {
    if (cols % VW) {
        for (int r = 0; r < rows; r++) {
            float *RESTRICT o = out + r * cols;
            if (!accumulate)
                for (int j = 0; j < cols; j++) o[j] = 0.0f;
            for (int k = 0; k < K; k++) {
                const float ark = a[r * ars + k * aks];
                const float *RESTRICT bk = b + k * cols;
                for (int j = 0; j < cols; j++) o[j] += ark * bk[j];
            }
        }
        return;
    }
    int c0 = 0;
#if VW == 8
    /* AVX2, 16 columns at a time: 6 × 2 tiles (12 accumulators, 2 rows of b and a broadcast:
     * 15 of the 16 registers; 20 % faster than 4 × 2 at d = 64), then 4 × 2 and 1 × 2 */
    for (; c0 + 16 <= cols; c0 += 16) {
        int r = 0;
        TILES(6, 2);
        TILES(4, 2);
        TILES(1, 2);
    }
#endif
    /* 8 × 1 tiles (AVX-512: 8 accumulators, 1 row of b, 1 broadcast of the 32 registers) */
    for (; c0 < cols; c0 += VW) {
        int r = 0;
        TILES(8, 1);
        TILES(1, 1);
    }
}

/* out = a b (a: rows × K) and out += aᵀ b (a: K_rows × rows, summed over its rows) */
#define gemm_rows(rows, K, cols, a, b, out, acc) gemm(rows, K, cols, a, K, 1, b, out, acc)
#define gemm_tn_acc(rows, K, cols, a, b, out) gemm(K, rows, cols, a, 1, K, b, out, 1)

/* VW × VW transpose in registers: butterfly stages that swap k × k blocks (k = VW/2, …, 1)
 * between rows i and i + k: two-source shuffles instead of scalar stores. */
#define BUTTERFLY(k, LO, HI)                                                                     \
    for (int i = 0; i < VW; i++)                                                                 \
        if (!(i & k)) {                                                                          \
            const vf a = r[i], b = r[i + k];                                                     \
            r[i] = __builtin_shufflevector(a, b, LO);                                            \
            r[i + k] = __builtin_shufflevector(a, b, HI);                                        \
        }
#if VW == 16
#define STAGES                                                                                   \
    BUTTERFLY(8, LO8, HI8) BUTTERFLY(4, LO4, HI4) BUTTERFLY(2, LO2, HI2) BUTTERFLY(1, LO1, HI1)
#define LO8 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23
#define HI8 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31
#define LO4 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27
#define HI4 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31
#define LO2 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29
#define HI2 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31
#define LO1 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30
#define HI1 1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31
#else
#define STAGES BUTTERFLY(4, LO4, HI4) BUTTERFLY(2, LO2, HI2) BUTTERFLY(1, LO1, HI1)
#define LO4 0, 1, 2, 3, 8, 9, 10, 11
#define HI4 4, 5, 6, 7, 12, 13, 14, 15
#define LO2 0, 1, 8, 9, 4, 5, 12, 13
#define HI2 2, 3, 10, 11, 6, 7, 14, 15
#define LO1 0, 8, 2, 10, 4, 12, 6, 14
#define HI1 1, 9, 3, 11, 5, 13, 7, 15
#endif

/* at (cols × rows) = aᵀ (a: rows × cols, both row-major), in VW × VW blocks where it can */
INLINE void transpose(const int rows, const int cols, const float *RESTRICT a, float *RESTRICT at) {
    if (rows % VW || cols % VW) {
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < cols; j++) at[j * rows + i] = a[i * cols + j];
        return;
    }
    for (int bi = 0; bi < rows; bi += VW)
        for (int bj = 0; bj < cols; bj += VW) {
            vf r[VW];
            for (int i = 0; i < VW; i++) r[i] = *(const vf *)(a + (bi + i) * cols + bj);
            STAGES
            for (int i = 0; i < VW; i++) *(vf *)(at + (bj + i) * rows + bi) = r[i];
        }
}

/* lane-wise select (C has no vector ?:): where mask, a, else b */
INLINE vf vsel(const vi mask, const vf a, const vf b) {
    return (vf)(((vi)a & mask) | ((vi)b & ~mask));
}
INLINE vf vmax(const vf a, const vf b) { return vsel(a > b, a, b); }

/* exp for x ≤ 0 (softmax after the max shift) on VW lanes, branch-free: Cody–Waite range
 * reduction (rounding by the 1.5·2²³ trick) and a degree-6 polynomial (Cephes expf), relative
 * error below 2e-7. NaN propagates (the comparison is false for NaN), so a diverging student is
 * still detected. */
INLINE vf vexp_nonpos(vf x) {
    x = vsel(x < -87.0f, (vf){0} - 87.0f, x);
    const vf fx = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    vf r = x - fx * 0.693359375f;
    r = r + fx * 2.12194440e-4f;
    vf p = (vf){0} + 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    const vi e = (__builtin_convertvector(fx, vi) + 127) << 23;
    return p * (vf)e;
}

/* the same on one value (the softmax of rows that are not a multiple of VW floats) */
INLINE float exp_nonpos(const float x) { return vexp_nonpos((vf){0} + x)[0]; }

/* Softmax over the rows of M is taken on Mᵀ, stored n × n row-major: a row of M is a column
 * of Mᵀ, so the max, the sum and the backward's dot product run down the columns, VW rows of
 * M at a time in one vector, with no horizontal reductions. */
INLINE void softmax_cols(const int n, float *RESTRICT ZT) {
    if (n % VW == 0) {
        for (int c = 0; c < n; c += VW) {
            vf m = *(vf *)(ZT + c), sum = {0};
            for (int j = 1; j < n; j++) m = vmax(*(vf *)(ZT + j * n + c), m);
            for (int j = 0; j < n; j++) {
                const vf e = vexp_nonpos(*(vf *)(ZT + j * n + c) - m);
                *(vf *)(ZT + j * n + c) = e;
                sum += e;
            }
            const vf inv = 1.0f / sum;
            for (int j = 0; j < n; j++) *(vf *)(ZT + j * n + c) *= inv;
        }
        return;
    }
    for (int i = 0; i < n; i++) {
        float m = ZT[i], sum = 0.0f;
        for (int j = 1; j < n; j++) m = ZT[j * n + i] > m ? ZT[j * n + i] : m;
        for (int j = 0; j < n; j++) {
            ZT[j * n + i] = exp_nonpos(ZT[j * n + i] - m);
            sum += ZT[j * n + i];
        }
        const float inv = 1.0f / sum;
        for (int j = 0; j < n; j++) ZT[j * n + i] *= inv;
    }
}

/* g ← m ⊙ (g − Σ_j m g) down the columns of Mᵀ and dMᵀ: the softmax backward */
INLINE void softmax_cols_backward(const int n, const float *RESTRICT MT, float *RESTRICT GT) {
    if (n % VW == 0) {
        for (int c = 0; c < n; c += VW) {
            vf dot = {0};
            for (int j = 0; j < n; j++) dot += *(const vf *)(MT + j * n + c) * *(vf *)(GT + j * n + c);
            for (int j = 0; j < n; j++)
                *(vf *)(GT + j * n + c) = *(const vf *)(MT + j * n + c) * (*(vf *)(GT + j * n + c) - dot);
        }
        return;
    }
    for (int i = 0; i < n; i++) {
        float dot = 0.0f;
        for (int j = 0; j < n; j++) dot += MT[j * n + i] * GT[j * n + i];
        for (int j = 0; j < n; j++) GT[j * n + i] = MT[j * n + i] * (GT[j * n + i] - dot);
    }
}

typedef struct {
    float *xT, *U, *Z, *H, *E, *GT, *dH, *dM, *dU, *AT, *biasT, *dbiasT, *lossv;
    float *XQT, *XKT, *T, *dZ, *dQT, *dKT;   /* the factored path's */
} scratch_t;

/* A student's factored bilinear term: rank r (0: use the dense A), Qa, Ka: d × ld row-major
 * (columns ≥ r unused), their gradients dQa, dKa written in the same layout (columns ≥ r zero). */
typedef struct {
    int r, ld;
    const float *Qa, *Ka;
    float *dQa, *dKa;
} factors_t;

/* One student over nb sequences. Everything n × n is held transposed (Zᵀ, Mᵀ, dMᵀ, dZᵀ), see
 * softmax_cols; the products read Mᵀ and dZᵀ through strides rather than copying them. */
INLINE void student_step(const int n, const int d, const int B, const float *RESTRICT X,
                         const float *RESTRICT Y, const int64_t *RESTRICT rows,
                         const float *RESTRICT A, const float *RESTRICT bias,
                         const float *RESTRICT V, const int softmax, const int backward,
                         const float gscale, double *RESTRICT loss, float *RESTRICT dA,
                         float *RESTRICT dbias, float *RESTRICT dV, const factors_t f,
                         const scratch_t *RESTRICT w) {
    const int nd = n * d;
    float *RESTRICT xT = w->xT, *RESTRICT U = w->U, *RESTRICT ZT = w->Z, *RESTRICT H = w->H;
    float *RESTRICT E = w->E, *RESTRICT GT = w->GT, *RESTRICT dHT = w->dH, *RESTRICT dMT = w->dM;
    float *RESTRICT dU = w->dU, *RESTRICT AT = w->AT, *RESTRICT biasT = w->biasT;
    float *RESTRICT dbiasT = w->dbiasT, *RESTRICT lossv = w->lossv;
    float *RESTRICT XQT = w->XQT, *RESTRICT XKT = w->XKT, *RESTRICT T = w->T, *RESTRICT dZ = w->dZ;
    float *RESTRICT dQT = w->dQT, *RESTRICT dKT = w->dKT;
    const int r = f.r;   /* > 0: the factored bilinear term instead of A */
    if (r) A = 0;
    if (A) transpose(d, d, A, AT);
    if (bias) transpose(n, n, bias, biasT);
    double total = 0.0;
    if (backward) {
        if (A || (r && dA)) memset(dA, 0, sizeof(float) * d * d);   /* a factored student's: 0 */
        if (bias) memset(dbiasT, 0, sizeof(float) * n * n);
        if (r) {
            memset(dQT, 0, sizeof(float) * r * d);
            memset(dKT, 0, sizeof(float) * r * d);
        }
        memset(dV, 0, sizeof(float) * d * d);
    }
    for (int b = 0; b < B; b++) {
        const float *RESTRICT x = X + rows[b] * nd;
        const float *RESTRICT y = Y + rows[b] * nd;
        /* Zᵀ = biasᵀ + x Aᵀ xᵀ */
        if (A) {
            transpose(n, d, x, xT);
            gemm_rows(n, d, d, x, AT, U, 0);
            gemm_rows(n, d, n, U, xT, ZT, 0);
            if (bias)
                for (int k = 0; k < n * n; k++) ZT[k] += biasT[k];
        } else if (r) {
            /* (x Qa)ᵀ, (x Ka)ᵀ: r × n; Zᵀ = (x Ka)(x Qa)ᵀ, summed over the r columns */
            transpose(n, d, x, xT);
            gemm(r, d, n, f.Qa, 1, f.ld, xT, XQT, 0);
            gemm(r, d, n, f.Ka, 1, f.ld, xT, XKT, 0);
            gemm(n, r, n, XKT, 1, n, XQT, ZT, 0);
            if (bias)
                for (int k = 0; k < n * n; k++) ZT[k] += biasT[k];
        } else if (b == 0) {
            /* a static operator (bias only) is the same for every sequence: M once per call
             * (the same floats as per sequence; ZT is read-only from here on) */
            memcpy(ZT, biasT, sizeof(float) * n * n);
            if (softmax) softmax_cols(n, ZT);
        }
        if (softmax && (A || r)) softmax_cols(n, ZT);
        /* H = M x (M read from Mᵀ), E = H V − y */
        gemm(n, n, d, ZT, 1, n, x, H, 0);
        gemm_rows(n, d, d, H, V, E, 0);
        for (int j = 0; j < d; j++) lossv[j] = 0.0f;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < d; j++) {
                const float e = E[i * d + j] - y[i * d + j];
                lossv[j] += e * e;
                E[i * d + j] = gscale * e;   /* G = dloss/dŶ */
            }
        for (int j = 0; j < d; j++) total += (double)lossv[j];   /* the sum over samples in double */
        if (!backward) continue;
        gemm_tn_acc(n, d, d, H, E, dV);              /* dV += Hᵀ G */
        transpose(n, d, E, GT);
        gemm_rows(d, d, n, V, GT, dHT, 0);           /* dHᵀ = V Gᵀ */
        gemm_rows(n, d, n, x, dHT, dMT, 0);          /* dMᵀ = x dHᵀ */
        if (softmax) softmax_cols_backward(n, ZT, dMT);
        if (bias)
            for (int k = 0; k < n * n; k++) dbiasT[k] += dMT[k];
        if (A) {
            gemm(n, n, d, dMT, 1, n, x, dU, 0);      /* dU = dZ x (dZ read from dZᵀ) */
            gemm_tn_acc(n, d, d, x, dU, dA);         /* dA += xᵀ dU */
        } else if (r) {
            gemm_rows(r, n, n, XKT, dMT, T, 0);      /* (dZ x Ka)ᵀ = (x Ka)ᵀ dZᵀ */
            gemm_rows(r, n, d, T, x, dQT, 1);        /* dQaᵀ += (dZ x Ka)ᵀ x */
            transpose(n, n, dMT, dZ);
            gemm_rows(r, n, n, XQT, dZ, T, 0);       /* (dZᵀ x Qa)ᵀ = (x Qa)ᵀ dZ */
            gemm_rows(r, n, d, T, x, dKT, 1);        /* dKaᵀ += (dZᵀ x Qa)ᵀ x */
        }
    }
    if (backward && f.dQa)   /* every student's rows (a dense student's: zero) */
        for (int k = 0; k < d; k++)
            for (int c = 0; c < f.ld; c++) {
                f.dQa[k * f.ld + c] = c < r ? dQT[c * d + k] : 0.0f;
                f.dKa[k * f.ld + c] = c < r ? dKT[c * d + k] : 0.0f;
            }
    if (backward && bias) transpose(n, n, dbiasT, dbias);
    *loss = total;   /* the sum; fused_step divides */
}

/* frank, Qa, Ka, dQa, dKa: the factored students (frank[s] > 0, their rank; Qa, Ka: [S, d, ld]),
 * or frank = 0 for none */
int fused_step(int S, int B, int n, int d, const float *X, const float *Y, const int64_t *rows,
               const float *A, const float *bias, const float *V, int softmax, int backward,
               float gscale, double *loss, float *dA, float *dbias, float *dV, const int32_t *frank,
               int ld, const float *Qa, const float *Ka, float *dQa, float *dKa, int threads) {
    const size_t nn = (size_t)n * n, nd = (size_t)n * d, dd = (size_t)d * d;
    /* scratch per thread, 64-byte aligned blocks, allocated before the parallel region so that
     * a failed allocation returns cleanly instead of leaving threads at a barrier */
    const size_t per_thread = 10 * ((nd + 15) / 16 * 16) + 5 * ((nn + 15) / 16 * 16) +
                              3 * ((dd + 15) / 16 * 16) + (d + 15) / 16 * 16;
    if (threads < 1) threads = 1;
    float *all = (float *)aligned_alloc(64, sizeof(float) * per_thread * threads);
    if (!all) return 1;
    /* evaluation (no backward) streams a whole split per student: in blocks of 64 sequences,
     * each block read once from memory for all students (same students per thread, same order) */
    const int block = backward ? B : 64;
#pragma omp parallel num_threads(threads)
    {
        scratch_t w;
        float *p = all + per_thread * omp_get_thread_num();
#define TAKE(field, count) w.field = p; p += ((count) + 15) / 16 * 16;
        TAKE(xT, nd) TAKE(U, nd) TAKE(H, nd) TAKE(E, nd) TAKE(GT, nd) TAKE(dH, nd) TAKE(dU, nd)
        TAKE(Z, nn) TAKE(dM, nn) TAKE(biasT, nn) TAKE(dbiasT, nn) TAKE(AT, dd) TAKE(lossv, d)
        TAKE(XQT, nd) TAKE(XKT, nd) TAKE(T, nd) TAKE(dZ, nn) TAKE(dQT, dd) TAKE(dKT, dd)
#undef TAKE
#pragma omp for schedule(static)
        for (int s = 0; s < S; s++) loss[s] = 0.0;
        for (int b0 = 0; b0 < B; b0 += block) {
            const int nb = B - b0 < block ? B - b0 : block;
#pragma omp for schedule(static)
            for (int s = 0; s < S; s++) {
                double part;
                const size_t fo = (size_t)s * d * ld;
                const factors_t f = {frank ? frank[s] : 0, ld, Qa ? Qa + fo : 0, Ka ? Ka + fo : 0,
                                     dQa ? dQa + fo : 0, dKa ? dKa + fo : 0};
                student_step(n, d, nb, X, Y, rows + (size_t)s * B + b0, A ? A + (size_t)s * dd : 0,
                             bias ? bias + (size_t)s * nn : 0, V + (size_t)s * dd, softmax,
                             backward, gscale, &part, A ? dA + (size_t)s * dd : 0,
                             bias ? dbias + (size_t)s * nn : 0, dV + (size_t)s * dd, f, &w);
                loss[s] += part;
            }
        }
#pragma omp for schedule(static)
        for (int s = 0; s < S; s++) loss[s] /= (double)B * nd;
    }
    free(all);
    return 0;
}

/* Adam for S students with P parameters each, one pass over the four arrays (the torch version
 * makes seven): m1 ← β1 m1 + (1−β1) g, m2 ← β2 m2 + (1−β2) g², w ← w − lr_s (m1/c1)/(√(m2/c2) + eps). */
void adam_step(int S, int P, float *W, const float *G, float *m1, float *m2, const float *lr,
               float b1, float b2, float c1, float c2, float eps, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads < 1 ? 1 : threads)
    for (int s = 0; s < S; s++) {
        const size_t o = (size_t)s * P;
        float *RESTRICT w = W + o, *RESTRICT a = m1 + o, *RESTRICT v = m2 + o;
        const float *RESTRICT g = G + o;
        const float step = lr[s];
        for (int p = 0; p < P; p++) {
            a[p] = b1 * a[p] + (1.0f - b1) * g[p];
            v[p] = b2 * v[p] + (1.0f - b2) * g[p] * g[p];
            w[p] -= step * (a[p] / c1) / (__builtin_sqrtf(v[p] / c2) + eps);
        }
    }
}
