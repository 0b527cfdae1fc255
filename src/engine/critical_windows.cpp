#include "engine/critical_windows.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "roost/detail/abi.hpp"

// The runtime text of the module this file is linked into: the linker's bounds of the section, hidden, so
// that each module (the executable, a shared object with roost inside) sees its own; weak, so that a module
// without the section links (both are then null).
extern "C" {
extern const char __start_roost_runtime_text[] __attribute__((weak, visibility("hidden")));
extern const char __stop_roost_runtime_text[] __attribute__((weak, visibility("hidden")));
}

namespace roost {
namespace {

// One entry per module (the executable, each shared object that inlines roost's spawn paths). Constant-
// initialized, so registrations from static constructors that run before this file's own are safe. A slot
// is published by its `begin`, stored last with release; the handler reads it with acquire.
constexpr int kMaxModules = 1024;
struct module_table {
  std::atomic<const detail::critical_range*> begin{nullptr};
  std::atomic<const detail::critical_range*> end{nullptr};
};
module_table g_tables[kMaxModules];
std::atomic<int> g_claimed{0};

// One range for the whole section, in the tables' form (its start relative to the entry), registered
// before main like a module's inline windows.
detail::critical_range g_runtime_text;
struct runtime_text_registrar {
  runtime_text_registrar() noexcept {
    const char* begin = __start_roost_runtime_text;
    const char* end = __stop_roost_runtime_text;
    if (begin == nullptr || begin == end) return;
    const std::intptr_t offset =
        reinterpret_cast<std::intptr_t>(begin) - reinterpret_cast<std::intptr_t>(&g_runtime_text);
    if (offset != static_cast<std::int32_t>(offset)) {
      // An unregistered runtime text would let a tick land in a spawn half done: refuse to run.
      std::fprintf(stderr, "roost: the section roost_runtime_text lies more than 2 GiB from roost's data in "
                           "its module; build with the small or medium code model\n");
      std::abort();
    }
    g_runtime_text.start = static_cast<std::int32_t>(offset);
    g_runtime_text.length = static_cast<std::uint32_t>(end - begin);
    detail::register_critical_ranges(&g_runtime_text, &g_runtime_text + 1);
  }
};
// Before every default-priority static constructor, the program's too: linked from libroost.a, the program's
// own objects come first on the link line, so their constructors ran first, and a global whose constructor
// made a preemptive runtime and ran tasks spawned through the runtime text while a tick there was not
// deferred (a review).
__attribute__((init_priority(101))) runtime_text_registrar g_runtime_text_registrar;

}  // namespace

void detail::register_critical_ranges(const critical_range* begin, const critical_range* end) noexcept {
  if (begin == nullptr || begin == end) return;  // a module without inline deque operations
  const int n = g_claimed.load(std::memory_order_acquire);
  for (int i = 0; i < n && i < kMaxModules; ++i)
    if (g_tables[i].begin.load(std::memory_order_acquire) == begin) return;  // this module's, already
  const int i = g_claimed.fetch_add(1, std::memory_order_acq_rel);
  if (i >= kMaxModules) {
    // An unregistered table would let a tick land inside a deque operation: refuse to run rather than
    // corrupt a deque later.
    std::fprintf(stderr, "roost: more than %d modules (executable and shared objects) inline roost's spawn paths; "
                         "this build of roost registers at most that many\n", kMaxModules);
    std::abort();
  }
  g_tables[i].end.store(end, std::memory_order_relaxed);
  g_tables[i].begin.store(begin, std::memory_order_release);
}

bool engine::in_critical_window(std::uintptr_t pc) {
  const int n = g_claimed.load(std::memory_order_acquire);
  for (int i = 0; i < n && i < kMaxModules; ++i) {
    const detail::critical_range* r = g_tables[i].begin.load(std::memory_order_acquire);
    if (r == nullptr) continue;  // being registered: its module has not run its static constructors yet
    const detail::critical_range* e = g_tables[i].end.load(std::memory_order_relaxed);
    for (; r != e; ++r) {
      const std::uintptr_t start = reinterpret_cast<std::uintptr_t>(r) + static_cast<std::intptr_t>(r->start);
      if (pc - start < r->length) return true;
    }
  }
  return false;
}

}  // namespace roost
