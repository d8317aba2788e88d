/* A stand-in for libcuda.so.1 with which the CUDA device's host side runs
   where there is no GPU (fake-driver.test; LOOM_CUDA_LIBRARY points at it).
   It exports only cuGetProcAddress_v2, as the runtime uses only that, and
   answers with the entry points below: one device of compute capability
   8.0, memory on the host, streams that run their work when it is enqueued
   or record it while they capture, graphs that replay what was recorded,
   and two kernels computed on the host from their names, as the artifact's
   kernels would on a GPU: add_N (c = a + b over N elements; block w of the
   grid covers [256 w, 256 w + 256), so a short grid leaves elements out)
   and rowsum_R_C (one block per row of x [R, C]); and cuLaunchHostFunc,
   which the stand-in libraries use to run their work in stream order
   (fake-libcudnn.c). FAKE_CUDA_LOG names a
   file that gets one line per driver call of interest. Not a driver: the
   test of the runtime's calls into one. */
#include "fake-note.h"
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

static void note(const char *format, ...) {
  va_list args;
  va_start(args, format);
  fake_note("FAKE_CUDA_LOG", format, args);
  va_end(args);
}

/* A kernel launch, a device copy or a host function, as a stream runs or
   records it. */
typedef struct {
  int kind; /* 0: launch, 1: copy, 2: host function */
  const char *kernel;
  unsigned grid;
  CUdeviceptr args[4];
  CUdeviceptr dst, src;
  size_t bytes;
  void (*host)(void *);
  void *user;
} op;

typedef struct {
  int capturing;
  op *ops;
  size_t count;
} stream;

static void run(const op *o) {
  if (o->kind == 2) {
    o->host(o->user);
    return;
  }
  if (o->kind == 1) {
    memmove((void *)(uintptr_t)o->dst, (const void *)(uintptr_t)o->src,
            o->bytes);
    return;
  }
  unsigned n, rows, cols;
  if (sscanf(o->kernel, "add_%u", &n) == 1) {
    const float *a = (const float *)(uintptr_t)o->args[0];
    const float *b = (const float *)(uintptr_t)o->args[1];
    float *c = (float *)(uintptr_t)o->args[2];
    for (unsigned i = 0; i < n && i < o->grid * 256u; ++i)
      c[i] = a[i] + b[i];
  } else if (sscanf(o->kernel, "rowsum_%u_%u", &rows, &cols) == 2) {
    const float *x = (const float *)(uintptr_t)o->args[0];
    float *out = (float *)(uintptr_t)o->args[1];
    for (unsigned r = 0; r < rows && r < o->grid; ++r) {
      float s = 0;
      for (unsigned j = 0; j < cols; ++j)
        s += x[r * cols + j];
      out[r] = s;
    }
  }
}

static CUresult enqueue(stream *s, op o) {
  if (!s || !s->capturing) {
    run(&o);
    return 0;
  }
  s->ops = realloc(s->ops, (s->count + 1) * sizeof(op));
  s->ops[s->count++] = o;
  return 0;
}

static CUresult cuInit(unsigned flags) {
  note("cuInit");
  return 0;
}
static CUresult cuGetErrorName(CUresult r, const char **name) {
  *name = r == 900 ? "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"
                   : r == 500 ? "CUDA_ERROR_NOT_FOUND" : "CUDA_ERROR_UNKNOWN";
  return 0;
}
static CUresult cuDeviceGetCount(int *n) {
  *n = 1;
  return 0;
}
static CUresult cuDeviceGet(int *d, int ordinal) {
  *d = ordinal;
  return 0;
}
static CUresult cuDeviceGetAttribute(int *v, int attribute, int device) {
  switch (attribute) {
  case 1: *v = 1024; break;                  /* threads per block */
  case 2: case 3: *v = 1024; break;          /* block x, y */
  case 4: *v = 64; break;                    /* block z */
  case 5: *v = 2147483647; break;            /* grid x */
  case 6: case 7: *v = 65535; break;         /* grid y, z */
  case 75: *v = 8; break;                    /* compute capability */
  case 76: *v = 0; break;
  case 97: *v = 163 * 1024; break;           /* opt-in shared memory */
  default: *v = 0;
  }
  return 0;
}
static CUresult cuDeviceGetName(char *name, int size, int device) {
  snprintf(name, (size_t)size, "Fake CUDA device");
  return 0;
}
static CUresult cuDevicePrimaryCtxRetain(void **ctx, int device) {
  *ctx = (void *)1;
  return 0;
}
static CUresult cuDevicePrimaryCtxRelease(int device) { return 0; }
static CUresult cuCtxSetCurrent(void *ctx) { return 0; }
static CUresult cuModuleLoadData(void **module, const void *image) {
  note("cuModuleLoadData");
  *module = (void *)2;
  return 0;
}
static CUresult cuModuleUnload(void *module) { return 0; }
static CUresult cuModuleGetFunction(void **f, void *module, const char *name) {
  unsigned a, b;
  if (sscanf(name, "add_%u", &a) != 1 &&
      sscanf(name, "rowsum_%u_%u", &a, &b) != 2)
    return 500;
  *f = strdup(name);
  return 0;
}
static CUresult cuFuncSetAttribute(void *f, int attribute, int value) {
  return 0;
}
static CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz,
                               unsigned bx, unsigned by, unsigned bz,
                               unsigned shared, void *s, void **params,
                               void **extra) {
  op o = {0, f, gx, {0, 0, 0, 0}, 0, 0, 0};
  int n = strncmp(f, "add_", 4) == 0 ? 3 : 2;
  for (int i = 0; i < n; ++i)
    o.args[i] = *(CUdeviceptr *)params[i];
  note("cuLaunchKernel %s grid %u block %u%s", (const char *)f, gx, bx,
       s && ((stream *)s)->capturing ? " (captured)" : "");
  return enqueue(s, o);
}
/* What a library's work on a stream is here (fake-libcudnn.c's executions):
   run in stream order, recorded while the stream captures. */
