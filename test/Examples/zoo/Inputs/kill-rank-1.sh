#!/bin/sh
# kill-rank-1.sh TOOL ARGS...: run under loom-launch, every rank runs
# TOOL ARGS, but rank 1's is killed (SIGKILL) 2 s after it starts.
tool=$1
shift
if [ "$LOOM_RANK" = 1 ]; then
  "$tool" "$@" &
  pid=$!
  sleep 2
  kill -9 $pid
  wait $pid
else
  exec "$tool" "$@"
fi
