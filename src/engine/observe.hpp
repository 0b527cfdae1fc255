// The engine's hook points for observation (include/roost/observer.hpp) and tracing (src/trace/): one
// relaxed load and a branch each while neither is installed; the dispatch is out of line (api/hooks.cpp).
#pragma once
#include <atomic>

#include "roost/detail/abi.hpp"
#include "roost/options.hpp"

namespace roost::detail {
// Per worker, the deepest split a tracer at a depth records of the tasks that run where they were spawned
// (nested_seen below): ROOST_TRACE_DEPTH, or under `auto` what the tracer's budget allows (tracer.hpp).
// api/observer.cpp.
extern std::atomic<std::uint32_t> g_trace_depth[max_workers];
// `w`: the worker reporting, whose runtime's tracer records it (engine_base::tracer).
void hook_task_start(worker_abi& w, task_id& id, double hint);
void hook_task_end(worker_abi& w, const task_id& id);
void hook_root_end(worker_abi& w, const task_id& id);  // the tracer and the simulation
void hook_spawn(unsigned worker, const task_id& parent, std::uint32_t index);
// A simulated runtime starts (on) or ends (off): the hooks charge runtime operations to virtual time.
void set_sim_hooks(bool on);
// The first exception a task_observer callback threw since the last call, rethrown (runtime::run, after
// its run); nothing if none did. api/observer.cpp.
void rethrow_observer_error();
}  // namespace roost::detail

