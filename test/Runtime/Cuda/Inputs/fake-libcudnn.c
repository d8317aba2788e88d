/* A stand-in for libcudnn.so.9 with which the CUDA device's cudnn.conv
   steps run where there is no GPU (cudnn.test; LOOM_CUDNN_LIBRARY points at
   it), beside fake-libcuda.c (whose device memory is host memory). It
   implements the backend-API calls the runtime makes as cudnn_graph.h and
   cuDNN's documentation define them, independently of the runtime's
   encoding: descriptors of typed attributes, checked at finalize (a
   tensor's data type, dimensions, strides and unique id; a convolution's
   spatial dimensions and per-dimension attributes; an operation's tensors,
   whose shapes must agree: the convolution's output extents from its
   input, filter, padding, stride and dilation, a pointwise operand that
   broadcasts; an operation graph whose virtual tensors are each made by one
   operation and used by another), heuristics that list engine
   configurations, execution plans, variant packs, and execution, which
   computes the graph on the host: the cross-correlation (or convolution)
   over the tensors' own strides, groups as the input's channels over the
   filter's, then the pointwise operations (add with broadcasting, relu,
   tanh, sigmoid, gelu (erf), gelu (tanh approximation), swish).

   Engine 0 rounds its inputs to TF32 (10-bit mantissas) and carries the
   numerical notes TENSOR_CORE and DOWN_CONVERT_INPUTS, as a TF32 engine
   does on f32 inputs; on f16 or bf16 inputs (exact in TF32) it is a tensor
   core engine that converts nothing and carries TENSOR_CORE alone; engine 1
   computes in f32 (double accumulators) and asks for FAKE_CUDNN_WORKSPACE bytes
   of workspace (default 4096), which it fills. Heuristics list both
   (FAKE_CUDNN_ENGINES=tf32: the first only). An execution runs in the order of
   the stream cudnnSetStream gave the handle (a host function of the stand-in
   driver, fake-libcuda.c, recorded while the stream captures a CUDA graph and
   run at each replay), or at once on the default stream. FAKE_CUDNN_LOG names a
   file that gets one line per call of interest. Not cuDNN: the test of the
   runtime's calls into it. */
#include "fake-narrow.h"
#include "fake-note.h"
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  OK = 0,
  BAD_PARAM = 2000,
  NOT_FINALIZED = 2004,
  SHAPE_MISMATCH = 2008,
  ATTRIBUTE_TYPE = 2010,
  DESCRIPTOR_TYPE = 2012,
  NOT_SUPPORTED = 3000,
  GRAPH_PATTERN = 3001,
};

/* Descriptor types, attribute types and names (cudnn_graph.h). */
enum {
  D_POINTWISE = 0, D_CONVOLUTION = 1, D_ENGINE = 2, D_ENGINECFG = 3,
  D_ENGINEHEUR = 4, D_PLAN = 5, D_OP_CONV_FWD = 10, D_OP_POINTWISE = 13,
  D_GRAPH = 15, D_VARIANT_PACK = 16, D_TENSOR = 17
};
enum {
  T_HANDLE = 0, T_DATA_TYPE = 1, T_BOOLEAN = 2, T_INT64 = 3, T_FLOAT = 4,
  T_DOUBLE = 5, T_VOID_PTR = 6, T_CONV_MODE = 7, T_HEUR_MODE = 8,
  T_NUMERICAL_NOTE = 11, T_POINTWISE_MODE = 14, T_DESCRIPTOR = 15
};

static void note(const char *format, ...) {
  va_list args;
  va_start(args, format);
  fake_note("FAKE_CUDNN_LOG", format, args);
  va_end(args);
}

#define MAX_ATTRS 16
#define MAX_DIMS 8
#define MAX_OPS 8

typedef struct {
  int name, type;
  int64_t count;
  unsigned char *data;
} attr;

typedef struct desc {
  int type, finalized;
  attr attrs[MAX_ATTRS];
  int nattrs;
  /* Engine configurations and engines: which engine, of which graph. */
  int engine;
  struct desc *graph;
} desc;

/* The attribute type each name takes (-1: not one the stand-in knows), and
   the descriptor type it belongs to. */
