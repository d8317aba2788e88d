/*===- world-copy.c - Copies of a world exchange on their own --------------*\
|*                                                                            *|
|* Part of Loom. test/Runtime/world-copy.test: loom_world_copy on a world of  *|
|* threads (every rank a thread, each copying its world twice) or on the      *|
|* launcher's (this process one rank): each copy has the world's ranks and    *|
|* size and has sent nothing; a null world is refused.                       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "loom-c/Runtime.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Copies `world` twice; 0 when both copies are its ranks', else 1. */
static int copyTwice(loom_world *world) {
  for (int i = 0; i < 2; ++i) {
    loom_world *copy = NULL;
    if (loom_world_copy(world, &copy) != LOOM_OK) {
      fprintf(stderr, "rank %lld: %s\n", (long long)loom_world_rank(world),
              loom_last_error());
      return 1;
    }
    int same = loom_world_rank(copy) == loom_world_rank(world) &&
               loom_world_size(copy) == loom_world_size(world) &&
               loom_world_bytes_sent(copy) == 0;
    loom_world_free(copy);
    if (!same)
      return 1;
  }
  return 0;
}

static void *rankThread(void *arg) {
  return (void *)(long)copyTwice((loom_world *)arg);
}

int main(int argc, char **argv) {
  loom_world *none = NULL;
  if (loom_world_copy(NULL, &none) == LOOM_OK)
    return 1;
  printf("null world: %s\n", loom_last_error());
  if (argc == 2 && strcmp(argv[1], "threads") == 0) {
    loom_world *worlds[3];
    pthread_t threads[3];
    if (loom_world_open_threads(3, 5.0, worlds) != LOOM_OK)
      return 1;
    for (int r = 0; r < 3; ++r)
      pthread_create(&threads[r], NULL, rankThread, worlds[r]);
    int failed = 0;
    for (int r = 0; r < 3; ++r) {
      void *rc;
      pthread_join(threads[r], &rc);
      failed |= rc != NULL;
      loom_world_free(worlds[r]);
    }
    printf("threads: %s\n",
           failed ? "a copy differs" : "3 ranks, 2 copies each");
    return failed;
  }
  loom_world *world = NULL;
  if (loom_world_open(10.0, &world) != LOOM_OK) {
    fprintf(stderr, "%s\n", loom_last_error());
    return 1;
  }
  int failed = copyTwice(world);
  if (loom_world_rank(world) == 0)
    printf("launcher: %s\n",
           failed ? "a copy differs" : "every rank, 2 copies each");
  loom_world_free(world);
  return failed;
}
