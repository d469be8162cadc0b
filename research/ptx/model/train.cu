// The model suite's training kernels (issue 20): each runs one kind of work at throughput
// over a whole GPU, so that the costs fitted from them (by non-negative least squares over
// their Nsight Compute counts and measured dynamic energy) are the costs of work done the
// way applications do it: many warps, independent instructions, streams of memory.
// Operands are random and switch from one instruction to the next (as in applications,
// whose data toggles the datapaths): every chain cycles through per-thread random values
// (`mix` of the thread's index), and the memory kernels read and write random words.
// Every kernel stores a value per thread that depends on all its work, so nothing is
// removed by the compiler; `iters` sets the length of a launch.
// The kernels that draw or compute their operands in-kernel (compute, shared memory, L2 and
// DRAM stores) take a last argument `mask`, the data regime (issue 35): each operand is
// `pick(random, mask, k)`, the random value's bits where `mask` has ones and a constant
// `k`'s elsewhere. `mask` = 0xffffffff gives exactly the random operands of the switching
// regime; `mask` = 0 gives one value for every operand of every thread (the constant
// regime), each `k` chosen so that every chain settles on a fixed point (floats: |r| < 1;
// integers: an even multiplier, a zero XOR key). `mask` is a runtime argument, so both
// regimes run one machine code: the same instructions, none folded away
// (tests/model_ptx.rs checks each work loop against the one with the mask fixed at all ones).
// Compiled to train.ptx by `python3 ptx/nvrtc.py ptx/model/train.cu ptx/model/train.ptx`.

typedef unsigned int u32;

extern "C" {

// A 32-bit hash (the lowbias32 finalizer): the kernels' random operands and data.
__device__ __forceinline__ u32 mix(u32 x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

// A random float in [-1, 1) from a hash.
__device__ __forceinline__ float unit(u32 h) { return (float)(h >> 8) * (1.0f / 8388608.0f) - 1.0f; }

__device__ __forceinline__ u32 tid() { return blockIdx.x * blockDim.x + threadIdx.x; }

// The bits of `random` where `mask` is set, of `k` elsewhere (one LOP3).
__device__ __forceinline__ u32 pick(u32 random, u32 mask, u32 k) { return (random & mask) | (k & ~mask); }

// The constant regime's hash: unit(KONST) = -0.618 (bits 0xbf1e3636), |r| < 1 with about
// half the mantissa's bits set; as an integer, odd and nonzero.
#define KONST 0x30e4e579u

// One xorshift step of m_alu.
__host__ __device__ constexpr u32 xorshift(u32 x) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
}

// Random words over a buffer of `n` words (the memory kernels' data).
__global__ void m_fill(u32* buf, u32 n, u32 seed) {
    for (u32 j = tid(); j < n; j += gridDim.x * blockDim.x) buf[j] = mix(j ^ seed);
}

// FP32: eight independent chains x = x * r + s per thread, r and s cycling through
// random values (|r| < 1: every chain settles on a cycle of distinct values).
// Constant regime: r = s = -0.618 everywhere, each chain settles on r / (1 - r).
__global__ void m_ffma(float* out, u32 iters, u32 mask) {
    float r[8], x[8];
    for (int c = 0; c < 8; ++c) {
        r[c] = unit(pick(mix(tid() * 16 + c), mask, KONST));
        x[c] = unit(pick(mix(tid() * 16 + 8 + c), mask, KONST));
    }
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 4; ++u)
#pragma unroll
            for (int c = 0; c < 8; ++c) x[c] = fmaf(x[c], r[(c + u) & 7], r[(c + 3 * u + 1) & 7]);
    }
    float s = 0.f;
    for (int c = 0; c < 8; ++c) s += x[c];
    out[tid()] = s;
}

