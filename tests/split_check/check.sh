#!/usr/bin/env bash
# Whether GCC split the recursion of program.cpp off its leaf test, and the program's results. The split is a
# ".part" clone of fib_invoke that calls itself: the recursion's body, called by each caller only where the
# caller's own copy of the leaf test failed (a clone of a cold branch, also ".part", calls no fib_invoke).
# Release builds with GCC only: the split is GCC's (clang has no such pass), and the sanitizer builds let the
# compiler choose what to inline (roost/detail/spawn_inline.hpp). The split body must save one register.
# With `registers`, instead: how many registers the task group's recursion (fib_group) saves at its entry.
# With `loop`: whether GCC made a loop of roost::join's recursion (fib_join): its body calls itself once on
# each of the join's two inline paths (the half run at once), not twice, and calls no out-of-line
# run_guarded_value (which would hide a call of itself).
# Usage: check.sh PROGRAM [split|registers|loop]
set -euo pipefail
bin=$1
what=${2:-split}
case $what in
  split | registers | loop) ;;
  *) echo "check.sh: the second argument is split, registers or loop, not '$what'" >&2; exit 2 ;;
esac
command -v objdump >/dev/null || { echo "objdump (binutils) is needed" >&2; exit 1; }
"$bin"
# Whole outputs, not piped into grep -q: its early exit fails the pipe (pipefail).
listing=$(objdump -d -C --no-show-raw-insn "$bin")
# Calls inside function FUNC (its name as the listing gives it) whose line matches the awk regex PATTERN, or
# that call FUNC itself where PATTERN is empty.
calls_in() {
  awk -v name="$1" -v pattern="$2" '
    $0 ~ /^[0-9a-f]+ </ { inside = (index($0, "<" name ">:") > 0); next }
    inside && /call/ && (pattern == "" ? index($0, "<" name ">") > 0 : $0 ~ pattern) { n++ }
    END { print n + 0 }' <<<"$listing"
}
# The registers function FUNC saves with a push at its entry, before its frame is allocated.
entry_pushes() {
  awk -v name="$1" '
    $0 ~ /^[0-9a-f]+ </ { inside = (index($0, "<" name ">:") > 0); next }
    inside && /^$/ { exit }
    inside && /\tpush /{ n++; next }
    inside && /\tsub .*,%rsp/ { exit }
    END { print n + 0 }' <<<"$listing"
}
if [ "$what" = split ]; then
part=$(awk '/^[0-9a-f]+ <.*fib_invoke<0>\(int\) \[clone \.part\.[0-9]+\]>:$/ { sub(/^[0-9a-f]+ </, ""); sub(/>:$/, ""); print; exit }' <<<"$listing")
if [ -z "$part" ]; then
  echo "FAIL: GCC did not split fib_invoke off its leaf test (no .part clone): something in the two-way join" >&2
  echo "      put exception handling into its caller (fork_join2.hpp, run_guarded)" >&2
  grep '^[0-9a-f]* <long .*fib_invoke<0>(int)' <<<"$listing" >&2 || true
  exit 1
fi
self_calls=$(calls_in "$part" "")
if [ "$self_calls" -lt 1 ]; then
  echo "FAIL: $part does not call itself: it is not the recursion's body split off its leaf test" >&2
  exit 1
fi
# And one callee-saved register (rbx: the frame's address, which the pop compares) at the body's entry, in a
# file that holds two other joins' recursions (fib_join's and the group's): an out-of-line helper of the
# join's stolen path, inlined only where a file called it once, held the worker in a second one.
pushes=$(entry_pushes "$part")
echo "split: $part calls itself $self_calls time(s), saves $pushes register(s) at its entry"
if [ "$pushes" -ne 1 ]; then
  echo "FAIL: $part saves $pushes registers at its entry, not 1 (task_frame.hpp's for_engine_join called out" >&2
  echo "      of line, or a value of the caller live across the join's cold paths: fork_join2.hpp)" >&2
  exit 1
fi
exit 0
fi

if [ "$what" = loop ]; then
# The body: the .part clone where GCC split fib_join off its leaf test, else the function itself.
body=$(awk '/^[0-9a-f]+ <long .*fib_join<0>\(int\)( \[clone \.part\.[0-9]+\])?>:$/ { sub(/^[0-9a-f]+ </, ""); sub(/>:$/, ""); name = $0; if (index(name, ".part")) { print name; found = 1; exit } } END { if (!found && name != "") print name }' <<<"$listing")
if [ -z "$body" ]; then
  echo "FAIL: no fib_join<0> in the program" >&2
  exit 1
fi
self_calls=$(calls_in "$body" "")
guarded_calls=$(calls_in "$body" "run_guarded_value")
echo "loop: $body calls itself $self_calls time(s), run_guarded_value $guarded_calls time(s)"
# Without the loop each inline path calls the function twice (4 in all); with it, once.
if [ "$guarded_calls" -gt 0 ]; then
  echo "FAIL: fib_join calls run_guarded_value out of line, which hides a call of itself: the count says" >&2
  echo "      nothing about the loop (detail/join_values.hpp, run_guarded_value is plain inline)" >&2
  exit 1
fi
if [ "$self_calls" -lt 1 ] || [ "$self_calls" -gt 2 ]; then
  echo "FAIL: GCC made no loop of fib_join's recursion: a local whose address the join gave the deque is live" >&2
  echo "      across the call of the half popped back (detail/join_values.hpp, join_values_inline)" >&2
  exit 1
fi
exit 0
fi

# The task group's recursion: the registers it pushes at its entry, before its frame is allocated.
group=$(awk '/^[0-9a-f]+ <long .*fib_group<0>\(int\)>:$/ { sub(/^[0-9a-f]+ </, ""); sub(/>:$/, ""); print; exit }' <<<"$listing")
if [ -z "$group" ]; then
  echo "FAIL: no fib_group<0> in the program" >&2
  exit 1
fi
pushes=$(entry_pushes "$group")
if [ "$pushes" -eq 0 ]; then
  echo "FAIL: fib_group saves no register with a push at its entry: the count saw nothing (GCC saved them with" >&2
  echo "      moves, or split the function), so it says nothing; look at the listing" >&2
  exit 1
fi
if [ "$pushes" -gt 1 ]; then
  echo "FAIL: fib_group saves $pushes registers at its entry, not 1: every leaf pays them (task_group.hpp's" >&2
  echo "      destructor or join_pending out of line in the cleanup, or abi.hpp's try_join_first_child calling" >&2
  echo "      the frame through the push's address instead of the one its pop loaded)" >&2
  exit 1
fi
echo "task group: fib_group saves $pushes register(s) at its entry"
