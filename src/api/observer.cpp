// Hook dispatch: the task observer (include/roost/observer.hpp) and the tracer (src/trace/) share one flag.
#include <exception>
#include <mutex>
#include <thread>
#include <string>
#include <utility>

#include "api/listener_calls.hpp"
#include "engine/observe.hpp"
#include "engine/engine_base.hpp"
#include "engine/task_path.hpp"
#include "engine/worker.hpp"
#include "platform/fork_hold.hpp"
#include "platform/platform.hpp"
#include "platform/sim_platform.hpp"
#include "roost/errors.hpp"
#include "roost/observer.hpp"
#include "trace/tracer.hpp"

namespace roost {

namespace detail {
std::atomic<unsigned> g_hooks{0};
std::atomic<std::uint32_t> g_trace_depth[max_workers];
}  // namespace detail

namespace {
constexpr unsigned kObserverBit = detail::kHookObserver, kTracerBit = detail::kHookTracer, kSimBit = detail::kHookSim;
std::atomic<task_observer*> g_task_observer{nullptr};

void set_bit(unsigned bit, bool on) {
  // seq_cst: a worker leaving a final region stores its path and then reads the flag (src/api/final.cpp)
  if (on) detail::g_hooks.fetch_or(bit, std::memory_order_seq_cst);
  else detail::g_hooks.fetch_and(~bit, std::memory_order_seq_cst);
  engine::refresh_spawn_paths();
}
}  // namespace

std::string task_event::path_string() const { return engine::format_spawn_path(path); }

// Callbacks in flight: set_task_observer returns only once no callback of the observer it replaced is
// running or can start (listener_calls.hpp).
namespace {
using observer_calls = detail::listener_calls<struct task_observer_tag>;
[[maybe_unused]] const bool observer_calls_fork_handler = observer_calls::watch_forks();  // listener_calls.hpp

// A callback runs inside the scheduler, between a task's switches: a task it spawned or a join it made
// there ran on the engine's state half way through a start or an end, and crashed, hung, or raced in the
// deque under TSan (an outside-user campaign: a callback's own task_group). While a callback runs, its
// worker's entry points refuse (every spawn reaches them while an observer is installed: the spawn path is
// the engine's). Nothing is spawned when they throw (task_group::submit), so the group stays empty.
[[noreturn]] void refuse_in_callback(const char* what) {
  throw usage_error(std::string("roost: ") + what + " inside a task_observer callback: callbacks run inside the "
                    "scheduler, between a task's switches, where no task may be made or joined; record what the "
                    "callback needs and spawn from a task");
}
void spawn_in_callback(detail::worker_abi&, detail::group_state&, detail::task_frame&) {
  refuse_in_callback("a task was spawned (task_group::run, parallel_invoke or a parallel algorithm)");
}
void wait_in_callback(detail::worker_abi&, detail::group_state&) { refuse_in_callback("a task_group was joined"); }

struct callback_entry_points {
  detail::worker_abi* w;
  decltype(detail::worker_abi::engine_spawn) spawn;
  decltype(detail::worker_abi::engine_wait) wait;
  explicit callback_entry_points(detail::worker_abi* worker)
      : w(worker), spawn(worker ? worker->engine_spawn : nullptr), wait(worker ? worker->engine_wait : nullptr) {
    if (!w) return;
    w->engine_spawn = &spawn_in_callback;
    w->engine_wait = &wait_in_callback;
  }
  ~callback_entry_points() {
    if (!w) return;
    w->engine_spawn = spawn;
    w->engine_wait = wait;
  }
};

// Calls f(observer) if an observer is installed, counted as in flight. Not preempted inside: a callback
// suspended there would keep a setter on the same worker waiting for ever.
template <class F>
void with_observer(detail::worker_abi& w, F&& f) {
  if (!g_task_observer.load(std::memory_order_relaxed)) return;  // none, or removed: nothing to count
  detail::fiber_abi* fb = detail::running_fiber();
  detail::no_preempt_scope np(fb);
  // The worker the callback's own code would spawn on: its fiber's, which is w.
  callback_entry_points refuse(fb && fb->worker ? fb->worker : &w);
  observer_calls::call(w.id, [] { return g_task_observer.load(std::memory_order_seq_cst); }, f);
}
}  // namespace

task_observer* set_task_observer(task_observer* o) {
  // Not preempted while it holds the setters' lock and waits (preempt.hpp: the runtime's own code).
  detail::no_preempt_scope np(detail::running_fiber());
  return observer_calls::replace([&] {
    // Installing, the bit (and with it every worker's spawn path: the engine's) comes before the pointer: a
    // callback, which can start only once the pointer is there, then finds its spawns refused by the engine's
    // entry points, never on an inline path (a review: a tracer's hooks already on let a callback in between
    // push a child inline). Removing, the pointer goes first, as before.
    if (o) set_bit(kObserverBit, true);
    // Ends went unobserved before this, or will after it: no worker's cached path stands (task_path.hpp).
    engine::observed_paths_stale();
    task_observer* prev = g_task_observer.exchange(o, std::memory_order_seq_cst);
    if (!o) set_bit(kObserverBit, false);
    return prev;
  });
}

namespace trace {
void set_tracing_hooks(bool on, std::uint32_t depth, bool every_task) {
  for (auto& d : detail::g_trace_depth) d.store(depth, std::memory_order_relaxed);  // before the bit
  // Every task: the inline paths' halves and children become tasks the engine names and the tracer records,
  // so that each has its spawner in the trace (roost-analyze mapping follows spawn paths).
  if (on) set_bit(detail::kHookTracerEveryTask, every_task);
  set_bit(kTracerBit, on);
  if (!on) set_bit(detail::kHookTracerEveryTask, false);
}
void set_recording_depth(unsigned worker, std::uint32_t depth) {
  detail::g_trace_depth[worker].store(depth, std::memory_order_relaxed);
}
}  // namespace trace

// Simulated runtimes count their runtime operations in the hooks (platform/sim_platform.hpp). A count of
// them, not a bit: several simulated runtimes may live at once.
namespace {
std::atomic<unsigned> g_simulated_runtimes{0};
}
void detail::set_sim_hooks(bool on) {
  if (on) {
    if (g_simulated_runtimes.fetch_add(1) == 0) set_bit(kSimBit, true);
  } else if (g_simulated_runtimes.fetch_sub(1) == 1) {
    set_bit(kSimBit, false);
  }
}

// An observer's callback runs inside the engine, where an exception has nowhere to go (it ended the
// process in std::terminate). The first one is kept, and runtime::run rethrows it when it returns
// (rethrow_observer_error); the run itself goes on, and so do the callbacks.
namespace {
std::mutex g_observer_error_mu;
__attribute__((constructor)) void watch_forks_for_observer_errors() {
  platform::hold_across_forks<g_observer_error_mu>();  // platform/fork_hold.hpp
}
std::exception_ptr g_observer_error;            // g_observer_error_mu
std::atomic<bool> g_observer_failed{false};     // g_observer_error is set: the check after each run
template <class Call>
void call_observer(Call&& call) noexcept {
  try {
    call();
  } catch (...) {
    std::lock_guard<std::mutex> lk(g_observer_error_mu);
    if (!g_observer_error) g_observer_error = std::current_exception();
    g_observer_failed.store(true, std::memory_order_release);
  }
}
}  // namespace

void detail::rethrow_observer_error() {
  if (!g_observer_failed.load(std::memory_order_acquire)) return;
  std::exception_ptr e;
  {
    std::lock_guard<std::mutex> lk(g_observer_error_mu);
    e = std::exchange(g_observer_error, nullptr);
    g_observer_failed.store(false, std::memory_order_relaxed);
  }
  if (e) std::rethrow_exception(e);
}

// The tracer of the runtime whose worker reports (engine_base::tracer): never another runtime's.
static trace::tracer* tracer_of(detail::worker_abi& w) { return static_cast<engine::worker&>(w).eng->tracer(); }
// The path an observer's event names, from what the reporting worker built last (engine/task_path.hpp).
static std::vector<std::uint32_t> path_of(detail::worker_abi& w, const detail::task_id& id) {
  return static_cast<engine::worker&>(w).observed.path_of(id);
}

// A task's start and end with a simulation or an observer: out of line, behind the tracer's own path below.
// With them inline every hook saved six registers and kept the hint on its stack, which a traced task
// paid at its start and its end with neither installed (callgrind, heat2d under ws: 94 instructions a
// recorded start).
namespace {
__attribute__((noinline)) void task_start_all(detail::worker_abi& w, detail::task_id& id, double hint) {
  if (auto* s = platform::t_sim) s->on_task_start(&id);
  if (auto* t = tracer_of(w)) t->task_begin(w.id, id);
  with_observer(w, [&](task_observer* o) {
    call_observer([&] { o->on_task_start(task_event{static_cast<int>(w.id), path_of(w, id), hint}); });
  });
}
__attribute__((noinline)) void task_end_all(detail::worker_abi& w, const detail::task_id& id) {
  // The spawner, which waits for this task, goes on here if anything does before a start or a resume (a local
  // end returns into its continuation or its join) (an outside review: the watchdog named the ended child).
  if (auto* s = platform::t_sim) s->on_task_end(id.parent);
  if (auto* t = tracer_of(w)) t->task_end(w.id, id);
  with_observer(w, [&](task_observer* o) {
    engine::observed_paths& paths = static_cast<engine::worker&>(w).observed;
    call_observer([&] {
      // Counted before the engine learns of the end, whatever the path's allocation or the callback throws
      // (task_path.hpp).
      struct count_the_end {
        engine::observed_paths& p;
        const detail::task_id& id;
        ~count_the_end() { p.ended(id); }
      } counted{paths, id};
      o->on_task_end(task_event{static_cast<int>(w.id), paths.path_of(id), -1});
    });
  });
}
// Whether only a tracer listens: no simulation on this thread, no observer installed.
inline bool tracer_alone() {
  return !platform::t_sim && !g_task_observer.load(std::memory_order_relaxed);
}
}  // namespace

void detail::hook_task_start(worker_abi& w, task_id& id, double hint) {
  if (!tracer_alone()) [[unlikely]] return task_start_all(w, id, hint);
  if (auto* t = tracer_of(w)) t->task_begin(w.id, id);
}

void detail::hook_task_end(worker_abi& w, const task_id& id) {
  if (!tracer_alone()) [[unlikely]] return task_end_all(w, id);
  if (auto* t = tracer_of(w)) t->task_end(w.id, id);
}

// A root's end: a task end for the simulation's cost table (task_end_ns, as its start is charged) and the
// tracer; not an observer's (run() returning is its end, observer.hpp).
void detail::hook_root_end(worker_abi& w, const task_id& id) {
  engine::observed_paths_stale();  // no observer hears a root's end (task_path.hpp)
  if (auto* s = platform::t_sim) s->on_task_end(nullptr);
  if (auto* t = tracer_of(w)) t->task_end(w.id, id);
}

void engine::hook_task_resume(detail::worker_abi& w, detail::task_id& id) {
  if (auto* s = platform::t_sim) s->on_resume(&id);
  if (auto* t = tracer_of(w)) t->task_resume(w.id, id);
  with_observer(w, [&](task_observer* o) {
    call_observer([&] { o->on_task_resume(task_event{static_cast<int>(w.id), path_of(w, id), -1}); });
  });
}

void engine::hook_task_moved(detail::worker_abi& w, detail::task_id& id) {
  if (auto* t = tracer_of(w)) t->task_resume(w.id, id);
  with_observer(w, [&](task_observer* o) {
    call_observer([&] { o->on_task_resume(task_event{static_cast<int>(w.id), path_of(w, id), -1}); });
  });
}

void engine::hook_sleep(detail::worker_abi& w, bool begin) {
  if (auto* t = tracer_of(w)) t->sleep(w.id, begin);
}

void engine::hook_idle(detail::worker_abi& w, bool begin) {
  if (auto* t = tracer_of(w)) t->idle(w.id, begin);
}

void engine::hook_steal(detail::worker_abi& thief, unsigned victim, bool taken) {
  if (auto* s = platform::t_sim) s->on_steal(thief.id, victim, taken);
  if (auto* t = tracer_of(thief)) t->steal(thief.id, victim, taken);
}

// The simulation charges a spawn; the tracer records none (a child's task_begin names its spawner and rank).
void detail::hook_spawn(unsigned, const task_id&, std::uint32_t) {
  if (auto* s = platform::t_sim) s->on_spawn();
}

}  // namespace roost
