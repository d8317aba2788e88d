/*===- loom-c/Runtime.h - The C API of libloomrt -------------------*- C -*-===*\
|*                                                                            *|
|* Part of Loom. Loads an artifact written by loom-compile (a .so,           *|
|* docs/Artifact.md) and runs its entries on its devices (the CPU now).     *|
|* docs/Runtime.md has the details.                                          *|
|*                                                                            *|
|* Threads: a loom_model is immutable once loaded and may be shared by any   *|
|* number of threads; a loom_context (the memory of one inference) is used   *|
|* by one thread at a time. Every function that can fail returns a status;   *|
|* loom_last_error() then gives the calling thread's message, which names    *|
|* the file and the reason.                                                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef LOOM_C_RUNTIME_H
#define LOOM_C_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LOOM_C_EXPORT __attribute__((visibility("default")))

typedef enum {
  LOOM_OK = 0,
  LOOM_ERROR_IO = 1,               /* cannot open, read or map a file */
  LOOM_ERROR_FORMAT = 2,           /* not an artifact, or a malformed one */
  LOOM_ERROR_VERSION = 3,          /* another format or ABI version */
  LOOM_ERROR_CPU = 4,              /* the CPU lacks a feature the code needs */
  LOOM_ERROR_CHECKSUM = 5,         /* weights that are not the compiled ones */
  LOOM_ERROR_INVALID_ARGUMENT = 6, /* a bad argument to this API */
  LOOM_ERROR_LIBRARY = 7,          /* oneDNN, OpenBLAS or dlopen failed */
  LOOM_ERROR_NO_DEVICE = 8,        /* the device the code runs on is absent
                                      (no GPU, no driver, no such ordinal) */
  LOOM_ERROR_COMMUNICATION = 9     /* a peer rank failed or a deadline of a
                                      multi-rank program passed */
} loom_status;

typedef struct loom_model loom_model;
typedef struct loom_context loom_context;

/* Zero-initialise the options ({0}) and set what you need: fields added
   later are read as their zero value. */
typedef struct {
  /* Threads of kernels and library calls; 0: the hardware's. */
  int num_threads;
  /* The weights file of an artifact compiled with external weights; NULL:
     the file the manifest names, beside the artifact. */
  const char *weights_path;
  /* The device to run a single-device artifact on: "KIND" or
     "KIND:ORDINAL" ("cpu", "cpu:0", "cuda:1", "vulkan"); the kind must be
     the one the artifact was compiled for. NULL: each device of the artifact runs on this
     machine's device of its kind and ordinal. */
  const char *device;
} loom_model_options;

/* A device a loaded model runs on. The pointers live as long as the
   model. */
typedef struct {
  const char *kind;   /* "cpu", "cuda", "vulkan" */
  int64_t ordinal;    /* this machine's device of that kind: cpu:0 */
  const char *chip;   /* what the code was compiled for: znver3, sm_90a,
                         "" (vulkan) */
  int64_t num_features;
  const char *const *features; /* what the code requires of the device:
                                  ISA features of a CPU (avx2, fma, ...) */
} loom_device_desc;

/* An input or output of an entry. The pointers live as long as the model. */
typedef struct {
  const char *name;
  const char *dtype; /* f32, f16, bf16, f64, i64, i32, i1 (a byte each) */
  int64_t rank;
  const int64_t *shape;
  int64_t bytes;
} loom_tensor_desc;

/* The calling thread's message for the last failure ("" if none). */
LOOM_C_EXPORT const char *loom_last_error(void);

/* Loads, validates and prepares an artifact. options may be NULL. */
LOOM_C_EXPORT loom_status loom_model_load(const char *path,
                            const loom_model_options *options,
                            loom_model **model);
LOOM_C_EXPORT void loom_model_free(loom_model *model);