static CUresult cuLaunchHostFunc(void *s, void (*fn)(void *), void *user) {
  op o = {2, NULL, 0, {0, 0, 0, 0}, 0, 0, 0, fn, user};
  note("cuLaunchHostFunc%s", s && ((stream *)s)->capturing ? " (captured)" : "");
  return enqueue(s, o);
}
static CUresult cuMemAlloc(CUdeviceptr *p, size_t bytes) {
  void *m = NULL;
  if (posix_memalign(&m, 256, bytes))
    return 2;
  *p = (CUdeviceptr)(uintptr_t)m;
  return 0;
}
static CUresult cuMemFree(CUdeviceptr p) {
  free((void *)(uintptr_t)p);
  return 0;
}
/* Page-locked host memory (cuMemHostAlloc): ordinary memory here, its
   blocks remembered so that a copy from or to one is noted as such. */
enum { MAX_HOST_BLOCKS = 256 };
static struct {
  char *begin;
  size_t bytes;
} host_blocks[MAX_HOST_BLOCKS];
static CUresult cuMemHostAlloc(void **p, size_t bytes, unsigned flags) {
  for (int i = 0; i < MAX_HOST_BLOCKS; ++i)
    if (!host_blocks[i].begin) {
      if (posix_memalign(p, 4096, bytes))
        return 2;
      host_blocks[i].begin = *p;
      host_blocks[i].bytes = bytes;
      note("cuMemHostAlloc %zu bytes flags %u", bytes, flags);
      return 0;
    }
  return 2;
}
static CUresult cuMemFreeHost(void *p) {
  for (int i = 0; i < MAX_HOST_BLOCKS; ++i)
    if (host_blocks[i].begin == p) {
      host_blocks[i].begin = NULL;
      free(p);
      note("cuMemFreeHost");
      return 0;
    }
  return 1; /* CUDA_ERROR_INVALID_VALUE: not page-locked memory */
}
static int page_locked(const void *p, size_t bytes) {
  for (int i = 0; i < MAX_HOST_BLOCKS; ++i)
    if (host_blocks[i].begin && (const char *)p >= host_blocks[i].begin &&
        (const char *)p + bytes <= host_blocks[i].begin + host_blocks[i].bytes)
      return 1;
  return 0;
}
/* Copies between host and device are noted only with FAKE_CUDA_LOG_COPIES
   set (state.test counts them; the other logs leave them out), with the
   host side's kind. */
static void copy_note(const char *call, const void *host, size_t bytes) {
  if (getenv("FAKE_CUDA_LOG_COPIES"))
    note("%s %zu bytes%s", call, bytes,
         page_locked(host, bytes) ? " (page-locked)" : "");
}
static CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src,
                                  size_t bytes, void *s) {
  if (s && ((stream *)s)->capturing)
    return 900;
  copy_note("cuMemcpyHtoDAsync", src, bytes);
  memcpy((void *)(uintptr_t)dst, src, bytes);
  return 0;
}
static CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t bytes,
                                  void *s) {
  if (s && ((stream *)s)->capturing)
    return 900;
  copy_note("cuMemcpyDtoHAsync", dst, bytes);
  memcpy(dst, (const void *)(uintptr_t)src, bytes);
  return 0;
}
static CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src,
                                  size_t bytes, void *s) {
  op o = {1, NULL, 0, {0, 0, 0, 0}, dst, src, bytes};
  return enqueue(s, o);
}
static CUresult cuStreamCreate(void **s, unsigned flags) {
  *s = calloc(1, sizeof(stream));
  return 0;
}
static CUresult cuStreamDestroy(void *s) {
  free(((stream *)s)->ops);
  free(s);
  return 0;
}
/* An event holds the host's clock when recorded (the work before it has
   run by then: streams run their work when it is enqueued). */
