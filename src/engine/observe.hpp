// The engine's hook points for observation (include/roost/observer.hpp) and tracing (src/trace/): one
// relaxed load and a branch each while neither is installed; the dispatch is out of line (api/hooks.cpp).
#pragma once
#include <atomic>

#include "roost/detail/abi.hpp"

namespace roost::detail {
void hook_task_start(unsigned worker, task_id& id, double hint);
void hook_task_end(unsigned worker, const task_id& id);
void hook_spawn(unsigned worker, const task_id& parent, std::uint32_t index);
// A simulated runtime starts (on) or ends (off): the hooks charge runtime operations to virtual time.
void set_sim_hooks(bool on);
}  // namespace roost::detail

namespace roost::engine {

void hook_task_resume(unsigned worker, detail::task_id& id);
void hook_sleep(unsigned worker, bool begin);
void hook_idle(unsigned worker, bool begin);
void hook_steal(unsigned thief, unsigned victim, bool taken);

inline bool hooks_on() { return detail::hooks_installed(); }
// Whether a task that runs where it was spawned is deep enough, in splits (task_id::split_depth), to be left
// to its spawner's span (abi.hpp).
inline bool below_hook_depth(const detail::task_id& id) {
  return id.split_depth > detail::g_hook_depth.load(std::memory_order_relaxed);
}

// After the hook flag changed: every started engine's workers leave (or take again) the inline help-first
// path, which user code takes without looking at the flag (detail::spawn_path). engine_base.cpp.
void refresh_spawn_paths();

// A task the scheduling loop took (the root, a stolen or dealt task): always observed.
inline void observe_start(unsigned worker, detail::task_id& id, double hint) {
  if (hooks_on()) [[unlikely]] detail::hook_task_start(worker, id, hint);
}
// A task that runs where it was spawned (a work-first child, a child popped at its join): observed down to
// the hook depth; deeper, its time is part of the span of the observed task that spawned it.
inline void observe_start_nested(unsigned worker, detail::task_id& id, double hint) {
  if (hooks_on() && !below_hook_depth(id)) [[unlikely]] detail::hook_task_start(worker, id, hint);
}
// Observed if its start or a resumption was (the tracer gave it a serial then).
inline void observe_end(unsigned worker, const detail::task_id& id) {
  if (hooks_on() && (!below_hook_depth(id) || id.serial)) [[unlikely]] detail::hook_task_end(worker, id);
}
// Always observed: a resumption is the scheduling loop's, like a stolen task's start.
inline void observe_resume(unsigned worker, detail::task_id* id) {
  if (hooks_on() && id) [[unlikely]] hook_task_resume(worker, *id);
}
inline void observe_sleep(unsigned worker, bool begin) {
  if (hooks_on()) [[unlikely]] hook_sleep(worker, begin);
}
inline void observe_idle(unsigned worker, bool begin) {
  if (hooks_on()) [[unlikely]] hook_idle(worker, begin);
}
inline void observe_steal(unsigned thief, unsigned victim, bool taken) {
  if (hooks_on()) [[unlikely]] hook_steal(thief, victim, taken);
}

// Names a child by its spawn path (task_frame.hpp: parent's id, then its index among the parent's children).
__attribute__((always_inline)) inline void name_child(detail::worker_abi& w, detail::task_frame& f) {
  detail::task_id* parent = w.current_task;
  f.id.parent = parent;
  f.id.index = parent->next_child++;
  f.id.depth = parent->depth + 1;
  f.id.next_child = 0;
  if (hooks_on()) [[unlikely]] {
    f.id.split_depth = parent->split_depth + 1 + f.id.index;
    if (!below_hook_depth(f.id)) detail::hook_spawn(w.id, *parent, f.id.index);
  }
}

}  // namespace roost::engine
