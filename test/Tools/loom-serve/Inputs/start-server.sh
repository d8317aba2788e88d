#!/usr/bin/env bash
# start-server.sh DIR COMMAND...: starts a server (loom-serve ... --port 0) in
# the background under `timeout 120`, so that none outlives a test by more;
# its stdout goes to DIR/out, its stderr to DIR/err, the pid of the timeout
# wrapper to DIR/pid. Waits at most 30 s for its "listening on HOST:PORT"
# line, writes http://HOST:PORT to DIR/url and exits 0; if the server ends
# or never listens, prints its stderr and exits 1.
set -u
dir=$1
shift
mkdir -p "$dir"
timeout -s TERM 120 "$@" > "$dir/out" 2> "$dir/err" < /dev/null &
pid=$!
echo "$pid" > "$dir/pid"
for _ in $(seq 300); do
  if grep -q '^loom-serve: listening on ' "$dir/out"; then
    sed -n 's|^loom-serve: listening on |http://|p' "$dir/out" > "$dir/url"
    exit 0
  fi
  if ! kill -0 "$pid" 2> /dev/null; then
    cat "$dir/err"
    exit 1
  fi
  sleep 0.1
done
echo "start-server.sh: no listening line in 30 s"
kill -TERM "$pid"
exit 1
