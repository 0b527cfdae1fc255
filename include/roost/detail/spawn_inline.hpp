// ROOST_DETAIL_SPAWN_INLINE: how the inline spawn and join paths (task_group's spawn and wait,
// parallel_invoke's two-way join, abi.hpp's deque operations) are inlined into the user's code.
//
// A release build forces them inline: a spawn costs tens of instructions only when the whole path, down to the
// deque's push, lies in the caller (src/engine/README.md, "Where a spawn's time goes"). A sanitizer build lets
// the compiler choose: there every inlined copy is instrumented, and a copy forced into every lambda that
// spawns doubled the compile time of the test programs (tests/test_join.cpp, clang's ASan+UBSan: 67 s against
// 38 s; test_runtime.cpp, GCC's TSan: 47 s against 25 s) for no check a call would not make. It changes no
// behaviour: a sanitizer build has no preemption windows, and each of these operations runs under its fiber's
// preemption count there (src/engine/README.md, "No inline deque operation is under way"). The preemption
// counts' own helpers and the deque's push and pop stay always_inline in every build: the engines' runtime
// text calls them, and tests/runtime_text/check.sh allows no call out of it.
//
// A program opts out with ROOST_FORCE_INLINE=0 (defined before the first roost header, or -DROOST_FORCE_INLINE=0),
// for a translation unit with a function that calls these paths and is compiled for another CPU than the unit,
// e.g. __attribute__((target("arch=haswell"))) in a file built for the default x86-64: GCC 12 forces an
// always_inline function into another only where both have the same `arch` and the caller has every instruction
// set of the callee, and otherwise stops with "inlining failed in call to 'always_inline' 'void
// roost::task_group::wait()': target specific option mismatch" (docs/user-guide.md, "Functions compiled for
// another CPU"). The entry points it names are task_group::wait, the group's destructor, parallel_invoke and
// join; what they call is inlined into them either way. Not forced, the paths compute the same and
// cost more (the user guide has the counts).
#pragma once
#include "roost/detail/sanitizers.hpp"

#ifndef ROOST_FORCE_INLINE
#define ROOST_FORCE_INLINE 1
#endif
// 0 or 1 and nothing else. In `#if` an unknown word counts as 0, so `-DROOST_FORCE_INLINE=off` would pass as 0,
// and `=yes` too: the value is pasted onto a name that only a leading 0 or 1 completes, and what the result
// evaluates to is tested whole, so that `1 || 0` is refused rather than read as 0 (a review).
#define ROOST_DETAIL_FORCE_INLINE_IS_0 100
#define ROOST_DETAIL_FORCE_INLINE_IS_1 101
#define ROOST_DETAIL_PASTE_(a, b) a##b
#define ROOST_DETAIL_PASTE(a, b) ROOST_DETAIL_PASTE_(a, b)
#define ROOST_DETAIL_FORCE_INLINE_CODE (ROOST_DETAIL_PASTE(ROOST_DETAIL_FORCE_INLINE_IS_, ROOST_FORCE_INLINE))
#define ROOST_DETAIL_STRING_(x) #x
#define ROOST_DETAIL_STRING(x) ROOST_DETAIL_STRING_(x)
#if ROOST_DETAIL_FORCE_INLINE_CODE != 100 && ROOST_DETAIL_FORCE_INLINE_CODE != 101
#pragma message("ROOST_FORCE_INLINE is \"" ROOST_DETAIL_STRING(ROOST_FORCE_INLINE) "\"")
#error "ROOST_FORCE_INLINE must be 0 or 1: 0 leaves roost's spawn and join paths to the compiler's inliner (for functions with __attribute__((target(\"arch=...\")))), 1 forces them inline (the default)"
#define ROOST_DETAIL_SPAWN_INLINE
#elif defined(ROOST_TSAN) || defined(ROOST_ASAN) || ROOST_DETAIL_FORCE_INLINE_CODE == 100
#define ROOST_DETAIL_SPAWN_INLINE
#else
#define ROOST_DETAIL_SPAWN_INLINE __attribute__((always_inline))
#endif
