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