// FP16: eight independent HFMA2 chains, as m_ffma, on pairs of halves (constant regime:
// every half -0.618).
__global__ void m_hfma2(u32* out, u32 iters, u32 mask) {
    u32 r[8], x[8];
    for (int c = 0; c < 8; ++c) {
        unsigned short lo, hi;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(lo) : "f"(unit(pick(mix(tid() * 16 + c), mask, KONST))));
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(hi) : "f"(unit(pick(mix(tid() * 16 + 8 + c), mask, KONST))));
        r[c] = (u32)lo | ((u32)hi << 16);
        x[c] = r[c] ^ 0x00010001u;
    }
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 4; ++u)
#pragma unroll
            for (int c = 0; c < 8; ++c)
                asm volatile("fma.rn.f16x2 %0, %0, %1, %2;" : "+r"(x[c]) : "r"(r[(c + u) & 7]), "r"(r[(c + 3 * u + 1) & 7]));
    }
    u32 s = 0;
    for (int c = 0; c < 8; ++c) s ^= x[c];
    out[tid()] = s;
}

// FP64: eight independent DFMA chains, as m_ffma.
__global__ void m_dfma(double* out, u32 iters, u32 mask) {
    double r[8], x[8];
    for (int c = 0; c < 8; ++c) {
        r[c] = unit(pick(mix(tid() * 16 + c), mask, KONST)) + unit(pick(mix(tid() * 16 + 8 + c), mask, KONST)) * 1e-7;
        x[c] = unit(pick(mix(tid() * 32 + c), mask, KONST));
    }
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 4; ++u)
#pragma unroll
            for (int c = 0; c < 8; ++c) x[c] = fma(x[c], r[(c + u) & 7], r[(c + 3 * u + 1) & 7]);
    }
    double s = 0.0;
    for (int c = 0; c < 8; ++c) s += x[c];
    out[tid()] = s;
}

// Integer multiply-add: eight independent chains x = x * r + s, random r and s. Constant
// regime: r = s = KONST - 1 (8 times an odd number): x settles on r / (1 - r) mod 2^32
// within 11 steps.
__global__ void m_imad(u32* out, u32 iters, u32 mask) {
    u32 r[8], x[8];
    for (int c = 0; c < 8; ++c) {
        r[c] = pick(mix(tid() * 16 + c) | 1u, mask, KONST - 1u);
        x[c] = pick(mix(tid() * 16 + 8 + c), mask, KONST);
    }
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 4; ++u)
#pragma unroll
            for (int c = 0; c < 8; ++c) x[c] = x[c] * r[(c + u) & 7] + r[(c + 3 * u + 1) & 7];
    }
    u32 s = 0;
    for (int c = 0; c < 8; ++c) s ^= x[c];
    out[tid()] = s;
}

// Integer and logic ALU: xorshift generators (shifts, XOR, add), four per thread.
// Constant regime: x = KONST and k = KONST - xorshift(KONST), a fixed point of the step.
__global__ void m_alu(u32* out, u32 iters, u32 mask) {
    u32 x[4], k[4];
    for (int c = 0; c < 4; ++c) {
        x[c] = pick(mix(tid() * 8 + c) | 1u, mask, KONST);
        k[c] = pick(mix(tid() * 8 + 4 + c), mask, KONST - xorshift(KONST));
    }
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 4; ++u)
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                x[c] ^= x[c] << 13;
                x[c] ^= x[c] >> 17;
                x[c] ^= x[c] << 5;
                x[c] += k[(c + u) & 3];
            }
    }
    out[tid()] = x[0] ^ x[1] ^ x[2] ^ x[3];
}

// Special functions: four chains of sin.approx and four of ex2.approx on changing values
// (constant regime: r = -0.618, s settles near -0.999 and e near 0.540).
__global__ void m_mufu(float* out, u32 iters, u32 mask) {
    float s[4], e[4], r[4];
    for (int c = 0; c < 4; ++c) {
        r[c] = unit(pick(mix(tid() * 8 + c), mask, KONST));
        s[c] = unit(pick(mix(tid() * 8 + 4 + c), mask, KONST));
        e[c] = 1.0f;
    }
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 2; ++u)
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                float t;
                asm volatile("sin.approx.f32 %0, %1;" : "=f"(t) : "f"(s[c] + r[(c + u) & 3]));
                s[c] = t;
                asm volatile("ex2.approx.f32 %0, %1;" : "=f"(t) : "f"(r[(c + u + 1) & 3] - 0.5f * e[c]));
                e[c] = t;
            }
    }
    float q = 0.f;
    for (int c = 0; c < 4; ++c) q += s[c] + e[c];
    out[tid()] = q;
}

