# Body of the per-board range CFR kernels: included by range_cfr_board.pyx (rc_real = double) and
# range_cfr_board32.pyx (float).  See range_cfr_board.pyx for the layout.
import numpy as np
cimport numpy as cnp
cimport openmp
from cython.parallel cimport prange, parallel
from libc.stdlib cimport malloc, free
from libc.math cimport pow
from libc.string cimport memset, memcpy

include "range_cfr_helpers.pxi"

# a river subtree's folds of one player's decisions are summed in batches (_sd_batches) from this many (one or two
# fold rows do not pay for the batch's extra row and interleave: on the turn spot 1.5% slower)
FOLD_BATCH_MIN = 3

# layouts from this many kernel nodes give the heap their set-up freed back (release_freed_heap; a flop: 661K
# nodes, a turn: 10K)
LARGE_LAYOUT = 65536

cdef extern from *:
    """
    /* glibc keeps the heap that large builds free (layout temporaries, the workspace's set-up arrays) resident;
       malloc_trim gives it back, so that the peak with the tables resident does not carry it */
    #if defined(__GLIBC__)
    #include <malloc.h>
    static void rcb_release_heap(void) { malloc_trim(0); }
    #else
    static void rcb_release_heap(void) {}
    #endif
    /* hand-space changes at chance children: gather the parent's vector into the child's hands, and add
       the child's values back into the parent's hands (hands blocked by the card get nothing) */
    static void rcb_gather(rc_real* restrict dst, const rc_real* restrict src, const int* restrict map, int n) {
        for (int j = 0; j < n; j++) dst[j] = src[map[j]];
    }
    static void rcb_scatter_add(rc_real* restrict dst, const rc_real* restrict src, const int* restrict map, int n) {
        for (int j = 0; j < n; j++) dst[map[j]] += src[j];
    }
    /* average strategy of a node: strategy sums normalised per hand (uniform where a hand's sum is 0) */
    RC_VECTOR static void rcb_sum_rows(rc_real* restrict tot, const rc_real* restrict x, int H) {
        for (int h = 0; h < H; h++) tot[h] += x[h];
    }
    /* Regret matching and the update in the storage type (float32 lanes are twice as many as double ones),
       with one reciprocal per hand instead of a division per action. */
    /* tot[h] = sum over the A actions of max(regret, 0), actions added in order from 0 (the values of a
       zeroed tot plus each action's positive part in turn, bit for bit): all rows read in one loop, so that their cache
       misses overlap (A streams for the prefetcher) and tot is written once. */
    RC_VECTOR static void rcb_positive_total(rc_real* restrict tot, const rc_real* restrict rows, int A, int H) {
        /* x0 = max(r, 0) is never -0, so 0 + x0 = x0: the sums start at the first action (a leading `0 +`
           keeps GCC from vectorising the loop) */
        const rc_real zero = 0;
        const rc_real* restrict r0 = rows;
        const rc_real* restrict r1 = rows + H;
        const rc_real* restrict r2 = rows + 2 * (long)H;
        const rc_real* restrict r3 = rows + 3 * (long)H;
        if (A == 2) {
            for (int h = 0; h < H; h++) {
                rc_real x0 = r0[h] > zero ? r0[h] : zero, x1 = r1[h] > zero ? r1[h] : zero;
                tot[h] = x0 + x1;
            }
        } else if (A == 3) {
            for (int h = 0; h < H; h++) {
                rc_real x0 = r0[h] > zero ? r0[h] : zero, x1 = r1[h] > zero ? r1[h] : zero;
                rc_real x2 = r2[h] > zero ? r2[h] : zero;
                tot[h] = (x0 + x1) + x2;
            }
        } else if (A == 4) {
            for (int h = 0; h < H; h++) {
                rc_real x0 = r0[h] > zero ? r0[h] : zero, x1 = r1[h] > zero ? r1[h] : zero;
                rc_real x2 = r2[h] > zero ? r2[h] : zero, x3 = r3[h] > zero ? r3[h] : zero;
                tot[h] = ((x0 + x1) + x2) + x3;
            }
        } else {
            memset(tot, 0, (size_t)H * sizeof(rc_real));
            for (int a = 0; a < A; a++) {
                const rc_real* restrict ra = rows + (long)a * H;
                for (int h = 0; h < H; h++) tot[h] += ra[h] > zero ? ra[h] : zero;
            }
        }
    }
    /* no-trapping-math: lets the compiler divide on every lane and select (results are the same) */
    RC_VECTOR __attribute__((optimize("no-trapping-math"))) static void rcb_match_prepare(const rc_real* restrict tot, rc_real* restrict inv, rc_real* restrict uniform,
                                            double inv_actions, int H) {
        const rc_real zero = 0, one = 1, u = (rc_real)inv_actions;
        for (int h = 0; h < H; h++) {  /* the division on every lane, then selects: it vectorises */
            rc_real x = tot[h];
            rc_real q = one / (x > zero ? x : one);
            inv[h] = x > zero ? q : zero;
            uniform[h] = x > zero ? zero : u;
        }
    }
    RC_VECTOR static void rcb_match(rc_real* restrict srow, const rc_real* restrict reg, const rc_real* restrict inv,
                                    const rc_real* restrict uniform, int clip, int H) {
        const rc_real zero = 0;
        if (clip)
            for (int h = 0; h < H; h++) srow[h] = (reg[h] > zero ? reg[h] : zero) * inv[h] + uniform[h];
        else
            for (int h = 0; h < H; h++) srow[h] = reg[h] * inv[h] + uniform[h];
    }
    /* Regret matching of a node with A <= 4 actions in one pass over the hands: per hand the positive parts,
       their total (rcb_positive_total's order), the reciprocal and the uniform fallback (rcb_match_prepare's
       operations) and each action's row (rcb_match's, clip on), without the tot / inv / uniform rows in between
       and with each regret read once: the same float operations per element, so the same bits. */
    RC_VECTOR __attribute__((optimize("no-trapping-math"))) static void rcb_match_fused(
            rc_real* restrict strat, const rc_real* restrict rows, int A, double inv_actions, int H) {
        const rc_real zero = 0, one = 1, u = (rc_real)inv_actions;
        const rc_real* restrict r0 = rows;
        const rc_real* restrict r1 = rows + H;
        const rc_real* restrict r2 = rows + 2 * (long)H;
        const rc_real* restrict r3 = rows + 3 * (long)H;
        rc_real* restrict s0 = strat;
        rc_real* restrict s1 = strat + H;
        rc_real* restrict s2 = strat + 2 * (long)H;
        rc_real* restrict s3 = strat + 3 * (long)H;
        if (A == 2) {
            for (int h = 0; h < H; h++) {
                rc_real x0 = r0[h] > zero ? r0[h] : zero, x1 = r1[h] > zero ? r1[h] : zero;
                rc_real x = x0 + x1;
                rc_real q = one / (x > zero ? x : one);
                rc_real inv = x > zero ? q : zero, un = x > zero ? zero : u;
                s0[h] = x0 * inv + un;
                s1[h] = x1 * inv + un;
            }
        } else if (A == 3) {
            for (int h = 0; h < H; h++) {
                rc_real x0 = r0[h] > zero ? r0[h] : zero, x1 = r1[h] > zero ? r1[h] : zero;
                rc_real x2 = r2[h] > zero ? r2[h] : zero;
                rc_real x = (x0 + x1) + x2;
                rc_real q = one / (x > zero ? x : one);
                rc_real inv = x > zero ? q : zero, un = x > zero ? zero : u;
                s0[h] = x0 * inv + un;
                s1[h] = x1 * inv + un;
                s2[h] = x2 * inv + un;
            }
        } else {  /* A == 4 */
            for (int h = 0; h < H; h++) {
                rc_real x0 = r0[h] > zero ? r0[h] : zero, x1 = r1[h] > zero ? r1[h] : zero;
                rc_real x2 = r2[h] > zero ? r2[h] : zero, x3 = r3[h] > zero ? r3[h] : zero;
                rc_real x = ((x0 + x1) + x2) + x3;
                rc_real q = one / (x > zero ? x : one);
                rc_real inv = x > zero ? q : zero, un = x > zero ? zero : u;
                s0[h] = x0 * inv + un;
                s1[h] = x1 * inv + un;
                s2[h] = x2 * inv + un;
                s3[h] = x3 * inv + un;
            }
        }
    }
    /* a decision's value out[h] = sum over its A <= 4 actions of strat x child value, added in action order from
       a zero (memset, then rc_add_product per action: the same float operations), in one pass */
    RC_VECTOR static void rcb_value_fused(rc_real* restrict out, const rc_real* restrict strat,
                                          const rc_real* restrict childv, int A, int H) {
        const rc_real zero = 0;
        const rc_real* restrict s0 = strat;
        const rc_real* restrict s1 = strat + H;
        const rc_real* restrict s2 = strat + 2 * (long)H;
        const rc_real* restrict s3 = strat + 3 * (long)H;
        const rc_real* restrict c0 = childv;
        const rc_real* restrict c1 = childv + H;
        const rc_real* restrict c2 = childv + 2 * (long)H;
        const rc_real* restrict c3 = childv + 3 * (long)H;
        if (A == 2) {
            for (int h = 0; h < H; h++) {
                rc_real o = zero + s0[h] * c0[h];
                out[h] = o + s1[h] * c1[h];
            }
        } else if (A == 3) {
            for (int h = 0; h < H; h++) {
                rc_real o = zero + s0[h] * c0[h];
                o = o + s1[h] * c1[h];
                out[h] = o + s2[h] * c2[h];
            }
        } else {  /* A == 4 */
            for (int h = 0; h < H; h++) {
                rc_real o = zero + s0[h] * c0[h];
                o = o + s1[h] * c1[h];
                o = o + s2[h] * c2[h];
                out[h] = o + s3[h] * c3[h];
            }
        }
    }
    /* one action of a CFR update (as rc_update_action, in the storage type).  dcfr 3 (DCFR+) and 4 (PDCFR+):
       the old regret discounted by pos then the new instantaneous regret added, clipped at 0 (CFR+'s floor);
       PDCFR+ keeps that cumulative regret in `cum` and stores in `reg` the predicted regret
       max(cum x neg + instantaneous, 0) that the next regret matching reads (Xu et al. 2024) */
    RC_VECTOR static void rcb_update_action(rc_real* restrict ssum, const rc_real* restrict own, const rc_real* restrict srow,
                                            double w_, rc_real* restrict reg, const rc_real* restrict child,
                                            const rc_real* restrict out, int dcfr, double pos_, double neg_,
                                            rc_real* restrict cum, int H) {
        const rc_real zero = 0, w = (rc_real)w_, pos = (rc_real)pos_, neg = (rc_real)neg_;
        if (dcfr == 2) {
            for (int h = 0; h < H; h++) ssum[h] = ssum[h] * w + srow[h];
            for (int h = 0; h < H; h++) {  /* the factor selected, one product: it vectorises */
                rc_real r = reg[h];
                reg[h] = r * (r >= zero ? pos : neg) + child[h] - out[h];
            }
            return;
        }
        if (w > zero)
            for (int h = 0; h < H; h++) ssum[h] += w * own[h] * srow[h];
        if (dcfr == 4) {
            for (int h = 0; h < H; h++) {
                rc_real g = child[h] - out[h];
                rc_real r = cum[h] * pos + g;
                r = r > zero ? r : zero;
                cum[h] = r;
                rc_real q = r * neg + g;
                reg[h] = q > zero ? q : zero;
            }
        } else if (dcfr == 3) {
            for (int h = 0; h < H; h++) {
                rc_real r = reg[h] * pos + (child[h] - out[h]);
                reg[h] = r > zero ? r : zero;
            }
        } else if (dcfr) {
            for (int h = 0; h < H; h++) {
                rc_real r = reg[h] + child[h] - out[h];
                reg[h] = r * (r > zero ? pos : neg);
            }
        } else {
            for (int h = 0; h < H; h++) {
                rc_real r = reg[h] + child[h] - out[h];
                reg[h] = r > zero ? r : zero;
            }
        }
    }
    /* 16-bit storage (postflop-solver's compression): a node's regrets are int16 times scale / 32767 and its
       strategy sums uint16 times scale / 65535, scale = the block's largest magnitude.  The tables are read and
       written as 16-bit codes inside the kernels below (no pass that decodes a block into float scratch):
       regret matching and the average strategy normalise each hand's row, so the scale cancels and they work
       on the codes themselves (integers, exact in float); only the update decodes (code x step, in float32
       lanes), and it encodes its new block from L1 scratch.  Each kernel has an AVX-512 build (16 float lanes,
       RCB_CLONES16); setup.py builds these modules with -ffp-contract=off, so every product and sum stays
       separate (no FMA) and all builds give the same bits. */
    /* name##_body is compiled three times (AVX-512 with 512-bit lanes, AVX2, baseline), chosen once at run time:
       target_clones keeps GCC's preference for 256-bit lanes, target() takes prefer-vector-width */
    #define RCB_BODY16 static inline __attribute__((always_inline))
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
    static int rcb_isa16 = -1;
    static int rcb_isa16_get(void) {
        if (rcb_isa16 < 0)  /* the same value from every thread */
            rcb_isa16 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") ? 2
                        : __builtin_cpu_supports("avx2") ? 1 : 0;
        return rcb_isa16;
    }
    #define RCB_CLONES16(name, params, args) \
        __attribute__((target("avx512f,avx512bw,prefer-vector-width=512"))) static void name##_512 params { name##_body args; } \
        __attribute__((target("avx2"))) static void name##_avx2 params { name##_body args; } \
        static void name##_base params { name##_body args; } \
        static void name params { \
            int isa_ = rcb_isa16_get(); \
            if (isa_ == 2) name##_512 args; else if (isa_ == 1) name##_avx2 args; else name##_base args; }
    /* tests: run a lower build (at most the CPU's); returns the one in use before */
    static int rcb_isa16_set(int level) {
        int before = rcb_isa16_get(), best = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
                                              ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0;
        rcb_isa16 = level < best ? level : best;
        return before;
    }
    #else
    #define RCB_CLONES16(name, params, args) static void name params { name##_body args; }
    static int rcb_isa16_set(int level) { return 0; }
    #endif
    /* max(code, 0) without a branch (x >> 31: all ones for a negative x), so that the loops vectorise */
    #define RCB_POS16(x) ((int)(x) & ~((int)(x) >> 31))
    /* tot[h] = sum over the actions of max(code, 0) (regrets, clip) or of the code (strategy sums): integer
       sums, exact in float whatever the order */
    RCB_BODY16 void rcb_total16_body(rc_real* restrict tot, const void* restrict rows, int is_signed, int A, int H) {
        const short* restrict s0 = (const short*)rows;
        const unsigned short* restrict u0 = (const unsigned short*)rows;
        if (is_signed && A == 2) {
            const short* restrict s1 = s0 + H;
            for (int h = 0; h < H; h++) tot[h] = (rc_real)(RCB_POS16(s0[h]) + RCB_POS16(s1[h]));
        } else if (is_signed && A == 3) {
            const short* restrict s1 = s0 + H;
            const short* restrict s2 = s0 + 2 * (long)H;
            for (int h = 0; h < H; h++) tot[h] = (rc_real)(RCB_POS16(s0[h]) + RCB_POS16(s1[h]) + RCB_POS16(s2[h]));
        } else if (is_signed) {
            memset(tot, 0, (size_t)H * sizeof(rc_real));
            for (int a = 0; a < A; a++) {
                const short* restrict r = s0 + (long)a * H;
                for (int h = 0; h < H; h++) tot[h] += (rc_real)RCB_POS16(r[h]);
            }
        } else {
            memset(tot, 0, (size_t)H * sizeof(rc_real));
            for (int a = 0; a < A; a++) {
                const unsigned short* restrict r = u0 + (long)a * H;
                for (int h = 0; h < H; h++) tot[h] += (rc_real)(int)r[h];
            }
        }
    }
    RCB_CLONES16(rcb_total16, (rc_real* restrict tot, const void* restrict rows, int is_signed, int A, int H), (tot, rows, is_signed, A, H))
    /* Regret matching of a node with 2 <= A <= 4 actions straight from its regret codes in one pass over the hands
       (rcb_total16's integer total, rcb_match_prepare's reciprocal and fallback, rcb_match16's rows: the same
       operations per element, so the same bits), without the tot / inv / uniform rows in between. */
    RCB_BODY16 void rcb_match16_fused_body(rc_real* restrict strat, const short* restrict q0, int A,
                                           double inv_actions, int H) {
        const rc_real zero = 0, one = 1, u = (rc_real)inv_actions;
        const short* restrict q1 = q0 + H;
        const short* restrict q2 = q0 + 2 * (long)H;
        const short* restrict q3 = q0 + 3 * (long)H;
        rc_real* restrict s0 = strat;
        rc_real* restrict s1 = strat + H;
        rc_real* restrict s2 = strat + 2 * (long)H;
        rc_real* restrict s3 = strat + 3 * (long)H;
        if (A == 2) {
            for (int h = 0; h < H; h++) {
                int p0 = RCB_POS16(q0[h]), p1 = RCB_POS16(q1[h]);
                rc_real x = (rc_real)(p0 + p1);
                rc_real q = one / (x > zero ? x : one);
                rc_real inv = x > zero ? q : zero, un = x > zero ? zero : u;
                s0[h] = (rc_real)p0 * inv + un;
                s1[h] = (rc_real)p1 * inv + un;
            }
        } else if (A == 3) {
            for (int h = 0; h < H; h++) {
                int p0 = RCB_POS16(q0[h]), p1 = RCB_POS16(q1[h]), p2 = RCB_POS16(q2[h]);
                rc_real x = (rc_real)(p0 + p1 + p2);
                rc_real q = one / (x > zero ? x : one);
                rc_real inv = x > zero ? q : zero, un = x > zero ? zero : u;
                s0[h] = (rc_real)p0 * inv + un;
                s1[h] = (rc_real)p1 * inv + un;
                s2[h] = (rc_real)p2 * inv + un;
            }
        } else {  /* A == 4: rcb_total16 adds the four in the storage type, exact for these integers */
            for (int h = 0; h < H; h++) {
                int p0 = RCB_POS16(q0[h]), p1 = RCB_POS16(q1[h]), p2 = RCB_POS16(q2[h]), p3 = RCB_POS16(q3[h]);
                rc_real x = (rc_real)(p0 + p1 + p2 + p3);
                rc_real q = one / (x > zero ? x : one);
                rc_real inv = x > zero ? q : zero, un = x > zero ? zero : u;
                s0[h] = (rc_real)p0 * inv + un;
                s1[h] = (rc_real)p1 * inv + un;
                s2[h] = (rc_real)p2 * inv + un;
                s3[h] = (rc_real)p3 * inv + un;
            }
        }
    }
    RCB_CLONES16(rcb_match16_fused, (rc_real* restrict strat, const short* restrict q0, int A, double inv_actions, int H), (strat, q0, A, inv_actions, H))
    /* one action's strategy row from its codes: max(code, 0) x inv + uniform (rcb_match on the codes) */
    RCB_BODY16 void rcb_match16_body(rc_real* restrict srow, const void* restrict row, int is_signed,
                                         const rc_real* restrict inv, const rc_real* restrict uniform, int H) {
        if (is_signed) {
            const short* restrict q = (const short*)row;
            for (int h = 0; h < H; h++) srow[h] = (rc_real)RCB_POS16(q[h]) * inv[h] + uniform[h];
        } else {
            const unsigned short* restrict q = (const unsigned short*)row;
            for (int h = 0; h < H; h++) srow[h] = (rc_real)(int)q[h] * inv[h] + uniform[h];
        }
    }
    RCB_CLONES16(rcb_match16, (rc_real* restrict srow, const void* restrict row, int is_signed, const rc_real* restrict inv, const rc_real* restrict uniform, int H), (srow, row, is_signed, inv, uniform, H))
    /* one action of the update on 16-bit tables (rcb_update_action's rules, dcfr 0-3): the old regret and
       strategy sum decoded from their codes (code x step fr / fs), the new ones written to float scratch
       (rnew, snew; rcb_encode16 then codes the block) */
    /* the block maxima as they are written (the values of rcb_max_bits over the block, see there): bits of
       |v| (regrets) or of v (strategy sums; a negative one reads as a negative integer) */
    #define RCB_TRACK_ABS(v, m) { float f_ = (float)(v); int b_; memcpy(&b_, &f_, 4); b_ &= 0x7fffffff; m = b_ > m ? b_ : m; }
    #define RCB_TRACK(v, m) { float f_ = (float)(v); int b_; memcpy(&b_, &f_, 4); m = b_ > m ? b_ : m; }
    RCB_BODY16 void rcb_update16_body(rc_real* restrict snew, const unsigned short* restrict qs, double fs_,
                                      const rc_real* restrict own, const rc_real* restrict srow, double w_,
                                      rc_real* restrict rnew, const short* restrict qr, double fr_,
                                      const rc_real* restrict child, const rc_real* restrict out, int dcfr,
                                      double pos_, double neg_, int H, int* restrict rmax, int* restrict smax) {
        const rc_real zero = 0, w = (rc_real)w_, pos = (rc_real)pos_, neg = (rc_real)neg_;
        const rc_real fs = (rc_real)fs_, fr = (rc_real)fr_;
        int mr = *rmax, ms = *smax;
        if (dcfr == 2) {
            for (int h = 0; h < H; h++) {
                rc_real v = ((rc_real)qs[h] * fs) * w + srow[h];
                snew[h] = v;
                RCB_TRACK(v, ms);
            }
            for (int h = 0; h < H; h++) {
                rc_real r = (rc_real)qr[h] * fr;
                rc_real v = r * (r >= zero ? pos : neg) + child[h] - out[h];
                rnew[h] = v;
                RCB_TRACK_ABS(v, mr);
            }
        } else {
            if (w > zero)
                for (int h = 0; h < H; h++) {
                    rc_real v = (rc_real)qs[h] * fs + w * own[h] * srow[h];
                    snew[h] = v;
                    RCB_TRACK(v, ms);
                }
            else
                for (int h = 0; h < H; h++) {
                    rc_real v = (rc_real)qs[h] * fs;
                    snew[h] = v;
                    RCB_TRACK(v, ms);
                }
            if (dcfr == 3) {
                for (int h = 0; h < H; h++) {
                    rc_real r = ((rc_real)qr[h] * fr) * pos + (child[h] - out[h]);
                    rc_real v = r > zero ? r : zero;
                    rnew[h] = v;
                    RCB_TRACK_ABS(v, mr);
                }
            } else if (dcfr) {
                for (int h = 0; h < H; h++) {
                    rc_real r = (rc_real)qr[h] * fr + child[h] - out[h];
                    rc_real v = r * (r > zero ? pos : neg);
                    rnew[h] = v;
                    RCB_TRACK_ABS(v, mr);
                }
            } else {
                for (int h = 0; h < H; h++) {
                    rc_real r = (rc_real)qr[h] * fr + child[h] - out[h];
                    rc_real v = r > zero ? r : zero;
                    rnew[h] = v;
                    RCB_TRACK_ABS(v, mr);
                }
            }
        }
        *rmax = mr;
        *smax = ms;
    }
    RCB_CLONES16(rcb_update16, (rc_real* restrict snew, const unsigned short* restrict qs, double fs_, const rc_real* restrict own, const rc_real* restrict srow, double w_, rc_real* restrict rnew, const short* restrict qr, double fr_, const rc_real* restrict child, const rc_real* restrict out, int dcfr, double pos_, double neg_, int H, int* restrict rmax, int* restrict smax), (snew, qs, fs_, own, srow, w_, rnew, qr, fr_, child, out, dcfr, pos_, neg_, H, rmax, smax))
    /* Largest |x[i]| (abs = 1) or largest max(x[i], 0) (abs = 0) over the bit patterns: a non-negative IEEE
       number orders as its bits read as an integer, and a negative one reads as a negative integer, so the
       integer maximum (which vectorises, unlike a floating-point one) is the same value as the floating-point
       maximum (no NaN here). */
    RC_VECTOR static rc_real rcb_max_bits(const rc_real* restrict x, long n, int abs) {
        if (sizeof(rc_real) == 4) {
            const unsigned int* b = (const unsigned int*)x;
            int m = 0;
            if (abs) for (long i = 0; i < n; i++) { int v = (int)(b[i] & 0x7fffffffu); m = v > m ? v : m; }
            else for (long i = 0; i < n; i++) { int v = (int)b[i]; m = v > m ? v : m; }
            float r; memcpy(&r, &m, 4); return (rc_real)r;
        } else {
            const unsigned long long* b = (const unsigned long long*)x;
            long long m = 0;
            if (abs) for (long i = 0; i < n; i++) { long long v = (long long)(b[i] & 0x7fffffffffffffffull); m = v > m ? v : m; }
            else for (long i = 0; i < n; i++) { long long v = (long long)b[i]; m = v > m ? v : m; }
            double r; memcpy(&r, &m, 8); return (rc_real)r;
        }
    }
    /* rounded to nearest (halves away from zero), branch-free so that it vectorises (rounding="nearest") */
    RC_VECTOR static void rcb_quantize_i16(short* restrict q, const rc_real* restrict x, double f, long n) {
        for (long i = 0; i < n; i++) { double v = x[i] * f; v += v < 0 ? -0.5 : 0.5; q[i] = (short)(int)v; }
    }
    RC_VECTOR static void rcb_quantize_u16(unsigned short* restrict q, const rc_real* restrict x, double f, long n) {
        for (long i = 0; i < n; i++) { double v = x[i] * f; int a = (int)(v + 0.5); q[i] = (unsigned short)(a & -(v > 0)); }
    }
    /* Stochastic rounding: floor(x f + u), u in [0, 1) the fraction of (key + i) times the golden ratio (a
       Weyl sequence: one multiply per entry; the solver's key is a hash of (iteration, player, node), so an
       entry's u is uniform over iterations and its neighbours' are spread evenly).  The stored value is then
       unbiased, so an update under half a 16-bit step (a hand far below its node's largest magnitude, or late
       in the run when one iteration adds little to a large sum) still moves the sum in expectation instead of
       being dropped every time: with rounding to nearest the flop and turn stall near 0.1% of the pot.
       Deterministic in (key, i), so the same whatever the threads.  In float32 lanes (24-bit u; near the top
       of the scale x f + u keeps u to 2^-8 of a step, a bias under 2^-9 of a step): the floor is the
       truncation less one where it rounded a negative value up. */
    static inline unsigned int rcb_hash(unsigned int x) {
        x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16; return x;
    }
    RCB_BODY16 void rcb_quantize_i16_sr_body(short* restrict q, const rc_real* restrict x, double f_, long n,
                                                 unsigned int key) {
        const float f = (float)f_, step = 1.0f / 16777216.0f;
        const int m = (int)n;  /* a block: A x H < 2^31 entries; 32-bit lanes */
        unsigned int k = key * 0x9E3779B9u;  /* (key + i) x the ratio, as a running sum: adds, no multiply */
        for (int i = 0; i < m; i++, k += 0x9E3779B9u) {
            float u = (float)(int)(k >> 8) * step;
            float y = (float)x[i] * f + u;
            int a = (int)y;
            a -= (float)a > y;
            a = a > 32767 ? 32767 : a;
            a = a < -32767 ? -32767 : a;
            q[i] = (short)a;
        }
    }
    RCB_CLONES16(rcb_quantize_i16_sr, (short* restrict q, const rc_real* restrict x, double f_, long n, unsigned int key), (q, x, f_, n, key))
    RCB_BODY16 void rcb_quantize_u16_sr_body(unsigned short* restrict q, const rc_real* restrict x, double f_,
                                                 long n, unsigned int key) {
        const float f = (float)f_, step = 1.0f / 16777216.0f;
        const int m = (int)n;
        unsigned int k = key * 0x9E3779B9u;
        for (int i = 0; i < m; i++, k += 0x9E3779B9u) {
            float u = (float)(int)(k >> 8) * step;
            float v = (float)x[i] * f;
            int a = (int)(v + u);  /* v + u >= 0 where kept: truncation = floor */
            a = a > 65535 ? 65535 : a;
            q[i] = (unsigned short)(a & -(v > 0));
        }
    }
    RCB_CLONES16(rcb_quantize_u16_sr, (unsigned short* restrict q, const rc_real* restrict x, double f_, long n, unsigned int key), (q, x, f_, n, key))
    /* key 0: rounded to nearest; otherwise stochastic rounding keyed by it */
    /* m: the block's largest magnitude (regrets) or largest value (strategy sums), e.g. from rcb_update16 */
    static float rcb_encode_i16_max(short* restrict q, const rc_real* restrict x, long n, unsigned int key, rc_real m) {
        if (!(m > 0)) { memset(q, 0, n * sizeof(short)); return 0.0f; }
        if (key) rcb_quantize_i16_sr(q, x, 32767.0 / m, n, key);
        else rcb_quantize_i16(q, x, 32767.0 / m, n);
        return (float)m;
    }
    static float rcb_encode_u16_max(unsigned short* restrict q, const rc_real* restrict x, long n, unsigned int key,
                                    rc_real m) {
        if (!(m > 0)) { memset(q, 0, n * sizeof(unsigned short)); return 0.0f; }
        if (key) rcb_quantize_u16_sr(q, x, 65535.0 / m, n, key);
        else rcb_quantize_u16(q, x, 65535.0 / m, n);
        return (float)m;
    }
    static float rcb_encode_i16(short* restrict q, const rc_real* restrict x, long n, unsigned int key) {
        return rcb_encode_i16_max(q, x, n, key, rcb_max_bits(x, n, 1));
    }
    static float rcb_encode_u16(unsigned short* restrict q, const rc_real* restrict x, long n, unsigned int key) {
        return rcb_encode_u16_max(q, x, n, key, rcb_max_bits(x, n, 0));
    }
    static float rcb_float_of_bits(int b) { float f; memcpy(&f, &b, 4); return f; }
    /* Ask for a block in L2 ahead of its use (prefetcht1; `write`: the block will be written).  A river
       subtree's regret and strategy-sum blocks are scattered over the tables and each is first read by one
       streaming loop, which then waits on the cache misses of its block one after the other; requested all
       at once at the river root, the misses overlap and the blocks (tens of KB) wait in L2. */
    static void rcb_prefetch(const void* p, long bytes, int write) {
        const char* c = (const char*)p;
        if (write) for (long i = 0; i < bytes; i += 64) __builtin_prefetch(c + i, 1, 2);
        else for (long i = 0; i < bytes; i += 64) __builtin_prefetch(c + i, 0, 2);
    }
    /* The same requests spread over the work before the blocks' use: a few lines at a time from the showdown
       sweeps (rcb_showdown4 takes one line per RCB_PFQ_HANDS hands it sweeps, at each run of equal strength).  Hundreds of prefetches issued
       at once overflow the core's miss buffers and most are dropped (on this Zen 4: a river subtree's regret
       reads then still waited on memory, 17% of a turn iteration, as if nothing had been requested); issued a
       few at a time while the previous subtree is walked they arrive.  One queue per thread; pure hints, no
       effect on any value. */
    #define RCB_PFQ_CAP 64
    #define RCB_PFQ_HANDS 4
    typedef struct {
        const char* start[RCB_PFQ_CAP];
        const char* end[RCB_PFQ_CAP];
        int len, i;
        const char* cur;
        long long tag;  /* what the queued blocks are for (a parallel task's index), -1: none said */
    } rcb_pfq;
    static long rcb_pfq_size(void) { return (long)sizeof(rcb_pfq); }
    static void rcb_pfq_clear(rcb_pfq* q) { q->len = 0; q->i = 0; q->cur = NULL; q->tag = -1; }
    static long long rcb_pfq_tag(const rcb_pfq* q) { return q->tag; }
    static void rcb_pfq_set_tag(rcb_pfq* q, long long tag) { q->tag = tag; }
    /* queue the cache lines of [p, p + bytes) (all of them, the first from its line start) */
    static void rcb_pfq_push(rcb_pfq* q, const void* p, long bytes) {
        const char* a = (const char*)((unsigned long)p & ~63ul);
        if (bytes <= 0) return;
        if (q->len == RCB_PFQ_CAP) { rcb_prefetch(p, bytes, 0); return; }
        q->start[q->len] = a;
        q->end[q->len] = (const char*)p + bytes;
        if (q->len == q->i) q->cur = a;
        q->len++;
    }
    static inline void rcb_pfq_step(rcb_pfq* q, int k) {
        while (k > 0 && q->i < q->len) {
            __builtin_prefetch(q->cur, 0, 2);
            q->cur += 64;
            k--;
            if (q->cur >= q->end[q->i]) {
                q->i++;
                q->cur = q->i < q->len ? q->start[q->i] : NULL;
            }
        }
    }
    /* the lines not yet requested, all at once (their use is next) */
    static void rcb_pfq_flush(rcb_pfq* q) {
        while (q->i < q->len) rcb_pfq_step(q, 1 << 30);
        rcb_pfq_clear(q);
    }
    /* Task ranges of _pass's parallel loop: thread i owns the tasks [lo, hi) of one 64-bit word (lo in the low
       32 bits), takes them from the front, one at a time, and knows the next one it will take (so the prefetch
       queue above is filled for a task the thread surely runs: with a shared dynamic schedule the guess "the
       task `threads` ahead" missed whenever the threads drifted apart); a thread whose range is empty takes
       tasks from the back of the fullest other range.  -1: nothing left. */
    static long long rcb_seg_front(unsigned long long* s) {
        unsigned long long v = __atomic_load_n(s, __ATOMIC_RELAXED), w;
        do {
            unsigned lo = (unsigned)v, hi = (unsigned)(v >> 32);
            if (lo >= hi) return -1;
            w = ((unsigned long long)hi << 32) | (unsigned long long)(lo + 1);
        } while (!__atomic_compare_exchange_n(s, &v, w, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
        return (long long)(unsigned)v;
    }
    static long long rcb_seg_back(unsigned long long* s) {
        unsigned long long v = __atomic_load_n(s, __ATOMIC_RELAXED), w;
        do {
            unsigned lo = (unsigned)v, hi = (unsigned)(v >> 32);
            if (lo >= hi) return -1;
            w = ((unsigned long long)(hi - 1) << 32) | (unsigned long long)lo;
        } while (!__atomic_compare_exchange_n(s, &v, w, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
        return (long long)(unsigned)(v >> 32) - 1;
    }
    static long long rcb_seg_left(unsigned long long* s) {
        unsigned long long v = __atomic_load_n(s, __ATOMIC_RELAXED);
        unsigned lo = (unsigned)v, hi = (unsigned)(v >> 32);
        return lo < hi ? (long long)(hi - lo) : 0;
    }
    static long long rcb_seg_hi(unsigned long long* s) {
        return (long long)(unsigned)(__atomic_load_n(s, __ATOMIC_RELAXED) >> 32);
    }
    static long long rcb_seg_lo(unsigned long long* s) {
        return (long long)(unsigned)__atomic_load_n(s, __ATOMIC_RELAXED);
    }
    /* one task of a top chance node done: how many are left (the thread that sees 0 sums the node's children;
       acquire-release, so it sees every other task's values) */
    static int rcb_count_down(int* c) { return __atomic_sub_fetch(c, 1, __ATOMIC_ACQ_REL); }
    static void rcb_seg_set(unsigned long long* s, long long lo, long long hi) {
        __atomic_store_n(s, ((unsigned long long)hi << 32) | (unsigned long long)lo, __ATOMIC_RELAXED);
    }
    /* Four showdown sweeps at once, one per lane (rc_showdown's operations in the same order per lane, so each
       lane's values are those of rc_showdown bit for bit): reach, values and `lose` interleaved ([4 k + lane]),
       `amt` (4,); full4 (4, 53): per lane the per-card opponent mass and its total (as rc_showdown's full). */
    typedef double rcb_v4d __attribute__((vector_size(32), aligned(8)));
    typedef rc_real rcb_v4r __attribute__((vector_size(4 * sizeof(rc_real)), aligned(sizeof(rc_real))));
    /* The lanes' loads and stores (4 values of the storage type <-> 4 doubles): written with intrinsics in the
       AVX2 build (GCC splits __builtin_convertvector of a float vector into two 128-bit halves and an insert: 9%
       of the sweep), the portable conversion in the baseline build; the same values either way. */
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
    #include <immintrin.h>
    #define RCB_SD4_CLONES 1
    #endif
    #define RCB_LD4_BASE(p) __builtin_convertvector(*(const rcb_v4r*)(p), rcb_v4d)
    #define RCB_ST4_BASE(p, v) (*(rcb_v4r*)(p) = __builtin_convertvector((v), rcb_v4r))
    static void rcb_showdown4_base(const rc_real* restrict r, rc_real* restrict out, const double* restrict amt,
                                        rc_real* restrict lose, const int* restrict groups, int G,
                                        const int* restrict cards, double* restrict full4, rcb_pfq* pfq) {
        rcb_v4d up[52], down[52];
        const rcb_v4d zero = {0.0, 0.0, 0.0, 0.0};
        rcb_v4d tu = zero, td = zero, am = {amt[0], amt[1], amt[2], amt[3]};
        for (int c = 0; c < 52; c++) { up[c] = zero; down[c] = zero; }
        for (int i = 0; i < G; i++) {
            int g = G - 1 - i;
            int a0 = groups[i], a1 = groups[i + 1], b0 = groups[g], b1 = groups[g + 1];
            if (pfq) rcb_pfq_step(pfq, (a1 - a0 + b1 - b0 + RCB_PFQ_HANDS - 1) / RCB_PFQ_HANDS);
            if (i > g) {
                for (int k = a0; k < a1; k++) {
                    RC_CARDS(k);
                    RCB_ST4_BASE(out + 4 * k, ((tu - up[c0] - up[c1]) - RCB_LD4_BASE(lose + 4 * k)) * am);
                }
            } else {
                for (int k = a0; k < a1; k++) {
                    RC_CARDS(k);
                    RCB_ST4_BASE(out + 4 * k, tu - up[c0] - up[c1]);
                }
            }
            if (g <= i) {
                for (int k = b0; k < b1; k++) {
                    RC_CARDS(k);
                    RCB_ST4_BASE(out + 4 * k, (RCB_LD4_BASE(out + 4 * k) - (td - down[c0] - down[c1])) * am);
                }
            } else {
                for (int k = b0; k < b1; k++) {
                    RC_CARDS(k);
                    RCB_ST4_BASE(lose + 4 * k, td - down[c0] - down[c1]);
                }
            }
            for (int k = a0; k < a1; k++) {
                RC_CARDS(k);
                rcb_v4d x = RCB_LD4_BASE(r + 4 * k);
                tu += x;
                up[c0] += x;
                up[c1] += x;
            }
            for (int k = b0; k < b1; k++) {
                RC_CARDS(k);
                rcb_v4d x = RCB_LD4_BASE(r + 4 * k);
                td += x;
                down[c0] += x;
                down[c1] += x;
            }
        }
        for (int j = 0; j < 4; j++) {
            for (int c = 0; c < 52; c++) full4[53 * j + c] = up[c][j];
            full4[53 * j + 52] = tu[j];
        }
    }
    #ifdef RCB_SD4_CLONES
    #define RCB_LD4_AVX2(p) (sizeof(rc_real) == 4 ? (rcb_v4d)_mm256_cvtps_pd(_mm_loadu_ps((const float*)(p))) \
                                                  : (rcb_v4d)_mm256_loadu_pd((const double*)(p)))
    #define RCB_ST4_AVX2(p, v) do { if (sizeof(rc_real) == 4) _mm_storeu_ps((float*)(p), _mm256_cvtpd_ps((__m256d)(v))); \
                                    else _mm256_storeu_pd((double*)(p), (__m256d)(v)); } while (0)
    __attribute__((target("avx2"))) static void rcb_showdown4_avx2(const rc_real* restrict r, rc_real* restrict out, const double* restrict amt,
                                        rc_real* restrict lose, const int* restrict groups, int G,
                                        const int* restrict cards, double* restrict full4, rcb_pfq* pfq) {
        rcb_v4d up[52], down[52];
        const rcb_v4d zero = {0.0, 0.0, 0.0, 0.0};
        rcb_v4d tu = zero, td = zero, am = {amt[0], amt[1], amt[2], amt[3]};
        for (int c = 0; c < 52; c++) { up[c] = zero; down[c] = zero; }
        for (int i = 0; i < G; i++) {
            int g = G - 1 - i;
            int a0 = groups[i], a1 = groups[i + 1], b0 = groups[g], b1 = groups[g + 1];
            if (pfq) rcb_pfq_step(pfq, (a1 - a0 + b1 - b0 + RCB_PFQ_HANDS - 1) / RCB_PFQ_HANDS);
            if (i > g) {
                for (int k = a0; k < a1; k++) {
                    RC_CARDS(k);
                    RCB_ST4_AVX2(out + 4 * k, ((tu - up[c0] - up[c1]) - RCB_LD4_AVX2(lose + 4 * k)) * am);
                }
            } else {
                for (int k = a0; k < a1; k++) {
                    RC_CARDS(k);
                    RCB_ST4_AVX2(out + 4 * k, tu - up[c0] - up[c1]);
                }
            }
            if (g <= i) {
                for (int k = b0; k < b1; k++) {
                    RC_CARDS(k);
                    RCB_ST4_AVX2(out + 4 * k, (RCB_LD4_AVX2(out + 4 * k) - (td - down[c0] - down[c1])) * am);
                }
            } else {
                for (int k = b0; k < b1; k++) {
                    RC_CARDS(k);
                    RCB_ST4_AVX2(lose + 4 * k, td - down[c0] - down[c1]);
                }
            }
            for (int k = a0; k < a1; k++) {
                RC_CARDS(k);
                rcb_v4d x = RCB_LD4_AVX2(r + 4 * k);
                tu += x;
                up[c0] += x;
                up[c1] += x;
            }
            for (int k = b0; k < b1; k++) {
                RC_CARDS(k);
                rcb_v4d x = RCB_LD4_AVX2(r + 4 * k);
                td += x;
                down[c0] += x;
                down[c1] += x;
            }
        }
        for (int j = 0; j < 4; j++) {
            for (int c = 0; c < 52; c++) full4[53 * j + c] = up[c][j];
            full4[53 * j + 52] = tu[j];
        }
    }
    static int rcb_sd4_isa = -1;
    static void rcb_showdown4(const rc_real* restrict r, rc_real* restrict out, const double* restrict amt,
                              rc_real* restrict lose, const int* restrict groups, int G, const int* restrict cards,
                              double* restrict full4, rcb_pfq* pfq) {
        if (rcb_sd4_isa < 0)  /* the same value from every thread */
            rcb_sd4_isa = __builtin_cpu_supports("avx2") ? 1 : 0;
        if (rcb_sd4_isa) rcb_showdown4_avx2(r, out, amt, lose, groups, G, cards, full4, pfq);
        else rcb_showdown4_base(r, out, amt, lose, groups, G, cards, full4, pfq);
    }
    /* Eight showdown sweeps at once (AVX-512: 8 doubles a vector), lanes 0-3 from the batch in (r, out) and 4-7
       from the batch in (rb, outb), both interleaved as rcb_showdown4's; `lose` holds 8 lanes ([8 k + lane]).
       Each lane's operations are rcb_showdown4's in the same order (the same bits); one pass over the hands, their
       cards and the runs instead of two.  full8 (8, 53) as full4. */
    typedef double rcb_v8d __attribute__((vector_size(64), aligned(8)));
    #define RCB_LD8(pa, pb) (sizeof(rc_real) == 4 \
        ? (rcb_v8d)_mm512_cvtps_pd(_mm256_set_m128(_mm_loadu_ps((const float*)(pb)), _mm_loadu_ps((const float*)(pa)))) \
        : (rcb_v8d)_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_loadu_pd((const double*)(pa))), \
                                      _mm256_loadu_pd((const double*)(pb)), 1))
    #define RCB_ST8(pa, pb, v) do { if (sizeof(rc_real) == 4) { __m256 f_ = _mm512_cvtpd_ps((__m512d)(v)); \
            _mm_storeu_ps((float*)(pa), _mm256_castps256_ps128(f_)); _mm_storeu_ps((float*)(pb), _mm256_extractf128_ps(f_, 1)); } \
        else { _mm256_storeu_pd((double*)(pa), _mm512_castpd512_pd256((__m512d)(v))); \
            _mm256_storeu_pd((double*)(pb), _mm512_extractf64x4_pd((__m512d)(v), 1)); } } while (0)
    #define RCB_LD8L(p) (sizeof(rc_real) == 4 ? (rcb_v8d)_mm512_cvtps_pd(_mm256_loadu_ps((const float*)(p))) \
                                              : (rcb_v8d)_mm512_loadu_pd((const double*)(p)))
    #define RCB_ST8L(p, v) do { if (sizeof(rc_real) == 4) _mm256_storeu_ps((float*)(p), _mm512_cvtpd_ps((__m512d)(v))); \
                                else _mm512_storeu_pd((double*)(p), (__m512d)(v)); } while (0)
    __attribute__((target("avx512f"))) static void rcb_showdown8_avx512(
            const rc_real* restrict r, const rc_real* restrict rb, rc_real* restrict out, rc_real* restrict outb,
            const double* restrict amt, rc_real* restrict lose, const int* restrict groups, int G,
            const int* restrict cards, double* restrict full8, rcb_pfq* pfq) {
        rcb_v8d up[52], down[52];
        const rcb_v8d zero = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
        rcb_v8d tu = zero, td = zero, am = {amt[0], amt[1], amt[2], amt[3], amt[4], amt[5], amt[6], amt[7]};
        for (int c = 0; c < 52; c++) { up[c] = zero; down[c] = zero; }
        for (int i = 0; i < G; i++) {
            int g = G - 1 - i;
            int a0 = groups[i], a1 = groups[i + 1], b0 = groups[g], b1 = groups[g + 1];
            if (pfq) rcb_pfq_step(pfq, (a1 - a0 + b1 - b0 + RCB_PFQ_HANDS - 1) / RCB_PFQ_HANDS);
            if (i > g) {
                for (int k = a0; k < a1; k++) {
                    RC_CARDS(k);
                    RCB_ST8(out + 4 * k, outb + 4 * k, ((tu - up[c0] - up[c1]) - RCB_LD8L(lose + 8 * k)) * am);
                }
            } else {
                for (int k = a0; k < a1; k++) {
                    RC_CARDS(k);
                    RCB_ST8(out + 4 * k, outb + 4 * k, tu - up[c0] - up[c1]);
                }
            }
            if (g <= i) {
                for (int k = b0; k < b1; k++) {
                    RC_CARDS(k);
                    RCB_ST8(out + 4 * k, outb + 4 * k,
                            (RCB_LD8(out + 4 * k, outb + 4 * k) - (td - down[c0] - down[c1])) * am);
                }
            } else {
                for (int k = b0; k < b1; k++) {
                    RC_CARDS(k);
                    RCB_ST8L(lose + 8 * k, td - down[c0] - down[c1]);
                }
            }
            for (int k = a0; k < a1; k++) {
                RC_CARDS(k);
                rcb_v8d x = RCB_LD8(r + 4 * k, rb + 4 * k);
                tu += x;
                up[c0] += x;
                up[c1] += x;
            }
            for (int k = b0; k < b1; k++) {
                RC_CARDS(k);
                rcb_v8d x = RCB_LD8(r + 4 * k, rb + 4 * k);
                td += x;
                down[c0] += x;
                down[c1] += x;
            }
        }
        for (int j = 0; j < 8; j++) {
            for (int c = 0; c < 52; c++) full8[53 * j + c] = up[c][j];
            full8[53 * j + 52] = tu[j];
        }
    }
    static void rcb_showdown8(const rc_real* restrict r, const rc_real* restrict rb, rc_real* restrict out,
                              rc_real* restrict outb, const double* restrict amt, rc_real* restrict lose,
                              const int* restrict groups, int G, const int* restrict cards, double* restrict full8,
                              rcb_pfq* pfq) {
        if (rcb_isa16_get() == 2) {  /* AVX-512 (simd_level_16bit(1) runs the two 4-lane sweeps instead) */
            rcb_showdown8_avx512(r, rb, out, outb, amt, lose, groups, G, cards, full8, pfq);
        } else {
            rcb_showdown4(r, out, amt, lose, groups, G, cards, full8, pfq);
            rcb_showdown4(rb, outb, amt + 4, lose, groups, G, cards, full8 + 4 * 53, pfq);
        }
    }
    #else
    #define rcb_showdown4 rcb_showdown4_base
    static void rcb_showdown8(const rc_real* restrict r, const rc_real* restrict rb, rc_real* restrict out,
                              rc_real* restrict outb, const double* restrict amt, rc_real* restrict lose,
                              const int* restrict groups, int G, const int* restrict cards, double* restrict full8,
                              rcb_pfq* pfq) {
        rcb_showdown4_base(r, out, amt, lose, groups, G, cards, full8, pfq);
        rcb_showdown4_base(rb, outb, amt + 4, lose, groups, G, cards, full8 + 4 * 53, pfq);
    }
    #endif
    /* The opponent's fold at its own decision (p's values there: amt x the opponent's mass compatible with each
       hand, the opponent's reach being opp x its fold row s), without forming that reach in memory: each x =
       opp[k] * s[k] is the storage-type product rc_scale stores, summed per card as rc_card_sums sums it (two
       halves, the same order), and the values are rc_fold_values' (the same double operations), added into `out`
       in the storage type as rc_add adds them (`add`), or stored.  The same bits as rc_scale + rc_card_sums +
       rc_fold_values (+ rc_add), one pass less over the hands and no row in between. */
    static void rcb_card_sums_scaled(const rc_real* restrict r, const rc_real* restrict sc, const int* restrict cards,
                                     int H, double* restrict full, double* full_total) {
        double a[52], b[52];
        double ta = 0.0, tb = 0.0;
        int half = H / 2;
        memset(a, 0, sizeof(a));
        memset(b, 0, sizeof(b));
        for (int k = 0; k < half; k++) {
            int j = k + half;
            {
                RC_CARDS(k);
                rc_real x = r[k] * sc[k];
                ta += x;
                a[c0] += x;
                a[c1] += x;
            }
            {
                RC_CARDS(j);
                rc_real x = r[j] * sc[j];
                tb += x;
                b[c0] += x;
                b[c1] += x;
            }
        }
        for (int k = 2 * half; k < H; k++) {
            RC_CARDS(k);
            rc_real x = r[k] * sc[k];
            tb += x;
            b[c0] += x;
            b[c1] += x;
        }
        for (int c = 0; c < 52; c++) full[c] = a[c] + b[c];
        *full_total = ta + tb;
    }
    static void rcb_fold_scaled_portable(const rc_real* restrict r, const rc_real* restrict sc, const double* restrict full,
                                         double full_total, const int* restrict cards, double amt, rc_real* restrict out,
                                         int add, int H) {
        for (int k = 0; k < H; k++) {
            rc_real x = r[k] * sc[k];
            rc_real v = (rc_real)((full_total - full[cards[2 * k]] - full[cards[2 * k + 1]] + x) * amt);
            out[k] = add ? out[k] + v : v;
        }
    }
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
    __attribute__((target("avx512f"))) static void rcb_fold_scaled_avx512(
            const rc_real* restrict r, const rc_real* restrict sc, const double* restrict full, double full_total,
            const int* restrict cards, double amt, rc_real* restrict out, int add, int H) {
        double tbl[64] __attribute__((aligned(64)));
        __m512d t[8];
        memcpy(tbl, full, 52 * sizeof(double));
        for (int c = 52; c < 64; c++) tbl[c] = 0.0;
        for (int j = 0; j < 8; j++) t[j] = _mm512_load_pd(tbl + 8 * j);
        const __m512d T = _mm512_set1_pd(full_total), M = _mm512_set1_pd(amt);
        int k = 0;
        for (; k + 8 <= H; k += 8) {
            __m512i cc = _mm512_loadu_si512((const void*)(cards + 2 * k));
            __m512d f0 = rc_lookup52(cc, t);
            __m512d f1 = rc_lookup52(_mm512_srli_epi64(cc, 32), t);
            if (sizeof(rc_real) == 4) {
                __m256 x = _mm256_mul_ps(_mm256_loadu_ps((const float*)(r + k)), _mm256_loadu_ps((const float*)(sc + k)));
                __m256 v = _mm512_cvtpd_ps(_mm512_mul_pd(_mm512_add_pd(_mm512_sub_pd(_mm512_sub_pd(T, f0), f1),
                                                                       _mm512_cvtps_pd(x)), M));
                if (add) v = _mm256_add_ps(_mm256_loadu_ps((const float*)(out + k)), v);
                _mm256_storeu_ps((float*)(out + k), v);
            } else {
                __m512d x = _mm512_mul_pd(_mm512_loadu_pd((const double*)(r + k)), _mm512_loadu_pd((const double*)(sc + k)));
                __m512d v = _mm512_mul_pd(_mm512_add_pd(_mm512_sub_pd(_mm512_sub_pd(T, f0), f1), x), M);
                if (add) v = _mm512_add_pd(_mm512_loadu_pd((const double*)(out + k)), v);
                _mm512_storeu_pd((double*)(out + k), v);
            }
        }
        rcb_fold_scaled_portable(r + k, sc + k, full, full_total, cards + 2 * k, amt, out + k, add, H - k);
    }
    /* the values of a fold whose card sums are known (rcb_card_sums_scaled's or rcb_card_sums4's) */
    static void rcb_fold_apply(const rc_real* restrict r, const rc_real* restrict sc, const double* restrict full,
                               double full_total, const int* restrict cards, double amt, rc_real* restrict out,
                               int add, int H) {
        if (rc_avx2 < 0)  /* the same value from every thread */
            rc_avx2 = __builtin_cpu_supports("avx512f") ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0;
        if (rc_avx2 == 2) rcb_fold_scaled_avx512(r, sc, full, full_total, cards, amt, out, add, H);
        else rcb_fold_scaled_portable(r, sc, full, full_total, cards, amt, out, add, H);
    }
    static void rcb_fold_scaled(const rc_real* restrict r, const rc_real* restrict sc, const int* restrict cards,
                                double amt, rc_real* restrict out, int add, int H) {
        double full[52], full_total;
        rcb_card_sums_scaled(r, sc, cards, H, full, &full_total);
        rcb_fold_apply(r, sc, full, full_total, cards, amt, out, add, H);
    }
    #else
    static void rcb_fold_apply(const rc_real* restrict r, const rc_real* restrict sc, const double* restrict full,
                               double full_total, const int* restrict cards, double amt, rc_real* restrict out,
                               int add, int H) {
        rcb_fold_scaled_portable(r, sc, full, full_total, cards, amt, out, add, H);
    }
    static void rcb_fold_scaled(const rc_real* restrict r, const rc_real* restrict sc, const int* restrict cards,
                                double amt, rc_real* restrict out, int add, int H) {
        double full[52], full_total;
        rcb_card_sums_scaled(r, sc, cards, H, full, &full_total);
        rcb_fold_scaled_portable(r, sc, full, full_total, cards, amt, out, add, H);
    }
    #endif
    /* The opponent's folds of a river subtree four (eight) at a time: lanes [4 k + lane] of x = opp x fold row
       (the storage-type products rcb_card_sums_scaled forms, stored by _sd_prepass), summed per card and in total
       in double with rcb_card_sums_scaled's order per lane (two halves), so each lane's sums are its bit for bit;
       rcb_fold_apply then gives the values.  One pass over the hands and their cards for up to 4 (8) folds instead
       of one per fold.  full4 (4, 53): per lane the 52 card sums and the total. */
    #define RCB_CARD_SUMS_LANES(V, NL, LD) { \
        V a[52], b[52]; \
        const V zero = {0}; \
        V ta = zero, tb = zero; \
        int half = H / 2; \
        for (int c = 0; c < 52; c++) { a[c] = zero; b[c] = zero; } \
        for (int k = 0; k < half; k++) { \
            int j = k + half; \
            { RC_CARDS(k); V v = LD(k); ta += v; a[c0] += v; a[c1] += v; } \
            { RC_CARDS(j); V v = LD(j); tb += v; b[c0] += v; b[c1] += v; } \
        } \
        for (int k = 2 * half; k < H; k++) { RC_CARDS(k); V v = LD(k); tb += v; b[c0] += v; b[c1] += v; } \
        for (int l = 0; l < NL; l++) { \
            for (int c = 0; c < 52; c++) full[53 * l + c] = a[c][l] + b[c][l]; \
            full[53 * l + 52] = ta[l] + tb[l]; \
        } }
    #define RCB_CS_LD4_BASE(k) RCB_LD4_BASE(x + 4 * (k))
    static void rcb_card_sums4_base(const rc_real* restrict x, const int* restrict cards, int H, double* restrict full)
        RCB_CARD_SUMS_LANES(rcb_v4d, 4, RCB_CS_LD4_BASE)
    #ifdef RCB_SD4_CLONES
    #define RCB_CS_LD4_AVX2(k) RCB_LD4_AVX2(x + 4 * (k))
    __attribute__((target("avx2"))) static void rcb_card_sums4_avx2(const rc_real* restrict x, const int* restrict cards,
                                                                   int H, double* restrict full)
        RCB_CARD_SUMS_LANES(rcb_v4d, 4, RCB_CS_LD4_AVX2)
    #define RCB_CS_LD8(k) RCB_LD8(x + 4 * (k), xb + 4 * (k))
    __attribute__((target("avx512f"))) static void rcb_card_sums8_avx512(const rc_real* restrict x,
            const rc_real* restrict xb, const int* restrict cards, int H, double* restrict full)
        RCB_CARD_SUMS_LANES(rcb_v8d, 8, RCB_CS_LD8)
    static void rcb_card_sums4(const rc_real* restrict x, const int* restrict cards, int H, double* restrict full) {
        if (rcb_sd4_isa < 0)
            rcb_sd4_isa = __builtin_cpu_supports("avx2") ? 1 : 0;
        if (rcb_sd4_isa) rcb_card_sums4_avx2(x, cards, H, full);
        else rcb_card_sums4_base(x, cards, H, full);
    }
    /* lanes 0-3 from x, 4-7 from xb (two interleaved batches, as rcb_showdown8) */
    static void rcb_card_sums8(const rc_real* restrict x, const rc_real* restrict xb, const int* restrict cards, int H,
                               double* restrict full) {
        if (rcb_isa16_get() == 2) {
            rcb_card_sums8_avx512(x, xb, cards, H, full);
        } else {
            rcb_card_sums4(x, cards, H, full);
            rcb_card_sums4(xb, cards, H, full + 4 * 53);
        }
    }
    #else
    #define rcb_card_sums4 rcb_card_sums4_base
    static void rcb_card_sums8(const rc_real* restrict x, const rc_real* restrict xb, const int* restrict cards, int H,
                               double* restrict full) {
        rcb_card_sums4_base(x, cards, H, full);
        rcb_card_sums4_base(xb, cards, H, full + 4 * 53);
    }
    #endif
    /* four rows (stride `stride`) into / out of the interleaved layout at once: 4 x 4 blocks transposed in
       registers (a lane at a time is a strided copy per element); pure data movement, the same bits */
    typedef rc_real rcb_v4n __attribute__((vector_size(4 * sizeof(rc_real))));  /* in registers */
    static inline void rcb_transpose4(rcb_v4r* d0, rcb_v4r* d1, rcb_v4r* d2, rcb_v4r* d3,
                                      rcb_v4n x0, rcb_v4n x1, rcb_v4n x2, rcb_v4n x3) {
        rcb_v4n t0 = __builtin_shufflevector(x0, x1, 0, 4, 1, 5);
        rcb_v4n t1 = __builtin_shufflevector(x2, x3, 0, 4, 1, 5);
        rcb_v4n t2 = __builtin_shufflevector(x0, x1, 2, 6, 3, 7);
        rcb_v4n t3 = __builtin_shufflevector(x2, x3, 2, 6, 3, 7);
        *d0 = __builtin_shufflevector(t0, t1, 0, 1, 4, 5);
        *d1 = __builtin_shufflevector(t0, t1, 2, 3, 6, 7);
        *d2 = __builtin_shufflevector(t2, t3, 0, 1, 4, 5);
        *d3 = __builtin_shufflevector(t2, t3, 2, 3, 6, 7);
    }
    RC_VECTOR static void rcb_interleave4(rc_real* restrict dst, const rc_real* restrict src, long stride, int H) {
        const rc_real* restrict s0 = src;
        const rc_real* restrict s1 = src + stride;
        const rc_real* restrict s2 = src + 2 * stride;
        const rc_real* restrict s3 = src + 3 * stride;
        rcb_v4r* D = (rcb_v4r*)dst;
        int k = 0;
        for (; k + 4 <= H; k += 4)
            rcb_transpose4(D + k, D + k + 1, D + k + 2, D + k + 3, *(const rcb_v4r*)(s0 + k),
                           *(const rcb_v4r*)(s1 + k), *(const rcb_v4r*)(s2 + k), *(const rcb_v4r*)(s3 + k));
        for (; k < H; k++) {
            dst[4 * k] = s0[k];
            dst[4 * k + 1] = s1[k];
            dst[4 * k + 2] = s2[k];
            dst[4 * k + 3] = s3[k];
        }
    }
    RC_VECTOR static void rcb_deinterleave4(rc_real* restrict dst, long stride, const rc_real* restrict src, int H) {
        rc_real* restrict d0 = dst;
        rc_real* restrict d1 = dst + stride;
        rc_real* restrict d2 = dst + 2 * stride;
        rc_real* restrict d3 = dst + 3 * stride;
        const rcb_v4r* S = (const rcb_v4r*)src;
        int k = 0;
        for (; k + 4 <= H; k += 4)
            rcb_transpose4((rcb_v4r*)(d0 + k), (rcb_v4r*)(d1 + k), (rcb_v4r*)(d2 + k), (rcb_v4r*)(d3 + k),
                           S[k], S[k + 1], S[k + 2], S[k + 3]);
        for (; k < H; k++) {
            d0[k] = src[4 * k];
            d1[k] = src[4 * k + 1];
            d2[k] = src[4 * k + 2];
            d3[k] = src[4 * k + 3];
        }
    }
    /* All-in run-outs by equity matrix (BoardRangeSolver): rows [i0, i1) of out_k = amt_k x M @ X_k for the K
       reach rows X (stride Hp) of one board's all-in nodes, M (H rows, stride Hp; Hp a multiple of 8, rows and
       reach zero beyond the H hands).  M is stored coded: one byte (width 1) or two (width 2) per entry, the
       index of its value in ``lut`` (a matrix holds a few hundred distinct values, k x the run-out probability);
       each row is decoded into a 32-byte aligned buffer on the stack, the exact values of the float matrix, so
       the products are those of the float matrix at a quarter (half) of its memory.  Per (k, i): the products
       summed over j in the lanes of a 32-byte vector (a multiplication then an addition, never fused), then the
       lanes in double in a fixed order: the result depends neither on the thread count nor on the row split.
       Four reach rows per pass over a matrix row. */
    typedef rc_real rcb_vw __attribute__((vector_size(32), aligned(sizeof(rc_real))));
    RC_VECTOR static void rcb_decode_row(rc_real* restrict out, const unsigned char* restrict codes, int width,
                                         const rc_real* restrict lut, int n) {
        if (width == 1) {
            for (int j = 0; j < n; j++) out[j] = lut[codes[j]];
        } else {
            const unsigned short* c16 = (const unsigned short*)codes;
            for (int j = 0; j < n; j++) out[j] = lut[c16[j]];
        }
    }
    RC_VECTOR static void rcb_allin_rows(const unsigned char* restrict codes, int width, const rc_real* restrict lut,
                                         int Hp, int i0, int i1, const rc_real* restrict X, int K,
                                         const double* restrict amt, rc_real* const* restrict outs) {
        const int W = 32 / (int)sizeof(rc_real), J = Hp / W;
        rc_real row[Hp] __attribute__((aligned(32)));  /* Hp <= 1328: at most 10.6 KB of the thread's stack */
        for (int i = i0; i < i1; i++) {  /* the decoded row stays in L1 while every reach row passes over it */
            rcb_decode_row(row, codes + (long)i * Hp * width, width, lut, Hp);
            const rcb_vw* m = (const rcb_vw*)row;
            for (int k0 = 0; k0 < K; k0 += 4) {
                int kn = K - k0 < 4 ? K - k0 : 4;
                const rcb_vw* x0 = (const rcb_vw*)(X + (long)k0 * Hp);
                const rcb_vw* x1 = (const rcb_vw*)(X + (long)(k0 + (kn > 1 ? 1 : 0)) * Hp);
                const rcb_vw* x2 = (const rcb_vw*)(X + (long)(k0 + (kn > 2 ? 2 : 0)) * Hp);
                const rcb_vw* x3 = (const rcb_vw*)(X + (long)(k0 + (kn > 3 ? 3 : 0)) * Hp);
                rcb_vw a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
                for (int j = 0; j < J; j++) {
                    rcb_vw mm = m[j];
                    a0 += mm * x0[j];
                    a1 += mm * x1[j];
                    a2 += mm * x2[j];
                    a3 += mm * x3[j];
                }
                rcb_vw acc[4] = {a0, a1, a2, a3};
                for (int q = 0; q < kn; q++) {
                    double t = 0.0;
                    for (int l = 0; l < W; l++) t += (double)acc[q][l];
                    outs[k0 + q][i] = (rc_real)(amt[k0 + q] * t);
                }
            }
        }
    }
    /* one row of an all-in equity matrix for one run-out: row[j] += wl[j] * sign(si - s[j]) (wl = weight x live) */
    static void rcb_sign_accumulate(double* restrict row, const int* restrict s, const double* restrict wl, int si,
                                    int H) {
        for (int j = 0; j < H; j++) row[j] += wl[j] * (double)((si > s[j]) - (si < s[j]));
    }
    """
    ctypedef struct rcb_pfq:
        pass
    void rcb_showdown4(const rc_real* r, rc_real* out, const double* amt, rc_real* lose, const int* groups, int G,
                       const int* cards, double* full4, rcb_pfq* pfq) nogil
    void rcb_showdown8(const rc_real* r, const rc_real* rb, rc_real* out, rc_real* outb, const double* amt,
                       rc_real* lose, const int* groups, int G, const int* cards, double* full8, rcb_pfq* pfq) nogil
    void rcb_prefetch(const void* p, long bytes, int write) nogil
    long rcb_pfq_size() nogil
    void rcb_pfq_clear(rcb_pfq* q) nogil
    void rcb_pfq_push(rcb_pfq* q, const void* p, long bytes) nogil
    void rcb_pfq_flush(rcb_pfq* q) nogil
    long long rcb_pfq_tag(const rcb_pfq* q) nogil
    void rcb_pfq_set_tag(rcb_pfq* q, long long tag) nogil
    long long rcb_seg_front(unsigned long long* s) nogil
    long long rcb_seg_back(unsigned long long* s) nogil
    long long rcb_seg_left(unsigned long long* s) nogil
    long long rcb_seg_hi(unsigned long long* s) nogil
    long long rcb_seg_lo(unsigned long long* s) nogil
    void rcb_seg_set(unsigned long long* s, long long lo, long long hi) nogil
    int rcb_count_down(int* c) nogil
    void rcb_fold_apply(const rc_real* r, const rc_real* sc, const double* full, double full_total, const int* cards,
                        double amt, rc_real* out, int add, int H) nogil
    void rcb_card_sums4(const rc_real* x, const int* cards, int H, double* full) nogil
    void rcb_card_sums8(const rc_real* x, const rc_real* xb, const int* cards, int H, double* full) nogil
    void rcb_fold_scaled(const rc_real* r, const rc_real* sc, const int* cards, double amt, rc_real* out, int add,
                         int H) nogil
    void rcb_release_heap() nogil
    void rcb_interleave4(rc_real* dst, const rc_real* src, long stride, int H) nogil
    void rcb_deinterleave4(rc_real* dst, long stride, const rc_real* src, int H) nogil
    void rcb_sign_accumulate(double* row, const int* s, const double* wl, int si, int H) nogil
    void rcb_allin_rows(const unsigned char* codes, int width, const rc_real* lut, int Hp, int i0, int i1,
                        const rc_real* X, int K, const double* amt, rc_real** outs) nogil
    void rcb_total16(rc_real* tot, const void* rows, int is_signed, int A, int H) nogil
    void rcb_match16(rc_real* srow, const void* row, int is_signed, const rc_real* inv, const rc_real* uniform,
                     int H) nogil
    void rcb_update16(rc_real* snew, const unsigned short* qs, double fs, const rc_real* own, const rc_real* srow,
                      double w, rc_real* rnew, const short* qr, double fr, const rc_real* child, const rc_real* out,
                      int dcfr, double pos, double neg, int H, int* rmax, int* smax) nogil
    float rcb_encode_i16_max(short* q, const rc_real* x, long n, unsigned int key, rc_real m) nogil
    float rcb_encode_u16_max(unsigned short* q, const rc_real* x, long n, unsigned int key, rc_real m) nogil
    float rcb_float_of_bits(int b) nogil
    int rcb_isa16_set(int level) nogil
    unsigned int rcb_hash(unsigned int x) nogil
    float rcb_encode_i16(short* q, const rc_real* x, long n, unsigned int key) nogil
    float rcb_encode_u16(unsigned short* q, const rc_real* x, long n, unsigned int key) nogil
    void rcb_gather(rc_real* dst, const rc_real* src, const int* map, int n) nogil
    void rcb_scatter_add(rc_real* dst, const rc_real* src, const int* map, int n) nogil
    void rcb_sum_rows(rc_real* tot, const rc_real* x, int H) nogil
    void rcb_positive_total(rc_real* tot, const rc_real* rows, int A, int H) nogil
    void rcb_match_fused(rc_real* strat, const rc_real* rows, int A, double inv_actions, int H) nogil
    void rcb_match16_fused(rc_real* strat, const short* q0, int A, double inv_actions, int H) nogil
    void rcb_value_fused(rc_real* out, const rc_real* strat, const rc_real* childv, int A, int H) nogil
    void rcb_match_prepare(const rc_real* tot, rc_real* inv, rc_real* uniform, double inv_actions, int H) nogil
    void rcb_match(rc_real* srow, const rc_real* reg, const rc_real* inv, const rc_real* uniform, int clip, int H) nogil
    void rcb_update_action(rc_real* ssum, const rc_real* own, const rc_real* srow, double w, rc_real* reg,
                           const rc_real* child, const rc_real* out, int dcfr, double pos, double neg, rc_real* cum,
                           int H) nogil


