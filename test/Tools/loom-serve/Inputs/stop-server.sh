#!/usr/bin/env bash
# stop-server.sh DIR: sends SIGTERM to the server start-server.sh started in
# DIR, waits at most 30 s for it to end (then kills it and exits 1), and
# prints its stdout and stderr: a clean stop ends with "loom-serve: stopped
# after N inference requests".
set -u
dir=$1
pid=$(cat "$dir/pid")
kill -TERM "$pid" 2> /dev/null
# Ended: gone, or a zombie that start-server.sh's shell left to be reaped
# by whoever adopted it.
ended() {
  ! kill -0 "$pid" 2> /dev/null || [[ "$(ps -o stat= -p "$pid")" == Z* ]]
}
for _ in $(seq 300); do
  if ended; then
    cat "$dir/out" "$dir/err"
    exit 0
  fi
  sleep 0.1
done
echo "stop-server.sh: the server did not stop in 30 s"
kill -KILL "$pid"
exit 1