static int expected(int name, int *owner) {
  static const int table[][3] = {
      {0, T_POINTWISE_MODE, D_POINTWISE}, {1, T_DATA_TYPE, D_POINTWISE},
      {100, T_DATA_TYPE, D_CONVOLUTION}, {101, T_CONV_MODE, D_CONVOLUTION},
      {102, T_INT64, D_CONVOLUTION}, {103, T_INT64, D_CONVOLUTION},
      {104, T_INT64, D_CONVOLUTION}, {105, T_INT64, D_CONVOLUTION},
      {106, T_INT64, D_CONVOLUTION}, {200, T_HEUR_MODE, D_ENGINEHEUR},
      {201, T_DESCRIPTOR, D_ENGINEHEUR}, {400, T_HANDLE, D_PLAN},
      {401, T_DESCRIPTOR, D_PLAN}, {700, T_FLOAT, D_OP_CONV_FWD},
      {701, T_FLOAT, D_OP_CONV_FWD}, {702, T_DESCRIPTOR, D_OP_CONV_FWD},
      {703, T_DESCRIPTOR, D_OP_CONV_FWD}, {704, T_DESCRIPTOR, D_OP_CONV_FWD},
      {705, T_DESCRIPTOR, D_OP_CONV_FWD}, {750, T_DESCRIPTOR, D_OP_POINTWISE},
      {751, T_DESCRIPTOR, D_OP_POINTWISE}, {752, T_DESCRIPTOR, D_OP_POINTWISE},
      {753, T_DESCRIPTOR, D_OP_POINTWISE}, {800, T_HANDLE, D_GRAPH},
      {801, T_DESCRIPTOR, D_GRAPH}, {900, T_INT64, D_TENSOR},
      {901, T_DATA_TYPE, D_TENSOR}, {902, T_INT64, D_TENSOR},
      {903, T_INT64, D_TENSOR}, {906, T_INT64, D_TENSOR},
      {907, T_BOOLEAN, D_TENSOR}, {1000, T_INT64, D_VARIANT_PACK},
      {1001, T_VOID_PTR, D_VARIANT_PACK}, {1003, T_VOID_PTR, D_VARIANT_PACK}};
  for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i)
    if (table[i][0] == name) {
      *owner = table[i][2];
      return table[i][1];
    }
  return -1;
}

static size_t elementSize(int type) {
  switch (type) {
  case T_BOOLEAN:
    return sizeof(bool);
  case T_DATA_TYPE:
  case T_CONV_MODE:
  case T_HEUR_MODE:
  case T_NUMERICAL_NOTE:
  case T_POINTWISE_MODE:
  case T_FLOAT:
    return 4;
  default:
    return 8;
  }
}

static const attr *get(const desc *d, int name) {
  for (int i = 0; i < d->nattrs; ++i)
    if (d->attrs[i].name == name)
      return &d->attrs[i];
  return NULL;
}
static int64_t getInt(const desc *d, int name) {
  const attr *a = get(d, name);
  int64_t v = 0;
  if (a && a->count >= 1)
    memcpy(&v, a->data, a->type == T_INT64 ? 8 : 4);
  return v;
}
static const int64_t *ints(const desc *d, int name, int64_t *count) {
  const attr *a = get(d, name);
  *count = a ? a->count : 0;
  return a ? (const int64_t *)a->data : NULL;
}
static desc *getDesc(const desc *d, int name, int index) {
  const attr *a = get(d, name);
  desc *out = NULL;
  if (a && index < a->count)
    memcpy(&out, a->data + index * sizeof(desc *), sizeof(desc *));
  return out;
}

/* cuDNN 9.19.0, or FAKE_CUDNN_VERSION. */
size_t cudnnGetVersion(void) {
  const char *v = getenv("FAKE_CUDNN_VERSION");
  return v ? (size_t)atoll(v) : 91900;
}
const char *cudnnGetErrorString(int s) {
  switch (s) {
  case BAD_PARAM:
    return "CUDNN_STATUS_BAD_PARAM";
  case NOT_FINALIZED:
    return "CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED";
  case SHAPE_MISMATCH:
    return "CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH";
  case ATTRIBUTE_TYPE:
    return "CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE";
  case DESCRIPTOR_TYPE:
    return "CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE";
  case GRAPH_PATTERN:
    return "CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN";
  default:
    return "CUDNN_STATUS_NOT_SUPPORTED";
  }
}
typedef struct job job;
typedef struct context context;
int cudnnCreate(context **h);
int cudnnDestroy(context *h);
int cudnnSetStream(context *h, void *stream);

int cudnnBackendCreateDescriptor(int type, desc **d) {
  *d = calloc(1, sizeof(desc));
  (*d)->type = type;
  (*d)->engine = -1;
  return OK;
}
int cudnnBackendDestroyDescriptor(desc *d) {
  for (int i = 0; i < d->nattrs; ++i)
    free(d->attrs[i].data);
  free(d);
  return OK;
}