// Conversions: float to integer and back, four chains scrambled by random words
// (constant regime: x = -618, key 0).
__global__ void m_cvt(float* out, u32 iters, u32 mask) {
    float x[4];
    u32 k[4];
    for (int c = 0; c < 4; ++c) {
        x[c] = unit(pick(mix(tid() * 8 + c), mask, KONST)) * 1000.f;
        k[c] = pick(mix(tid() * 8 + 4 + c) & 0xfffffu, mask, 0u);
    }
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 4; ++u)
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                int n;
                asm volatile("cvt.rni.s32.f32 %0, %1;" : "=r"(n) : "f"(x[c]));
                asm volatile("cvt.rn.f32.s32 %0, %1;" : "=f"(x[c]) : "r"(n ^ (int)k[(c + u) & 3]));
            }
    }
    out[tid()] = x[0] + x[1] + x[2] + x[3];
}

// Warp shuffles: four chains of shfl.sync.bfly, each result XORed with a random word
// (constant regime: x = KONST in every lane, key 0).
__global__ void m_shfl(u32* out, u32 iters, u32 mask) {
    u32 x[4], k[4];
    for (int c = 0; c < 4; ++c) {
        x[c] = pick(mix(tid() * 8 + c), mask, KONST);
        k[c] = pick(mix(tid() * 8 + 4 + c), mask, 0u);
    }
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 4; ++u)
#pragma unroll
            for (int c = 0; c < 4; ++c) x[c] = __shfl_xor_sync(0xffffffffu, x[c], 1 + u) ^ k[c];
    }
    out[tid()] = x[0] ^ x[1] ^ x[2] ^ x[3];
}

// Tensor cores: four independent mma.sync m16n8k16 (FP16 in, FP32 accumulate) chains per
// warp; the A and B fragments cycle through four sets of random halves. Constant regime:
// every half of A is -79/128, B's halves alternate -79/128, +79/128 along k, so that each
// product A B is exactly 0 and the accumulators stay 0 (constant operands throughout).
__global__ void m_hmma(float* out, u32 iters, u32 mask) {
    u32 a[4][4], b[4][2];
    for (int s = 0; s < 4; ++s)
        for (int j = 0; j < 6; ++j) {
            unsigned short lo, hi;
            asm("cvt.rn.f16.f32 %0, %1;" : "=h"(lo) : "f"(unit(mix(tid() * 64 + s * 12 + 2 * j))));
            asm("cvt.rn.f16.f32 %0, %1;" : "=h"(hi) : "f"(unit(mix(tid() * 64 + s * 12 + 2 * j + 1))));
            u32 w = (u32)lo | ((u32)hi << 16);
            if (j < 4)
                a[s][j] = pick(w, mask, 0xb8f0b8f0u);
            else
                b[s][j - 4] = pick(w, mask, 0x38f0b8f0u);
        }
    float d[4][4];
    for (int c = 0; c < 4; ++c)
        for (int r = 0; r < 4; ++r) d[c][r] = 0.f;
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 4; ++u)
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                const int s = (c + u) & 3, t = (c + 2 * u + 1) & 3;
                asm volatile(
                    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                    "{%0,%1,%2,%3};"
                    : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
                    : "r"(a[s][0]), "r"(a[s][1]), "r"(a[s][2]), "r"(a[s][3]), "r"(b[t][0]), "r"(b[t][1]));
            }
    }
    float q = 0.f;
    for (int c = 0; c < 4; ++c)
        for (int r = 0; r < 4; ++r) q += d[c][r];
    out[tid()] = q;
}