LOOM_C_EXPORT int64_t loom_model_num_entries(const loom_model *model);
LOOM_C_EXPORT const char *loom_model_entry_name(const loom_model *model, int64_t entry);
/* The entry's index, or -1. */
LOOM_C_EXPORT int64_t loom_model_find_entry(const loom_model *model, const char *name);
/* 1 if world rank `rank` runs the entry, else 0: a tensor-parallel
   artifact's entry `<name>.rank<t>` runs on world rank t (on every world
   rank w with w % T == t in a world of cache shards x T tensor-parallel
   ranks); every other entry on every rank (docs/CacheParallel.md). */
LOOM_C_EXPORT int loom_model_entry_runs_on(const loom_model *model,
                                           int64_t entry, int64_t rank);
LOOM_C_EXPORT int64_t loom_entry_num_inputs(const loom_model *model, int64_t entry);
LOOM_C_EXPORT int64_t loom_entry_num_outputs(const loom_model *model, int64_t entry);
LOOM_C_EXPORT loom_status loom_entry_input(const loom_model *model, int64_t entry,
                             int64_t index, loom_tensor_desc *desc);
LOOM_C_EXPORT loom_status loom_entry_output(const loom_model *model, int64_t entry,
                              int64_t index, loom_tensor_desc *desc);

/* An output of data-dependent length (NonZero, NonMaxSuppression, what is
   computed from them; docs/Runtime.md "Outputs of data-dependent length")
   is padded to its descriptor's shape along one dimension: this returns
   the index of the output (a rank-0 int64 tensor) that holds its valid
   length after a run, and sets *dim to the padded dimension; -1 for an
   output of static shape (or a bad argument). dim may be NULL. */
LOOM_C_EXPORT int64_t loom_entry_output_length(const loom_model *model,
                                               int64_t entry, int64_t index,
                                               int64_t *dim);
/* The input output `index` is tied to (the state the entry updates in
   place: loom_context_state), or -1 for an output of its own (or a bad
   argument). */
LOOM_C_EXPORT int64_t loom_entry_output_tied_input(const loom_model *model,
                                                   int64_t entry,
                                                   int64_t index);

/* The devices the model runs on (the artifact's, in its order). */
LOOM_C_EXPORT int64_t loom_model_num_devices(const loom_model *model);
LOOM_C_EXPORT loom_status loom_model_device(const loom_model *model,
                                            int64_t index,
                                            loom_device_desc *desc);

/* The x86-64 instruction-set level the CPU device uses: "avx512", "avx2" or
   "sse4.2", this CPU's highest, capped by the environment variable
   LOOM_CPU_ISA (docs/Runtime.md "CPU instruction sets"). */
LOOM_C_EXPORT const char *loom_cpu_isa(void);
/* The CPU device's hand-written kernels (0 in a build without the CPU
   libraries): kernel `index`'s name, and whether the level in use has a form
   of it (1) or oneDNN runs those operations instead (0). */
LOOM_C_EXPORT int64_t loom_cpu_num_kernels(void);
LOOM_C_EXPORT loom_status loom_cpu_kernel(int64_t index, const char **name,
                                          int *available);

/* The plan the runtime made for entry `entry` at load (docs/Runtime.md
   "The plan"): a header line, then one line per step of the entry's program
   on this process's device: its index, kind and operands (buffer ids, with
   the layout the device keeps a buffer in where it chose one), and after
   " | " what runs it: the implementation (oneDNN's own name of its kernel,
   Loom's kernel and instruction-set level, the generated kernel), the
   reorders at its edges, prepacked weights and its threads. Valid while the
   model lives; NULL for a bad entry. */
LOOM_C_EXPORT const char *loom_entry_plan(const loom_model *model,
                                          int64_t entry);

/* The tg module the artifact was compiled from (.loom_source), or NULL. */
LOOM_C_EXPORT const char *loom_model_source(const loom_model *model, size_t *size);
/* Which graph that module is (docs/Artifact.md "The embedded source"):
   "given" (the module as loom-compile read it, before any of its passes) or
   "compiled" (after them; also every artifact whose manifest does not say);
   NULL when the artifact embeds none. */