int cudnnBackendSetAttribute(desc *d, int name, int type, int64_t count,
                             const void *values) {
  int owner = -1;
  int want = expected(name, &owner);
  if (d->finalized || count < 0 || (count > 0 && !values))
    return BAD_PARAM;
  if (want < 0 || owner != d->type)
    return NOT_SUPPORTED;
  /* The operation's alpha and beta may be float or double. */
  if (type != want && !(want == T_FLOAT && type == T_DOUBLE))
    return ATTRIBUTE_TYPE;
  attr *a = NULL;
  for (int i = 0; i < d->nattrs; ++i)
    if (d->attrs[i].name == name)
      a = &d->attrs[i];
  if (!a) {
    if (d->nattrs == MAX_ATTRS)
      return BAD_PARAM;
    a = &d->attrs[d->nattrs++];
  } else {
    free(a->data);
  }
  size_t bytes = elementSize(type) * (size_t)count;
  a->name = name;
  a->type = type;
  a->count = count;
  a->data = malloc(bytes ? bytes : 1);
  memcpy(a->data, values, bytes);
  return OK;
}

/* A tensor's facts, read from its descriptor. */
/* cudnnDataType_t: CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16. */
enum { DATA_FLOAT = 0, DATA_HALF = 2, DATA_BFLOAT16 = 9 };

typedef struct {
  int64_t uid, rank, dims[MAX_DIMS], strides[MAX_DIMS];
  int64_t dataType;
  bool isVirtual;
} tensor;

static int tensorOf(const desc *d, tensor *t) {
  if (!d || d->type != D_TENSOR)
    return DESCRIPTOR_TYPE;
  if (!d->finalized)
    return NOT_FINALIZED;
  int64_t n = 0, m = 0;
  const int64_t *dims = ints(d, 902, &n), *strides = ints(d, 903, &m);
  t->uid = getInt(d, 906);
  t->dataType = getInt(d, 901);
  t->rank = n;
  memcpy(t->dims, dims, n * 8);
  memcpy(t->strides, strides, m * 8);
  const attr *v = get(d, 907);
  t->isVirtual = v && *(bool *)v->data;
  return OK;
}

static int finalizeTensor(desc *d) {
  int64_t n = 0, m = 0;
  const int64_t *dims = ints(d, 902, &n), *strides = ints(d, 903, &m);
  int64_t type = get(d, 901) ? getInt(d, 901) : -1;
  if ((type != DATA_FLOAT && type != DATA_HALF && type != DATA_BFLOAT16) ||
      !get(d, 906) || n < 3 || n > MAX_DIMS || m != n || !get(d, 900) ||
      getInt(d, 900) <= 0)
    return BAD_PARAM;
  for (int64_t i = 0; i < n; ++i)
    if (dims[i] < 1 || strides[i] < 1)
      return BAD_PARAM;
  return OK;
}

static int finalizeConvolution(desc *d) {
  int64_t k = getInt(d, 106), c;
  if (!get(d, 100) || !get(d, 101) || k < 1 || k > 3 ||
      getInt(d, 101) > 1)
    return BAD_PARAM;
  for (int name = 102; name <= 105; ++name) {
    const int64_t *v = ints(d, name, &c);
    if (c != k)
      return BAD_PARAM;
    for (int64_t i = 0; i < k; ++i)
      if (v[i] < (name == 104 || name == 105 ? 0 : 1))
        return BAD_PARAM;
  }
  return OK;
}

/* Output extent i of a convolution of x by w under conv. */
static int64_t outExtent(const desc *conv, const tensor *x, const tensor *w,
                         int64_t i) {
  int64_t c;
  const int64_t *stride = ints(conv, 103, &c), *dil = ints(conv, 102, &c),
                *pre = ints(conv, 105, &c), *post = ints(conv, 104, &c);
  int64_t span = x->dims[2 + i] + pre[i] + post[i] -
                 dil[i] * (w->dims[2 + i] - 1) - 1;
  return span < 0 ? 0 : span / stride[i] + 1;
}

static int finalizeConvForward(desc *d) {
  desc *conv = getDesc(d, 702, 0);
  tensor x, w, y;
  int s;
  if (!conv || conv->type != D_CONVOLUTION)
    return DESCRIPTOR_TYPE;
  if (!conv->finalized)
    return NOT_FINALIZED;
  if ((s = tensorOf(getDesc(d, 704, 0), &x)) ||
      (s = tensorOf(getDesc(d, 703, 0), &w)) ||
      (s = tensorOf(getDesc(d, 705, 0), &y)))
    return s;
  if (!get(d, 700) || !get(d, 701))
    return BAD_PARAM;
  int64_t k = getInt(conv, 106);
  if (x.rank != k + 2 || w.rank != k + 2 || y.rank != k + 2 ||
      x.dims[1] % w.dims[1] != 0 || y.dims[0] != x.dims[0] ||
      y.dims[1] != w.dims[0] || w.dims[0] % (x.dims[1] / w.dims[1]) != 0)
    return SHAPE_MISMATCH;
  for (int64_t i = 0; i < k; ++i)
    if (y.dims[2 + i] != outExtent(conv, &x, &w, i))
      return SHAPE_MISMATCH;
  return OK;
}

