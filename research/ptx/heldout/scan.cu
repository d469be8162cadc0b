// Exclusive prefix sum of unsigned words, one scan per block of 512 elements.
// Origin: the work-efficient (Blelloch) scan of M. Harris, S. Sengupta, J. D. Owens,
// "Parallel Prefix Sum (Scan) with CUDA", GPU Gems 3, ch. 39 (2007): up-sweep, clear,
// down-sweep, in shared memory.
// License: this project's (MIT OR Apache-2.0). Written for this project from the published
// algorithm named above; no code was copied. A held-out kernel of the energy model (issue 35,
// docs/results/model-protocol.json): never in the fit, compiled by NVRTC at run time.
extern "C" __global__ void hx_scan(const unsigned* in, unsigned* out) {
    __shared__ unsigned s[512];
    unsigned t = threadIdx.x;
    const unsigned* block_in = in + blockIdx.x * 512;
    s[2 * t] = block_in[2 * t];
    s[2 * t + 1] = block_in[2 * t + 1];
    unsigned offset = 1;
    for (unsigned d = 256; d > 0; d >>= 1) {
        __syncthreads();
        if (t < d) {
            unsigned a = offset * (2 * t + 1) - 1, b = offset * (2 * t + 2) - 1;
            s[b] += s[a];
        }
        offset <<= 1;
    }
    if (t == 0) s[511] = 0;
    for (unsigned d = 1; d < 512; d <<= 1) {
        offset >>= 1;
        __syncthreads();
        if (t < d) {
            unsigned a = offset * (2 * t + 1) - 1, b = offset * (2 * t + 2) - 1;
            unsigned x = s[a];
            s[a] = s[b];
            s[b] += x;
        }
    }
    __syncthreads();
    out[blockIdx.x * 512 + 2 * t] = s[2 * t];
    out[blockIdx.x * 512 + 2 * t + 1] = s[2 * t + 1];
}