LOOM_C_EXPORT const char *loom_model_source_graph(const loom_model *model);
/* The weights (a safetensors file, embedded or mapped), or NULL. */
LOOM_C_EXPORT const void *loom_model_weights(const loom_model *model, size_t *size);

/* The memory of one inference at a time (the arena of the memory plan). */
LOOM_C_EXPORT loom_status loom_context_create(const loom_model *model,
                                loom_context **context);
LOOM_C_EXPORT void loom_context_free(loom_context *context);

/* State (docs/Runtime.md "State"): an output tied to an input
   (loom_entry_output_tied_input) is that input updated in place by the run.
   Its output pointer is NULL or the input's pointer; a NULL input pointer
   runs on the context's own copy of the state, zero-filled when first used,
   kept between runs and shared by every entry whose tied input has that
   name. loom_context_state gives that copy's address (to read it, or to
   fill it before a run) and size. On a device with memory of its own (a
   GPU), the copy the runs update stays there between runs;
   loom_context_state brings the host copy up to date when called: call it
   again after the runs whose result you read. */
LOOM_C_EXPORT loom_status loom_context_state(loom_context *context,
                                             const char *name, void **data,
                                             int64_t *bytes);

/* Host memory that the context's devices copy inputs from and outputs to
   fastest (docs/Runtime.md "Host memory"): page-locked memory where the
   context has a CUDA device (its copies then are DMA transfers, several
   times faster than from pageable memory), ordinary memory aligned to 64
   bytes elsewhere. loom_run takes tensors anywhere; these are for the
   caller's input and output buffers. Free each block with
   loom_context_host_free; what is left is freed with the context. */
LOOM_C_EXPORT loom_status loom_context_host_alloc(loom_context *context,
                                                  size_t bytes, void **data);
LOOM_C_EXPORT void loom_context_host_free(loom_context *context, void *data);

/* Runs an entry: inputs[i] and outputs[i] point to dense row-major tensors
   of the entry's descriptors. Inputs are not written, except those an
   output is tied to (above); an output must not overlap an input or another
   output (kernels assume no aliasing). */
LOOM_C_EXPORT loom_status loom_run(loom_context *context, int64_t entry,
                     const void *const *inputs, void *const *outputs);

/* The actual shape of output `index` after the last successful loom_run
   of `entry` on `context`: its descriptor's shape, with the padded
   dimension of an output of data-dependent length cut to its run-time
   length (loom_entry_output_length). `shape` receives the output's rank
   values. The valid elements are the first ones of each run along that
   dimension: row-major, an element [i0, ..., id, ...] with id < length;
   the rest is padding. Fails before any run of the entry. */
LOOM_C_EXPORT loom_status loom_output_shape(const loom_context *context,
                                            int64_t entry, int64_t index,
                                            int64_t *shape);

/* ---- Worlds of ranks (docs/CacheParallel.md) ---------------------------
   An artifact compiled for a world of ranks (loom-compile --cache-parallel)
   runs the same entries on every rank, which meet in collectives inside
   them: each rank's context joins the world before its first run. */
typedef struct loom_world loom_world;

/* The ranks the artifact's entries run on (1: one process). */
LOOM_C_EXPORT int64_t loom_model_world_ranks(const loom_model *model);
/* The world this process is a rank of, from its launcher (mpirun, Slurm,
   torchrun-style variables, loom-launch: docs/Runtime.md "Ranks"), or a
   world of one rank without one. Every collective of it fails
   (LOOM_ERROR_COMMUNICATION) when a peer is gone or `timeout_seconds`
   pass first; under a launcher the process ends when its launcher does. */
LOOM_C_EXPORT loom_status loom_world_open(double timeout_seconds,
                                          loom_world **world);
/* `ranks` worlds of this process's threads: worlds[r] is rank r, each used
   by a thread of its own (tests, loom-generate --ranks). */