static int binaryMode(int64_t mode) { return mode < 100; }
static int knownMode(int64_t mode) {
  return mode == 0 || mode == 100 || mode == 101 || mode == 102 ||
         mode == 104 || mode == 106 || mode == 107;
}

static int finalizePointwiseOp(desc *d) {
  desc *pw = getDesc(d, 750, 0);
  tensor x, b, y;
  int s;
  if (!pw || pw->type != D_POINTWISE)
    return DESCRIPTOR_TYPE;
  if (!pw->finalized)
    return NOT_FINALIZED;
  if ((s = tensorOf(getDesc(d, 751, 0), &x)) ||
      (s = tensorOf(getDesc(d, 753, 0), &y)))
    return s;
  int64_t mode = getInt(pw, 0);
  if (binaryMode(mode) != (get(d, 752) != NULL))
    return BAD_PARAM;
  if (x.rank != y.rank)
    return SHAPE_MISMATCH;
  for (int64_t i = 0; i < x.rank; ++i)
    if (x.dims[i] != y.dims[i])
      return SHAPE_MISMATCH;
  if (binaryMode(mode)) {
    if ((s = tensorOf(getDesc(d, 752, 0), &b)))
      return s;
    if (b.rank != y.rank)
      return SHAPE_MISMATCH;
    for (int64_t i = 0; i < b.rank; ++i)
      if (b.dims[i] != 1 && b.dims[i] != y.dims[i])
        return SHAPE_MISMATCH;
  }
  return OK;
}

/* The tensors an operation reads (up to 2) and writes. */
static int opTensors(const desc *op, desc **in, int *nin, desc **out) {
  if (op->type == D_OP_CONV_FWD) {
    in[0] = getDesc(op, 704, 0);
    in[1] = getDesc(op, 703, 0);
    *nin = 2;
    *out = getDesc(op, 705, 0);
    return 1;
  }
  in[0] = getDesc(op, 751, 0);
  *nin = 1;
  if (get(op, 752))
    in[(*nin)++] = getDesc(op, 752, 0);
  *out = getDesc(op, 753, 0);
  return 0;
}

static int finalizeGraph(desc *d) {
  int64_t n = get(d, 801) ? get(d, 801)->count : 0;
  int convs = 0;
  if (!get(d, 800) || n < 1 || n > MAX_OPS)
    return BAD_PARAM;
  for (int64_t i = 0; i < n; ++i) {
    desc *op = getDesc(d, 801, (int)i), *in[2], *out;
    int nin;
    if (!op->finalized)
      return NOT_FINALIZED;
    if (op->type != D_OP_CONV_FWD && op->type != D_OP_POINTWISE)
      return GRAPH_PATTERN;
    convs += opTensors(op, in, &nin, &out);
    /* A virtual tensor is made by one operation and used by another. */
    tensor t;
    tensorOf(out, &t);
    int made = 0, used = 0;
    for (int64_t j = 0; j < n; ++j) {
      desc *other = getDesc(d, 801, (int)j), *oin[2], *oout;
      int onin;
      opTensors(other, oin, &onin, &oout);
      made += oout == out;
      for (int q = 0; q < onin; ++q)
        used += oin[q] == out;
    }
    if (made != 1 || (t.isVirtual ? used < 1 : used > 0))
      return GRAPH_PATTERN;
    for (int q = 0; q < nin; ++q) {
      tensorOf(in[q], &t);
      if (t.isVirtual) {
        int maker = 0;
        for (int64_t j = 0; j < n; ++j) {
          desc *other = getDesc(d, 801, (int)j), *oin[2], *oout;
          int onin;
          opTensors(other, oin, &onin, &oout);
          maker += oout == in[q];
        }
        if (maker != 1)
          return GRAPH_PATTERN;
      }
    }
  }
  if (convs != 1)
    return GRAPH_PATTERN;
  note("graph: %lld operations", (long long)n);
  return OK;
}