// FP64 tensor cores (DMMA): four independent mma.sync m8n8k4 (FP64 in and accumulate)
// chains per warp; the A and B elements cycle through four sets of random doubles in
// [-1, 1). Constant regime: every A element is -0.618 and B's elements alternate +0.618,
// -0.618 along k (k is the lane's index mod 4), so that each product A B is exactly 0 and
// the accumulators stay 0 (constant operands throughout).
__global__ void m_dmma(double* out, u32 iters, u32 mask) {
    double a[4], b[4];
    const double konst = 0.6180339887498949;
    const bool odd_k = (threadIdx.x & 1) != 0;
    for (int s = 0; s < 4; ++s) {
        const u32 ra = pick(mix(tid() * 16 + 2 * s), mask, 0u), rb = pick(mix(tid() * 16 + 2 * s + 1), mask, 0u);
        // mask 0: ra = rb = 0, the constants; else random in [-1, 1).
        a[s] = ra == 0u ? -konst : (double)unit(ra);
        b[s] = rb == 0u ? (odd_k ? -konst : konst) : (double)unit(rb);
    }
    double d[4][2];
    for (int c = 0; c < 4; ++c) d[c][0] = d[c][1] = 0.0;
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 4; ++u)
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                const int s = (c + u) & 3, t = (c + 2 * u + 1) & 3;
                asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                             : "+d"(d[c][0]), "+d"(d[c][1])
                             : "d"(a[s]), "d"(b[t]));
            }
    }
    double q = 0.0;
    for (int c = 0; c < 4; ++c) q += d[c][0] + d[c][1];
    out[tid()] = q;
}

// Shared-memory loads: 128-bit loads of random words from a 16 KiB block buffer, XORed
// (constant regime: every word KONST).
__global__ void m_shared_ld(u32* out, u32 iters, u32 mask) {
    __shared__ uint4 buf[1024];
    for (u32 j = threadIdx.x; j < 1024; j += blockDim.x)
        buf[j] = make_uint4(pick(mix(4 * j), mask, KONST), pick(mix(4 * j + 1), mask, KONST),
                            pick(mix(4 * j + 2), mask, KONST), pick(mix(4 * j + 3), mask, KONST));
    __syncthreads();
    uint4 acc = make_uint4(0, 0, 0, 0);
    u32 idx = threadIdx.x;
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 8; ++u) {
            uint4 v = buf[(idx + u * 32) & 1023];
            acc.x ^= v.x;
            acc.y ^= v.y;
            acc.z ^= v.z;
            acc.w ^= v.w;
        }
        idx += 257;
    }
    out[tid()] = acc.x ^ acc.y ^ acc.z ^ acc.w;
}

// Shared-memory stores: 32-bit stores of changing random words (volatile: every store stays).
// Constant regime: every word stored is KONST (no salt, the generator's step the identity).
__global__ void m_shared_st(u32* out, u32 iters, u32 mask) {
    __shared__ u32 buf[4096];
    volatile u32* vbuf = buf;
    u32 idx = threadIdx.x;
    u32 v = pick(mix(tid()), mask, KONST);
    const u32 a = pick(1664525u, mask, 1u), b = pick(1013904223u, mask, 0u);
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 32; ++u) vbuf[(idx + u * 128) & 4095] = v ^ (u * 0x9e3779b9u & mask);
        idx += 257;
        v = v * a + b;
    }
    __syncthreads();
    out[tid()] = buf[(threadIdx.x * 5) & 4095];
}

// Global loads that hit L1: each block reads its own 8 KiB region of random words over and
// over, coalesced (128-bit loads).
__global__ void m_l1_ld(u32* out, const uint4* in, u32 iters) {
    const uint4* region = in + blockIdx.x * 512;
    uint4 acc = make_uint4(0, 0, 0, 0);
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 2; ++u) {
            uint4 v = __ldca(&region[(threadIdx.x + u * 256 + i) & 511]);
            acc.x ^= v.x;
            acc.y ^= v.y;
            acc.z ^= v.z;
            acc.w ^= v.w;
        }
    }
    out[tid()] = acc.x ^ acc.y ^ acc.z ^ acc.w;
}

