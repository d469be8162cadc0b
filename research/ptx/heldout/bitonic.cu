// Bitonic sort of unsigned keys in global memory: one compare-exchange step (stage k,
// distance j) per launch, log2(n) (log2(n) + 1) / 2 launches per sort.
// Origin: K. E. Batcher, "Sorting networks and their applications" (AFIPS 1968), in the
// usual one-thread-per-element GPU form.
// License: this project's (MIT OR Apache-2.0). Written for this project from the published
// algorithm named above; no code was copied. A held-out kernel of the energy model (issue 35,
// docs/results/model-protocol.json): never in the fit, compiled by NVRTC at run time.
extern "C" __global__ void hx_bitonic_step(unsigned* keys, unsigned j, unsigned k) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned partner = i ^ j;
    if (partner > i) {
        unsigned a = keys[i], b = keys[partner];
        bool ascending = (i & k) == 0;
        if ((a > b) == ascending) {
            keys[i] = b;
            keys[partner] = a;
        }
    }
}

// The copy of the original keys that starts every sort (so that each sort sees them).
extern "C" __global__ void hx_copy(unsigned* dst, const unsigned* src, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i];
}