cdef enum:
    DECISION = 0
    FOLD = 1
    SHOWDOWN = 2
    CHANCE = 3
    LEAF = 4      # depth-limited tree: values supplied per node and hand (value nets), see BoardLeafKernel
    ALLIN = 5     # all-in before the river: values = contribution x equity matrix x opponent reach, supplied alike

cdef enum:
    MODE_SOLVE = 0  # current strategy matched from the regrets; p's decisions update regrets and sums
    MODE_BEST = 1   # average strategy (normalised sums) for the opponent; p takes the best child


cdef struct BTree:
    int N
    const int* node_type
    const int* node_player
    const int* child_start
    const int* num_children
    const double* amount          # (N, 2): payoff multiplier of a terminal; [n, 0] card probability of a chance node
    const int* node_space         # (N,) hand space of the node
    const long long* node_offset  # (N,) first entry of a decision's (A, H) block in regrets / strategy sums
    const int* space_start        # (S + 1,) hands of space s: space_cards rows [start[s], start[s + 1])
    const int* space_cards        # (total, 2)
    const int* space_group_start  # (S + 1,) runs of equal strength of space s (showdown spaces), + sentinel
    const int* space_groups
    const long long* child_map    # (N,) chance child: offset in maps of its (child hands) -> parent hand map
    const int* maps
    const int* iso_next           # (N,) chance child: next isomorphic copy of the same canonical child, -1
    const int* is_copy            # (N,) 1 = chance child whose values come from its canonical sibling
    int threads
    int Hmax
    long long stack_len           # scratch per thread
    rc_real* stacks               # (threads + 1, stack_len): the main one, then one per OpenMP thread
    rc_real* par_vals             # (top chance children, Hmax): values of the subtrees run in parallel (tasks)
    # threads (see _pass): the children of the top chance nodes (no chance node above them) are the tasks of one
    # parallel loop per pass; the part of the tree above them is walked twice on the calling thread
    int ntop                      # top chance nodes (0: one thread, or no chance node)
    const int* top_id             # (N,) a top chance node's index, -1 elsewhere
    const int* top_node           # (ntop,)
    const long long* top_task     # (ntop + 1,) first task (one per child, copies included) of each top chance node
    const long long* top_split    # (threads + 1,) thread i's tasks at the start of a pass: top_split[i] to
                                  # top_split[i + 1] (equal counts of walked tasks, copies not counted)
    unsigned long long* seg       # (threads,) the tasks each thread has left in a pass (see rcb_seg_front)
    const unsigned char* above_top  # (N,) 1 where the subtree holds a top chance node (_collect walks only there)
    rc_real* top_reach            # (ntop, 2, Hmax): opponent's and own reach arriving at each top chance node
    rc_real* top_sum              # (ntop, Hmax): each top chance node's children's values added up (see _sum_top)
    const int* top_walked         # (ntop,) its walked (not copied) children
    int* top_left                 # (ntop,) of those, not yet done in this pass
    int top_own                   # the pass carries p's own reach (else NULL at the top chance nodes)
    int phased                    # _walk is in the last phase: top chance nodes read their children's task values
    rc_real* cum                  # PDCFR+ (dcfr 4): the cumulative regrets (the regrets table then holds the predicted
                                  # regrets that regret matching reads); NULL otherwise
    int compressed                # 16-bit storage: creg / cssum with per-node scales instead of regrets / ssum
    short* creg
    unsigned short* cssum
    float* reg_scale              # (N,)
    float* ssum_scale             # (N,)
    int stochastic                # 16-bit storage rounded stochastically (rcb_quantize_i16_sr) instead of to nearest
    unsigned int round_key        # the current (iteration, player): with the node it keys the stochastic rounding
    const long long* ext_off      # (N,) leaf / all-in node: offset of its hands in ext_reach rows and ext_vals
    long long E                   # entries of ext_vals (sum over leaf and all-in nodes of their hands)
    rc_real* ext_reach            # (2, E): both players' reach at the leaf / all-in nodes (filled by _forward)
    const rc_real* ext_vals       # (E,): the walking player's values at those nodes (filled by the caller)
    const int* sd_slot            # (N,) showdown of a river subtree: its slot in the batch buffers, -1 elsewhere
    const int* sd_count           # (N,) river root: its showdown nodes (batched when 2 or more), 0 elsewhere
    const int* dec_slot           # (N,) decision of a batching river subtree: its slot in sd_strats, -1 elsewhere
    int sd_max                    # most showdowns under one river root (0: no batches)
    int sd_dmax                   # most decisions under one river root
    int sd_amax                   # most actions of a decision under a river root
    rc_real* sd_in                # (threads, 4 ceil(sd_max / 4), Hmax): opponent reach per showdown, a row each
    rc_real* sd_out               # alike: p's values per showdown
    rc_real* sd_lose              # (threads, 6, 4 Hmax): sweep scratch (8 lanes), then two batches' interleaved reach
                                  # and values
    double* sd_full               # (threads, 4 ceil(sd_max / 4), 53): per-card opponent mass and total per showdown
    rc_real* sd_strats            # (threads, sd_dmax, sd_amax, Hmax): the opponent's strategies of the subtree
    rc_real* sd_reach             # alike: the opponent's reach at each of those actions' children (see _sd_reach_row)
    const int* sub_start          # (N + 1,) batching river root n: its decisions are sub_dec[sub_start[n]:sub_start[n + 1]]
    const int* sub_dec            # (prefetched at the root, see rcb_prefetch)
    rcb_pfq* pfq                  # (threads + 1,) the next river subtree's blocks, requested during the sweeps
    # the opponent's folds of a batching river subtree, their card sums four (eight) at a time (see _sd_batches)
    const int* fd_slot            # (N,) fold below a batching river root: its index among the folds of its parent's
                                  # player below that root, -1 elsewhere
    const int* fd_count           # (N, 2) batching river root: the folds of each player's decisions below it
    int fd_max                    # most folds of one player below one root (0: none batched)
    rc_real* fd_in                # (threads, 4 ceil(fd_max / 4), Hmax): x = opp x fold row per fold, a row each
    double* fd_full               # (threads, 4 ceil(fd_max / 4), 53): per fold its card sums and total
    # all-in run-outs by equity matrix (BoardRangeSolver, see _allin_values): ALLIN nodes valued in each pass
    # before the walk, all nodes of one board in one product with its matrix; the walk reads ext_vals
    int al_K                      # all-in nodes valued so (0: none)
    const int* al_node            # (K,) kernel node of each slot, slots grouped by board
    const int* al_slot            # (N,) slot of an ALLIN node, -1 elsewhere
    const unsigned char* above_al  # (N,) 1 where the subtree holds an ALLIN node (_allin_collect walks only there)
    int al_G                      # boards (groups of slots)
    const int* al_group_start     # (G + 1,) slots of group g
    const long long* al_mat_off   # (G,) first byte of group g's coded matrix (H_g rows of Hp codes) in al_codes
    const int* al_width           # (G,) bytes per code of group g's matrix (1 or 2)
    const long long* al_lut_off   # (G,) first value of group g's table in al_lut
    int al_Hp                     # row stride of the matrices and reach rows (multiple of 8)
    const unsigned char* al_codes
    const rc_real* al_lut
    int al_C                      # row chunks of the products (the tasks of one parallel loop)
    const int* al_chunks          # (C, 3): group, first row, end row
    rc_real* al_reach             # (K, Hp) opponent reach at each ALLIN node (zero beyond its hands)
    double* al_amt                # (K,) p's payoff multiplier at each (the pass's player)
    rc_real** al_outs             # (K,) where each node's values go: ext_vals + ext_off[node]