// Global loads that hit L1, scattered: each thread of a warp loads a word from another
// 128-byte line of the block's 8 KiB region (32 sectors per request).
__global__ void m_l1_scatter(u32* out, const u32* in, u32 iters) {
    const u32* region = in + blockIdx.x * 2048;
    u32 acc = 0;
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 4; ++u) acc ^= __ldca(&region[(threadIdx.x * 32 + u * 8 + i) & 2047]);
    }
    out[tid()] = acc;
}

// Global loads that hit L2 (bypassing L1): the grid sweeps an array of `n4` uint4s of
// random words (sized to stay in L2) `iters` times.
__global__ void m_l2_ld(u32* out, const uint4* in, u32 n4, u32 iters) {
    u32 stride = gridDim.x * blockDim.x;
    uint4 acc = make_uint4(0, 0, 0, 0);
    for (u32 i = 0; i < iters; ++i)
        for (u32 j = tid(); j < n4; j += stride) {
            uint4 v = __ldcg(&in[j]);
            acc.x ^= v.x;
            acc.y ^= v.y;
            acc.z ^= v.z;
            acc.w ^= v.w;
        }
    out[tid()] = acc.x ^ acc.y ^ acc.z ^ acc.w;
}

// Global stores that stay in L2: the grid writes random words over an L2-sized array
// `iters` times (constant regime: every word KONST).
__global__ void m_l2_st(uint4* buf, u32 n4, u32 iters, u32 mask) {
    u32 stride = gridDim.x * blockDim.x;
    u32 v = pick(mix(tid()), mask, KONST);
    const u32 a = pick(1664525u, mask, 1u), b = pick(1013904223u, mask, 0u);
    for (u32 i = 0; i < iters; ++i) {
        for (u32 j = tid(); j < n4; j += stride)
            __stcg(&buf[j], make_uint4(v, v ^ (j & mask), v + j * (mask & 1u), v ^ (i & mask)));
        v = v * a + b;
    }
}

// DRAM reads: one sweep over an array of random words far larger than L2; `flops` FFMAs
// per element loaded (0 for a pure stream).
__global__ void m_dram_ld(float* out, const float4* in, u32 n4, u32 flops) {
    u32 stride = gridDim.x * blockDim.x;
    float4 acc = make_float4(0, 0, 0, 0);
    for (u32 j = tid(); j < n4; j += stride) {
        float4 v = in[j];
        for (u32 f = 0; f < flops; ++f) {
            v.x = fmaf(v.x, 0.999f, acc.y);
            v.y = fmaf(v.y, 0.999f, acc.z);
            v.z = fmaf(v.z, 0.999f, acc.w);
            v.w = fmaf(v.w, 0.999f, acc.x);
        }
        acc.x += v.x;
        acc.y += v.y;
        acc.z += v.z;
        acc.w += v.w;
    }
    out[tid()] = acc.x + acc.y + acc.z + acc.w;
}

// DRAM writes: one sweep writing random words over an array far larger than L2 (constant
// regime: every word KONST).
__global__ void m_dram_st(uint4* buf, u32 n4, u32 seed, u32 mask) {
    u32 stride = gridDim.x * blockDim.x;
    u32 v = pick(mix(tid() ^ seed), mask, KONST);
    const u32 a = pick(1664525u, mask, 1u), b = pick(1013904223u, mask, 0u);
    for (u32 j = tid(); j < n4; j += stride) {
        buf[j] = make_uint4(v, v ^ (j & mask), v + j * (mask & 1u), v ^ (seed & mask));
        v = v * a + b;
    }
}

// DRAM copy: one sweep reading one array and writing another, both far larger than L2.
__global__ void m_dram_copy(uint4* dst, const uint4* src, u32 n4) {
    u32 stride = gridDim.x * blockDim.x;
    for (u32 j = tid(); j < n4; j += stride) dst[j] = src[j];
}

// Resident, waiting warps: `iters` sleeps of about a microsecond (SM cycles with little
// issued work).
__global__ void m_sleep(u32* out, u32 iters) {
    u32 n = 0;
    for (u32 i = 0; i < iters; ++i) {
        __nanosleep(1000);
        n += i;
    }
    out[tid()] = n;
}

}  // extern "C"
