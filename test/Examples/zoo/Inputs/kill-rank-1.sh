#!/bin/sh
# kill-rank-1.sh TOOL ARGS...: run under loom-launch, every rank runs
# TOOL ARGS, but rank 1's is killed (SIGKILL) 4 s after it starts: in the
# generation, where the other ranks report their peer gone. (At 2 s, on 2
# cores busy with the suite's other test, rank 0 was once still loading:
# the launcher then ended it before it had a step to report.)
tool=$1
shift
if [ "$LOOM_RANK" = 1 ]; then
  "$tool" "$@" &
  pid=$!
  sleep 4
  kill -9 $pid
  wait $pid
else
  exec "$tool" "$@"
fi
