// The critical windows of the inline deque operations (include/roost/detail/abi.hpp): every module that
// inlines one registers its table of address ranges before main, and the preemption handler asks whether
// the instruction a tick interrupted lies in one.
#pragma once
#include <cstdint>

namespace roost::engine {

// Async-signal-safe: atomic loads and a scan of the registered tables, no lock, no allocation. Linear in
// the number of inline deque operations the program's modules contain (a few per spawning function),
// paid once per tick that would otherwise preempt.
bool in_critical_window(std::uintptr_t pc);

}  // namespace roost::engine