LOOM_C_EXPORT loom_status loom_world_open_threads(int64_t ranks,
                                                  double timeout_seconds,
                                                  loom_world **worlds);
/* A world of the same ranks as `world`, with exchanges of its own (its own
   communicator: a split of `world`'s), and its timeout: contexts joined to
   different copies exchange independently, so several can run at once on
   a rank (loom-generate --groups: groups of sequences in flight through
   pipeline stages). Every rank of `world` calls it, in the same order. */
LOOM_C_EXPORT loom_status loom_world_copy(loom_world *world, loom_world **copy);
LOOM_C_EXPORT int64_t loom_world_rank(const loom_world *world);
LOOM_C_EXPORT int64_t loom_world_size(const loom_world *world);
/* The bytes this rank has sent to the others so far (its gathers). */
LOOM_C_EXPORT int64_t loom_world_bytes_sent(const loom_world *world);
/* Ends every pending and later collective of this rank with an error, so
   that its peers see it gone (a rank that failed, before it stops). */
LOOM_C_EXPORT void loom_world_abort(loom_world *world);
LOOM_C_EXPORT void loom_world_free(loom_world *world);
/* The context's collectives run over `world` (which outlives its runs);
   refused unless the world has loom_model_world_ranks ranks. */
LOOM_C_EXPORT loom_status loom_context_join_world(loom_context *context,
                                                  loom_world *world);

/* ---- The pipelined step of a multi-rank artifact ------------------------
   loom-compile writes one from a partitioned module (docs/Pipelines.md):
   a world of ranks, each running its stages' entries in its schedule order
   and exchanging activations and gradients with the others
   (docs/Runtime.md "Ranks"). A step runs every micro-batch and sums each
   parameter's gradient over them; the optimizer step is the caller's. */

/* The world's ranks (1 for a single-process artifact). */
LOOM_C_EXPORT int64_t loom_model_num_ranks(const loom_model *model);
/* The step's micro-batches (0: the artifact has no pipelined step). */
LOOM_C_EXPORT int64_t loom_step_num_micro_batches(const loom_model *model);
/* The inputs of one micro-batch: the partitioned function's arguments, then
   the cotangent of each of its float results (1 for a scalar loss). */
LOOM_C_EXPORT int64_t loom_step_num_inputs(const loom_model *model);
LOOM_C_EXPORT loom_status loom_step_input(const loom_model *model,
                                          int64_t index,
                                          loom_tensor_desc *desc);
/* The parameters whose gradients a step computes (desc.name: the
   parameter's name), over every rank. */
LOOM_C_EXPORT int64_t loom_step_num_gradients(const loom_model *model);
LOOM_C_EXPORT loom_status loom_step_gradient(const loom_model *model,
                                             int64_t index,
                                             loom_tensor_desc *desc);

/* The optimizer step every rank ends the step with (loom-compile
   --optimizer): kind "none" (the step's results are the gradients), "sgd" or
   "adam", with its hyper-parameters (docs/Pipelines.md "The optimizer
   step"). */
typedef struct {
  const char *kind;
  double lr, momentum, beta1, beta2, eps, weight_decay;
} loom_step_optimizer_desc;
LOOM_C_EXPORT loom_status loom_step_optimizer(const loom_model *model,
                                              loom_step_optimizer_desc *desc);

/* Zero-initialise ({0}) and set what you need. */
typedef struct {
  /* The deadline of every wait for another rank; 0: 60 s. */
  double timeout_seconds;
  /* Steps run one after the other; 0: 1. */
  int64_t steps;
  /* Non-NULL: every rank records the start and end of each action of its
     program over the steps, and the step profile of every rank is written
     to this file (JSON, docs/Runtime.md "Step profile"; under a launcher
     rank 0 gathers and writes it). */
  const char *profile_path;
  /* NULL, or where rank 0 receives every parameter (in the gradients'
     order) after the last step: the artifact's weights, updated by each
     step's optimizer step when the world has one (docs/Runtime.md). */
  void *const *parameters;
} loom_step_options;

