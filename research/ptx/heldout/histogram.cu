// 256-bin histogram of bytes: per-block counts in shared memory by shared atomics, merged
// into the global histogram by global atomics.
// Origin: V. Podlozhnyuk, "Histogram calculation in CUDA" (NVIDIA, 2007), in its simpler
// form with one shared histogram per block.
// License: this project's (MIT OR Apache-2.0). Written for this project from the published
// algorithm named above; no code was copied. A held-out kernel of the energy model (issue 35,
// docs/results/model-protocol.json): never in the fit, compiled by NVRTC at run time.
extern "C" __global__ void hx_histogram(const unsigned* words, unsigned n_words, unsigned* hist) {
    __shared__ unsigned s[256];
    for (unsigned b = threadIdx.x; b < 256; b += blockDim.x) s[b] = 0;
    __syncthreads();
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n_words; i += gridDim.x * blockDim.x) {
        unsigned w = words[i];
        atomicAdd(&s[w & 0xff], 1u);
        atomicAdd(&s[(w >> 8) & 0xff], 1u);
        atomicAdd(&s[(w >> 16) & 0xff], 1u);
        atomicAdd(&s[w >> 24], 1u);
    }
    __syncthreads();
    for (unsigned b = threadIdx.x; b < 256; b += blockDim.x) atomicAdd(&hist[b], s[b]);
}
