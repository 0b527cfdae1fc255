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
#pragma once
#include "roost/detail/sanitizers.hpp"

#if defined(ROOST_TSAN) || defined(ROOST_ASAN)
#define ROOST_DETAIL_SPAWN_INLINE
#else
#define ROOST_DETAIL_SPAWN_INLINE __attribute__((always_inline))
#endif
