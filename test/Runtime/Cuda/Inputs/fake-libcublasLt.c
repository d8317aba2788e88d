/* A stand-in for libcublasLt with which the CUDA device's cublas.matmul
   steps run where there is no GPU (cublas.test; LOOM_CUBLASLT_LIBRARY
   points at it), beside fake-libcuda.c (whose device memory is host
   memory). It implements what cublasLt.h documents for the calls the
   runtime makes, independently of the runtime's encoding: column-major
   matrices of rows x cols with a leading dimension, strided batches,
   op(A) and op(B) by CUBLASLT_MATMUL_DESC_TRANSA/B, D = alpha op(A) op(B) +
   beta C, then the epilogue: the bias (one element per row of D) and ReLU
   or GELU (the tanh approximation). A product whose sizes do not agree is
   CUBLAS_STATUS_INVALID_VALUE. It computes when the product is enqueued, so
   the test runs without CUDA graphs (LOOM_GRAPHS=0). FAKE_CUBLAS_LOG names
   a file that gets one line per descriptor and product. Not cuBLASLt: the
   test of the runtime's calls into it. */
#include "fake-narrow.h"
#include "fake-note.h"
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OK = 0, INVALID_VALUE = 7, NOT_SUPPORTED = 15 };

static void note(const char *format, ...) {
  va_list args;
  va_start(args, format);
  fake_note("FAKE_CUBLAS_LOG", format, args);
  va_end(args);
}

typedef struct {
  int compute, scale;
  int32_t transa, transb;
  uint32_t epilogue;
  const void *bias;
} desc;

typedef struct {
  int type;
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch;
  int64_t stride;
} layout;

int cublasLtCreate(void **h) {
  *h = malloc(1);
  note("cublasLtCreate");
  return OK;
}
int cublasLtDestroy(void *h) {
  free(h);
  return OK;
}
const char *cublasLtGetStatusName(int s) {
  return s == INVALID_VALUE ? "CUBLAS_STATUS_INVALID_VALUE"
                            : "CUBLAS_STATUS_NOT_SUPPORTED";
}
int cublasLtMatmulDescCreate(desc **d, int compute, int scale) {
  *d = calloc(1, sizeof(desc));
  (*d)->compute = compute;
  (*d)->scale = scale;
  (*d)->epilogue = 1;
  return OK;
}
int cublasLtMatmulDescDestroy(desc *d) {
  free(d);
  return OK;
}
int cublasLtMatmulDescSetAttribute(desc *d, int attr, const void *buf,
                                   size_t size) {
  switch (attr) {
  case 3: /* TRANSA */
  case 4: /* TRANSB */
    if (size != sizeof(int32_t))
      return INVALID_VALUE;
    memcpy(attr == 3 ? &d->transa : &d->transb, buf, size);
    return OK;
  case 7: /* EPILOGUE */
    if (size != sizeof(uint32_t))
      return INVALID_VALUE;
    memcpy(&d->epilogue, buf, size);
    return OK;
  case 8: /* BIAS_POINTER */
    if (size != sizeof(void *))
      return INVALID_VALUE;
    memcpy(&d->bias, buf, size);
    return OK;
  }
  return NOT_SUPPORTED;
}
int cublasLtMatrixLayoutCreate(layout **l, int type, uint64_t rows,
                               uint64_t cols, int64_t ld) {
  *l = calloc(1, sizeof(layout));
  **l = (layout){type, rows, cols, ld, 1, 0};
  return ld < (int64_t)rows ? INVALID_VALUE : OK;
}
int cublasLtMatrixLayoutDestroy(layout *l) {
  free(l);
  return OK;
}
int cublasLtMatrixLayoutSetAttribute(layout *l, int attr, const void *buf,
                                     size_t size) {
  if (attr == 5 && size == sizeof(int32_t)) /* BATCH_COUNT */
    memcpy(&l->batch, buf, size);
  else if (attr == 6 && size == sizeof(int64_t)) /* STRIDED_BATCH_OFFSET */
    memcpy(&l->stride, buf, size);
  else
    return INVALID_VALUE;
  return OK;
}
/* The preference: the most workspace, the least alignment of A, B, C, D. */
typedef struct {
  uint64_t workspace;
  uint32_t alignment[4];
} preference;

int cublasLtMatmulPreferenceCreate(preference **p) {
  *p = calloc(1, sizeof(preference));
  for (int i = 0; i < 4; ++i)
    (*p)->alignment[i] = 256;
  return OK;
}
int cublasLtMatmulPreferenceDestroy(preference *p) {
  free(p);
  return OK;
}
int cublasLtMatmulPreferenceSetAttribute(preference *p, int attr,
                                         const void *buf, size_t size) {
  if (attr == 1 && size == sizeof(uint64_t)) /* MAX_WORKSPACE_BYTES */
    memcpy(&p->workspace, buf, size);
  else if (attr >= 5 && attr <= 8 && size == sizeof(uint32_t))
    memcpy(&p->alignment[attr - 5], buf, size); /* MIN_ALIGNMENT_A..D */
  else
    return INVALID_VALUE;
  return OK;
}

