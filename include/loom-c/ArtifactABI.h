/*===- loom-c/ArtifactABI.h - What a compiled artifact exports -----*- C -*-===*\
|*                                                                            *|
|* Part of Loom. The ABI between an artifact that loom-compile writes and the *|
|* runtime that loads it (docs/Artifact.md): the descriptor the exported     *|
|* function loom_artifact_v1 returns, and the calling convention of the      *|
|* generated kernels. Plain C, no dependencies.                               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef LOOM_C_ARTIFACTABI_H
#define LOOM_C_ARTIFACTABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LOOM_ARTIFACT_MAGIC 0x4D4F4F4Cu /* "LOOM" little-endian */
#define LOOM_ARTIFACT_ABI_VERSION 1u

/* Computes iterations [begin, end) of the kernel's outermost parallel loop;
   buffers[i] is the base address of the step's i-th argument. */
typedef void (*loom_kernel_fn)(void *const *buffers, int64_t begin,
                               int64_t end);

/* A team kernel (a kernel step with "team": true, docs/Artifact.md) is
   called once by every thread of a team of n threads as
   fn(buffers, thread, n), where buffers[args] (one past the step's
   arguments) is the team: every thread must make the same calls to it in
   the same order. barrier returns when every thread of the team has called
   it; alloc returns to every thread the block that thread 0 got from
   allocate(bytes); free waits for every thread, then thread 0 gives the
   block to release. */
typedef struct loom_team loom_team;
struct loom_team {
  void (*barrier)(loom_team *team);
  void *(*alloc)(loom_team *team, void *(*allocate)(uint64_t bytes),
                 uint64_t bytes);
  void (*free)(loom_team *team, void (*release)(void *block), void *block);
};

typedef struct {
  const char *name;
  loom_kernel_fn fn;
} loom_kernel_entry;

typedef struct {
  uint32_t magic, abi_version;
  const char *manifest;   /* the .loom_manifest bytes */
  uint64_t manifest_size;
  const uint8_t *weights; /* the .loom_weights bytes, or NULL */
  uint64_t weights_size;
  const char *source;     /* the .loom_source bytes, or NULL */
  uint64_t source_size;
  const loom_kernel_entry *kernels;
  uint64_t num_kernels;
} loom_artifact_descriptor;

typedef const loom_artifact_descriptor *(*loom_artifact_v1_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_C_ARTIFACTABI_H */