cdef inline int _H(BTree* t, int n) noexcept nogil:
    return t.space_start[t.node_space[n] + 1] - t.space_start[t.node_space[n]]


cdef inline const int* _cards(BTree* t, int n) noexcept nogil:
    return t.space_cards + 2 * <Py_ssize_t>t.space_start[t.node_space[n]]


cdef void _node_strategy(BTree* t, int n, int mode, const rc_real* regrets, const rc_real* ssum, rc_real* strat,
                         rc_real* scratch, rc_real* dec) noexcept nogil:
    """Strategy rows ``(A, H)`` of decision ``n`` into ``strat``: regret matching (solve) or the normalised
    strategy sums (best response against the average).  With 16-bit storage straight from the codes (the
    node's scale cancels in the normalisation; ``dec`` is unused)."""
    cdef int H = _H(t, n), A = t.num_children[n], a, sgn
    cdef const rc_real* rows
    cdef const void* codes
    cdef rc_real* tot = scratch
    cdef rc_real* inv = scratch + H
    cdef rc_real* uniform = scratch + 2 * H
    if t.compressed:
        sgn = mode == MODE_SOLVE
        if sgn and 2 <= A <= 4:
            rcb_match16_fused(strat, <const short*>(t.creg + t.node_offset[n]), A, 1.0 / A, H)
            return
        if sgn:
            codes = <const void*>(t.creg + t.node_offset[n])
        else:
            codes = <const void*>(t.cssum + t.node_offset[n])
        rcb_total16(tot, codes, sgn, A, H)
        rcb_match_prepare(tot, inv, uniform, 1.0 / A, H)
        for a in range(A):
            rcb_match16(strat + <Py_ssize_t>a * H, <const char*>codes + <Py_ssize_t>2 * a * H, sgn, inv, uniform, H)
        return
    if mode == MODE_SOLVE and 2 <= A <= 4:
        rcb_match_fused(strat, regrets + t.node_offset[n], A, 1.0 / A, H)
        return
    if mode == MODE_SOLVE:
        rows = regrets + t.node_offset[n]
        rcb_positive_total(tot, rows, A, H)
    else:
        rows = ssum + t.node_offset[n]
        memset(tot, 0, H * sizeof(rc_real))
        for a in range(A):
            rcb_sum_rows(tot, rows + <Py_ssize_t>a * H, H)
    rcb_match_prepare(tot, inv, uniform, 1.0 / A, H)
    for a in range(A):
        rcb_match(strat + <Py_ssize_t>a * H, rows + <Py_ssize_t>a * H, inv, uniform, mode == MODE_SOLVE, H)


