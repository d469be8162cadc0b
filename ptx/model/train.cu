// The model suite's training kernels (issue 20): each runs one kind of work at throughput
// over a whole GPU, so that the costs fitted from them (by non-negative least squares over
// their Nsight Compute counts and measured dynamic energy) are the costs of work done the
// way applications do it: many warps, independent instructions, streams of memory.
// Every kernel stores a value per thread that depends on all its work, so nothing is
// removed by the compiler; `iters` sets the length of a launch.
// Compiled to train.ptx by `python3 ptx/nvrtc.py ptx/model/train.cu ptx/model/train.ptx`.

typedef unsigned int u32;

extern "C" {

// FP32: eight independent FFMA chains per thread.
__global__ void m_ffma(float* out, u32 iters, float a, float b) {
    float x[8];
    for (int c = 0; c < 8; ++c) x[c] = threadIdx.x * 1e-3f + c;
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 4; ++u)
#pragma unroll
            for (int c = 0; c < 8; ++c) x[c] = fmaf(x[c], a, b);
    }
    float s = 0.f;
    for (int c = 0; c < 8; ++c) s += x[c];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// FP16: eight independent HFMA2 chains per thread (two halves each).
__global__ void m_hfma2(u32* out, u32 iters, u32 a, u32 b) {
    u32 x[8];
    for (int c = 0; c < 8; ++c) x[c] = 0x3c003c00u + threadIdx.x + c;
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 4; ++u)
#pragma unroll
            for (int c = 0; c < 8; ++c) asm volatile("fma.rn.f16x2 %0, %0, %1, %2;" : "+r"(x[c]) : "r"(a), "r"(b));
    }
    u32 s = 0;
    for (int c = 0; c < 8; ++c) s ^= x[c];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// FP64: eight independent DFMA chains per thread.
__global__ void m_dfma(double* out, u32 iters, double a, double b) {
    double x[8];
    for (int c = 0; c < 8; ++c) x[c] = threadIdx.x * 1e-3 + c;
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int c = 0; c < 8; ++c) x[c] = fma(x[c], a, b);
    }
    double s = 0.0;
    for (int c = 0; c < 8; ++c) s += x[c];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// Integer multiply-add: eight independent IMAD chains per thread.
__global__ void m_imad(u32* out, u32 iters, u32 a, u32 b) {
    u32 x[8];
    for (int c = 0; c < 8; ++c) x[c] = threadIdx.x * 2654435761u + c;
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 4; ++u)
#pragma unroll
            for (int c = 0; c < 8; ++c) x[c] = x[c] * a + b;
    }
    u32 s = 0;
    for (int c = 0; c < 8; ++c) s ^= x[c];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// Integer and logic ALU: xorshift generators (shifts, XOR, add), four per thread.
__global__ void m_alu(u32* out, u32 iters, u32 k) {
    u32 x[4];
    for (int c = 0; c < 4; ++c) x[c] = threadIdx.x * 2654435761u + c + 1;
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 4; ++u)
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                x[c] ^= x[c] << 13;
                x[c] ^= x[c] >> 17;
                x[c] ^= x[c] << 5;
                x[c] += k;
            }
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x[0] ^ x[1] ^ x[2] ^ x[3];
}

// Special functions: four chains of sin.approx and four of ex2.approx (each with an FMUL).
__global__ void m_mufu(float* out, u32 iters, float k) {
    float s[4], e[4];
    for (int c = 0; c < 4; ++c) {
        s[c] = threadIdx.x * 1e-3f + c;
        e[c] = 0.25f * c;
    }
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 2; ++u)
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                float t;
                asm volatile("sin.approx.f32 %0, %1;" : "=f"(t) : "f"(s[c]));
                s[c] = t * k;
                asm volatile("ex2.approx.f32 %0, %1;" : "=f"(t) : "f"(e[c]));
                e[c] = t * 0.5f;
            }
    }
    float r = 0.f;
    for (int c = 0; c < 4; ++c) r += s[c] + e[c];
    out[blockIdx.x * blockDim.x + threadIdx.x] = r;
}

// Conversions: float to integer and back, four chains per thread.
__global__ void m_cvt(float* out, u32 iters, float k) {
    float x[4];
    for (int c = 0; c < 4; ++c) x[c] = threadIdx.x + c * 7.f;
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 4; ++u)
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                int n;
                asm volatile("cvt.rni.s32.f32 %0, %1;" : "=r"(n) : "f"(x[c] * k));
                asm volatile("cvt.rn.f32.s32 %0, %1;" : "=f"(x[c]) : "r"(n));
            }
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x[0] + x[1] + x[2] + x[3];
}

// Warp shuffles: four chains of shfl.sync.bfly.
__global__ void m_shfl(u32* out, u32 iters) {
    u32 x[4];
    for (int c = 0; c < 4; ++c) x[c] = threadIdx.x * 7u + c;
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 4; ++u)
#pragma unroll
            for (int c = 0; c < 4; ++c) x[c] = __shfl_xor_sync(0xffffffffu, x[c], 1 + (u & 3)) + 1u;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x[0] ^ x[1] ^ x[2] ^ x[3];
}

