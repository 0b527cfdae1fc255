#!/bin/bash
# Instructions a spawn of one of roost-bench's fib benchmarks, counted by callgrind (src/engine/README.md,
# "Where a spawn's time goes"): the program's instructions at fib(24) less those at fib(20), over the 64,079
# spawns between them, one worker, preemption off.
#
#   scripts/spawn-instructions.sh BIN BENCH VARIANT...
#   e.g. scripts/spawn-instructions.sh build/bench/roost-bench fib-invoke ws-help ws floor-help
#
# roost-bench times a cache line's round trip between two threads around every measurement
# (bench::core_to_core_round_trip_ns), a spin whose length is wall-clock time, so its instructions change from
# run to run: the count is taken per thread (--separate-threads=yes), leaving out the round trip's own
# thread (a few dozen functions) and that function's inclusive cost on the others.
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 BIN BENCH VARIANT... (BENCH: fib, fib-invoke or fib-join)" >&2
  exit 2
fi
bin=$1 bench=$2
shift 2
case $bench in
  fib | fib-invoke | fib-join) ;;
  *) echo "$0: BENCH is '$bench'; must be fib, fib-invoke or fib-join (fib(24) less fib(20) is 64,079 spawns)" >&2; exit 2 ;;
esac
[ -x "$bin" ] || { echo "$0: BIN '$bin' is not an executable (roost-bench)" >&2; exit 2; }
command -v valgrind > /dev/null || { echo "$0: valgrind is not installed" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
total() {  # size variant -> the program's instructions without the round trip's
  rm -f "$dir"/out*
  ROOST_PREEMPT=off valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$dir/out" \
    "$bin" --bench "$bench" --size "$1" --variants "$2" --workers 1 --reps 1 --warmup 0 > /dev/null 2> "$dir/err" ||
    { echo "$0: $bin --bench $bench --size $1 --variants $2 failed:" >&2; cat "$dir/err" >&2; exit 1; }
  local sum=0 f all trip
  for f in "$dir"/out-*; do
    [ "$(grep -c '^fn=' "$f")" -lt 100 ] && grep -q 'core_to_core_round_trip_ns()::{lambda' "$f" && continue
    all=$(awk '/^summary:/ {print $2; exit}' "$f")
    trip=$(callgrind_annotate --inclusive=yes "$f" 2> /dev/null |
           awk '/\?\?\?:bench::core_to_core_round_trip_ns\(\) / {gsub(",", "", $1); print $1; exit}')
    sum=$((sum + all - ${trip:-0}))
  done
  echo "$sum"
}
for v in "$@"; do
  big=$(total 24 "$v")
  small=$(total 20 "$v")
  awk -v b="$bench" -v v="$v" -v x="$big" -v y="$small" 'BEGIN { printf "%s %s: %.1f instructions a spawn\n", b, v, (x - y) / 64079 }'
done
