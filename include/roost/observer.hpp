// Observation hook: which worker ran which task, identified by its spawn path ("0.2.1"). Meant for tests
// and tools (property tests of the schedulers rely on it). Costs one relaxed load and a branch per task
// while no observer is installed; installed, each event builds the task's path, one number a level, so its
// cost grows with the task's depth.
#pragma once
#include "roost/detail/min_max_aside.hpp"  // C headers' min/max macros kept out, given back at the end
#include "roost/detail/build_mode.hpp"  // a program in another libstdc++ mode does not link
#include <cstdint>
#include <string>
#include <vector>

namespace roost {

struct task_event {
  int worker;                        // worker that runs the task
  // Spawn path, root = {0}. A task an inline path pushed before an observer was installed (ws-help's first
  // child of a group, a two-way join's half: they are named by nobody) is seen when it runs as a child of an
  // unrecorded parent, {4294967295, k}, k unique in its runtime while each of its P workers has named fewer
  // than 2^32 / P such tasks; one the engine spawned then has its path, whose index counts its spawner's
  // children that the engine named (so under ws-help it may be one below the child's rank); a task that its
  // spawner's join ran in place before then is not seen at all. A child spawned into a group by another task
  // than the group's creator is named as the creator's child where it was spawned on the creator's stack
  // (by a child its join ran there), else as a child of an unrecorded parent: never under its spawner,
  // which may end before it.
  std::vector<std::uint32_t> path;
  double work_hint;                  // < 0: none
  std::string path_string() const;   // "0.2.1"
};

class task_observer {
 public:
  virtual ~task_observer() = default;
  // Called on the worker, just before the task's body starts. Must be thread-safe.
  virtual void on_task_start(const task_event& e) = 0;
  // Called when a task resumes on a worker after a suspension (a stolen continuation, a join, a preemption:
  // then from inside the tick's signal handler, on the task's stack, before the task goes on from where the
  // tick found it; docs/user-guide.md, "Data annotations"); the worker may differ from the one the task
  // started on. Also when a task goes on on another worker than the one it
  // last started or resumed on without a suspension of its own (a child it ran in place suspended and was
  // resumed there): a task always ends on the worker of its last start or resumption.
  virtual void on_task_resume(const task_event&) {}
  // Called on the worker that finishes the task (its body returned or threw), before the scheduler learns
  // of it. Not called for a root task (runtime::run returning is its end). An observer installed while a run
  // is in flight sees the ends of the tasks that started before it and not their starts: a program that
  // pairs starts with ends installs it before the run.
  virtual void on_task_end(const task_event&) {}
};

// A callback that throws does not stop the run or the callbacks: the first exception is kept, and the
// next runtime::run to return (of any runtime: the observer is the process's) rethrows it once its run is
// done, unless that run's own tasks threw, whose exception comes first: the callback's is then kept for the
// next run to return after it, which rethrows it even where its own tasks threw nothing (an outside-user
// campaign asked).
// Installs (or, with nullptr, removes) the observer; returns the previous one. When it returns, no callback
// of the previous observer is running or will start, on any worker of any runtime, but those the calling
// thread is inside: the program may destroy it then. It waits for callbacks in flight; called from a
// callback, not for that one (nor for callbacks it is nested in), which goes on unprotected and must not use
// its observer once the setter returned. So callbacks on several workers may each remove their observer.
// A callback must not wait for another thread that is about to call set_task_observer; nor call
// set_touch_consumer while a touch_consumer's callback may call set_task_observer: each setter waits for the
// other's call in flight, and the two wait for ever.
// A callback runs inside the scheduler, between a task's switches: it may not spawn a task or join one
// (task_group::run and wait, parallel_invoke, the parallel algorithms), which is a usage_error thrown from the
// call (and rethrown by runtime::run as above), since the engine's state there is half way through a start
// or an end; inside a run_final region, whose children run inline on the callback's own stack and touch no
// scheduler state, they run. Record what the callback needs, and spawn from a task.
task_observer* set_task_observer(task_observer* o);

}  // namespace roost

#include "roost/detail/min_max_back.hpp"
