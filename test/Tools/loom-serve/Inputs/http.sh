#!/usr/bin/env bash
# http.sh DIR PATH [CURL-ARGS...]: one request to the server start-server.sh
# started in DIR (curl, at most 30 s); prints the body, then a line with the
# HTTP status code.
set -u
dir=$1
path=$2
shift 2
curl -s --max-time 30 -w '\n%{http_code}\n' "$@" "$(cat "$dir/url")$path"
