#!/usr/bin/env bash
# Runs tests/static_runtimes/program.cpp's binary in the ways a namespace-scope runtime was seen to crash, and
# checks both runtimes' results and the files the global one writes at its end.
# Usage: check.sh BINARY SCRATCH_DIR
set -euo pipefail
bin=$1
dir=$2
rm -rf "$dir" && mkdir -p "$dir"
fails=0
run() {  # run NAME EXPECTED_FILE ENV...: the file must exist and not be empty afterwards
  local name=$1 file=$2
  shift 2
  local out st=0
  out=$(env -u ROOST_TRACE -u ROOST_SIM_REPORT -u ROOST_PLATFORM -u ROOST_TOPOLOGY "$@" timeout 120 "$bin" \
        2>"$dir/$name.err") || st=$?
  if ((st != 0)); then
    echo "FAIL $name: exit status $st ($(tail -3 "$dir/$name.err"))"; fails=$((fails + 1)); return
  fi
  if [[ "$out" != $'main: 610\nlate: 610' ]]; then
    echo "FAIL $name: printed '$out'"; fails=$((fails + 1)); return
  fi
  if [[ -n "$file" && ! -s "$file" ]]; then
    echo "FAIL $name: $file is missing or empty"; fails=$((fails + 1)); return
  fi
  echo "ok   $name"
}
run plain ""
run env-trace "$dir/env.trace.json" ROOST_TRACE="$dir/env.trace"
run env-sim-report "$dir/env.report.json" ROOST_PLATFORM=sim ROOST_TOPOLOGY="pack:2 l3:1(size=1MiB) core:2 pu:1" \
    ROOST_SIM_REPORT="$dir/env.report.json"
run options-trace "$dir/opt.trace.json" STATIC_RUNTIME_OPTIONS="trace=$dir/opt.trace"
run options-sim-report "$dir/opt.report.json" STATIC_RUNTIME_OPTIONS="sim_report=$dir/opt.report.json"
exit $((fails > 0))
