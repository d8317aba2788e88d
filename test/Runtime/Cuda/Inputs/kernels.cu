// The CUDA twins of test/Runtime/Vulkan/Inputs/{add,rowsum}.spvasm, for the
// hand-built CUDA artifacts scripts/gpu-check.sh runs on a lent GPU (the
// bare-pointer ABI: one pointer per buffer). The sizes are compile-time:
// -DN=... for add; -DROWS=... -DCOLS=... for rowsum.
#ifndef N
#define N 1
#endif
#ifndef ROWS
#define ROWS 1
#endif
#ifndef COLS
#define COLS 1
#endif

// c = a + b, tiled: block w of 64 threads covers [256 w, 256 w + 256).
extern "C" __global__ void add(const float *a, const float *b, float *c) {
  for (unsigned k = 0; k < 4; ++k) {
    unsigned i = blockIdx.x * 256 + k * 64 + threadIdx.x;
    if (i < N)
      c[i] = a[i] + b[i];
  }
}

// out[r] = sum of row r of x [ROWS, COLS]: block r of 64 threads, a
// shared-memory tree with a barrier per level.
extern "C" __global__ void rowsum(const float *x, float *out) {
  __shared__ float tmp[64];
  unsigned t = threadIdx.x, row = blockIdx.x;
  float acc = 0;
  for (unsigned j = t; j < COLS; j += 64)
    acc += x[row * COLS + j];
  tmp[t] = acc;
  __syncthreads();
  for (unsigned s = 32; s > 0; s >>= 1) {
    if (t < s)
      tmp[t] += tmp[t + s];
    __syncthreads();
  }
  if (t == 0)
    out[row] = tmp[0];
}
