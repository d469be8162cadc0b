// One Jacobi sweep of the 2D 5-point Laplace stencil over an nx by ny grid of floats
// (boundary cells copied).
// Origin: the textbook stencil, e.g. D. Kirk, W. Hwu, "Programming Massively Parallel
// Processors", the stencil chapter (one thread per output cell, loads through L1).
// License: this project's (MIT OR Apache-2.0). Written for this project from the published
// algorithm named above; no code was copied. A held-out kernel of the energy model (issue 35,
// docs/results/model-protocol.json): never in the fit, compiled by NVRTC at run time.
extern "C" __global__ void hx_stencil5(const float* in, float* out, int nx, int ny) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= nx || y >= ny) return;
    int c = y * nx + x;
    if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) {
        out[c] = in[c];
        return;
    }
    out[c] = 0.25f * (in[c - 1] + in[c + 1] + in[c - nx] + in[c + nx]);
}