namespace roost::engine {

void hook_task_resume(detail::worker_abi& w, detail::task_id& id);
void hook_task_moved(detail::worker_abi& w, detail::task_id& id);
void hook_sleep(detail::worker_abi& w, bool begin);
void hook_idle(detail::worker_abi& w, bool begin);
void hook_steal(detail::worker_abi& thief, unsigned victim, bool taken);

inline bool hooks_on() { return detail::hooks_installed(); }

// Whether a task that runs where it was spawned (a work-first child, a child popped at its join) is seen.
// An observer, a simulation or a tracer of every task sees every task. A tracer at a depth records it while its split depth
// (task_id::split_depth) is within its worker's recording depth (detail::g_trace_depth: ROOST_TRACE_DEPTH,
// or under `auto` what the tracer's budget allows, tracer.hpp) and its spawner was recorded, so that the
// recorded tasks form a tree; deeper, its time is part of its spawner's span. `hooks`: g_hooks as loaded.
inline bool nested_seen(unsigned hooks, unsigned worker, const detail::task_id& id) {
  if (hooks & detail::kHooksSeeingEveryTask) return true;
  return id.split_depth <= detail::g_trace_depth[worker].load(std::memory_order_relaxed) && id.parent &&
         id.parent->serial != 0;
}

// After the hook flag changed: every started engine's workers leave (or take again) the inline help-first
// path, which user code takes without looking at the flag (detail::spawn_path). engine_base.cpp.
void refresh_spawn_paths();

// A task the scheduling loop took (the root, a stolen or dealt task): always observed.
inline void observe_start(detail::worker_abi& w, detail::task_id& id, double hint) {
  if (hooks_on()) [[unlikely]] detail::hook_task_start(w, id, hint);
}
// A task that runs where it was spawned: observed as nested_seen says.
inline void observe_start_nested(detail::worker_abi& w, detail::task_id& id, double hint) {
  const unsigned hooks = detail::hook_bits();
  if (hooks && nested_seen(hooks, w.id, id)) [[unlikely]] detail::hook_task_start(w, id, hint);
}
// Observed if its start or a resumption was: by an observer, a simulation or a tracer of every task always, by a tracer at a depth when
// it gave the task a serial then. Not the depth test again: a worker's recording depth may have changed
// since the task began.
inline void observe_end(detail::worker_abi& w, const detail::task_id& id) {
  const unsigned hooks = detail::hook_bits();
  if (hooks && ((hooks & detail::kHooksSeeingEveryTask) || id.serial)) [[unlikely]]
    detail::hook_task_end(w, id);
}
// A root's end: recorded by a tracer (its begin always is) and charged by a simulation (task_end_ns), not
// reported to an observer.
inline void observe_root_end(detail::worker_abi& w, const detail::task_id& id) {
  if (hooks_on()) [[unlikely]] detail::hook_root_end(w, id);
}
// Always observed: a resumption is the scheduling loop's, like a stolen task's start.
inline void observe_resume(detail::worker_abi& w, detail::task_id* id) {
  if (hooks_on() && id) [[unlikely]] hook_task_resume(w, *id);
}
// A task that goes on, without a switch of its own, on another worker than the one it last started or
// resumed on: a child it popped back at its join ran on its fiber, suspended and was resumed elsewhere
// (engine::run_inline; the case seen, under ws-help, cats and numa), or a work-first child it called ended
// locally on the worker the child had moved to (a parent never published, or found in a queue the two
// workers share). The tracer and the observer hear of it as a resumption there, or its end was met on a
// worker where it had never run (an outside-user campaign: timelines dropped those tasks); a simulation
// charges nothing, as no switch happened.
// Counted on `running`, the task's fiber: a spawn in the runtime text gets here with its count at 0
// (engine.hpp), and the hook's code (a tracer's record) lies outside the text.
__attribute__((always_inline)) inline void observe_moved(detail::worker_abi& w, detail::task_id* id,
                                                       detail::fiber_abi* running) {
  if (hooks_on() && id) [[unlikely]] {
    detail::no_preempt_scope np(running);
    hook_task_moved(w, *id);
  }
}
inline void observe_sleep(detail::worker_abi& w, bool begin) {
  if (hooks_on()) [[unlikely]] hook_sleep(w, begin);
}
inline void observe_idle(detail::worker_abi& w, bool begin) {
  if (hooks_on()) [[unlikely]] hook_idle(w, begin);
}
inline void observe_steal(detail::worker_abi& thief, unsigned victim, bool taken) {
  if (hooks_on()) [[unlikely]] hook_steal(thief, victim, taken);
}

// Names a child by its spawn path (task_frame.hpp: parent's id, then its index among the parent's children).
// The parent is the group's owner (group_state::owner_task), the spawner itself but where a child that the
// owner's join, run_if or final region ran on the owner's stack spawns into the owner's group: that child
// may end before the one it spawned, and the owner waits for it (a pointer to the spawner's id dangled, and
// an observer's spawn path walked a cycle through a reused frame for ever: an outside-user campaign). On
// the owner's stack the owner runs no code of its own meanwhile, so its count of children is still its.
// `running()`: the spawner's fiber, whose count the hook's call is made under (engine.hpp,
// spawn_in_runtime_text); a callable, so that the common path without hooks does not load it.
// The name's stores alone: name_child's, and those of the engine's plain spawn, which has read the hooks' word
// already (engine.hpp, spawn_plain).
__attribute__((always_inline)) inline void name_child_unobserved(detail::task_frame& f, detail::task_id* parent) {
  f.id.parent = parent;
  f.id.index = parent->next_child++;
  f.id.depth = parent->depth + 1;
  f.id.next_child = 0;
}
template <class RunningFiber>
__attribute__((always_inline)) inline void name_child(detail::worker_abi& w, detail::task_frame& f,
                                                      detail::task_id* parent, RunningFiber&& running) {
  // The hooks' word is read before the stores: a read of it after them made GCC reload the child's depth
  // from the frame where a policy's order() reads it (cab), from the upper half of the vector store it
  // merged index and depth into, a load that store does not forward to on Zen 4 (cab's fib 1.12x ws's).
  const unsigned hooks = detail::hook_bits();
  name_child_unobserved(f, parent);
  if (hooks) [[unlikely]] {
    f.id.split_depth = parent->split_depth + 1 + f.id.index;
    if (hooks & detail::kHookSim) {
      // Counted: a spawn in the runtime text runs here with the spawner's count at 0 (engine.hpp), and the
      // hook's code lies outside it. (A simulated runtime is never preemptive; another one may be.)
      detail::no_preempt_scope np(running());
      detail::hook_spawn(w.id, *parent, f.id.index);
    }
  }
}

}  // namespace roost::engine
