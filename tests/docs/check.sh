#!/usr/bin/env bash
# Every ```cpp block of README.md and docs/*.md that is a whole program (it has `int main`) compiles against
# the library and runs to a zero exit status under every implemented scheduler, at two workers. Blocks
# without `int main` are fragments and are not compiled. An example checks its own result and returns
# non-zero (or throws) when it is wrong; each run must end within 60 s (the examples take well under a second).
#   tests/docs/check.sh SOURCE_DIR LIBROOST [FILE.md ...]   (default: README.md docs/*.md)
set -euo pipefail
src=$1; lib=$2; shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ $# -gt 0 ]; then files=("$@"); else files=("$src/README.md" "$src"/docs/*.md); fi
scheds="ws ws-help hws cab cats adws adws-ml numa"
n=0; failed=0
for md in "${files[@]}"; do
  # One file per block, named after the line its fence opens on.
  awk -v dir="$work" -v base="$(basename "$md" .md)" '
    /^```cpp[[:space:]]*$/ { inb = 1; start = NR; out = dir "/" base "_" NR ".cpp"; printf "" > out; next }
    inb && /^```/ { inb = 0; close(out); next }
    inb { print > out }' "$md"
done
for f in "$work"/*.cpp; do
  [ -e "$f" ] || continue
  grep -Eq '(^|[^[:alnum:]_])int[[:space:]]+main[[:space:]]*\(' "$f" || continue
  n=$((n + 1))
  name=$(basename "$f" .cpp)        # README_17: README.md, block opening on line 17
  where="${name%_*}.md:${name##*_}"
  if ! c++ -std=c++20 -O1 -Wall -I"$src/include" "$f" "$lib" -lboost_context -lhwloc -lnuma -lpthread -o "$work/$name" \
       2> "$work/$name.err"; then
    echo "FAIL $where: does not compile"; sed 's/^/    /' "$work/$name.err" | head -40; failed=$((failed + 1)); continue
  fi
  for s in $scheds; do
    if ! ROOST_SCHED=$s ROOST_WORKERS=2 timeout 60 "$work/$name" > "$work/$name.out" 2>&1; then
      echo "FAIL $where under ROOST_SCHED=$s ROOST_WORKERS=2:"; sed 's/^/    /' "$work/$name.out" | tail -20
      failed=$((failed + 1)); continue 2
    fi
  done
  echo "ok   $where (compiles; runs under $scheds)"
done
[ "$n" -gt 0 ] || { echo "no whole-program example (a \`\`\`cpp block with int main) found"; exit 1; }
[ "$failed" -eq 0 ] || { echo "$failed of $n examples failed"; exit 1; }
echo "all $n examples compile and run"
