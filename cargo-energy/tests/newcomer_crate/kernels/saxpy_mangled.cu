// saxpy in CUDA C without extern "C": C++ mangles the name (_Z5saxpyjfPKfPf).
__global__ void saxpy(unsigned int n, float a, const float *x, float *y) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}