static CUresult cuEventCreate(void **e, unsigned flags) {
  *e = calloc(1, sizeof(struct timespec));
  return 0;
}
static CUresult cuEventRecord(void *e, void *s) {
  clock_gettime(CLOCK_MONOTONIC, (struct timespec *)e);
  return 0;
}
static CUresult cuEventElapsedTime(float *ms, void *from, void *to) {
  const struct timespec *a = from, *b = to;
  note("cuEventElapsedTime");
  *ms = (float)((b->tv_sec - a->tv_sec) * 1e3 + (b->tv_nsec - a->tv_nsec) / 1e6);
  return 0;
}
static CUresult cuEventQuery(void *e) { return 0; }
static CUresult cuEventDestroy(void *e) {
  free(e);
  return 0;
}
static CUresult cuStreamBeginCapture(void *s, int mode) {
  note("cuStreamBeginCapture");
  ((stream *)s)->capturing = 1;
  ((stream *)s)->count = 0;
  return 0;
}
typedef struct {
  op *ops;
  size_t count;
} graph;
static CUresult cuStreamEndCapture(void *s, void **g) {
  stream *st = s;
  graph *gr = malloc(sizeof(graph));
  gr->ops = malloc(st->count * sizeof(op) + 1);
  memcpy(gr->ops, st->ops, st->count * sizeof(op));
  gr->count = st->count;
  st->capturing = 0;
  st->count = 0;
  note("cuStreamEndCapture: %zu operations", gr->count);
  *g = gr;
  return 0;
}
static CUresult cuGraphInstantiateWithFlags(void **exec, void *g,
                                            unsigned long long flags) {
  *exec = g;
  return 0;
}
static CUresult cuGraphLaunch(void *exec, void *s) {
  graph *g = exec;
  note("cuGraphLaunch: %zu operations", g->count);
  for (size_t i = 0; i < g->count; ++i)
    run(&g->ops[i]);
  return 0;
}
static CUresult cuGraphDestroy(void *g) {
  free(((graph *)g)->ops);
  free(g);
  return 0;
}
static CUresult cuGraphExecDestroy(void *exec) { return 0; }

#define FAKE(name) {#name, (void *)name}
static const struct {
  const char *name;
  void *fn;
} table[] = {
    FAKE(cuInit), FAKE(cuGetErrorName), FAKE(cuDeviceGetCount),
    FAKE(cuDeviceGet), FAKE(cuDeviceGetAttribute), FAKE(cuDeviceGetName),
    FAKE(cuDevicePrimaryCtxRetain), FAKE(cuDevicePrimaryCtxRelease),
    FAKE(cuCtxSetCurrent), FAKE(cuModuleLoadData), FAKE(cuModuleUnload),
    FAKE(cuModuleGetFunction), FAKE(cuFuncSetAttribute), FAKE(cuLaunchKernel),
    FAKE(cuMemAlloc), FAKE(cuMemFree), FAKE(cuMemHostAlloc),
    FAKE(cuMemFreeHost), FAKE(cuMemcpyHtoDAsync),
    FAKE(cuMemcpyDtoHAsync), FAKE(cuMemcpyDtoDAsync), FAKE(cuStreamCreate),
    FAKE(cuStreamDestroy), FAKE(cuEventCreate), FAKE(cuEventRecord),
    FAKE(cuEventQuery), FAKE(cuEventDestroy), FAKE(cuEventElapsedTime),
    FAKE(cuStreamBeginCapture),
    FAKE(cuStreamEndCapture), FAKE(cuGraphInstantiateWithFlags),
    FAKE(cuGraphLaunch), FAKE(cuGraphDestroy), FAKE(cuGraphExecDestroy),
    FAKE(cuLaunchHostFunc),
};

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                             unsigned long long flags, int *status) {
  for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); ++i)
    if (strcmp(table[i].name, symbol) == 0) {
      *pfn = table[i].fn;
      return 0;
    }
  *pfn = NULL;
  return 500;
}
