// Link-time check that a program and libroost agree on how libstdc++ lays out its containers, and that a
// program built with AddressSanitizer or ThreadSanitizer links a libroost built with it.
//
// libstdc++'s debug mode (-D_GLIBCXX_DEBUG) gives std::vector, std::map and the other containers another
// size and layout. roost's public types hold some (roost::data's regions, task_info's path, the resolved
// options), and user code compiles the engine's per-worker structures in, so a program built in debug mode
// against a libroost built without it (or the other way round) would read the library's objects at the
// wrong offsets: memory corruption, not an error.
//
// A sanitized program against a libroost built without its sanitizer gets false reports: roost runs tasks
// on stacks of its own, and only a sanitized libroost tells ASan and TSan when it switches between them
// (the "stack-buffer-overflow in sigaltstack" and races inside task_group of an outside-user campaign). The
// other way round is fine (a plain program against a sanitized libroost links the sanitizer's runtime or
// does not link at all), as is UBSan alone.
//
// So every translation unit that includes roost refers to a symbol that libroost defines only when it was
// built in a matching mode (src/api/build_mode.cpp), and a mismatch fails at link time, naming what the
// program needs, e.g.
//   undefined reference to `roost::detail::libroost_built_with_GLIBCXX_DEBUG'
//   undefined reference to `roost::detail::libroost_built_without_GLIBCXX_DEBUG_and_with_AddressSanitizer'
// Build roost with the program's mode (cmake -DCMAKE_CXX_FLAGS=-D_GLIBCXX_DEBUG, -DROOST_SANITIZE=address
// or thread), or use -D_GLIBCXX_ASSERTIONS, the checks that keep the layout, which mixes freely.
#pragma once
// The language standard too: every public header comes here first or through another that does.
#if __cplusplus < 202002L
#error "roost needs C++20 or later: compile with -std=c++20 (or newer); CMake's roost::roost target asks for it"
#endif
#include "roost/detail/sanitizers.hpp"  // ROOST_ASAN, ROOST_TSAN

namespace roost::detail {
#if defined(_GLIBCXX_DEBUG) && defined(ROOST_ASAN)
extern const int libroost_built_with_GLIBCXX_DEBUG_and_with_AddressSanitizer;
inline const int* build_mode() noexcept { return &libroost_built_with_GLIBCXX_DEBUG_and_with_AddressSanitizer; }
#elif defined(_GLIBCXX_DEBUG) && defined(ROOST_TSAN)
extern const int libroost_built_with_GLIBCXX_DEBUG_and_with_ThreadSanitizer;
inline const int* build_mode() noexcept { return &libroost_built_with_GLIBCXX_DEBUG_and_with_ThreadSanitizer; }
#elif defined(_GLIBCXX_DEBUG)
extern const int libroost_built_with_GLIBCXX_DEBUG;
inline const int* build_mode() noexcept { return &libroost_built_with_GLIBCXX_DEBUG; }
#elif defined(ROOST_ASAN)
extern const int libroost_built_without_GLIBCXX_DEBUG_and_with_AddressSanitizer;
inline const int* build_mode() noexcept { return &libroost_built_without_GLIBCXX_DEBUG_and_with_AddressSanitizer; }
#elif defined(ROOST_TSAN)
extern const int libroost_built_without_GLIBCXX_DEBUG_and_with_ThreadSanitizer;
inline const int* build_mode() noexcept { return &libroost_built_without_GLIBCXX_DEBUG_and_with_ThreadSanitizer; }
#else
extern const int libroost_built_without_GLIBCXX_DEBUG;
inline const int* build_mode() noexcept { return &libroost_built_without_GLIBCXX_DEBUG; }
#endif
// Two references. The inline constructors of roost::runtime and roost::resolve pass build_mode() to the
// library, so that the reference lies in the program's own code wherever it makes a runtime or resolves
// options: a linker's --gc-sections keeps that code, where it dropped an unreferenced object with its
// section and the check with it (a review). And every translation unit keeps one of its own (internal
// linkage, `used`), for a build without --gc-sections that uses roost's types without either.
[[maybe_unused]] __attribute__((used)) static const int* const build_mode_reference = build_mode();
}  // namespace roost::detail
