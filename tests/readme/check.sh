#!/usr/bin/env bash
# The README's example compiles against the library and prints fib(30) and the sum.
set -euo pipefail
src=$1; lib=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
awk '/^## Example/{f=1;next} f&&/^```cpp/{g=1;next} g&&/^```/{exit} g{print}' "$src/README.md" > "$work/example.cpp"
[ -s "$work/example.cpp" ] || { echo "no C++ example found under '## Example' in README.md"; exit 1; }
c++ -std=c++20 -O1 -I"$src/include" "$work/example.cpp" "$lib" -lboost_context -lhwloc -lnuma -lpthread -o "$work/example"
out=$("$work/example")
echo "$out"
[ "$(echo "$out" | head -1)" = "832040" ] || { echo "README example: expected fib(30) = 832040"; exit 1; }
echo "README example: compiles and runs"