/* Logs one tensor. */
static void describeTensor(const char *role, const desc *d) {
  tensor t;
  char text[256];
  int at = 0;
  tensorOf(d, &t);
  for (int64_t i = 0; i < t.rank; ++i)
    at += snprintf(text + at, sizeof text - at, "%s%lld", i ? "x" : "",
                   (long long)t.dims[i]);
  at += snprintf(text + at, sizeof text - at, " strides");
  for (int64_t i = 0; i < t.rank; ++i)
    at += snprintf(text + at, sizeof text - at, " %lld",
                   (long long)t.strides[i]);
  /* The data type where it is not f32 (f32 tensors' lines as they were). */
  const char *type = t.dataType == DATA_BFLOAT16 ? ", bf16"
                     : t.dataType == DATA_HALF   ? ", f16"
                                                 : "";
  note("  %s: uid %lld%s%s, %s", role, (long long)t.uid,
       t.isVirtual ? " (virtual)" : "", type, text);
}

/* Whether graph g's convolution reads f16 or bf16 x. */
static int narrowGraph(const desc *g) {
  const attr *ops = g ? get(g, 801) : NULL;
  for (int64_t i = 0; ops && i < ops->count; ++i) {
    desc *op = getDesc(g, 801, (int)i), *in[2], *out;
    int nin;
    tensor x;
    if (op->type != D_OP_CONV_FWD)
      continue;
    opTensors(op, in, &nin, &out);
    if (tensorOf(in[0], &x) == OK)
      return x.dataType == DATA_HALF || x.dataType == DATA_BFLOAT16;
  }
  return 0;
}

static void describeOp(const desc *op) {
  if (op->type == D_OP_CONV_FWD) {
    const desc *conv = getDesc(op, 702, 0);
    int64_t c, k = getInt(conv, 106);
    const int64_t *stride = ints(conv, 103, &c), *dil = ints(conv, 102, &c),
                  *pre = ints(conv, 105, &c), *post = ints(conv, 104, &c);
    char text[256];
    int at = 0;
    for (int64_t i = 0; i < k; ++i)
      at += snprintf(text + at, sizeof text - at,
                     "%s[stride %lld, dilation %lld, pad %lld %lld]",
                     i ? " " : "", (long long)stride[i], (long long)dil[i],
                     (long long)pre[i], (long long)post[i]);
    note("conv fwd: mode %lld, compute type %lld, %lld spatial dims %s",
         (long long)getInt(conv, 101), (long long)getInt(conv, 100),
         (long long)k, text);
    describeTensor("x", getDesc(op, 704, 0));
    describeTensor("w", getDesc(op, 703, 0));
    describeTensor("y", getDesc(op, 705, 0));
    return;
  }
  const desc *pw = getDesc(op, 750, 0);
  note("pointwise: mode %lld, precision %lld", (long long)getInt(pw, 0),
       (long long)getInt(pw, 1));
  describeTensor("x", getDesc(op, 751, 0));
  if (get(op, 752))
    describeTensor("b", getDesc(op, 752, 0));
  describeTensor("y", getDesc(op, 753, 0));
}

static int64_t workspaceBytes(int engine) {
  const char *w = getenv("FAKE_CUDNN_WORKSPACE");
  return engine == 0 ? 0 : w ? atoll(w) : 4096;
}

static int engineCount(void) {
  const char *e = getenv("FAKE_CUDNN_ENGINES");
  return e && strcmp(e, "tf32") == 0 ? 1 : 2;
}

int cudnnBackendFinalize(desc *d) {
  int s = OK;
  switch (d->type) {
  case D_TENSOR:
    s = finalizeTensor(d);
    break;
  case D_CONVOLUTION:
    s = finalizeConvolution(d);
    break;
  case D_POINTWISE:
    s = get(d, 0) && get(d, 1) && knownMode(getInt(d, 0)) ? OK : BAD_PARAM;
    break;
  case D_OP_CONV_FWD:
    s = finalizeConvForward(d);
    break;
  case D_OP_POINTWISE:
    s = finalizePointwiseOp(d);
    break;
  case D_GRAPH:
    s = finalizeGraph(d);
    if (s == OK)
      for (int64_t i = 0; i < get(d, 801)->count; ++i)
        describeOp(getDesc(d, 801, (int)i));
    break;
  case D_ENGINEHEUR: {
    desc *g = getDesc(d, 201, 0);
    s = g && g->finalized && get(d, 200) ? OK : BAD_PARAM;
    if (s == OK)
      note("heuristics: mode %lld", (long long)getInt(d, 200));
    break;
  }
  case D_PLAN: {
    desc *cfg = getDesc(d, 401, 0);
    s = cfg && cfg->finalized && cfg->type == D_ENGINECFG && get(d, 400)
            ? OK
            : BAD_PARAM;
    if (s == OK)
      note("plan: engine %d, workspace %lld", cfg->engine,
           (long long)workspaceBytes(cfg->engine));
    break;
  }
  case D_VARIANT_PACK: {
    const attr *u = get(d, 1000), *p = get(d, 1001);
    s = u && p && u->count == p->count && get(d, 1003) ? OK : BAD_PARAM;
    break;
  }
  default:
    s = NOT_SUPPORTED;
  }
  d->finalized = s == OK;
  return s;
}