/* Where loom_step_run ran. */
typedef struct {
  /* This process's rank under a launcher; -1: every rank ran as a thread of
     this process. */
  int64_t rank;
  int64_t world_size;
  /* The communicator's transport: "threads", "mpi", "tcp". */
  const char *transport;
} loom_step_info;

/* Runs the step. inputs[mb * num_inputs + k]: step input k of micro-batch
   mb (every rank reads those its stages use). gradients (NULL: not wanted):
   gradients[g] receives gradient g of the last step, summed over the ranks;
   info (may be NULL) says where it ran. options may be NULL.

   Under a launcher (mpirun, Slurm, torchrun-style variables or loom-launch,
   docs/Runtime.md "Ranks") this process runs its rank over the launcher's
   world, which must have the artifact's ranks; every rank first checks that
   all loaded the same artifact; the gradients are gathered on rank 0 (the
   other ranks leave them untouched). A failure there ends the process with
   one line, "loom: rank R: step S: cause", and a non-zero exit, so that the
   launcher ends the job (docs/Runtime.md "Failure").

   Without one, every rank runs as a thread of this process (a context each)
   over an in-process communicator; the first rank's failure is returned
   (LOOM_ERROR_COMMUNICATION: a rank failed or a deadline passed), the others
   having stopped within the deadline. */
LOOM_C_EXPORT loom_status loom_step_run(const loom_model *model,
                                        const void *const *inputs,
                                        void *const *gradients,
                                        const loom_step_options *options,
                                        loom_step_info *info);

/* The partitioned function's results (a loss) per micro-batch, which a
   session's step gathers on rank 0 (0: the artifact records none). */
LOOM_C_EXPORT int64_t loom_step_num_results(const loom_model *model);
LOOM_C_EXPORT loom_status loom_step_result(const loom_model *model,
                                           int64_t index,
                                           loom_tensor_desc *desc);

/* ---- A training session: the step's ranks kept across calls -------------
   Opened once, it keeps every rank's parameters and optimizer state from
   step to step (docs/Runtime.md "Sessions"): loom-train's loop. Under a
   launcher this process is its rank; each call is one collective call that
   every rank makes, and a failure ends the process as loom_step_run's does.
   Without one, every rank is a thread of this process for each call; the
   first rank's failure is returned and the session can only be freed. */
typedef struct loom_step_session loom_step_session;

/* Opens the world (the launcher's or threads) and checks that every rank
   loaded the same artifact. options: timeout_seconds is used (steps,
   profile_path and parameters are loom_step_run's). */
LOOM_C_EXPORT loom_status loom_step_session_open(
    const loom_model *model, const loom_step_options *options,
    loom_step_session **out, loom_step_info *info);

/* Every rank takes its own parameters from parameters[g] (in the gradients'
   order, loom_step_gradient; every rank passes the same values) and zeroes
   its optimizer state. The artifact needs an optimizer (loom-compile
   --optimizer): without one the step reads the artifact's weights. */
LOOM_C_EXPORT loom_status loom_step_session_set_parameters(
    loom_step_session *session, const void *const *parameters);

/* One step: inputs as loom_step_run's; results (NULL: not wanted) receives
   on rank 0 results[mb * num_results + k], result k of micro-batch mb. */
LOOM_C_EXPORT loom_status loom_step_session_run(loom_step_session *session,
                                                const void *const *inputs,
                                                void *const *results);

/* Every parameter as the steps left it, gathered on rank 0 into
   parameters[g] (the gradients' order). */
LOOM_C_EXPORT loom_status loom_step_session_parameters(
    loom_step_session *session, void *const *parameters);

/* Ends the session (under a launcher after a barrier of every rank). */
LOOM_C_EXPORT void loom_step_session_free(loom_step_session *session);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_C_RUNTIME_H */
