#!/usr/bin/env bash
# Puts this machine under the load a busy CI runner has, so that every time limit in a verdict can
# be tried where it matters: six CPU-bound processes and one writer that fsyncs 8 MiB files in a
# loop, bounded in time, all stopped when the script ends (or is interrupted).
#
#   scripts/load.sh [--seconds N] [--cpu N] [--dir DIR] [-- COMMAND [ARG...]]
#
# With a command, the load runs while the command runs and the script exits with the command's
# status; without one, the load runs for --seconds (default 3600) and then stops. The load average
# is printed when the load starts and when it stops (on stderr, prefixed `load:`).
#
# Examples (docs/running.md, "On a busy machine"):
#   scripts/load.sh -- cargo test --workspace
#   scripts/load.sh -- cargo run --release -p seam-cli -- check --seed 24228
set -euo pipefail

seconds=3600
cpu=6
dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="${2:?--seconds needs a number}"; shift 2 ;;
    --cpu) cpu="${2:?--cpu needs a number}"; shift 2 ;;
    --dir) dir="${2:?--dir needs a directory}"; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "load.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$seconds" in ''|*[!0-9]*) echo "load.sh: --seconds must be a whole number" >&2; exit 2 ;; esac
case "$cpu" in ''|*[!0-9]*) echo "load.sh: --cpu must be a whole number" >&2; exit 2 ;; esac

# The writer's files live beside the project's (same disk as target/ and the test directories)
# unless told otherwise.
if [ -z "$dir" ]; then
  dir=$(mktemp -d "${TMPDIR:-/tmp}/seam-load.XXXXXX")
  made_dir=1
else
  mkdir -p "$dir"
  made_dir=0
fi

pids=()
stop() {
  trap - EXIT INT TERM
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ "$made_dir" = 1 ] && rm -rf "$dir"
  echo "load: stopped; load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')" >&2
}
trap stop EXIT
trap 'exit 130' INT TERM

for _ in $(seq 1 "$cpu"); do
  timeout "$seconds" sh -c 'while :; do :; done' &
  pids+=($!)
done
# fsync-heavy: 8 MiB written and synced, over and over, in two alternating files.
timeout "$seconds" sh -c '
  i=0
  while :; do
    dd if=/dev/zero of="$1/f$((i % 2))" bs=1M count=8 conv=fsync status=none
    i=$((i + 1))
  done' sh "$dir" &
pids+=($!)

echo "load: $cpu CPU-bound processes and one fsync writer in $dir for at most ${seconds}s; load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')" >&2

if [ $# -gt 0 ]; then
  # Let the load build up before the command starts.
  sleep 5
  set +e
  "$@"
  status=$?
  set -e
  exit "$status"
fi
wait