cdef inline rc_real* _sd_reach_row(BTree* t, const rc_real* strat_row) noexcept nogil:
    """The row of ``sd_reach`` that mirrors row ``strat_row`` of ``sd_strats`` (an opponent's action below a river
    root: the opponent's reach at that action's child, formed by :func:`_sd_prepass`, read by :func:`_walk`)."""
    return t.sd_reach + (strat_row - t.sd_strats)


cdef void _sd_prepass(BTree* t, int n, int p, const rc_real* opp, rc_real* stack, int mode, const rc_real* regrets,
                     const rc_real* ssum, rc_real* lanes_in, rc_real* strats, double* amts) noexcept nogil:
    """Opponent reach at every showdown below river-subtree node ``n`` into its lane of ``lanes_in`` (and p's
    payoff multiplier into ``amts``): the same products of the opponent's strategies as :func:`_walk` forms on
    the way down (p's updates do not change them).  The opponent's strategies go to ``strats`` (its slot per
    decision) for :func:`_walk` to reuse."""
    cdef int H = _H(t, n), A, a, c, cs, slot
    cdef int ty = t.node_type[n]
    cdef rc_real* strat
    cdef rc_real* reach
    cdef rc_real* scratch
    cdef rc_real* dec
    cdef rc_real* rest
    if ty == SHOWDOWN:
        slot = t.sd_slot[n]
        memcpy(lanes_in + <Py_ssize_t>slot * t.Hmax, opp, H * sizeof(rc_real))
        amts[slot] = t.amount[2 * n + p]
        return
    if ty != DECISION:
        return
    A = t.num_children[n]
    cs = t.child_start[n]
    if t.node_player[n] == p:
        for a in range(A):
            _sd_prepass(t, cs + a, p, opp, stack, mode, regrets, ssum, lanes_in, strats, amts)
        return
    strat = strats + <Py_ssize_t>t.dec_slot[n] * t.sd_amax * t.Hmax
    scratch = stack
    dec = scratch + 3 * H
    rest = dec  # 16-bit storage: no decoded block here (regret matching reads the codes)
    _node_strategy(t, n, mode, regrets, ssum, strat, scratch, dec)
    for a in range(A):
        c = cs + a
        if t.node_type[c] == FOLD:
            if t.fd_max > 0 and t.fd_slot[c] >= 0:  # opp x the fold row, for the batched card sums
                rc_scale(_fd_row(t, t.fd_slot[c]), opp, strat + <Py_ssize_t>a * H, H)
            continue
        if t.node_type[c] == SHOWDOWN:  # straight into its lane's row (no copy in between)
            slot = t.sd_slot[c]
            rc_scale(lanes_in + <Py_ssize_t>slot * t.Hmax, opp, strat + <Py_ssize_t>a * H, H)
            amts[slot] = t.amount[2 * c + p]
            continue
        reach = _sd_reach_row(t, strat + <Py_ssize_t>a * H)  # kept for _walk (the same product)
        rc_scale(reach, opp, strat + <Py_ssize_t>a * H, H)
        _sd_prepass(t, c, p, reach, rest, mode, regrets, ssum, lanes_in, strats, amts)


