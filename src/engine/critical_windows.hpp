// The critical windows: address ranges where a tick is deferred because of where it landed, not because
// of a count the code stored. Two kinds:
//  * the inline deque operations (include/roost/detail/abi.hpp): every module that inlines one registers its
//    table of address ranges before main;
//  * the runtime text: whole functions of the engine placed in the section roost_runtime_text
//    (ROOST_RUNTIME_TEXT below), registered once per module by critical_windows.cpp. Their code runs with
//    the calling task's count at 0, so they cost the task no raise and no lowering (engine.hpp,
//    spawn_in_runtime_text; engine/README.md, "Preemption", 5).
// The preemption handler asks whether the instruction a tick interrupted lies in one.
#pragma once
#include <cstdint>

// Places a function in the runtime text. Only a function of its own: a template's or an inline function's
// code goes to a section of its own in a COMDAT group, and GCC then ignores the attribute (an explicit
// specialization is an ordinary function). ELF and GCC's attribute syntax only; elsewhere there is no runtime
// text, and the engine keeps its counted entry points.
#if defined(__GNUC__) && defined(__ELF__)
#define ROOST_RUNTIME_TEXT __attribute__((section("roost_runtime_text"), noinline))
#endif

namespace roost::engine {

// Async-signal-safe: atomic loads and a scan of the registered tables, no lock, no allocation. Linear in
// the number of inline deque operations the program's modules contain (a few per spawning function) and of
// modules with runtime text, paid once per tick that would otherwise preempt.
bool in_critical_window(std::uintptr_t pc);

}  // namespace roost::engine
