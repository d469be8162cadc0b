// Black-Scholes prices of European calls and puts, one option per thread (grid-stride),
// with the Abramowitz-Stegun polynomial for the normal CDF.
// Origin: F. Black, M. Scholes (1973); the CDF approximation of M. Abramowitz, I. Stegun,
// "Handbook of Mathematical Functions", 26.2.17, as in J. Hull, "Options, Futures and Other
// Derivatives".
// License: this project's (MIT OR Apache-2.0). Written for this project from the published
// algorithm named above; no code was copied. A held-out kernel of the energy model (issue 35,
// docs/results/model-protocol.json): never in the fit, compiled by NVRTC at run time.
__device__ float cnd(float d) {
    const float a1 = 0.31938153f, a2 = -0.356563782f, a3 = 1.781477937f, a4 = -1.821255978f,
                a5 = 1.330274429f, rsqrt2pi = 0.39894228040143267794f;
    float k = 1.0f / (1.0f + 0.2316419f * fabsf(d));
    float c = rsqrt2pi * expf(-0.5f * d * d) * (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));
    return d > 0.0f ? 1.0f - c : c;
}

extern "C" __global__ void hx_black_scholes(float* call, float* put, const float* spot, const float* strike,
                                            const float* years, float rate, float vol, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float s = spot[i], x = strike[i], t = years[i];
        float sqrt_t = sqrtf(t);
        float d1 = (logf(s / x) + (rate + 0.5f * vol * vol) * t) / (vol * sqrt_t);
        float d2 = d1 - vol * sqrt_t;
        float discount = expf(-rate * t);
        call[i] = s * cnd(d1) - x * discount * cnd(d2);
        put[i] = x * discount * (1.0f - cnd(d2)) - s * (1.0f - cnd(d1));
    }
}
