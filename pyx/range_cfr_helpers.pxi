# C helpers of the range CFR kernels (vectorisable loops, showdown and fold sweeps); included by
# range_cfr_core.pxi and range_cfr_board_core.pxi after ``rc_real`` is defined.
from libc.string cimport memset, memcpy

cdef extern from *:
    """
    /* Hot loops of the range CFR kernel, in C so that `restrict` lets the compiler vectorise them.
       Branch-free forms are exact: they only add zeros.  RC_VECTOR compiles a loop for AVX2 and for
       the baseline, chosen when the module loads (no FMA: results do not depend on the CPU). */
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
    #define RC_VECTOR __attribute__((target_clones("avx2", "default")))
    #else
    #define RC_VECTOR
    #endif
    RC_VECTOR static void rc_scale(rc_real* restrict dst, const rc_real* restrict src, const rc_real* restrict s, int H) {
        for (int h = 0; h < H; h++) dst[h] = src[h] * s[h];
    }
    RC_VECTOR static void rc_add(rc_real* restrict out, const rc_real* restrict x, int H) {
        for (int h = 0; h < H; h++) out[h] += x[h];
    }
    RC_VECTOR static void rc_max(rc_real* restrict out, const rc_real* restrict x, int H) {
        for (int h = 0; h < H; h++) out[h] = x[h] > out[h] ? x[h] : out[h];
    }
    RC_VECTOR static void rc_scale_const(rc_real* restrict out, double s, int H) {
        for (int h = 0; h < H; h++) out[h] *= s;
    }
    static void rc_gather(rc_real* restrict dst, const rc_real* restrict src, const int* restrict perm, int n) {
        for (int j = 0; j < n; j++) dst[j] = src[perm[j]];
    }
    static void rc_scatter(rc_real* restrict dst, const rc_real* restrict src, const int* restrict perm, int n) {
        for (int j = 0; j < n; j++) dst[perm[j]] = src[j];
    }
    RC_VECTOR static void rc_add_product(rc_real* restrict out, const rc_real* restrict s, const rc_real* restrict x, int H) {
        for (int h = 0; h < H; h++) out[h] += s[h] * x[h];
    }
    /* one action of a CFR update: strategy sum, regret (DCFR discount or CFR+ floor), positive total */
    RC_VECTOR static void rc_update_action(rc_real* restrict ssum, const rc_real* restrict own, const rc_real* restrict srow,
                                 double w, rc_real* restrict reg, const rc_real* restrict child,
                                 const rc_real* restrict out, rc_real* restrict tot, int dcfr, double pos,
                                 double neg, int H) {
        if (dcfr == 2) {
            /* postflop-solver's weighting: the strategy sum is discounted by w and adds the current
               strategy (not weighted by own reach); the old regret is discounted by its sign, then the
               new instantaneous regret is added */
            for (int h = 0; h < H; h++) ssum[h] = ssum[h] * w + srow[h];
            for (int h = 0; h < H; h++) {
                double r = reg[h];
                r = (r >= 0 ? r * pos : r * neg) + child[h] - out[h];
                reg[h] = r;
                tot[h] += r > 0 ? r : 0.0;
            }
            return;
        }
        if (w > 0)
            for (int h = 0; h < H; h++) ssum[h] += w * own[h] * srow[h];
        if (dcfr) {
            for (int h = 0; h < H; h++) {
                double r = reg[h] + child[h] - out[h];
                double x = r > 0 ? r : 0.0, y = r < 0 ? r : 0.0;
                reg[h] = x * pos + y * neg;
                tot[h] += x * pos;  /* pos > 0: the positive part of the discounted regret */
            }
        } else {
            for (int h = 0; h < H; h++) {
                double r = reg[h] + child[h] - out[h];
                r = r > 0 ? r : 0.0;
                reg[h] = r;
                tot[h] += r;
            }
        }
    }
    RC_VECTOR static void rc_add_positive(rc_real* restrict tot, const rc_real* restrict reg, int H) {
        for (int h = 0; h < H; h++) tot[h] += reg[h] > 0 ? reg[h] : 0.0;
    }
    RC_VECTOR static void rc_match_prepare(const rc_real* restrict tot, rc_real* restrict denom, rc_real* restrict uniform,
                                 double inv_actions, int H) {
        for (int h = 0; h < H; h++) {
            double x = tot[h];
            denom[h] = x > 0 ? x : 1.0;
            uniform[h] = x > 0 ? 0.0 : inv_actions;
        }
    }
    RC_VECTOR static void rc_match(rc_real* restrict srow, const rc_real* restrict reg, const rc_real* restrict denom,
                         const rc_real* restrict uniform, int H) {
        for (int h = 0; h < H; h++) {
            double x = reg[h];
            x = x > 0 ? x : 0.0;
            srow[h] = x / denom[h] + uniform[h];
        }
    }

    /* Showdown values over hands sorted by strength; `groups` = first hand of each run of equal strength
       (+ sentinel).  out[k] = amt * (win[k] - lose[k]): opponent mass (card-compatible) of weaker hands
       minus that of stronger hands.  The ascending (win) and descending (lose) sweeps run interleaved,
       two independent dependency chains; whichever reaches a run second writes the final value (the
       first parks its part in out or in `lose`).  On return full[52] / *full_total hold the per-card
       and total opponent mass (for fold values). */
    /* both cards of hand k with one 8-byte load */
    #define RC_CARDS(k) long long pair_; memcpy(&pair_, cards + 2 * (k), 8); \
        int c0 = (int)(pair_ & 0xffffffff), c1 = (int)(pair_ >> 32)
    static void rc_showdown(const rc_real* restrict r, rc_real* restrict out, double amt, rc_real* restrict lose,
                            const int* restrict groups, int G, const int* restrict cards,
                            double* restrict full, double* full_total) {
        double up[52], down[52];
        double tu = 0.0, td = 0.0;
        memset(up, 0, sizeof(up));
        memset(down, 0, sizeof(down));
        for (int i = 0; i < G; i++) {
            int g = G - 1 - i;
            int a0 = groups[i], a1 = groups[i + 1], b0 = groups[g], b1 = groups[g + 1];
            if (i > g) {  /* the descending sweep passed run i already */
                for (int k = a0; k < a1; k++) {
                    RC_CARDS(k);
                    out[k] = ((tu - up[c0] - up[c1]) - lose[k]) * amt;
                }
            } else {
                for (int k = a0; k < a1; k++) {
                    RC_CARDS(k);
                    out[k] = tu - up[c0] - up[c1];
                }
            }
            if (g <= i) {  /* the ascending sweep passed run g already (or just now) */
                for (int k = b0; k < b1; k++) {
                    RC_CARDS(k);
                    out[k] = (out[k] - (td - down[c0] - down[c1])) * amt;
                }
            } else {
                for (int k = b0; k < b1; k++) {
                    RC_CARDS(k);
                    lose[k] = td - down[c0] - down[c1];
                }
            }
            for (int k = a0; k < a1; k++) {
                RC_CARDS(k);
                double x = r[k];
                tu += x;
                up[c0] += x;
                up[c1] += x;
            }
            for (int k = b0; k < b1; k++) {
                RC_CARDS(k);
                double x = r[k];
                td += x;
                down[c0] += x;
                down[c1] += x;
            }
        }
        memcpy(full, up, sizeof(up));
        *full_total = tu;
    }
    /* opponent mass compatible with each hand; two interleaved half sweeps */
    static void rc_card_sums(const rc_real* restrict r, const int* restrict cards, int H, double* restrict full,
                             double* full_total) {
        double a[52], b[52];
        double ta = 0.0, tb = 0.0;
        int half = H / 2;
        memset(a, 0, sizeof(a));
        memset(b, 0, sizeof(b));
        for (int k = 0; k < half; k++) {
            int j = k + half;
            {
                RC_CARDS(k);
                ta += r[k];
                a[c0] += r[k];
                a[c1] += r[k];
            }
            {
                RC_CARDS(j);
                tb += r[j];
                b[c0] += r[j];
                b[c1] += r[j];
            }
        }
        for (int k = 2 * half; k < H; k++) {
            RC_CARDS(k);
            tb += r[k];
            b[c0] += r[k];
            b[c1] += r[k];
        }
        for (int c = 0; c < 52; c++) full[c] = a[c] + b[c];
        *full_total = ta + tb;
    }
    /* Fold values: out[k] = amt x (opponent mass compatible with hand k).  The two table reads per hand are
       gathers; GCC's generic tuning emulates them with scalar loads (a dozen instructions per four hands), so
       on AVX2 the hardware gathers are written out (chosen once at run time), the arithmetic the same
       double operations in the same order as the portable loop (the same values, bit for bit). */
    static void rc_fold_values_portable(const rc_real* restrict r, const double* restrict full, double full_total,
                                        const int* restrict cards, double amt, rc_real* restrict out, int H) {
        for (int k = 0; k < H; k++)
            out[k] = (full_total - full[cards[2 * k]] - full[cards[2 * k + 1]] + r[k]) * amt;
    }
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
    #include <immintrin.h>
    __attribute__((target("avx2"))) static void rc_fold_values_avx2(
            const rc_real* restrict r, const double* restrict full, double full_total, const int* restrict cards,
            double amt, rc_real* restrict out, int H) {
        const __m256d T = _mm256_set1_pd(full_total), M = _mm256_set1_pd(amt);
        const __m256i split = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
        int k = 0;
        for (; k + 4 <= H; k += 4) {
            __m256i cc = _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i*)(cards + 2 * k)), split);
            __m256d f0 = _mm256_i32gather_pd(full, _mm256_castsi256_si128(cc), 8);
            __m256d f1 = _mm256_i32gather_pd(full, _mm256_extracti128_si256(cc, 1), 8);
            __m256d x;
            if (sizeof(rc_real) == 4) x = _mm256_cvtps_pd(_mm_loadu_ps((const float*)(r + k)));
            else x = _mm256_loadu_pd((const double*)(r + k));
            __m256d v = _mm256_mul_pd(_mm256_add_pd(_mm256_sub_pd(_mm256_sub_pd(T, f0), f1), x), M);
            if (sizeof(rc_real) == 4) _mm_storeu_ps((float*)(out + k), _mm256_cvtpd_ps(v));
            else _mm256_storeu_pd((double*)(out + k), v);
        }
        for (; k < H; k++)
            out[k] = (full_total - full[cards[2 * k]] - full[cards[2 * k + 1]] + r[k]) * amt;
    }
    /* On AVX-512 the 52 card masses are held in registers (8 x 8 doubles, zero beyond 52) and each hand's two
       reads are four two-register permutes (16 entries each, selected by bits 0-3 of the card) and three blends
       (by bits 4-5): eight hands per step without memory gathers, the same double operations in the same order
       (the same values, bit for bit). */
    __attribute__((target("avx512f"))) static inline __m512d rc_lookup52(__m512i idx, const __m512d* restrict t) {
        const __m512i three = _mm512_set1_epi64(3);
        __m512d a = _mm512_permutex2var_pd(t[0], idx, t[1]);
        __m512d b = _mm512_permutex2var_pd(t[2], idx, t[3]);
        __m512d c = _mm512_permutex2var_pd(t[4], idx, t[5]);
        __m512d d = _mm512_permutex2var_pd(t[6], idx, t[7]);
        __m512i hi = _mm512_and_si512(_mm512_srli_epi64(idx, 4), three);
        a = _mm512_mask_mov_pd(a, _mm512_cmpeq_epi64_mask(hi, _mm512_set1_epi64(1)), b);
        a = _mm512_mask_mov_pd(a, _mm512_cmpeq_epi64_mask(hi, _mm512_set1_epi64(2)), c);
        return _mm512_mask_mov_pd(a, _mm512_cmpeq_epi64_mask(hi, three), d);
    }
    __attribute__((target("avx512f"))) static void rc_fold_values_avx512(
            const rc_real* restrict r, const double* restrict full, double full_total, const int* restrict cards,
            double amt, rc_real* restrict out, int H) {
        double tbl[64] __attribute__((aligned(64)));
        __m512d t[8];
        memcpy(tbl, full, 52 * sizeof(double));
        for (int c = 52; c < 64; c++) tbl[c] = 0.0;
        for (int j = 0; j < 8; j++) t[j] = _mm512_load_pd(tbl + 8 * j);
        const __m512d T = _mm512_set1_pd(full_total), M = _mm512_set1_pd(amt);
        int k = 0;
        for (; k + 8 <= H; k += 8) {
            /* eight (c0, c1) pairs as 64-bit lanes c0 | c1 << 32: c0 in the low bits, c1 after a shift */
            __m512i cc = _mm512_loadu_si512((const void*)(cards + 2 * k));
            __m512d f0 = rc_lookup52(cc, t);
            __m512d f1 = rc_lookup52(_mm512_srli_epi64(cc, 32), t);
            __m512d x;
            if (sizeof(rc_real) == 4) x = _mm512_cvtps_pd(_mm256_loadu_ps((const float*)(r + k)));
            else x = _mm512_loadu_pd((const double*)(r + k));
            __m512d v = _mm512_mul_pd(_mm512_add_pd(_mm512_sub_pd(_mm512_sub_pd(T, f0), f1), x), M);
            if (sizeof(rc_real) == 4) _mm256_storeu_ps((float*)(out + k), _mm512_cvtpd_ps(v));
            else _mm512_storeu_pd((double*)(out + k), v);
        }
        for (; k < H; k++)
            out[k] = (full_total - full[cards[2 * k]] - full[cards[2 * k + 1]] + r[k]) * amt;
    }
    static int rc_avx2 = -1;
    static void rc_fold_values(const rc_real* restrict r, const double* restrict full, double full_total,
                               const int* restrict cards, double amt, rc_real* restrict out, int H) {
        if (rc_avx2 < 0)  /* the same value from every thread */
            rc_avx2 = __builtin_cpu_supports("avx512f") ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0;
        if (rc_avx2 == 2) rc_fold_values_avx512(r, full, full_total, cards, amt, out, H);
        else if (rc_avx2) rc_fold_values_avx2(r, full, full_total, cards, amt, out, H);
        else rc_fold_values_portable(r, full, full_total, cards, amt, out, H);
    }
    #else
    #define rc_fold_values rc_fold_values_portable
    #endif
    """
    void rc_scale(rc_real* dst, const rc_real* src, const rc_real* s, int H) nogil
    void rc_add(rc_real* out, const rc_real* x, int H) nogil
    void rc_max(rc_real* out, const rc_real* x, int H) nogil
    void rc_add_product(rc_real* out, const rc_real* s, const rc_real* x, int H) nogil
    void rc_scale_const(rc_real* out, double s, int H) nogil
    void rc_gather(rc_real* dst, const rc_real* src, const int* perm, int n) nogil
    void rc_scatter(rc_real* dst, const rc_real* src, const int* perm, int n) nogil
    void rc_update_action(rc_real* ssum, const rc_real* own, const rc_real* srow, double w, rc_real* reg,
                          const rc_real* child, const rc_real* out, rc_real* tot, int dcfr, double pos, double neg,
                          int H) nogil
    void rc_add_positive(rc_real* tot, const rc_real* reg, int H) nogil
    void rc_match_prepare(const rc_real* tot, rc_real* denom, rc_real* uniform, double inv_actions, int H) nogil
    void rc_match(rc_real* srow, const rc_real* reg, const rc_real* denom, const rc_real* uniform, int H) nogil
    void rc_showdown(const rc_real* r, rc_real* out, double amt, rc_real* lose, const int* groups, int G,
                     const int* cards, double* full, double* full_total) nogil
    void rc_card_sums(const rc_real* r, const int* cards, int H, double* full, double* full_total) nogil
    void rc_fold_values(const rc_real* r, const double* full, double full_total, const int* cards, double amt,
                        rc_real* out, int H) nogil