int cudnnBackendGetAttribute(desc *d, int name, int type, int64_t requested,
                             int64_t *count, void *values) {
  if (!d->finalized)
    return NOT_FINALIZED;
  if (d->type == D_ENGINEHEUR && name == 202 && type == T_DESCRIPTOR) {
    *count = engineCount();
    for (int64_t i = 0; i < requested && i < *count; ++i) {
      desc *cfg = ((desc **)values)[i];
      if (cfg->type != D_ENGINECFG)
        return DESCRIPTOR_TYPE;
      cfg->engine = (int)i;
      cfg->graph = getDesc(d, 201, 0);
      cfg->finalized = 1;
    }
    return OK;
  }
  if (d->type == D_ENGINECFG && name == 300 && type == T_DESCRIPTOR &&
      requested >= 1) {
    desc *engine = *(desc **)values;
    if (engine->type != D_ENGINE)
      return DESCRIPTOR_TYPE;
    engine->engine = d->engine;
    engine->graph = d->graph;
    engine->finalized = 1;
    *count = 1;
    return OK;
  }
  if (d->type == D_ENGINE && name == 1303 && type == T_NUMERICAL_NOTE) {
    /* TENSOR_CORE, and DOWN_CONVERT_INPUTS where its inputs are f32. */
    *count = d->engine != 0 ? 0 : narrowGraph(d->graph) ? 1 : 2;
    for (int64_t i = 0; i < requested && i < *count; ++i)
      ((int32_t *)values)[i] = (int32_t)i;
    return OK;
  }
  if (d->type == D_PLAN && name == 402 && type == T_INT64 && requested >= 1) {
    *(int64_t *)values = workspaceBytes(getDesc(d, 401, 0)->engine);
    *count = 1;
    return OK;
  }
  return NOT_SUPPORTED;
}

/* Execution. */

typedef struct {
  tensor t;
  void *data;
} bound;

/* Element off of b's buffer, of its tensor's data type, as a float. */
static float at(const bound *b, int64_t off) {
  return fake_load(b->data, b->t.dataType == DATA_HALF,
                   b->t.dataType == DATA_BFLOAT16, (uint64_t)off);
}

/* Stores v as element off of b's buffer, rounded to its data type. */
static void put(bound *b, int64_t off, float v) {
  fake_store(b->data, b->t.dataType == DATA_HALF,
             b->t.dataType == DATA_BFLOAT16, (uint64_t)off, v);
}

static float tf32(float v) {
  uint32_t bits;
  memcpy(&bits, &v, 4);
  bits &= ~0x1fffu;
  memcpy(&v, &bits, 4);
  return v;
}

static int64_t elements(const tensor *t) {
  int64_t n = 1;
  for (int64_t i = 0; i < t->rank; ++i)
    n *= t->dims[i];
  return n;
}

/* The offset in t of the element at multi-index idx (of rank t->rank),
   broadcasting t's unit dimensions. */
static int64_t offsetOf(const tensor *t, const int64_t *idx) {
  int64_t off = 0;
  for (int64_t i = 0; i < t->rank; ++i)
    off += (t->dims[i] == 1 ? 0 : idx[i]) * t->strides[i];
  return off;
}

/* Steps idx through dims (row-major); 0 when it wraps. */
static int next(int64_t *idx, const int64_t *dims, int64_t rank) {
  for (int64_t i = rank - 1; i >= 0; --i) {
    if (++idx[i] < dims[i])
      return 1;
    idx[i] = 0;
  }
  return 0;
}