cdef inline void _request(rcb_pfq* q, const void* ptr, long nbytes, int write) noexcept nogil:
    if q != NULL:
        rcb_pfq_push(q, ptr, nbytes)
    else:
        rcb_prefetch(ptr, nbytes, write)


cdef void _prefetch_subtree(BTree* t, int n, int p, const rc_real* regrets, const rc_real* ssum,
                            rcb_pfq* q) noexcept nogil:
    """Request the regret blocks of every decision below river root ``n`` (and the strategy sums of p's, which
    its update writes) into L2 before the walk reads them (see rcb_prefetch): at once, or queued in ``q`` (not
    NULL) for the showdown sweeps to request a few lines at a time (see rcb_pfq)."""
    cdef int i, d
    cdef long nbytes
    for i in range(t.sub_start[n], t.sub_start[n + 1]):
        d = t.sub_dec[i]
        if t.compressed:  # 16-bit tables: half the bytes
            nbytes = <long>t.num_children[d] * _H(t, d) * 2
            _request(q, t.creg + t.node_offset[d], nbytes, t.node_player[d] == p)
            if t.node_player[d] == p:
                _request(q, t.cssum + t.node_offset[d], nbytes, 1)
            continue
        nbytes = <long>t.num_children[d] * _H(t, d) * sizeof(rc_real)
        _request(q, regrets + t.node_offset[d], nbytes, t.node_player[d] == p)
        if t.node_player[d] == p:
            _request(q, ssum + t.node_offset[d], nbytes, 1)
            if t.cum != NULL:
                _request(q, t.cum + t.node_offset[d], nbytes, 1)


cdef inline void _prefetch_next(BTree* t, int c, int end, int p, const rc_real* regrets,
                               const rc_real* ssum, rcb_pfq* q) noexcept nogil:
    """Request the blocks of the first walked chance child in ``[c, end)`` when it is a batching river root (at
    once, or queued in ``q``)."""
    while c < end and t.is_copy[c]:
        c += 1
    if c < end and t.sd_count[c] >= 2:
        _prefetch_subtree(t, c, p, regrets, ssum, q)


cdef inline rcb_pfq* _pfq(BTree* t) noexcept nogil:
    """This thread's prefetch queue."""
    return t.pfq + openmp.omp_get_thread_num()


