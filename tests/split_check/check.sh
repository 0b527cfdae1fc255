#!/usr/bin/env bash
# Whether GCC split the recursion of program.cpp off its leaf test (a ".part" clone of fib_invoke), and the
# program's results. Release builds with GCC only: the split is GCC's (clang has no such pass), and the
# sanitizer builds let the compiler choose what to inline (roost/detail/spawn_inline.hpp).
# Usage: check.sh PROGRAM
set -euo pipefail
bin=$1
command -v nm >/dev/null || { echo "nm (binutils) is needed" >&2; exit 1; }
"$bin"
symbols=$(nm -C "$bin")  # whole, not piped into grep -q: its early exit fails the pipe (pipefail)
if ! grep -q 'fib_invoke<0>(int) \[clone \.part\.[0-9]*\]' <<<"$symbols"; then
  echo "FAIL: GCC did not split fib_invoke off its leaf test (no .part clone): something in the two-way join" >&2
  echo "      put exception handling or another call that cannot be split into its caller (fork_join2.hpp, run_guarded)" >&2
  grep 'fib_invoke' <<<"$symbols" >&2 || true
  exit 1
fi
echo "fib_invoke is split: $(grep -c 'fib_invoke<0>(int) \[clone \.part' <<<"$symbols") clone(s)"
