#!/usr/bin/env bash
# Builds reduce_identity.cpp with each case: NARROW_NONE must compile; every other case must fail with the
# call's own message (parallel_reduce's, parallel_for's, parallel_invoke's, runtime::run's), not another error;
# and a ROOST_FORCE_INLINE other than 0 and 1 (detail/spawn_inline.hpp) must fail with the macro's message.
set -uo pipefail
src=$1  # the source tree
cxx=${CXX:-c++}
compile() { "$cxx" -std=c++20 -fsyntax-only -I"$src/include" "-D$1" "$src/tests/compile_fail/reduce_identity.cpp" 2>&1; }
status=0
if ! out=$(compile NARROW_NONE); then echo "NARROW_NONE did not compile:"; echo "$out"; status=1; fi
for c in NARROW_INTEGER:"wider integer than the identity" NARROW_FLOATING:"floating-point value and the identity is an integer" \
         NARROW_SIGNEDNESS:"signed integer and the identity is unsigned" \
         NARROW_INT128:"wider integer than the identity" \
         NARROW_INT128_SIGNEDNESS:"signed integer and the identity is unsigned" \
         NARROW_FLOAT_WIDTH:"wider floating-point type than the identity" \
         NARROW_VIEW:"owns its memory and the identity's type does not" \
         NARROW_INT_TO_FLOAT:"more digits than the identity's floating-point type" \
         COMBINE_VIEW:"owns its memory and the identity's type does not" \
         FLOAT_BOUNDS:"not floating-point numbers or bools" \
         FOR_BODY_SHAPE:"roost::parallel_for: the body is called as body(lo, hi)" \
         REDUCE_BODY_SHAPE:"roost::parallel_reduce: the body is called as body(lo, hi)" \
         REDUCE_NO_GRAIN:"give a grain, the third argument" \
         LIST_BOUNDS:"these iterators are not random-access" \
         INVOKE_WITH_ARGS:"every argument is a function called with no arguments" \
         JOIN_VOID:"roost::join: both functions return a value" \
         RUN_UNMOVABLE:"roost::runtime::run: the root returns a type that cannot be moved" \
         ROOST_FORCE_INLINE=off:"ROOST_FORCE_INLINE must be 0 or 1" \
         ROOST_FORCE_INLINE=2:"ROOST_FORCE_INLINE must be 0 or 1" \
         "ROOST_FORCE_INLINE=1||0":"ROOST_FORCE_INLINE must be 0 or 1" \
         ROOST_FORCE_INLINE=:"ROOST_FORCE_INLINE must be 0 or 1"; do
  name=${c%%:*}; want=${c#*:}
  if out=$(compile "$name"); then echo "$name compiled"; status=1
  elif ! grep -q "$want" <<<"$out"; then echo "$name failed without the message '$want':"; echo "$out" | head -20; status=1
  fi
done
[ $status = 0 ] && echo "compile_fail: parallel_reduce refuses every narrowing identity, parallel_for" \
  "floating-point bounds, runtime::run a result it cannot move, ROOST_FORCE_INLINE a value other than 0 and 1"
exit $status