cdef void _sd_batches(BTree* t, int n, int p, const rc_real* opp, rc_real* stack, int mode, const rc_real* regrets,
                      const rc_real* ssum) noexcept nogil:
    """p's values (and the per-card opponent mass) of every showdown below river root ``n``, four sweeps at a
    time (rcb_showdown4), into this thread's batch buffers; :func:`_walk` then reads them at the showdowns
    (and the opponent's strategies at its decisions)."""
    cdef int H = _H(t, n), S = t.sd_count[n], b, j, sp = t.node_space[n], G, F
    cdef int tid = openmp.omp_get_thread_num()
    cdef Py_ssize_t lanes_len = <Py_ssize_t>((t.sd_max + 3) // 4) * 4 * t.Hmax
    cdef rc_real* lanes_in = t.sd_in + tid * lanes_len
    cdef rc_real* lanes_out = t.sd_out + tid * lanes_len
    cdef rc_real* lose = t.sd_lose + <Py_ssize_t>tid * 24 * t.Hmax
    cdef rc_real* in4 = lose + 8 * t.Hmax
    cdef rc_real* out4 = lose + 12 * t.Hmax
    cdef rc_real* in4b = lose + 16 * t.Hmax
    cdef rc_real* out4b = lose + 20 * t.Hmax
    cdef double* fulls = t.sd_full + <Py_ssize_t>tid * ((t.sd_max + 3) // 4) * 4 * 53
    cdef double amts[64]
    cdef const int* groups = t.space_groups + t.space_group_start[sp]
    cdef const int* cards = _cards(t, n)
    G = t.space_group_start[sp + 1] - t.space_group_start[sp] - 1
    for j in range(S, (S + 3) // 4 * 4):  # lanes of the last batch beyond S: no reach
        amts[j] = 0.0
    _sd_prepass(t, n, p, opp, stack, mode, regrets, ssum, lanes_in,
                t.sd_strats + <Py_ssize_t>tid * t.sd_dmax * t.sd_amax * t.Hmax, amts)
    for j in range(S, (S + 3) // 4 * 4):  # rows of the last batch beyond S: no reach
        memset(lanes_in + <Py_ssize_t>j * t.Hmax, 0, H * sizeof(rc_real))
    b = 0
    while b < S:
        if S - b > 4:  # eight showdowns in one sweep (rcb_showdown8), two batches of interleaved lanes
            rcb_interleave4(in4, lanes_in + <Py_ssize_t>b * t.Hmax, t.Hmax, H)
            rcb_interleave4(in4b, lanes_in + <Py_ssize_t>(b + 4) * t.Hmax, t.Hmax, H)
            rcb_showdown8(in4, in4b, out4, out4b, amts + b, lose, groups, G, cards, fulls + 53 * b, _pfq(t))
            rcb_deinterleave4(lanes_out + <Py_ssize_t>b * t.Hmax, t.Hmax, out4, H)
            rcb_deinterleave4(lanes_out + <Py_ssize_t>(b + 4) * t.Hmax, t.Hmax, out4b, H)
            b += 8
            continue
        # four showdowns' rows into the sweep's interleaved lanes and its values back into rows
        rcb_interleave4(in4, lanes_in + <Py_ssize_t>b * t.Hmax, t.Hmax, H)
        rcb_showdown4(in4, out4, amts + b, lose, groups, G, cards, fulls + 53 * b, _pfq(t))
        rcb_deinterleave4(lanes_out + <Py_ssize_t>b * t.Hmax, t.Hmax, out4, H)
        b += 4
    # the opponent's folds (rows written by _sd_prepass): card sums four or eight at a time
    if t.fd_max == 0:
        return
    F = t.fd_count[2 * n + 1 - p]
    for j in range(F, (F + 3) // 4 * 4):  # rows of the last batch beyond F: nothing
        memset(_fd_row(t, j), 0, H * sizeof(rc_real))
    b = 0
    while b < F:
        if F - b > 4:
            rcb_interleave4(in4, _fd_row(t, b), t.Hmax, H)
            rcb_interleave4(in4b, _fd_row(t, b + 4), t.Hmax, H)
            rcb_card_sums8(in4, in4b, cards, H, _fd_full(t, b))
            b += 8
        else:
            rcb_interleave4(in4, _fd_row(t, b), t.Hmax, H)
            rcb_card_sums4(in4, cards, H, _fd_full(t, b))
            b += 4


cdef inline rc_real* _fd_row(BTree* t, int slot) noexcept nogil:
    """This thread's row of fold slot ``slot`` (x = opp x fold row, see _sd_prepass)."""
    return t.fd_in + (<Py_ssize_t>openmp.omp_get_thread_num() * ((t.fd_max + 3) // 4) * 4 + slot) * t.Hmax


cdef inline double* _fd_full(BTree* t, int slot) noexcept nogil:
    """This thread's card sums (52 and the total) of fold slot ``slot`` (see _sd_batches)."""
    return t.fd_full + (<Py_ssize_t>openmp.omp_get_thread_num() * ((t.fd_max + 3) // 4) * 4 + slot) * 53


cdef inline rc_real* _sd_values(BTree* t, int n) noexcept nogil:
    """p's values at batched showdown ``n`` in this thread's batch buffers (see _sd_batches)."""
    cdef Py_ssize_t lanes_len = <Py_ssize_t>((t.sd_max + 3) // 4) * 4 * t.Hmax
    return t.sd_out + openmp.omp_get_thread_num() * lanes_len + <Py_ssize_t>t.sd_slot[n] * t.Hmax


cdef inline void _showdown(BTree* t, int n, int p, const rc_real* opp, rc_real* out, rc_real* scratch, double* full,
                           double* full_total) noexcept nogil:
    """p's showdown values at ``n`` (and the per-card opponent mass): from the batch buffers when ``n``'s river
    root swept it (see _sd_batches), else one sweep here."""
    cdef int sp = t.node_space[n], slot = t.sd_slot[n] if t.sd_max > 0 else -1, tid, H
    cdef Py_ssize_t lanes_len
    cdef const double* f
    if slot >= 0:
        tid = openmp.omp_get_thread_num()
        H = _H(t, n)
        lanes_len = <Py_ssize_t>((t.sd_max + 3) // 4) * 4 * t.Hmax
        memcpy(out, t.sd_out + tid * lanes_len + <Py_ssize_t>slot * t.Hmax, H * sizeof(rc_real))
        f = t.sd_full + <Py_ssize_t>tid * ((t.sd_max + 3) // 4) * 4 * 53 + 53 * slot
        memcpy(full, f, 52 * sizeof(double))
        full_total[0] = f[52]
        return
    rc_showdown(opp, out, t.amount[2 * n + p], scratch, t.space_groups + t.space_group_start[sp],
                t.space_group_start[sp + 1] - t.space_group_start[sp] - 1, _cards(t, n), full, full_total)


cdef void _walk(BTree* t, int n, int p, const rc_real* opp, const rc_real* own, rc_real* out, rc_real* stack,
                int mode, rc_real* regrets, rc_real* ssum, double w, int dcfr, double pos, double neg,
                int nested) noexcept nogil:
    """Counterfactual values ``out`` of player ``p`` at node ``n`` (its hand space), given the opponent's reach
    ``opp`` and (``own``, may be NULL when the update does not need it) p's reach, both in n's space.

    One depth-first pass per player and iteration: the opponent's reach is formed on the way down from its
    current strategy, values come back up, and p's decisions update their regrets and strategy sums after
    their children (a node's strategy is matched before its own regrets change).  ``stack``: scratch of
    this thread, each level taking its rows and handing the rest down.  ``nested``: inside a parallel
    region (chance nodes below run on this thread)."""
    cdef int H = _H(t, n), A, a, c, cs, Hc
    cdef long long k
    cdef unsigned int key
    cdef double fr, fs
    cdef int rbits, sbits
    cdef const int* cards = _cards(t, n)
    cdef const int* map
    cdef int sp = t.node_space[n]
    cdef double full[52]
    cdef double full_total
    cdef rc_real* strat
    cdef rc_real* childv
    cdef rc_real* reach
    cdef const rc_real* r
    cdef bint batched
    cdef rc_real* scratch
    cdef rc_real* rest
    cdef rc_real* dec
    cdef rc_real* copp
    cdef rc_real* cown
    cdef rc_real* cval
    cdef int have_full = 0, sd, ahead
    cdef const double* f
    cdef int ty = t.node_type[n]
    if ty == FOLD:
        rc_card_sums(opp, cards, H, full, &full_total)
        rc_fold_values(opp, full, full_total, cards, t.amount[2 * n + p], out, H)
        return
    if ty == SHOWDOWN:
        _showdown(t, n, p, opp, out, stack, full, &full_total)
        return
    if ty == LEAF or ty == ALLIN:
        memcpy(out, t.ext_vals + t.ext_off[n], H * sizeof(rc_real))
        return
    A = t.num_children[n]
    cs = t.child_start[n]
    if t.sd_max > 0 and t.sd_count[n] >= 2:
        if mode == MODE_SOLVE and not (nested & 2):
            _prefetch_subtree(t, n, p, regrets, ssum, NULL)
        _sd_batches(t, n, p, opp, stack, mode, regrets, ssum)
    nested &= 1  # bit 2 (this subtree requested by the caller) is for this node only
    if ty == CHANCE:
        memset(out, 0, H * sizeof(rc_real))
        if t.phased and not (nested & 1):
            # the children ran as tasks of _pass's parallel region, which added their values (see _sum_top)
            memcpy(out, t.top_sum + <Py_ssize_t>t.top_id[n] * t.Hmax, H * sizeof(rc_real))
        else:
            # a river root's blocks are requested one child ahead (queued while the previous child is walked, for
            # its showdown sweeps to request a few lines at a time, so that they wait in L2 when its walk starts;
            # see rcb_pfq); the root then skips its own request (bit 2).  The first child's at once.
            ahead = mode == MODE_SOLVE and t.sd_max > 0
            if ahead:
                _prefetch_next(t, cs, cs + A, p, regrets, ssum, NULL)
            for a in range(A):
                c = cs + a
                if t.is_copy[c]:
                    continue
                if ahead:
                    rcb_pfq_flush(_pfq(t))  # what the previous child's sweeps left of c's blocks
                    _prefetch_next(t, c + 1, cs + A, p, regrets, ssum, _pfq(t))
                Hc = _H(t, c)
                map = t.maps + t.child_map[c]
                copp = stack
                cown = stack + Hc
                cval = stack + 2 * Hc
                rcb_gather(copp, opp, map, Hc)
                if own != NULL:
                    rcb_gather(cown, own, map, Hc)
                _walk(t, c, p, copp, cown if own != NULL else NULL, cval, stack + 3 * Hc, mode, regrets, ssum, w,
                      dcfr, pos, neg, nested | (2 if ahead else 0))
                _add_child(t, c, cval, out)
        rc_scale_const(out, t.amount[2 * n], H)
        return
    # decision
    strat = stack
    childv = stack + <Py_ssize_t>A * H
    reach = stack + <Py_ssize_t>2 * A * H
    scratch = reach + H
    dec = scratch + 3 * H
    rest = dec
    if t.compressed and t.node_player[n] == p:  # the update's new block (float scratch)
        rest = dec + <Py_ssize_t>2 * A * H
    batched = t.node_player[n] != p and t.sd_max > 0 and t.dec_slot[n] >= 0
    if batched:
        # formed by _sd_batches at the river root of this pass
        strat = t.sd_strats + (<Py_ssize_t>openmp.omp_get_thread_num() * t.sd_dmax + t.dec_slot[n]) * t.sd_amax * t.Hmax
    elif mode == MODE_SOLVE or t.node_player[n] != p:
        _node_strategy(t, n, mode, regrets, ssum, strat, scratch, dec)
    if t.node_player[n] == p:
        # a showdown child first: its sweep leaves the per-card opponent mass that a fold child reuses
        sd = -1
        for a in range(A):
            c = cs + a
            if t.node_type[c] == SHOWDOWN:
                sd = a
                _showdown(t, c, p, opp, childv + <Py_ssize_t>a * H, rest, full, &full_total)
                have_full = 1
                break
        for a in range(A):
            c = cs + a
            if a == sd:
                continue
            if t.node_type[c] == FOLD and have_full:
                rc_fold_values(opp, full, full_total, cards, t.amount[2 * c + p], childv + <Py_ssize_t>a * H, H)
                continue
            if own != NULL and (t.node_type[c] == DECISION or t.node_type[c] == CHANCE):
                rc_scale(reach, own, strat + <Py_ssize_t>a * H, H)
                _walk(t, c, p, opp, reach, childv + <Py_ssize_t>a * H, rest, mode, regrets, ssum, w, dcfr, pos,
                      neg, nested)
            else:
                _walk(t, c, p, opp, NULL, childv + <Py_ssize_t>a * H, rest, mode, regrets, ssum, w, dcfr, pos, neg,
                      nested)
        if mode == MODE_BEST:
            memcpy(out, childv, H * sizeof(rc_real))
            for a in range(1, A):
                rc_max(out, childv + <Py_ssize_t>a * H, H)
            return
        if 2 <= A <= 4:
            rcb_value_fused(out, strat, childv, A, H)
        else:
            memset(out, 0, H * sizeof(rc_real))
            for a in range(A):
                rc_add_product(out, strat + <Py_ssize_t>a * H, childv + <Py_ssize_t>a * H, H)
        if t.compressed:
            # the old codes decoded inside the update, the new block in float scratch (dec: regrets, then
            # strategy sums; in L1), coded back to the tables with its new scales
            fr = t.reg_scale[n] / 32767.0
            fs = t.ssum_scale[n] / 65535.0
            rbits = 0
            sbits = 0
            for a in range(A):
                rcb_update16(dec + <Py_ssize_t>(A + a) * H, t.cssum + t.node_offset[n] + <Py_ssize_t>a * H, fs, own,
                             strat + <Py_ssize_t>a * H, w, dec + <Py_ssize_t>a * H,
                             t.creg + t.node_offset[n] + <Py_ssize_t>a * H, fr, childv + <Py_ssize_t>a * H, out,
                             dcfr, pos, neg, H, &rbits, &sbits)
            key = 0
            if t.stochastic:
                key = rcb_hash(t.round_key * <unsigned int>0x9E3779B9u + <unsigned int>n) | 1u
            t.reg_scale[n] = rcb_encode_i16_max(t.creg + t.node_offset[n], dec, <long>A * H, key,
                                                rcb_float_of_bits(rbits))
            t.ssum_scale[n] = rcb_encode_u16_max(t.cssum + t.node_offset[n], dec + <Py_ssize_t>A * H, <long>A * H,
                                                 rcb_hash(key) | 1u if key else 0, rcb_float_of_bits(sbits))
            return
        for a in range(A):
            rcb_update_action(ssum + t.node_offset[n] + <Py_ssize_t>a * H, own, strat + <Py_ssize_t>a * H, w,
                              regrets + t.node_offset[n] + <Py_ssize_t>a * H, childv + <Py_ssize_t>a * H, out,
                              dcfr, pos, neg,
                              t.cum + t.node_offset[n] + <Py_ssize_t>a * H if t.cum != NULL else NULL, H)
        return
    # the opponent acts: its reach splits over the actions, p's values add up (the first child's straight into
    # out; a batched showdown child's values come from the batch buffers, so its reach is not formed)
    for a in range(A):
        c = cs + a
        if t.node_type[c] == FOLD:  # its values straight from opp x the fold row (rcb_fold_scaled)
            if t.fd_max > 0 and t.fd_slot[c] >= 0:  # card sums from the river root's batches (_sd_batches)
                f = _fd_full(t, t.fd_slot[c])
                rcb_fold_apply(opp, strat + <Py_ssize_t>a * H, f, f[52], cards, t.amount[2 * c + p], out, a > 0, H)
            else:
                rcb_fold_scaled(opp, strat + <Py_ssize_t>a * H, cards, t.amount[2 * c + p], out, a > 0, H)
            continue
        r = reach
        if t.node_type[c] == SHOWDOWN and t.sd_max > 0 and t.sd_slot[c] >= 0:
            if a > 0:  # its values added from the batch buffers (no copy in between)
                rc_add(out, _sd_values(t, c), H)
                continue
        elif batched:  # formed by _sd_prepass (opp x the same strategy row)
            r = _sd_reach_row(t, strat + <Py_ssize_t>a * H)
        else:
            rc_scale(reach, opp, strat + <Py_ssize_t>a * H, H)
        if a == 0:
            _walk(t, c, p, r, own, out, rest, mode, regrets, ssum, w, dcfr, pos, neg, nested)
        else:
            _walk(t, c, p, r, own, childv, rest, mode, regrets, ssum, w, dcfr, pos, neg, nested)
            rc_add(out, childv, H)


cdef void _collect(BTree* t, int n, int p, const rc_real* opp, const rc_real* own, rc_real* stack, int mode,
                   const rc_real* regrets, const rc_real* ssum) noexcept nogil:
    """First phase of a threaded pass: the reach arriving at every top chance node below ``n`` into
    ``t.top_reach``, formed as :func:`_walk` forms it on the way down (the same strategies: a node's regrets
    change only after its children are walked).  Subtrees without a top chance node are skipped."""
    cdef int H = _H(t, n), A, a, c, cs, i
    cdef int ty = t.node_type[n]
    cdef rc_real* strat
    cdef rc_real* reach
    cdef rc_real* scratch
    cdef rc_real* dec
    cdef rc_real* rest
    if not t.above_top[n]:
        return
    if ty == CHANCE:
        i = t.top_id[n]
        memcpy(t.top_reach + <Py_ssize_t>(2 * i) * t.Hmax, opp, H * sizeof(rc_real))
        if own != NULL:
            memcpy(t.top_reach + <Py_ssize_t>(2 * i + 1) * t.Hmax, own, H * sizeof(rc_real))
        return
    if ty != DECISION:
        return
    A = t.num_children[n]
    cs = t.child_start[n]
    strat = stack
    reach = stack + <Py_ssize_t>A * H
    scratch = reach + H
    dec = scratch + 3 * H
    rest = dec  # 16-bit storage: no decoded block here (regret matching reads the codes)
    if t.node_player[n] == p:
        if own == NULL:
            for a in range(A):
                _collect(t, cs + a, p, opp, NULL, rest, mode, regrets, ssum)
            return
        _node_strategy(t, n, mode, regrets, ssum, strat, scratch, dec)
        for a in range(A):
            c = cs + a
            if t.above_top[c]:
                rc_scale(reach, own, strat + <Py_ssize_t>a * H, H)
                _collect(t, c, p, opp, reach, rest, mode, regrets, ssum)
        return
    _node_strategy(t, n, mode, regrets, ssum, strat, scratch, dec)
    for a in range(A):
        c = cs + a
        if t.above_top[c]:
            rc_scale(reach, opp, strat + <Py_ssize_t>a * H, H)
            _collect(t, c, p, reach, own, rest, mode, regrets, ssum)


cdef void _allin_collect(BTree* t, int n, int p, const rc_real* opp, rc_real* stack, int mode,
                         const rc_real* regrets, const rc_real* ssum) noexcept nogil:
    """The opponent's reach at every ALLIN node below ``n`` into ``t.al_reach``, formed as :func:`_walk` forms it
    on the way down (p's updates do not change the opponent's strategies).  Subtrees without one are skipped."""
    cdef int H = _H(t, n), A, a, c, cs, Hc
    cdef int ty = t.node_type[n]
    cdef rc_real* strat
    cdef rc_real* reach
    cdef rc_real* scratch
    cdef rc_real* dec
    cdef rc_real* rest
    if not t.above_al[n]:
        return
    if ty == ALLIN:
        memcpy(t.al_reach + <Py_ssize_t>t.al_slot[n] * t.al_Hp, opp, H * sizeof(rc_real))
        return
    A = t.num_children[n]
    cs = t.child_start[n]
    if ty == CHANCE:
        for a in range(A):
            c = cs + a
            if t.is_copy[c] or not t.above_al[c]:
                continue
            Hc = _H(t, c)
            rcb_gather(stack, opp, t.maps + t.child_map[c], Hc)
            _allin_collect(t, c, p, stack, stack + Hc, mode, regrets, ssum)
        return
    if ty != DECISION:
        return
    if t.node_player[n] == p:
        for a in range(A):
            _allin_collect(t, cs + a, p, opp, stack, mode, regrets, ssum)
        return
    strat = stack
    reach = stack + <Py_ssize_t>A * H
    scratch = reach + H
    dec = scratch + 3 * H
    rest = dec  # 16-bit storage: no decoded block here (regret matching reads the codes)
    _node_strategy(t, n, mode, regrets, ssum, strat, scratch, dec)
    for a in range(A):
        c = cs + a
        if t.above_al[c]:
            rc_scale(reach, opp, strat + <Py_ssize_t>a * H, H)
            _allin_collect(t, c, p, reach, rest, mode, regrets, ssum)


cdef void _allin_values(BTree* t, int p, const rc_real* opp, int mode, const rc_real* regrets,
                        const rc_real* ssum) noexcept nogil:
    """p's values at every ALLIN node (``contribution_p x M @ opponent reach``, M its board's equity matrix) into
    ext_vals, where :func:`_walk` reads them: the opponent's reach collected first, then one product per board
    (row chunks in parallel; each value is computed the same way whatever the threads)."""
    cdef int k, ch, g, s0
    _allin_collect(t, 0, p, opp, t.stacks, mode, regrets, ssum)
    for k in range(t.al_K):
        t.al_amt[k] = t.amount[2 * t.al_node[k] + p]
    if t.threads > 1:
        for ch in prange(t.al_C, num_threads=t.threads, schedule="dynamic"):
            g = t.al_chunks[3 * ch]
            s0 = t.al_group_start[g]
            rcb_allin_rows(t.al_codes + t.al_mat_off[g], t.al_width[g], t.al_lut + t.al_lut_off[g], t.al_Hp, t.al_chunks[3 * ch + 1], t.al_chunks[3 * ch + 2],
                           t.al_reach + <Py_ssize_t>s0 * t.al_Hp, t.al_group_start[g + 1] - s0, t.al_amt + s0,
                           t.al_outs + s0)
    else:
        for ch in range(t.al_C):
            g = t.al_chunks[3 * ch]
            s0 = t.al_group_start[g]
            rcb_allin_rows(t.al_codes + t.al_mat_off[g], t.al_width[g], t.al_lut + t.al_lut_off[g], t.al_Hp, t.al_chunks[3 * ch + 1], t.al_chunks[3 * ch + 2],
                           t.al_reach + <Py_ssize_t>s0 * t.al_Hp, t.al_group_start[g + 1] - s0, t.al_amt + s0,
                           t.al_outs + s0)


cdef void _pass(BTree* t, int p, const rc_real* opp, const rc_real* own, rc_real* out, int mode, rc_real* regrets,
                rc_real* ssum, double w, int dcfr, double pos, double neg) noexcept nogil:
    """One pass of player ``p`` from the root (:func:`_walk`'s values ``out``, updates in MODE_SOLVE).

    On several threads, in three phases so that the threads meet once per pass instead of once per chance
    node (a turn tree has 31 chance nodes of about a millisecond each: on a loaded machine every fork and join
    waits for a descheduled thread): :func:`_collect` forms the reach at the top chance nodes, one parallel
    region walks all their children (the tasks: each thread a contiguous range of them, then what is left of the
    others', see :func:`_worker`), each thread with its own scratch, the thread that finishes a top chance node's
    last task adding up its children's values in child order (:func:`_sum_top`), and :func:`_walk` then walks the
    part above them.  Every node's arithmetic is that of the one-thread walk,
    so the iterates are the same bitwise for any thread count and any order of the tasks."""
    cdef int i
    if t.al_K > 0:
        _allin_values(t, p, opp, mode, regrets, ssum)
    if t.threads <= 1 or t.ntop == 0:
        _walk(t, 0, p, opp, own, out, t.stacks, mode, regrets, ssum, w, dcfr, pos, neg, 0)
        return
    t.top_own = 1 if own != NULL else 0
    _collect(t, 0, p, opp, own, t.stacks, mode, regrets, ssum)
    for i in range(t.threads):
        rcb_seg_set(t.seg + i, t.top_split[i], t.top_split[i + 1])
    for i in range(t.ntop):
        t.top_left[i] = t.top_walked[i]
        if t.top_walked[i] == 0:  # (no task counts it down)
            memset(t.top_sum + <Py_ssize_t>i * t.Hmax, 0, t.Hmax * sizeof(rc_real))
    with parallel(num_threads=t.threads):
        _worker(t, p, mode, regrets, ssum, w, dcfr, pos, neg)
    t.phased = 1
    _walk(t, 0, p, opp, own, out, t.stacks, mode, regrets, ssum, w, dcfr, pos, neg, 0)
    t.phased = 0


cdef void _worker(BTree* t, int p, int mode, rc_real* regrets, rc_real* ssum, double w, int dcfr, double pos,
                  double neg) noexcept nogil:
    """One thread's part of :func:`_pass`'s parallel region: the tasks of its own range from the front (so the task
    it will run next is known and its blocks are queued for the current task's sweeps, see rcb_pfq), then tasks
    from the back of the fullest range left (a thread slowed by the machine's other work leaves its tail to the
    others; their next task is the one below)."""
    cdef int tid = openmp.omp_get_thread_num(), i, best
    cdef long long k, g, left, most
    while True:
        k = rcb_seg_front(t.seg + tid) if tid < t.threads else -1
        if k >= 0:
            g = _next_walked(t, k + 1, rcb_seg_hi(t.seg + tid), 1)
        else:
            best = -1
            most = 0
            for i in range(t.threads):
                left = rcb_seg_left(t.seg + i)
                if left > most:
                    most = left
                    best = i
            if best < 0:
                break
            k = rcb_seg_back(t.seg + best)
            if k < 0:
                continue
            g = _next_walked(t, k - 1, rcb_seg_lo(t.seg + best) - 1, -1)
        _task(t, k, g, tid, p, mode, regrets, ssum, w, dcfr, pos, neg)


cdef inline int _task_child(BTree* t, long long k) noexcept nogil:
    """The chance child that parallel task ``k`` walks."""
    cdef int i = _top_of_task(t, k)
    return t.child_start[t.top_node[i]] + <int>(k - t.top_task[i])


cdef long long _next_walked(BTree* t, long long k, long long end, int step) noexcept nogil:
    """The first task from ``k`` on (by ``step``, before ``end``) that is walked (not an isomorphic copy), -1: none."""
    while k != end and t.is_copy[_task_child(t, k)]:
        k += step
    return k if k != end else -1


cdef void _task(BTree* t, long long k, long long g, int tid, int p, int mode, rc_real* regrets, rc_real* ssum,
                double w, int dcfr, double pos, double neg) noexcept nogil:
    """Walk parallel task ``k`` on thread ``tid`` (its values into ``par_vals`` row ``k``); ``g``: the task this
    thread takes next (-1: not known), whose blocks are queued for this task's sweeps."""
    cdef int i, n, a, c, Hc, nested
    cdef rcb_pfq* q
    cdef const int* map
    cdef rc_real* tstack
    cdef rc_real* copp
    cdef rc_real* cown
    # the task's top chance node: the last one whose first task is at or before k
    i = _top_of_task(t, k)
    n = t.top_node[i]
    a = <int>(k - t.top_task[i])
    c = t.child_start[n] + a
    if t.is_copy[c]:
        return
    tstack = t.stacks + (tid + 1) * t.stack_len
    Hc = _H(t, c)
    map = t.maps + t.child_map[c]
    copp = tstack
    cown = tstack + Hc
    rcb_gather(copp, t.top_reach + <Py_ssize_t>(2 * i) * t.Hmax, map, Hc)
    if t.top_own:
        rcb_gather(cown, t.top_reach + <Py_ssize_t>(2 * i + 1) * t.Hmax, map, Hc)
    nested = 1
    if mode == MODE_SOLVE and t.sd_max > 0:
        # a river root's blocks: queued by this thread's previous task when it knew this one would come next,
        # else requested at once; then the next task's are queued for this task's sweeps.  Hints only.
        q = t.pfq + tid
        if rcb_pfq_tag(q) == k:
            rcb_pfq_flush(q)
        else:
            rcb_pfq_clear(q)
            _prefetch_task(t, k, p, regrets, ssum, NULL)
        if g >= 0:
            _prefetch_task(t, g, p, regrets, ssum, q)
            rcb_pfq_set_tag(q, g)
        nested = 3
    _walk(t, c, p, copp, cown if t.top_own else NULL, t.par_vals + k * t.Hmax, tstack + 2 * Hc, mode, regrets,
          ssum, w, dcfr, pos, neg, nested)
    if rcb_count_down(t.top_left + i) == 0:
        _sum_top(t, i)


cdef void _sum_top(BTree* t, int i) noexcept nogil:
    """Top chance node ``i``'s children's values (their tasks' rows of ``par_vals``) added into its row of
    ``top_sum``, in child order (the order of :func:`_walk`'s serial loop, so the same result for any thread
    count): done inside the parallel region by the thread that finished the node's last task, not by the calling
    thread after it (on the turn ~1,400 scatter-adds, 2-4% of an iteration, that only one thread would do)."""
    cdef int n = t.top_node[i], a, A = t.num_children[n], cs = t.child_start[n]
    cdef long long k = t.top_task[i]
    cdef rc_real* out = t.top_sum + <Py_ssize_t>i * t.Hmax
    memset(out, 0, _H(t, n) * sizeof(rc_real))
    for a in range(A):
        if not t.is_copy[cs + a]:
            _add_child(t, cs + a, t.par_vals + (k + a) * t.Hmax, out)


cdef void _prefetch_task(BTree* t, long long k, int p, const rc_real* regrets, const rc_real* ssum,
                         rcb_pfq* q) noexcept nogil:
    """Request (or queue in ``q``) the blocks of parallel task ``k`` when it is a batching river root."""
    cdef int i, n, c
    if k >= t.top_task[t.ntop]:
        return
    i = _top_of_task(t, k)
    n = t.top_node[i]
    c = t.child_start[n] + <int>(k - t.top_task[i])
    if not t.is_copy[c] and t.sd_count[c] >= 2:
        _prefetch_subtree(t, c, p, regrets, ssum, q)


cdef inline int _top_of_task(BTree* t, long long k) noexcept nogil:
    """Index of the top chance node whose tasks hold ``k`` (binary search in ``top_task``)."""
    cdef int lo = 0, hi = t.ntop - 1, mid
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if t.top_task[mid] <= k:
            lo = mid
        else:
            hi = mid - 1
    return lo


cdef inline void _add_child(BTree* t, int c, const rc_real* cval, rc_real* out) noexcept nogil:
    """Add chance child ``c``'s values into its parent's hands, and those of its isomorphic copies (the same
    values through their own, suit-permuted, maps)."""
    cdef int Hc = _H(t, c), d
    rcb_scatter_add(out, cval, t.maps + t.child_map[c], Hc)
    d = t.iso_next[c]
    while d >= 0:
        rcb_scatter_add(out, cval, t.maps + t.child_map[d], Hc)
        d = t.iso_next[d]


cdef void _forward(BTree* t, int n, const rc_real* r0, const rc_real* r1, rc_real* stack,
                   const rc_real* regrets) noexcept nogil:
    """Both players' reach under the current (regret-matched) strategies, from node ``n`` (reach ``r0``, ``r1``
    in its hand space) down to the leaf and all-in nodes, written to ``t.ext_reach``.  Scratch: ``stack``."""
    cdef int H = _H(t, n), A, a, c, cs, Hc, q
    cdef int ty = t.node_type[n]
    cdef const int* map
    cdef rc_real* strat
    cdef rc_real* nr
    cdef rc_real* rest
    if ty == LEAF or ty == ALLIN:
        memcpy(t.ext_reach + t.ext_off[n], r0, H * sizeof(rc_real))
        memcpy(t.ext_reach + t.E + t.ext_off[n], r1, H * sizeof(rc_real))
        return
    if ty == FOLD or ty == SHOWDOWN:
        return
    A = t.num_children[n]
    cs = t.child_start[n]
    if ty == CHANCE:
        for a in range(A):
            c = cs + a
            Hc = _H(t, c)
            map = t.maps + t.child_map[c]
            rcb_gather(stack, r0, map, Hc)
            rcb_gather(stack + Hc, r1, map, Hc)
            _forward(t, c, stack, stack + Hc, stack + 2 * Hc, regrets)
        return
    strat = stack
    nr = stack + <Py_ssize_t>A * H
    rest = nr + H
    _node_strategy(t, n, MODE_SOLVE, regrets, NULL, strat, rest, NULL)
    q = t.node_player[n]
    for a in range(A):
        c = cs + a
        if t.node_type[c] == FOLD or t.node_type[c] == SHOWDOWN:
            continue
        if q == 0:
            rc_scale(nr, r0, strat + <Py_ssize_t>a * H, H)
            _forward(t, c, nr, r1, rest, regrets)
        else:
            rc_scale(nr, r1, strat + <Py_ssize_t>a * H, H)
            _forward(t, c, r0, nr, rest, regrets)


cdef double _exploitability(BTree* t, const rc_real* ranges, int H0, const rc_real* ssum, rc_real* root) noexcept nogil:
    """(BR_0 + BR_1) / 2 in chips against the average strategy; the ranges (card-compatible pairs) as the deal."""
    cdef int p, h
    cdef double total = 0.0, z = 0.0, full_total
    cdef double full[52]
    for p in range(2):
        _pass(t, p, ranges + (1 - p) * H0, NULL, root, MODE_BEST, NULL, <rc_real*>ssum, 0.0, 0, 0.0, 0.0)
        for h in range(H0):
            total += ranges[p * H0 + h] * root[h]
    rc_card_sums(ranges + H0, _cards(t, 0), H0, full, &full_total)
    rc_fold_values(ranges + H0, full, full_total, _cards(t, 0), 1.0, root, H0)
    for h in range(H0):
        z += ranges[h] * root[h]
    return total / 2.0 / z if z > 0 else 0.0


cdef class _Workspace:
    """Owns the layout arrays (kept alive while the kernel points into them) and the scratch."""
    cdef BTree t
    cdef tuple arrays
    cdef object compressed_arrays
    cdef rc_real[::1] stacks, par_vals, sd_in, sd_out, sd_lose, sd_strats, sd_reach, top_reach, top_sum
    cdef int[::1] top_walked, top_left
    cdef int[::1] sub_start, sub_dec, fd_slot, fd_count
    cdef rc_real[::1] fd_in
    cdef double[::1] fd_full
    cdef unsigned char[::1] pfq_buf
    cdef int[::1] top_id, top_node
    cdef long long[::1] top_task, top_split
    cdef unsigned long long[::1] seg
    cdef unsigned char[::1] above_top
    cdef double[::1] sd_full
    cdef object allin_arrays
    cdef rc_real[::1] al_reach, al_vals
    cdef double[::1] al_amt
    cdef unsigned char[::1] above_al
    cdef int[::1] al_slot
    cdef Py_ssize_t[::1] al_outs

    def __init__(self, tuple layout, int threads, bint allow_ext=False, tuple allin=None):
        cdef const int[::1] node_type, node_player, child_start, num_children, node_space, space_start
        cdef const int[::1] space_group_start, space_groups, maps, iso_next, is_copy
        cdef const int[:, ::1] space_cards
        cdef const long long[::1] node_offset, child_map
        cdef const double[:, ::1] amount
        cdef const int[::1] sd_slot, sd_count, dec_slot
        cdef long long stack_len
        cdef int max_children, N, qi
        (node_type, node_player, child_start, num_children, amount, node_space, node_offset, space_start,
         space_cards, space_group_start, space_groups, child_map, maps, iso_next, is_copy, stack_len,
         max_children, sd_slot, sd_count, dec_slot) = layout
        self.arrays = layout
        N = node_type.shape[0]
        if any(len(layout[i]) != N for i in (1, 2, 3, 5, 6, 11, 13, 14, 17, 18, 19)):
                raise ValueError("per-node arrays of the board layout differ in length")
        if amount.shape[0] != N or amount.shape[1] != 2 or N == 0 or node_type[0] != DECISION:
            raise ValueError("bad board layout: amount must be (N, 2) and the root a decision")
        if not allow_ext and np.any(np.asarray(node_type) == LEAF) or (
                not allow_ext and allin is None and np.any(np.asarray(node_type) == ALLIN)):
            raise ValueError("the layout has leaf or all-in nodes (a depth-limited tree): solve it with "
                             "BoardLeafSolver (cfrkit.solvers.public.board_leaf_cfr), which supplies their values")
        threads = max(1, threads)
        hs = np.diff(np.asarray(space_start))
        self.t.Hmax = int(hs.max())
        self.t.N = N
        self.t.node_type = &node_type[0]
        self.t.node_player = &node_player[0]
        self.t.child_start = &child_start[0]
        self.t.num_children = &num_children[0]
        self.t.amount = &amount[0, 0]
        self.t.node_space = &node_space[0]
        self.t.node_offset = &node_offset[0]
        self.t.space_start = &space_start[0]
        self.t.space_cards = &space_cards[0, 0]
        self.t.space_group_start = &space_group_start[0]
        self.t.space_groups = &space_groups[0] if space_groups.shape[0] else NULL
        self.t.child_map = &child_map[0]
        self.t.maps = &maps[0] if maps.shape[0] else NULL
        self.t.iso_next = &iso_next[0]
        self.t.is_copy = &is_copy[0]
        self.t.threads = threads
        self.t.stack_len = stack_len
        self.stacks = np.zeros((threads + 1 if threads > 1 else 1) * stack_len, dtype=REAL)
        self.t.stacks = &self.stacks[0]
        # one prefetch queue per thread (zeros: empty)
        self.pfq_buf = np.zeros((threads + 1) * rcb_pfq_size(), dtype=np.uint8)
        self.t.pfq = <rcb_pfq*>&self.pfq_buf[0]
        for qi in range(threads + 1):
            rcb_pfq_clear(self.t.pfq + qi)
        self._top_tasks(threads)
        self.t.cum = NULL
        self.t.compressed = 0
        self.t.stochastic = 0
        self.t.round_key = 0
        self.t.ext_off = NULL
        self.t.E = 0
        self.t.ext_reach = NULL
        self.t.ext_vals = NULL
        # showdown batches (river roots with 2 or more showdowns): per-thread buffers
        self.t.sd_slot = &sd_slot[0]
        self.t.sd_count = &sd_count[0]
        self.t.dec_slot = &dec_slot[0]
        sd_max = int(np.max(sd_count))
        self.t.sd_max = sd_max if sd_max >= 2 else 0
        if sd_max > 64:
            raise ValueError("a river subtree has more than 64 showdowns (the batch limit)")
        batched = np.asarray(dec_slot) >= 0
        self.t.sd_dmax = int(np.max(dec_slot)) + 1 if self.t.sd_max else 0
        self.t.sd_amax = int(np.max(np.asarray(num_children)[batched])) if self.t.sd_max else 0
        nbuf = threads if threads > 1 else 1
        lanes = ((self.t.sd_max + 3) // 4) * 4
        self.sd_in = np.zeros(max(1, nbuf * lanes * self.t.Hmax), dtype=REAL)
        self.sd_out = np.zeros(max(1, nbuf * lanes * self.t.Hmax), dtype=REAL)
        self.sd_lose = np.zeros(max(1, nbuf * 24 * self.t.Hmax if self.t.sd_max else 1), dtype=REAL)
        self.sd_full = np.zeros(max(1, nbuf * lanes * 53), dtype=np.float64)
        self.sd_strats = np.zeros(max(1, nbuf * self.t.sd_dmax * self.t.sd_amax * self.t.Hmax), dtype=REAL)
        self.sd_reach = np.zeros(max(1, nbuf * self.t.sd_dmax * self.t.sd_amax * self.t.Hmax), dtype=REAL)
        self.t.sd_in = &self.sd_in[0]
        self.t.sd_out = &self.sd_out[0]
        self.t.sd_lose = &self.sd_lose[0]
        self.t.sd_full = &self.sd_full[0]
        self.t.sd_strats = &self.sd_strats[0]
        self.t.sd_reach = &self.sd_reach[0]
        self._subtree_decisions()
        self.t.al_K = 0
        if allin is not None:
            self.set_allin(allin)
        if N >= LARGE_LAYOUT:  # the set-up's temporaries (a flop's: ~30 MB of per-node int64 arrays); small
            rcb_release_heap()  # layouts free little, and a trim walks every free chunk of the heap (ms)

    def _subtree_decisions(self):
        """The decisions below each batching river root (``sd_count >= 2``; no chance node below it), for
        _prefetch_subtree, grouped by root in node order (numpy: this runs at every ``solve`` call)."""
        cdef BTree* t = &self.t
        cdef int N = t.N
        start = np.zeros(N + 1, dtype=np.int32)
        decs = np.zeros(1, dtype=np.int32)
        fd_slot = np.full(N, -1, dtype=np.int32)
        fd_count = np.zeros(2 * N, dtype=np.int32)
        if t.sd_max > 0:
            node_type = np.asarray(<const int[:N]>t.node_type)
            num_children = np.asarray(<const int[:N]>t.num_children)
            child_start = np.asarray(<const int[:N]>t.child_start)
            sd_count = np.asarray(<const int[:N]>t.sd_count)
            parent = np.full(N, -1, dtype=np.int64)
            inner = np.flatnonzero((num_children > 0) & (np.asarray(<const int[:N]>t.is_copy) == 0))
            kids = np.repeat(child_start[inner], num_children[inner]) + (
                np.arange(int(num_children[inner].sum())) - np.repeat(np.cumsum(num_children[inner]) -
                                                                     num_children[inner], num_children[inner]))
            parent[kids] = np.repeat(inner, num_children[inner])
            root = np.where(sd_count >= 2, np.arange(N), -1)
            while True:  # a river subtree is a few levels deep
                up = (root < 0) & (parent >= 0)
                new_root = root.copy()
                new_root[up] = root[parent[up]]
                if np.array_equal(new_root, root):
                    break
                root = new_root
            sel = np.flatnonzero((root >= 0) & (node_type == DECISION))
            sel = sel[np.lexsort((sel, root[sel]))]
            decs = np.ascontiguousarray(sel, dtype=np.int32) if len(sel) else decs
            start[1:] = np.cumsum(np.bincount(root[sel], minlength=N))
            # folds below a batching root, numbered per (root, player of the folding decision) in node order
            folds = np.flatnonzero((root >= 0) & (node_type == FOLD) & (parent >= 0))
            if len(folds):
                key = 2 * root[folds] + np.asarray(<const int[:N]>t.node_player)[parent[folds]]
                order = np.lexsort((folds, key))
                folds, key = folds[order], key[order]
                first = np.r_[0, np.flatnonzero(np.diff(key)) + 1]
                rank = np.arange(len(folds)) - np.repeat(first, np.diff(np.r_[first, len(folds)]))
                fd_count[:] = np.bincount(key, minlength=2 * N)
                fd_count[fd_count < FOLD_BATCH_MIN] = 0  # too few to gain from a batch: summed one by one
                kept = fd_count[key] > 0
                fd_slot[folds[kept]] = rank[kept]
        self.sub_start = start
        self.sub_dec = decs
        t.sub_start = &self.sub_start[0]
        t.sub_dec = &self.sub_dec[0]
        self.fd_slot = fd_slot
        self.fd_count = fd_count
        t.fd_slot = &self.fd_slot[0]
        t.fd_count = &self.fd_count[0]
        t.fd_max = int(fd_count.max()) if N else 0
        lanes = ((t.fd_max + 3) // 4) * 4
        nbuf = t.threads if t.threads > 1 else 1
        self.fd_in = np.zeros(max(1, nbuf * lanes * t.Hmax), dtype=REAL)
        self.fd_full = np.zeros(max(1, nbuf * lanes * 53), dtype=np.float64)
        t.fd_in = &self.fd_in[0]
        t.fd_full = &self.fd_full[0]

    def set_allin(self, tuple allin):
        """Value the ALLIN nodes by equity matrix in every pass (see _allin_values).  ``allin``: ``(ext_off (N,)
        int64: each ALLIN node's first hand in ext_vals, node (K,) int32: the ALLIN nodes grouped by board,
        group_start (G + 1,) int32, codes (uint8): each board's matrix coded, H_g rows of stride Hp codes of
        ``width[g]`` bytes (1: uint8, 2: uint16 in native byte order), mat_off (G,) int64: its first byte (a multiple
        of its width), width (G,) int32, lut (rc_real): the values the codes index, lut_off (G,) int64: group g's
        first value, Hp, chunks (C, 3) int32: group, first row, end row)``."""
        cdef const long long[::1] ext_off
        cdef const int[::1] node, group_start, width
        cdef const unsigned char[::1] codes
        cdef const rc_real[::1] lut
        cdef const long long[::1] mat_off, lut_off
        cdef const int[:, ::1] chunks
        cdef int Hp, K, G, k, n, c, g, N = self.t.N
        cdef long long E = 0, rows_end
        ext_off, node, group_start, codes, mat_off, width, lut, lut_off, Hp, chunks = allin
        K = node.shape[0]
        G = group_start.shape[0] - 1
        if ext_off.shape[0] != N or K == 0 or G < 1 or group_start[G] != K or mat_off.shape[0] != G \
                or width.shape[0] != G or lut_off.shape[0] != G or Hp % 8 or Hp < self.t.Hmax or Hp > 1328 \
                or chunks.shape[1] != 3:
            raise ValueError("bad all-in layout: need ext_off (N,), nodes grouped by board, Hp a multiple of 8 "
                             "(at most 1328), one offset, width and table per board")
        for k in range(K):
            n = node[k]
            if n < 0 or n >= N or self.t.node_type[n] != ALLIN or ext_off[n] < 0:
                raise ValueError(f"all-in slot {k}: kernel node {n} is not an ALLIN node with hands in ext_vals")
            E = max(E, ext_off[n] + _H(&self.t, n))
        codes_np = np.asarray(allin[3])
        for g in range(G):
            rows_end = mat_off[g] + <long long>_H(&self.t, node[group_start[g]]) * Hp * width[g]
            if width[g] not in (1, 2) or mat_off[g] < 0 or mat_off[g] % width[g] or rows_end > codes.shape[0] \
                    or lut_off[g] < 0 or lut_off[g] >= lut.shape[0]:
                raise ValueError(f"all-in board {g}: coded matrix or value table outside the arrays")
            # every code must index the board's table (the kernel reads lut[lut_off + code] unchecked)
            block = codes_np[mat_off[g]:rows_end].view(np.uint8 if width[g] == 1 else np.uint16)
            if lut_off[g] + <long long>block.max() >= lut.shape[0]:
                raise ValueError(f"all-in board {g}: a code beyond the value table")
        for c in range(chunks.shape[0]):
            g = chunks[c, 0]
            if g < 0 or g >= G or chunks[c, 1] < 0 or chunks[c, 2] > _H(&self.t, node[group_start[g]]):
                raise ValueError(f"all-in row chunk {c} outside its board's matrix")
        self.allin_arrays = allin
        self.al_slot = np.full(N, -1, dtype=np.int32)
        self.above_al = np.zeros(N, dtype=np.uint8)
        for k in range(K):
            self.al_slot[node[k]] = k
            self.above_al[node[k]] = 1
        for n in range(N - 1, -1, -1):  # children come after their parent
            if self.t.is_copy[n] or self.t.node_type[n] not in (DECISION, CHANCE):
                continue
            for c in range(self.t.child_start[n], self.t.child_start[n] + self.t.num_children[n]):
                if self.above_al[c]:
                    self.above_al[n] = 1
        self.al_reach = np.zeros(K * Hp, dtype=REAL)
        self.al_vals = np.zeros(max(E, 1), dtype=REAL)
        self.al_amt = np.zeros(K)
        self.al_outs = np.zeros(K, dtype=np.intp)
        for k in range(K):
            self.al_outs[k] = <Py_ssize_t>(&self.al_vals[0] + ext_off[node[k]])
        self.t.ext_off = &ext_off[0]
        self.t.E = E
        self.t.ext_vals = &self.al_vals[0]
        self.t.al_K = K
        self.t.al_node = &node[0]
        self.t.al_slot = &self.al_slot[0]
        self.t.above_al = &self.above_al[0]
        self.t.al_G = G
        self.t.al_group_start = &group_start[0]
        self.t.al_mat_off = &mat_off[0]
        self.t.al_width = &width[0]
        self.t.al_lut_off = &lut_off[0]
        self.t.al_Hp = Hp
        self.t.al_codes = &codes[0]
        self.t.al_lut = &lut[0]
        self.t.al_C = chunks.shape[0]
        self.t.al_chunks = &chunks[0, 0]
        self.t.al_reach = &self.al_reach[0]
        self.t.al_amt = &self.al_amt[0]
        self.t.al_outs = <rc_real**>&self.al_outs[0]

    def _top_tasks(self, int threads):
        """The top chance nodes (no chance node above them) and their children, the tasks of _pass's parallel
        loop (several threads only), with the buffers: reach at each, values of each task."""
        cdef BTree* t = &self.t
        cdef int N = t.N, n, c, ntop = 0
        cdef long long ntask = 0
        cdef Py_ssize_t M = N if threads > 1 else 1  # one thread: no tasks, the per-node tables unused
        under_arr = np.zeros(M, dtype=np.uint8)
        cdef unsigned char[::1] under = under_arr
        self.top_id = np.full(M, -1, dtype=np.int32)
        self.above_top = np.zeros(M, dtype=np.uint8)
        cdef int[::1] top_id = self.top_id
        cdef unsigned char[::1] above = self.above_top
        if threads > 1:
            with nogil:
                for n in range(N):  # children come after their parent
                    if t.node_type[n] == CHANCE and not under[n] and not t.is_copy[n]:
                        top_id[n] = ntop
                        ntop += 1
                    if t.is_copy[n]:
                        continue
                    for c in range(t.child_start[n], t.child_start[n] + t.num_children[n]):
                        under[c] = 1 if (under[n] or t.node_type[n] == CHANCE) else 0
                for n in range(N - 1, -1, -1):
                    if top_id[n] >= 0:
                        above[n] = 1
                    elif not under[n] and not t.is_copy[n] and t.node_type[n] == DECISION:
                        for c in range(t.child_start[n], t.child_start[n] + t.num_children[n]):
                            if above[c]:
                                above[n] = 1
        self.top_node = np.zeros(max(ntop, 1), dtype=np.int32)
        self.top_task = np.zeros(ntop + 1, dtype=np.int64)
        for n in np.flatnonzero(np.asarray(self.top_id) >= 0):
            c = self.top_id[n]
            self.top_node[c] = n
            self.top_task[c + 1] = self.top_task[c] + t.num_children[n]
        ntask = self.top_task[ntop]
        self.top_reach = np.zeros(max(1, 2 * ntop * t.Hmax), dtype=REAL)
        self.par_vals = np.zeros(max(1, ntask * t.Hmax), dtype=REAL)
        t.ntop = ntop
        t.top_id = &self.top_id[0]
        t.top_node = &self.top_node[0]
        t.top_task = &self.top_task[0]
        t.above_top = &self.above_top[0]
        t.top_reach = &self.top_reach[0]
        t.par_vals = &self.par_vals[0]
        t.top_own = 0
        t.phased = 0
        # each thread's range of tasks: equal numbers of walked tasks (isomorphic copies cost nothing)
        walked = np.zeros(max(ntask, 0), dtype=bool)
        is_copy_arr = np.asarray(<const int[:N]>t.is_copy)
        for c in range(ntop):
            n = self.top_node[c]
            walked[self.top_task[c]:self.top_task[c + 1]] = (
                is_copy_arr[t.child_start[n]:t.child_start[n] + t.num_children[n]] == 0)
        idx = np.flatnonzero(walked)
        T = max(threads, 1)
        self.top_split = np.array([0] + [int(idx[i * len(idx) // T]) if len(idx) else 0 for i in range(1, T)] + [ntask],
                                  dtype=np.int64)
        self.seg = np.zeros(T, dtype=np.uint64)
        self.top_walked = np.array(
            [int(walked[self.top_task[c]:self.top_task[c + 1]].sum()) for c in range(ntop)] or [0], dtype=np.int32)
        self.top_left = np.zeros(max(ntop, 1), dtype=np.int32)
        self.top_sum = np.zeros(max(1, ntop * t.Hmax), dtype=REAL)
        t.top_walked = &self.top_walked[0]
        t.top_left = &self.top_left[0]
        t.top_sum = &self.top_sum[0]
        t.top_split = &self.top_split[0]
        t.seg = &self.seg[0]

    def set_compressed(self, short[::1] creg, unsigned short[::1] cssum, float[::1] reg_scale, float[::1] ssum_scale):
        """Use 16-bit storage: int16 regrets and uint16 strategy sums, one scale per node (see rcb_encode_i16)."""
        if reg_scale.shape[0] != self.t.N or ssum_scale.shape[0] != self.t.N or creg.shape[0] != cssum.shape[0]:
            raise ValueError("compressed storage: scales must be (N,) and both blocks of one length")
        self.compressed_arrays = (creg, cssum, reg_scale, ssum_scale)
        self.t.compressed = 1
        self.t.creg = &creg[0]
        self.t.cssum = &cssum[0]
        self.t.reg_scale = &reg_scale[0]
        self.t.ssum_scale = &ssum_scale[0]


def release_freed_heap():
    """Give the C heap freed by large builds back to the system (glibc's ``malloc_trim``; a no-op elsewhere).
    A flop layout's build frees ~75 MB that glibc would otherwise keep resident next to the tables.  It walks
    every free chunk of the heap (up to tens of ms in a fragmented process): call it after large builds only
    (``LARGE_LAYOUT`` kernel nodes and more)."""
    rcb_release_heap()


def make_workspace(tuple layout, int threads=1, tuple allin=None):
    """The kernel's set-up of one spot (``layout``, ``threads``, ``allin`` as :func:`solve` takes them: the
    pointers into the layout, the scratch stacks, the showdown batch buffers, the all-in buffers), built once
    and passed to :func:`solve`, :func:`exploitability` and :func:`root_best_values` as ``workspace=`` so that a
    call does not build it again (about 0.3 ms per call on a river spot: more than an iteration).  It holds no
    iterate: the results are those of a call without it."""
    return _Workspace(layout, threads, False, allin)


cdef _Workspace _workspace_for(_Workspace workspace, tuple layout, int threads, tuple allin):
    """``workspace`` (built by :func:`make_workspace` for these arguments) reset for a new call, or a new one
    when None."""
    if workspace is None:
        return _Workspace(layout, threads, False, allin)
    if workspace.arrays is not layout or workspace.t.threads != max(1, threads) or workspace.allin_arrays is not allin:
        raise ValueError("workspace was built for another layout, thread count or all-in tables")
    workspace.t.cum = NULL
    workspace.t.compressed = 0
    workspace.t.stochastic = 0
    workspace.t.round_key = 0
    workspace.t.phased = 0
    workspace.t.top_own = 0
    workspace.compressed_arrays = None
    return workspace


def solve(tuple layout, const rc_real[:, ::1] ranges, rc_real[::1] regrets, rc_real[::1] strategy_sum,
          int start_iteration, int max_iterations, int dcfr, double alpha, double beta, double gamma, int check_every,
          double target, double[::1] expl_out, int threads=1, tuple compressed=None, int stochastic=0,
          tuple allin=None, rc_real[::1] cumulative=None, _Workspace workspace=None):
    """Run up to ``max_iterations`` alternating updates from ``start_iteration`` (1-based) on ``threads``
    OpenMP threads (over the children of chance nodes; results do not depend on the thread count).

    ``ranges``: ``(2, H0)`` in the root's hand space; ``regrets``/``strategy_sum``: every decision's
    ``(A, H)`` block at ``node_offset``.  Every ``check_every`` iterations (0 = never) the exploitability
    (chips) of the average strategy goes to ``expl_out``; the solve stops after the first check at or below
    ``target`` chips (negative: never).  ``dcfr``: 0 CFR+ (average weight t), 1 DCFR (alpha, beta, gamma),
    2 postflop-solver's DCFR, 3 DCFR+ (alpha, gamma: the old regret discounted by ``d(t - 1)``, ``d(t) = t^alpha /
    (t^alpha + 1)``, the new one added, floored at 0; average weight ``t^gamma``), 4 PDCFR+ (DCFR+'s cumulative
    regrets in ``cumulative``, same length as ``regrets``, and in ``regrets`` the predicted regrets
    ``max(d(t) x cumulative + instantaneous regret, 0)`` that regret matching reads).  ``compressed``: ``(int16 regrets, uint16 strategy sums, float32 regret scales,
    float32 sum scales)`` for 16-bit storage (``regrets``/``strategy_sum`` are then unused), rounded
    stochastically when ``stochastic`` (keyed by iteration, player and node: a resumed run continues the same
    sequence) else to nearest.  ``allin``: all-in run-outs by equity matrix (see _Workspace.set_allin).  Returns
    ``(iterations_run, checks_written)``.  ``workspace``: from :func:`make_workspace` for the same layout, threads
    and all-in tables (None: built for this call).
    """
    if dcfr < 0 or dcfr > 4:
        raise ValueError(f"unknown update rule {dcfr} (0 CFR+, 1 DCFR, 2 postflop-solver's DCFR, 3 DCFR+, 4 PDCFR+)")
    if (dcfr == 4) != (cumulative is not None) or dcfr == 4 and (
            compressed is not None or cumulative.shape[0] != regrets.shape[0]):
        raise ValueError("PDCFR+ (4) needs the cumulative regrets (as long as regrets, no 16-bit storage); the other "
                         "rules take none")
    cdef _Workspace ws = _workspace_for(workspace, layout, threads, allin)
    if compressed is not None:
        ws.set_compressed(*compressed)
        ws.t.stochastic = 1 if stochastic else 0
    cdef BTree* t = &ws.t
    if cumulative is not None:
        t.cum = &cumulative[0]
    cdef int H0 = t.space_start[t.node_space[0] + 1] - t.space_start[t.node_space[0]]
    cdef int it, p, written = 0, done = 0, ps, p4, ta
    cdef double tt, w = 0.0, e, pos_scale = 0.0, neg_scale = 0.0
    if ranges.shape[0] != 2 or ranges.shape[1] != H0 or regrets.shape[0] != strategy_sum.shape[0]:
        raise ValueError("ranges must be (2, H0) in the root's hand space, regrets and strategy sums alike")
    root = np.zeros(H0, dtype=REAL)
    cdef rc_real[::1] root_v = root
    with nogil:
        for it in range(start_iteration, start_iteration + max_iterations):
            tt = it
            if dcfr == 2:
                # postflop-solver's DiscountParams, its iterations counted from 0
                ps = it - 1
                p4 = 0
                if ps > 0:
                    p4 = 1
                    while p4 * 4 <= ps:
                        p4 *= 4
                ta = ps - 1 if ps > 1 else 0
                pos_scale = pow(ta, 1.5) / (pow(ta, 1.5) + 1.0)
                neg_scale = 0.5
                w = pow((ps - p4) / (ps - p4 + 1.0), 3.0)
            elif dcfr >= 3:
                # DCFR+ / PDCFR+: the cumulative regret is discounted by d(t - 1) before the update, the predicted
                # one by d(t); d(t) = t^a / (t^a + 1) written 1 / (1 + t^-a): no inf / inf for a large alpha
                w = pow(tt, gamma)
                pos_scale = 1.0 / (1.0 + pow(tt - 1.0, -alpha))
                neg_scale = 1.0 / (1.0 + pow(tt, -alpha))
            elif dcfr:
                w = pow(tt, gamma)
                pos_scale = pow(tt, alpha) / (pow(tt, alpha) + 1.0)
                neg_scale = pow(tt, beta) / (pow(tt, beta) + 1.0)
            else:
                w = tt
            for p in range(2):
                t.round_key = <unsigned int>(2 * it + p)
                _pass(t, p, &ranges[1 - p, 0], &ranges[p, 0] if dcfr != 2 else NULL, &root_v[0], MODE_SOLVE,
                      &regrets[0], &strategy_sum[0], w, dcfr, pos_scale, neg_scale)
            done += 1
            if check_every > 0 and done % check_every == 0 and written < expl_out.shape[0]:
                e = _exploitability(t, &ranges[0, 0], H0, &strategy_sum[0], &root_v[0])
                expl_out[written] = e
                written += 1
                if target >= 0 and e <= target:
                    break
    return done, written


def exploitability(tuple layout, const rc_real[:, ::1] ranges, rc_real[::1] strategy_sum, int threads=1,
                   tuple compressed=None, tuple allin=None, _Workspace workspace=None):
    """Exploitability (chips) of the average strategy of ``strategy_sum`` (normalised per node and hand);
    ``workspace`` as in :func:`solve`."""
    cdef _Workspace ws = _workspace_for(workspace, layout, threads, allin)
    if compressed is not None:
        ws.set_compressed(*compressed)
    cdef BTree* t = &ws.t
    cdef int H0 = t.space_start[t.node_space[0] + 1] - t.space_start[t.node_space[0]]
    if ranges.shape[0] != 2 or ranges.shape[1] != H0:
        raise ValueError("ranges must be (2, H0) in the root's hand space")
    root = np.zeros(H0, dtype=REAL)
    cdef rc_real[::1] root_v = root
    cdef double out
    with nogil:
        out = _exploitability(t, &ranges[0, 0], H0, &strategy_sum[0], &root_v[0])
    return out


def root_best_values(tuple layout, const rc_real[:, ::1] ranges, rc_real[::1] strategy_sum, int player,
                     int threads=1, tuple allin=None, _Workspace workspace=None):
    """Root counterfactual values ``(H0,)`` of ``player``'s best response to the average strategy;
    ``workspace`` as in :func:`solve`."""
    cdef _Workspace ws = _workspace_for(workspace, layout, threads, allin)
    cdef BTree* t = &ws.t
    cdef int H0 = t.space_start[t.node_space[0] + 1] - t.space_start[t.node_space[0]]
    root = np.zeros(H0, dtype=REAL)
    cdef rc_real[::1] root_v = root
    with nogil:
        _pass(t, player, &ranges[1 - player, 0], NULL, &root_v[0], MODE_BEST, NULL, &strategy_sum[0], 0.0, 0, 0.0,
              0.0)
    return root


cdef class BoardLeafKernel:
    """One depth-limited spot (leaf and all-in nodes) for step-by-step solving from Python.

    Per iteration and player ``p``: :meth:`forward` writes both players' reach at the leaf / all-in nodes
    (current strategies) into ``ext_reach`` ``(2, E)``; the caller fills ``ext_vals`` ``(E,)`` with p's
    values there (value nets, equity matrix); :meth:`walk` then runs p's CFR update over the tree (same
    update as :func:`solve`) and writes p's root cfvs.  All arrays are the caller's (no allocation per call).
    """
    cdef _Workspace ws
    cdef const rc_real[:, ::1] ranges
    cdef rc_real[::1] regrets, ssum, ext_reach, ext_vals
    cdef const long long[::1] ext_off
    cdef int H0

    def __init__(self, tuple layout, const long long[::1] ext_off, const rc_real[:, ::1] ranges, rc_real[::1] regrets,
                 rc_real[::1] strategy_sum, rc_real[::1] ext_reach, rc_real[::1] ext_vals):
        self.ws = _Workspace(layout, 1, True)
        cdef BTree* t = &self.ws.t
        self.H0 = t.space_start[t.node_space[0] + 1] - t.space_start[t.node_space[0]]
        if ranges.shape[0] != 2 or ranges.shape[1] != self.H0:
            raise ValueError(f"ranges must be (2, {self.H0}) in the root's hand space")
        if regrets.shape[0] != strategy_sum.shape[0] or regrets.shape[0] == 0:
            raise ValueError("regrets and strategy sums must have the layout's (non-zero) number of entries")
        if ext_off.shape[0] != t.N or ext_reach.shape[0] != 2 * ext_vals.shape[0] or ext_vals.shape[0] == 0:
            raise ValueError("ext_off must be (N,), ext_reach (2 E,) and ext_vals (E,) with E > 0")
        self.ranges, self.regrets, self.ssum = ranges, regrets, strategy_sum
        self.ext_off, self.ext_reach, self.ext_vals = ext_off, ext_reach, ext_vals
        t.ext_off = &ext_off[0]
        t.E = ext_vals.shape[0]
        t.ext_reach = &ext_reach[0]
        t.ext_vals = &ext_vals[0]

    def forward(self):
        """Both players' reach at every leaf / all-in node into ``ext_reach`` (current strategies)."""
        cdef BTree* t = &self.ws.t
        with nogil:
            _forward(t, 0, &self.ranges[0, 0], &self.ranges[1, 0], t.stacks, &self.regrets[0])

    def walk(self, int player, double w, int dcfr, double pos, double neg, rc_real[::1] root):
        """Player ``player``'s update pass (``w``: average weight, 0 = no strategy-sum update; ``dcfr`` 0 CFR+,
        1 DCFR with regret scales ``pos``/``neg``), ``ext_vals`` holding its leaf / all-in values; its root
        cfvs (chips) go to ``root`` ``(H0,)``."""
        cdef BTree* t = &self.ws.t
        if root.shape[0] != self.H0 or player not in (0, 1) or dcfr not in (0, 1):
            raise ValueError(f"need root of length {self.H0}, player 0 or 1 and dcfr 0 or 1")
        with nogil:
            _walk(t, 0, player, &self.ranges[1 - player, 0], &self.ranges[player, 0], &root[0], t.stacks, MODE_SOLVE,
                  &self.regrets[0], &self.ssum[0], w, dcfr, pos, neg, 0)


def simd_level_16bit(int level):
    """Run the 16-bit storage's kernels on build ``level`` (2 AVX-512, 1 AVX2, 0 baseline; at most what the CPU
    has) from now on, for tests that compare the builds (they must give the same bits); below 2 the showdown
    sweeps and fold sums of eight lanes run as two of four.  Returns the level in use before."""
    if level not in (0, 1, 2):
        raise ValueError(f"level must be 0, 1 or 2, got {level}")
    return rcb_isa16_set(level)


def quantize_16bit(const rc_real[::1] x, bint signed, unsigned int key=0):
    """The 16-bit storage's encoding of one block ``x``: ``(codes, scale)`` with int16 codes (``signed``,
    regrets; step scale / 32767) or uint16 codes (strategy sums, negative entries stored as 0; step
    scale / 65535), scale = the block's largest magnitude.  ``key`` 0 rounds to nearest; another key rounds
    stochastically (unbiased), the rounding the solver uses with that key."""
    cdef Py_ssize_t n = x.shape[0]
    q = np.zeros(max(n, 1), dtype=np.int16 if signed else np.uint16)
    cdef short[::1] qs
    cdef unsigned short[::1] qu
    cdef float scale
    if n == 0:
        return q[:0], 0.0
    if signed:
        qs = q
        with nogil:
            scale = rcb_encode_i16(&qs[0], &x[0], <long>n, key)
    else:
        qu = q
        with nogil:
            scale = rcb_encode_u16(&qu[0], &x[0], <long>n, key)
    return q, float(scale)


def allin_matrix(const long long[:, ::1] pair_cards, const int[:, ::1] strengths, const unsigned char[:, ::1] live,
                 double weight):
    """All-in equity matrix ``(H, H)`` (float64) of a hand space: ``M[i, j]`` = sum over the run-outs ``r`` of
    ``weight x sign(strengths[r, i] - strengths[r, j])`` where both hands are live on ``r`` (``live[r]``, 1 when
    the hand does not hold a run-out card), 0 for hands sharing a card.  Player p's value of an all-in
    terminal is then ``contribution_p x M @ opponent_reach`` (chips).

    ``pair_cards`` ``(H, 2)``: the hands' cards; ``strengths`` ``(R, H)``: showdown class per run-out and hand
    (higher wins); ``weight``: the probability of one run-out given both hands (e.g. ``1/44`` on the turn).
    """
    cdef Py_ssize_t H = pair_cards.shape[0], R = strengths.shape[0], r, i, j
    if strengths.shape[1] != H or live.shape[0] != R or live.shape[1] != H or pair_cards.shape[1] != 2:
        raise ValueError("need pair_cards (H, 2), strengths (R, H) and live (R, H)")
    out = np.zeros((H, H), dtype=np.float64)
    wl_arr = np.zeros(H, dtype=np.float64)
    cdef double[:, ::1] M = out
    cdef double[::1] wl = wl_arr
    with nogil:
        for r in range(R):
            for j in range(H):
                wl[j] = weight if live[r, j] else 0.0
            for i in range(H):
                if live[r, i]:
                    rcb_sign_accumulate(&M[i, 0], &strengths[r, 0], &wl[0], strengths[r, i], <int>H)
        for i in range(H):
            for j in range(H):
                if pair_cards[i, 0] == pair_cards[j, 0] or pair_cards[i, 0] == pair_cards[j, 1] \
                        or pair_cards[i, 1] == pair_cards[j, 0] or pair_cards[i, 1] == pair_cards[j, 1]:
                    M[i, j] = 0.0
    return out


def bucket_sums(const rc_real[::1] x, const long long[::1] flat, double[::1] out, bint checked=False):
    """``out[flat[i]] += x[i]`` (``out`` zeroed first): reach summed per (leaf, bucket) cell, in index order
    (the order and result of ``np.bincount(flat, weights=x)``).  ``checked``: the caller has verified that
    every index is in ``[0, len(out))`` (LeafSession does once), else they are checked here."""
    cdef Py_ssize_t i, n = x.shape[0], m = out.shape[0]
    if flat.shape[0] != n:
        raise ValueError("x and flat must have one length")
    if not checked:
        for i in range(n):
            if flat[i] < 0 or flat[i] >= m:
                raise ValueError(f"bucket index {flat[i]} outside [0, {m})")
    with nogil:
        memset(&out[0], 0, m * sizeof(double))
        for i in range(n):
            out[flat[i]] += x[i]


def bucket_gather(const double[::1] table, const long long[::1] flat, const long long[::1] rows,
                  const double[::1] scale, rc_real[::1] out):
    """``out[i] = table[flat[i]] * scale[rows[i]]``: per-bucket values back to the hands (indices checked by
    the caller, as built by ``LeafSession``)."""
    cdef Py_ssize_t i, n = out.shape[0]
    if flat.shape[0] != n or rows.shape[0] != n:
        raise ValueError("flat, rows and out must have one length")
    with nogil:
        for i in range(n):
            out[i] = <rc_real>(table[flat[i]] * scale[rows[i]])


def spread_cards(const long long[::1] hands, const long long[::1] strengths, const long long[:, ::1] hand_cards):
    """Compiled ``flat_range_cfr._spread_cards`` (same order, bit for bit): ``hands`` (pair indices sorted by
    ``strengths[pair]``) reordered within each run of equal strength, greedily taking the hand whose cards
    were used least recently in the output (ties: the earlier hand), so that neighbours rarely share a card."""
    cdef Py_ssize_t n = hands.shape[0], i = 0, j, k, step, best, pos = 0
    cdef long long gap, best_gap, u0, u1
    cdef long long last_use[52]
    out = np.empty(n, dtype=np.int64)
    left_arr = np.zeros(max(n, 1), dtype=np.uint8)
    cdef long long[::1] o = out
    cdef unsigned char[::1] left = left_arr
    if hand_cards.shape[1] != 2:
        raise ValueError("hand_cards must be (pairs, 2)")
    for k in range(n):
        if hands[k] < 0 or hands[k] >= strengths.shape[0] or hands[k] >= hand_cards.shape[0]:
            raise ValueError(f"hand {hands[k]} outside the strengths / hand_cards tables")
    with nogil:
        for k in range(52):
            last_use[k] = -1000000000
        while i < n:
            j = i
            while j < n and strengths[hands[j]] == strengths[hands[i]]:
                j += 1
            for k in range(i, j):
                left[k] = 1
            for step in range(j - i):
                best, best_gap = -1, -1
                for k in range(i, j):
                    if left[k]:
                        u0 = last_use[hand_cards[hands[k], 0]]
                        u1 = last_use[hand_cards[hands[k], 1]]
                        gap = pos - (u0 if u0 > u1 else u1)
                        if gap > best_gap:
                            best_gap, best = gap, k
                left[best] = 0
                last_use[hand_cards[hands[best], 0]] = pos
                last_use[hand_cards[hands[best], 1]] = pos
                o[pos] = hands[best]
                pos += 1
            i = j
    return out