static void convolve(const desc *op, bound *x, bound *w, bound *y, int engine) {
  const desc *conv = getDesc(op, 702, 0);
  int64_t c, k = getInt(conv, 106);
  const int64_t *stride = ints(conv, 103, &c), *dil = ints(conv, 102, &c),
                *pre = ints(conv, 105, &c);
  int flip = getInt(conv, 101) == 0; /* CUDNN_CONVOLUTION */
  int64_t perGroup = w->t.dims[1], groups = x->t.dims[1] / perGroup;
  int64_t outPerGroup = w->t.dims[0] / groups;
  int64_t yi[MAX_DIMS] = {0};
  do {
    int64_t g = yi[1] / outPerGroup;
    double sum = 0;
    int64_t wi[MAX_DIMS] = {0};
    /* Over the filter's channels and window. */
    int64_t wdims[MAX_DIMS];
    memcpy(wdims, w->t.dims, sizeof wdims);
    wdims[0] = 1;
    do {
      int64_t xi[MAX_DIMS], wk[MAX_DIMS];
      int inside = 1;
      memcpy(wk, wi, sizeof wk);
      wk[0] = yi[1];
      xi[0] = yi[0];
      xi[1] = g * perGroup + wi[1];
      for (int64_t i = 0; i < k; ++i) {
        xi[2 + i] = yi[2 + i] * stride[i] - pre[i] + wi[2 + i] * dil[i];
        if (xi[2 + i] < 0 || xi[2 + i] >= x->t.dims[2 + i])
          inside = 0;
        if (flip)
          wk[2 + i] = w->t.dims[2 + i] - 1 - wi[2 + i];
      }
      if (!inside)
        continue;
      float a = at(x, offsetOf(&x->t, xi)), b = at(w, offsetOf(&w->t, wk));
      if (engine == 0)
        a = tf32(a), b = tf32(b);
      sum += (double)a * b;
    } while (next(wi, wdims, w->t.rank));
    put(y, offsetOf(&y->t, yi), (float)sum);
  } while (next(yi, y->t.dims, y->t.rank));
}