// Tensor cores: four independent mma.sync m16n8k16 (f16 in, f32 accumulate) chains per warp.
__global__ void m_hmma(float* out, u32 iters, u32 a_bits) {
    u32 a0 = a_bits ^ threadIdx.x, a1 = a_bits, a2 = a_bits ^ (threadIdx.x << 16), a3 = a_bits;
    u32 b0 = a_bits, b1 = a_bits ^ threadIdx.x;
    float d[4][4];
    for (int c = 0; c < 4; ++c)
        for (int r = 0; r < 4; ++r) d[c][r] = 0.f;
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int c = 0; c < 4; ++c)
            asm volatile(
                "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                "{%0,%1,%2,%3};"
                : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
                : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
    float s = 0.f;
    for (int c = 0; c < 4; ++c)
        for (int r = 0; r < 4; ++r) s += d[c][r];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// Shared-memory loads: 128-bit loads from a 16 KiB block buffer, summed.
__global__ void m_shared_ld(float* out, u32 iters) {
    __shared__ float4 buf[1024];
    for (u32 j = threadIdx.x; j < 1024; j += blockDim.x) buf[j] = make_float4(j, j + 1, j + 2, j + 3);
    __syncthreads();
    float4 acc = make_float4(0, 0, 0, 0);
    u32 idx = threadIdx.x;
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 8; ++u) {
            float4 v = buf[(idx + u * 32) & 1023];
            acc.x += v.x;
            acc.y += v.y;
            acc.z += v.z;
            acc.w += v.w;
        }
        idx += 256;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc.x + acc.y + acc.z + acc.w;
}

// Shared-memory stores: 128-bit stores to a 16 KiB block buffer (volatile: every store stays).
__global__ void m_shared_st(float* out, u32 iters) {
    __shared__ float4 buf[1024];
    volatile float4* vbuf = buf;
    u32 idx = threadIdx.x;
    float v = threadIdx.x;
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 8; ++u) {
            volatile float4* p = &vbuf[(idx + u * 32) & 1023];
            p->x = v;
            p->y = v;
            p->z = v;
            p->w = v;
        }
        idx += 256;
        v += 1.f;
    }
    __syncthreads();
    float4 r = buf[(threadIdx.x * 5) & 1023];
    out[blockIdx.x * blockDim.x + threadIdx.x] = r.x + r.w;
}

// Global loads that hit L1: each block reads its own 8 KiB region over and over.
__global__ void m_l1_ld(float* out, const float4* in, u32 iters) {
    const float4* region = in + blockIdx.x * 512;
    float4 acc = make_float4(0, 0, 0, 0);
    for (u32 i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 2; ++u) {
            float4 v = __ldca(&region[(threadIdx.x + u * 256 + i) & 511]);
            acc.x += v.x;
            acc.y += v.y;
            acc.z += v.z;
            acc.w += v.w;
        }
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc.x + acc.y + acc.z + acc.w;
}

// Global loads that hit L2 (bypassing L1): the grid sweeps an array of `n4` float4s
// (sized to stay in L2) `iters` times.
__global__ void m_l2_ld(float* out, const float4* in, u32 n4, u32 iters) {
    u32 stride = gridDim.x * blockDim.x;
    float4 acc = make_float4(0, 0, 0, 0);
    for (u32 i = 0; i < iters; ++i)
        for (u32 j = blockIdx.x * blockDim.x + threadIdx.x; j < n4; j += stride) {
            float4 v = __ldcg(&in[j]);
            acc.x += v.x;
            acc.y += v.y;
            acc.z += v.z;
            acc.w += v.w;
        }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc.x + acc.y + acc.z + acc.w;
}

// Global stores that stay in L2: the grid writes an L2-sized array `iters` times.
__global__ void m_l2_st(float4* buf, u32 n4, u32 iters) {
    u32 stride = gridDim.x * blockDim.x;
    for (u32 i = 0; i < iters; ++i)
        for (u32 j = blockIdx.x * blockDim.x + threadIdx.x; j < n4; j += stride)
            __stcg(&buf[j], make_float4(i, j, i + 1, j + 1));
}

// DRAM reads: one sweep over an array far larger than L2, summed; `flops` FFMAs per
// element loaded (0 for a pure stream).
__global__ void m_dram_ld(float* out, const float4* in, u32 n4, u32 flops) {
    u32 stride = gridDim.x * blockDim.x;
    float4 acc = make_float4(0, 0, 0, 0);
    for (u32 j = blockIdx.x * blockDim.x + threadIdx.x; j < n4; j += stride) {
        float4 v = in[j];
        for (u32 f = 0; f < flops; ++f) {
            v.x = fmaf(v.x, 0.999f, 1e-3f);
            v.y = fmaf(v.y, 0.999f, 1e-3f);
            v.z = fmaf(v.z, 0.999f, 1e-3f);
            v.w = fmaf(v.w, 0.999f, 1e-3f);
        }
        acc.x += v.x;
        acc.y += v.y;
        acc.z += v.z;
        acc.w += v.w;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc.x + acc.y + acc.z + acc.w;
}

// DRAM writes: one sweep writing an array far larger than L2.
__global__ void m_dram_st(float4* buf, u32 n4, float v) {
    u32 stride = gridDim.x * blockDim.x;
    for (u32 j = blockIdx.x * blockDim.x + threadIdx.x; j < n4; j += stride) buf[j] = make_float4(v, j, v, j);
}

// DRAM copy: one sweep reading one array and writing another, both far larger than L2.
__global__ void m_dram_copy(float4* dst, const float4* src, u32 n4) {
    u32 stride = gridDim.x * blockDim.x;
    for (u32 j = blockIdx.x * blockDim.x + threadIdx.x; j < n4; j += stride) dst[j] = src[j];
}

// Resident, waiting warps: `iters` sleeps of about a microsecond (SM cycles with little
// issued work).
__global__ void m_sleep(u32* out, u32 iters) {
    u32 n = 0;
    for (u32 i = 0; i < iters; ++i) {
        __nanosleep(1000);
        n += i;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = n;
}

}  // extern "C"