typedef struct {
  uint64_t data[8];
  size_t workspaceSize;
  int state;
  float wavesCount;
  int reserved[4];
} heuristic;

static void describe(const char *name, const layout *l) {
  note("  %s: type %d, %llu x %llu, ld %lld, batch %d, stride %lld", name,
       l->type, (unsigned long long)l->rows, (unsigned long long)l->cols,
       (long long)l->ld, l->batch, (long long)l->stride);
}

int cublasLtMatmulAlgoGetHeuristic(void *h, desc *d, layout *a, layout *b,
                                   layout *c, layout *dl, preference *pref,
                                   int requested, heuristic *out, int *found) {
  note("heuristic: compute %d, scale %d, transa %d, transb %d, epilogue %u, "
       "workspace up to %llu, alignment %u %u %u %u",
       d->compute, d->scale, d->transa, d->transb, d->epilogue,
       (unsigned long long)pref->workspace, pref->alignment[0],
       pref->alignment[1], pref->alignment[2], pref->alignment[3]);
  describe("A", a);
  describe("B", b);
  describe("C", c);
  describe("D", dl);
  memset(out, 0, sizeof(*out));
  *found = requested > 0;
  return OK;
}

/* cudaDataType_t: CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF. */
enum { R_32F = 0, R_16F = 2, R_16BF = 14 };
static int elementBytes(int t) {
  return fake_element_bytes(t == R_16F, t == R_16BF);
}
static float load(const void *m, int t, uint64_t i) {
  return fake_load(m, t == R_16F, t == R_16BF, i);
}
static void store(void *m, int t, uint64_t i, float v) {
  fake_store(m, t == R_16F, t == R_16BF, i, v);
}

/* Element (r, k) of op(M) for the layout l of M. */
static float at(const void *m, const layout *l, int32_t trans, uint64_t r,
                uint64_t k) {
  return load(m, l->type, trans ? k + r * l->ld : r + k * l->ld);
}

/* What CUBLAS_COMPUTE_32F with f32 scales takes: A and B f32, or both f16
   or both bf16 with C and D of their type or f32. */
static int supported(const layout *a, const layout *b, const layout *c,
                     const layout *d) {
  if (a->type != b->type || c->type != d->type)
    return 0;
  if (a->type == R_32F)
    return d->type == R_32F;
  return (a->type == R_16F || a->type == R_16BF) &&
         (d->type == R_32F || d->type == a->type);
}

int cublasLtMatmul(void *h, desc *d, const float *alpha, const void *A,
                   layout *a, const void *B, layout *b, const float *beta,
                   const void *C, layout *c, void *D, layout *dl,
                   const void *algo, void *workspace, size_t workspaceSize,
                   void *stream) {
  uint64_t m = d->transa ? a->cols : a->rows, k = d->transa ? a->rows : a->cols;
  uint64_t kb = d->transb ? b->cols : b->rows, n = d->transb ? b->rows : b->cols;
  if (k != kb || dl->rows != m || dl->cols != n || c->rows != m ||
      c->cols != n || a->batch != dl->batch || b->batch != dl->batch ||
      d->compute != 68 || d->scale != R_32F || !supported(a, b, c, dl) ||
      ((d->epilogue & 4) && !d->bias))
    return INVALID_VALUE;
  note("cublasLtMatmul: %llu x %llu x %llu, batch %d, epilogue %u%s",
       (unsigned long long)m, (unsigned long long)n, (unsigned long long)k,
       dl->batch, d->epilogue, d->bias ? ", bias set" : "");
  for (int32_t i = 0; i < dl->batch; ++i) {
    const char *Ai = (const char *)A + i * a->stride * elementBytes(a->type);
    const char *Bi = (const char *)B + i * b->stride * elementBytes(b->type);
    const char *Ci = (const char *)C + i * c->stride * elementBytes(c->type);
    char *Di = (char *)D + i * dl->stride * elementBytes(dl->type);
    for (uint64_t col = 0; col < n; ++col)
      for (uint64_t row = 0; row < m; ++row) {
        double s = 0;
        for (uint64_t j = 0; j < k; ++j)
          s += (double)at(Ai, a, d->transa, row, j) *
               at(Bi, b, d->transb, j, col);
        float v = *alpha * (float)s;
        if (*beta != 0)
          v += *beta * load(Ci, c->type, row + col * c->ld);
        /* The bias has D's type (CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE's
           default). */
        if (d->epilogue & 4)
          v += load(d->bias, dl->type, row);
        if (d->epilogue & 2)
          v = v > 0 ? v : 0;
        if (d->epilogue & 32)
          v = 0.5f * v *
              (1 + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
        store(Di, dl->type, row + col * dl->ld, v);
      }
  }
  return OK;
}
