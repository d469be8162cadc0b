// All-pairs N-body accelerations: each block stages 256 bodies at a time in shared memory,
// each thread sums the softened 1/r^3 pulls on its body (rsqrtf).
// Origin: L. Nyland, M. Harris, J. Prins, "Fast N-Body Simulation with CUDA", GPU Gems 3,
// ch. 31 (2007).
// License: this project's (MIT OR Apache-2.0). Written for this project from the published
// algorithm named above; no code was copied. A held-out kernel of the energy model (issue 35,
// docs/results/model-protocol.json): never in the fit, compiled by NVRTC at run time.
extern "C" __global__ void hx_nbody(const float4* pos, float4* acc, int n, float soft2) {
    __shared__ float4 tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 me = i < n ? pos[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float3 a = make_float3(0.0f, 0.0f, 0.0f);
    for (int base = 0; base < n; base += 256) {
        int j = base + threadIdx.x;
        tile[threadIdx.x] = j < n ? pos[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        __syncthreads();
        for (int k = 0; k < 256; ++k) {
            float4 o = tile[k];
            float dx = o.x - me.x, dy = o.y - me.y, dz = o.z - me.z;
            float inv = rsqrtf(dx * dx + dy * dy + dz * dz + soft2);
            float s = o.w * inv * inv * inv;
            a.x += dx * s;
            a.y += dy * s;
            a.z += dz * s;
        }
        __syncthreads();
    }
    if (i < n) acc[i] = make_float4(a.x, a.y, a.z, 0.0f);
}