static float activate(int64_t mode, float v) {
  switch (mode) {
  case 100:
    return v > 0 ? v : 0;
  case 101:
    return tanhf(v);
  case 102:
    return 1 / (1 + expf(-v));
  case 104:
    return 0.5f * v * (1 + erff(v * 0.70710678f));
  case 106:
    return v / (1 + expf(-v));
  case 107:
    return 0.5f * v * (1 + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
  }
  return v;
}

static void pointwise(const desc *op, bound *x, bound *b, bound *y) {
  int64_t mode = getInt(getDesc(op, 750, 0), 0);
  int64_t idx[MAX_DIMS] = {0};
  do {
    float v = at(x, offsetOf(&x->t, idx));
    v = binaryMode(mode) ? v + at(b, offsetOf(&b->t, idx)) : activate(mode, v);
    put(y, offsetOf(&y->t, idx), v);
  } while (next(idx, y->t.dims, y->t.rank));
}

/* One execution: the graph, the engine, the variant pack's buffers by
   unique id and the workspace, kept as long as the handle (a captured
   execution runs again at each replay of the graph). */
struct job {
  desc *graph;
  int engine, n;
  int64_t uids[MAX_OPS], workspaceBytes;
  float *data[MAX_OPS];
  void *workspace;
  struct job *next;
};

/* The buffer of tensor d: the execution's for its uid, or a host
   allocation for a virtual one; NULL when the variant pack has none. */
static bound *bind(bound *all, int *n, const desc *d, const job *j) {
  tensor t;
  tensorOf(d, &t);
  for (int i = 0; i < *n; ++i)
    if (all[i].t.uid == t.uid)
      return &all[i];
  bound *b = &all[(*n)++];
  b->t = t;
  b->data = NULL;
  if (t.isVirtual) {
    b->data = calloc((size_t)elements(&t), sizeof(float));
    return b;
  }
  for (int i = 0; i < j->n; ++i)
    if (j->uids[i] == t.uid)
      b->data = j->data[i];
  return b->data ? b : NULL;
}

/* Computes j's graph, each operation once what it reads is made. */
static int compute(const job *j) {
  int64_t n = get(j->graph, 801)->count;
  bound all[3 * MAX_OPS];
  int nbound = 0, done[MAX_OPS] = {0}, left = (int)n, status = OK;
  if (j->workspaceBytes > 0)
    memset(j->workspace, 0xff, (size_t)j->workspaceBytes);
  while (left > 0 && status == OK) {
    int progressed = 0;
    for (int64_t i = 0; i < n; ++i) {
      desc *op = getDesc(j->graph, 801, (int)i), *in[2], *out;
      int nin, ready = 1;
      if (done[i])
        continue;
      opTensors(op, in, &nin, &out);
      for (int q = 0; q < nin; ++q) {
        tensor t;
        tensorOf(in[q], &t);
        if (!t.isVirtual)
          continue;
        int made = 0;
        for (int64_t k = 0; k < n; ++k) {
          desc *other = getDesc(j->graph, 801, (int)k), *oin[2], *oout;
          int onin;
          opTensors(other, oin, &onin, &oout);
          made |= done[k] && oout == in[q];
        }
        ready &= made;
      }
      if (!ready)
        continue;
      bound *bx = bind(all, &nbound, in[0], j);
      bound *bb = nin > 1 ? bind(all, &nbound, in[1], j) : NULL;
      bound *by = bind(all, &nbound, out, j);
      if (!bx || !by || (nin > 1 && !bb)) {
        status = BAD_PARAM; /* a tensor the variant pack does not bind */
        break;
      }
      if (op->type == D_OP_CONV_FWD)
        convolve(op, bx, bb, by, j->engine);
      else
        pointwise(op, bx, bb, by);
      done[i] = 1;
      --left;
      progressed = 1;
    }
    if (!progressed && status == OK)
      status = GRAPH_PATTERN;
  }
  for (int i = 0; i < nbound; ++i)
    if (all[i].t.isVirtual)
      free(all[i].data);
  return status;
}

static void computeOnStream(void *j) { compute(j); }

/* The stand-in driver's cuLaunchHostFunc (fake-libcuda.c, the library
   LOOM_CUDA_LIBRARY names, already loaded by the runtime), or NULL. */
typedef int (*hostFunc)(void *, void (*)(void *), void *);
static hostFunc driverHostFunc(void) {
  static int looked;
  static hostFunc fn;
  if (!looked) {
    looked = 1;
    const char *path = getenv("LOOM_CUDA_LIBRARY");
    void *lib = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    int (*proc)(const char *, void **, int, unsigned long long, int *) =
        lib ? (int (*)(const char *, void **, int, unsigned long long,
                       int *))dlsym(lib, "cuGetProcAddress_v2")
            : NULL;
    if (proc)
      proc("cuLaunchHostFunc", (void **)&fn, 12000, 0, NULL);
  }
  return fn;
}

/* The executions made on a handle (freed with it). */
struct context {
  void *stream;
  job *jobs;
};

int cudnnBackendExecute(context *handle, desc *plan, desc *pack) {
  if (!plan->finalized || !pack->finalized || plan->type != D_PLAN ||
      pack->type != D_VARIANT_PACK)
    return BAD_PARAM;
  desc *cfg = getDesc(plan, 401, 0);
  const attr *uids = get(pack, 1000), *ptrs = get(pack, 1001);
  job *j = calloc(1, sizeof(job));
  j->graph = cfg->graph;
  j->engine = cfg->engine;
  j->workspace = *(void **)get(pack, 1003)->data;
  j->workspaceBytes = workspaceBytes(cfg->engine);
  j->n = (int)(uids->count < MAX_OPS ? uids->count : MAX_OPS);
  memcpy(j->uids, uids->data, (size_t)j->n * sizeof(int64_t));
  memcpy(j->data, ptrs->data, (size_t)j->n * sizeof(float *));
  j->next = handle->jobs;
  handle->jobs = j;
  if (j->workspaceBytes > 0 && !j->workspace)
    return BAD_PARAM;
  /* Every tensor the graph reads or writes that is not virtual is bound. */
  int64_t n = get(j->graph, 801)->count;
  for (int64_t i = 0; i < n; ++i) {
    desc *in[3], *out;
    int nin;
    opTensors(getDesc(j->graph, 801, (int)i), in, &nin, &out);
    in[nin++] = out;
    for (int q = 0; q < nin; ++q) {
      tensor t;
      int found = 0;
      tensorOf(in[q], &t);
      for (int k = 0; k < j->n; ++k)
        found |= j->uids[k] == t.uid && j->data[k];
      if (!t.isVirtual && !found)
        return BAD_PARAM;
    }
  }
  hostFunc enqueue = driverHostFunc();
  note("execute: engine %d, %lld operations, on %s", cfg->engine,
       (long long)n, handle->stream && enqueue ? "the stream" : "the host");
  if (handle->stream && enqueue)
    return enqueue(handle->stream, computeOnStream, j) ? NOT_SUPPORTED : OK;
  return compute(j);
}

int cudnnCreate(context **h) {
  *h = calloc(1, sizeof(context));
  note("cudnnCreate");
  return OK;
}
int cudnnDestroy(context *h) {
  while (h->jobs) {
    job *next = h->jobs->next;
    free(h->jobs);
    h->jobs = next;
  }
  free(h);
  return OK;
}
int cudnnSetStream(context *h, void *stream) {
  h->stream = stream;
  return OK;
}
