// A task's spawn path: the child indices from its root down to it, the name under which observers, CATS's
// profile and the tests know a task ("0.2.1"). A task_id holds only its own index and its parent, so the
// path is built by walking up (only where hooks or profiling ask for it, never on a spawn's fast path).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "roost/detail/task_frame.hpp"

namespace roost::engine {

std::vector<std::uint32_t> spawn_path(const detail::task_id& id);
std::string format_spawn_path(const std::vector<std::uint32_t>& path);  // "0.2.1"

// spawn_path for the task observer's events (api/observer.cpp), which name every task at its start, end and
// resumptions: walked in full, a chain of d nested tasks cost d steps an event, d^2 over the chain, each step
// a load from another task's stack (under ws, a miss: 490 us a level at depth 4,000 against 26 at 1,000).
// Each worker keeps the last path it built, with its tasks' addresses, and reuses it from the deepest task
// of the new one that it holds. Sound while no task of it ended: an address is reused only after its task
// ended, so every observed end counts in a global counter (ended, before the engine learns of the end), as
// does everything after which an end may have gone unobserved (observed_paths_stale: the observer installed
// or removed, a root's end); a worker that sees the counter moved starts over, but for its own end, which
// only drops the ended task. Only the thread serving the worker calls these, under its fiber's
// no-preemption scope, so no tick's handler builds a path while the worker's is half changed. A member of
// the worker, not a thread_local: a program that loads several shared objects with roost in each has little
// static TLS to spare (tests/plugins/host.cpp).
class observed_paths {
 public:
  // Starts over where an allocation throws (the exception leaves, as the walk's own did).
  std::vector<std::uint32_t> path_of(const detail::task_id& id);
  // After path_of(id) for the end of task `id` (or its throw), and before the engine learns of the end.
  void ended(const detail::task_id& id) noexcept;

 private:
  std::vector<std::uint32_t> path_from_held(const detail::task_id& id);
  std::uint64_t epoch_ = ~std::uint64_t{0};  // the counter when ids_ was built: none at first
  std::vector<const detail::task_id*> ids_;  // the last path's tasks, root first
  std::vector<std::uint32_t> path_;          // their indices
  std::vector<const detail::task_id*> walked_;
};
void observed_paths_stale();

}  // namespace roost::engine
