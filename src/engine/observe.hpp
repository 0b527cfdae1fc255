// The engine's side of the observation hook (include/roost/observer.hpp): one relaxed load and a branch per
// task while nobody observes; the report itself is out of line.
#pragma once
#include <atomic>

#include "roost/detail/abi.hpp"
#include "roost/observer.hpp"

namespace roost::engine {

using detail::g_task_observer;
using detail::report_task_start;
void report_task_resume(task_observer* o, unsigned worker, const detail::task_id& id);
void report_task_end(task_observer* o, unsigned worker, const detail::task_id& id);

inline void observe_start(unsigned worker, const detail::task_id& id, double hint) {
  if (auto* o = g_task_observer.load(std::memory_order_relaxed)) [[unlikely]]
    report_task_start(o, worker, id, hint);
}
inline void observe_end(unsigned worker, const detail::task_id& id) {
  if (auto* o = g_task_observer.load(std::memory_order_relaxed)) [[unlikely]]
    report_task_end(o, worker, id);
}
inline void observe_resume(unsigned worker, const detail::task_id* id) {
  if (auto* o = g_task_observer.load(std::memory_order_relaxed)) [[unlikely]]
    if (id) report_task_resume(o, worker, *id);
}

}  // namespace roost::engine
