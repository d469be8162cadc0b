// saxpy in CUDA C: y[i] = a * x[i] + y[i], one element per thread.
extern "C" __global__ void saxpy(unsigned int n, float a, const float *x, float *y) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}
