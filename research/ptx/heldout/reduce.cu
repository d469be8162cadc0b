// Tree reduction of floats, one partial sum per block.
// Origin: M. Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007), kernel 6
// (several elements per thread, sequential addressing), with a warp-shuffle tail.
// License: this project's (MIT OR Apache-2.0). Written for this project from the published
// algorithm named above; no code was copied. A held-out kernel of the energy model (issue 35,
// docs/results/model-protocol.json): never in the fit, compiled by NVRTC at run time.
extern "C" __global__ void hx_reduce(const float* in, float* partial, unsigned n) {
    __shared__ float s[256];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * 512 + t;
    unsigned grid = gridDim.x * 512;
    float sum = 0.0f;
    while (i < n) {
        sum += in[i];
        if (i + 256 < n) sum += in[i + 256];
        i += grid;
    }
    s[t] = sum;
    __syncthreads();
    for (unsigned k = 128; k > 16; k >>= 1) {
        if (t < k) s[t] = sum = sum + s[t + k];
        __syncthreads();
    }
    if (t < 32) {
        for (int off = 16; off > 0; off >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, off);
        if (t == 0) partial[blockIdx.x] = sum;
    }
}
