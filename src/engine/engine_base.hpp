// What every engine shares regardless of scheduler: the workers and their threads, the topology, the
// root tasks run by the caller as worker 0, idle sleep/wake and shutdown. engine<Policy> (engine.hpp) adds the
// scheduling paths, specialised per policy; the virtual functions here are called only at start-up,
// shutdown and iteration boundaries, never per task.
#pragma once
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/idle.hpp"
#include "engine/preemption.hpp"
#include "engine/worker.hpp"
#include "platform/platform.hpp"
#include "platform/sim_platform.hpp"
#include "roost/options.hpp"
#include "topology/placement.hpp"
#include "topology/topology.hpp"

namespace roost {
class touch_consumer;
namespace trace {
class tracer;
}
}  // namespace roost

namespace roost::engine {

struct switch_msg;

// What a simulated platform swaps between its sim threads: the engine's thread-locals (engine_base.cpp).
platform::sim_platform::engine_tls sim_thread_locals();

class engine_base {
 public:
  engine_base(const resolved_options& cfg, std::shared_ptr<const topo::topology> tp, topo::placement pl);
  virtual ~engine_base();
  engine_base(const engine_base&) = delete;

  // Starts the worker threads (after the derived constructor ran). Worker 0 has none: see run_root.
  void start();
  // The process that made this engine: a child of fork() has a copy of it, without its worker threads.
  long creator_pid() const { return creator_pid_; }
  // Stops and joins them; every root task must have finished.
  void stop();
  // The coarse distribution's count of parts for allocations this runtime's tasks make (mem/distribution.cpp:
  // successive allocations on successive nodes). The runtime's own, started where the process's count stood
  // when the runtime was made, so that one runtime's allocations do not move another's data: two runtimes made
  // one after the other with the same program placed it differently, and a simulated report depended on what
  // the process had run before (an outside-user campaign).
  std::atomic<std::uint64_t>& coarse_parts() { return coarse_parts_; }
  // Sets every worker's spawn path from its policy and the hook flag (detail::spawn_path).
  void set_spawn_paths();

  // Runs a root task with the calling thread (not a worker of any runtime) as worker 0, as OpenMP's and
  // oneTBB's calling threads take part in their parallel work: the root starts at once, and the caller
  // continues as soon as `done` is set, with no hand-off to another thread and no wake-up of a sleeping
  // caller. The engine sets it (finish_root) on whichever worker the root ends, after the policy heard of
  // the end: the caller's next run() begins an iteration that must not meet the previous root still
  // ending (tests/test_engine.cpp). Worker 0 leaves the scheduling loop when it finds `done` set.
  void run_root(detail::job* root, std::atomic<std::uint32_t>& done);
  // Memory for a root's frame, from worker 0's pool: the caller becomes worker 0 for the call and nobody else
  // touches that pool between calls (run is serialised). Whichever worker ends the root frees it into its
  // own pool (engine.hpp, run_fresh), as any frame; a root made with operator new went to a pool that never
  // gave it back, 144 bytes lost per run().
  void* alloc_root_frame(std::size_t bytes, std::size_t align) { return workers_[0]->frames.alloc(bytes, align); }

  virtual void iteration_begin() {}
  virtual void iteration_end() {}
  virtual void request_reprofile() {}
  virtual std::string policy_notes() const { return {}; }

  // Whether the policy reads per-task data declarations (roost/data.hpp; seed 002's numa deals by them):
  // only then does a declared spawn hand its declaration over (worker::spawn_decl). Set once, by engine<P>.
  bool uses_declarations() const { return uses_declarations_; }

  const resolved_options& config() const { return cfg_; }
  const topo::topology& topology() const { return *topo_; }
  const topo::placement& placement() const { return place_; }
  unsigned num_workers() const { return static_cast<unsigned>(workers_.size()); }
  worker& worker_at(unsigned i) { return *workers_[i]; }
  idle_state& idle() { return idle_; }
  bool stopping() const { return stop_.load(std::memory_order_acquire); }
  bool oversubscribed() const { return place_.oversubscribed; }

  // An idle worker looks for work every kPollNs while it spins, and spins for kSpinNs before it sleeps.
  // Sized in time, not in pauses: at 64 pauses between looks, a worker on the Zen 4 of the figures (35 ns
  // a pause) noticed new work up to 2.2 us late, at the start of every iteration of an iterative program.
  // 100 ns rather than 250: each iteration of a fine-grained loop waits for a look twice (its work reaching
  // worker 1, the root's return to worker 0); engine/README.md, "Sleep".
  static constexpr unsigned kPollNs = 100;
  static constexpr unsigned kSpinNs = 100'000;
  static constexpr unsigned kSpinRounds = kSpinNs / kPollNs;
  unsigned relax_per_poll() const { return relax_per_poll_; }

  // Preemption: how many tasks ticks suspended, and how many ticks were deferred, over all workers (read
  // while the workers are idle: between runs).
  std::uint64_t preemptions() const;
  std::uint64_t preempt_ticks_deferred() const;
  // The runtime's timers while ROOST_PREEMPT is on (the tick's handler passes a chained tick on), else null.
  preemption_timers* preemption() const { return preempt_.get(); }
  // While preemption is on: the thread that starts spares for the workers' pools (engine/klt.hpp).
  klt_creator* klt_threads() const { return klts_.get(); }
  // While preemption is on, kernel thread `k` starts or stops serving worker w: its timer, and the chained
  // timer's record of whom to signal. Async-signal-safe (a preempted task's thread calls both in the tick).
  // start_serving returns whether k's timer was still lingering from the end of this runtime's last run.
  // note_mask: whether the thread's signal mask now is what its tasks run with (note_serving_mask); not for a
  // KLT-switching task's thread taking its worker back inside the tick's handler (or after on_sleep_exit's
  // block), whose mask then blocks SIGURG as well: the mask it noted when it began serving still holds.
  bool start_serving(worker& w, klt& k, bool note_mask = true);
  // linger: worker 0's thread leaving at the end of a back-to-back run, whose timer is left armed
  // (preemption.hpp; only if the thread still serves).
  void stop_serving(worker& w, klt& k, bool linger = false);

  // Any work visible anywhere: the last look before sleeping.
  bool any_work_visible();

  // A spawn into group g by a task of this runtime, running on w, that is not g's owner, or by a child its
  // owner's join runs on the owner's stack: a foreign child (engine/join.hpp), spawned parent-first and
  // counted on g's balance alone. The closure of f moves out (f.ops is null afterwards). engine.hpp.
  virtual void spawn_foreign(worker& w, detail::group_state& g, detail::task_frame& f) = 0;

  // Who listens to this runtime alone (api/runtime.cpp; set while none of its tasks runs: before start,
  // after stop, or by the thread calling run between its runs). Its tracer, which the engine's hooks record
  // to (api/observer.cpp), and the first consumer of its tasks' annotations (roost::touch, api/touch.cpp):
  // the simulation, the tracer, cats's profiling meter, each passing every call on to the one installed
  // before it. Per runtime, so that another runtime's tasks never reach them: a process-wide tracer wrote a
  // second runtime's events into the first one's lanes, from two threads at once.
  trace::tracer* tracer() const { return tracer_; }
  void set_tracer(trace::tracer* t) { tracer_ = t; }
  touch_consumer* touch_sink() const { return touch_sink_.load(std::memory_order_acquire); }
  touch_consumer* set_touch_sink(touch_consumer* c);  // the previous one

 protected:
  // The root's end, its last step on the worker it ended on: sets the caller's `done` and wakes worker 0
  // if it sleeps, so that it sees it.
  void finish_root();
  virtual ult::entry_fn fiber_entry() const = 0;
  // The worker ABI's scheduler-specific part: engine_spawn, engine_wait and inline_path.
  virtual void set_entry_points(worker& w) const = 0;
  bool uses_declarations_ = false;

 private:
  void thread_main(unsigned id, fiber* first);
  // From the calling thread's own stack: serves worker w from fiber `first`, entered with `boot` (from
  // nullptr: first sleep as a spare until told to take over), until w leaves this thread for good. Under
  // KLT-switching (self: this thread's record) the worker comes back here whenever this thread hands it to
  // another one, and this thread then sleeps as a spare until it is handed the worker again; otherwise
  // (self nullptr) only to leave. Parks the last fiber it comes back from.
  void serve(worker& w, klt* self, fiber* first, switch_msg& boot);
  // A spare asleep in w's pool: true when told to take over (the worker is this thread's then), false when
  // told to leave or to exit.
  bool await_turn(worker& w, klt& k);
  // What a spare thread runs (klt_creator).
  static void klt_spare_main(void* eng, worker& w, klt& k);

  resolved_options cfg_;
  const long creator_pid_ = static_cast<long>(::getpid());
  std::shared_ptr<const topo::topology> topo_;
  topo::placement place_;
  fiber_overflow spare_fibers_;  // declared before the workers: their pools spill into it
  std::vector<std::unique_ptr<worker>> workers_;
  std::vector<platform::os::thread_handle> threads_;
  idle_state idle_;
  std::unique_ptr<preemption_timers> preempt_;  // ROOST_PREEMPT=signal|klt: the workers' timers
  std::unique_ptr<klt_creator> klts_;           // ROOST_PREEMPT=signal|klt
  std::atomic<bool> stop_{false};
  trace::tracer* tracer_ = nullptr;
  std::atomic<touch_consumer*> touch_sink_{nullptr};
  std::atomic<std::uint64_t> coarse_parts_{0};
  std::uint64_t roots_run_ = 0;  // calls of run_root so far (serialised by runtime::run)
  const unsigned relax_per_poll_ = platform::os::relax_count_for_ns(kPollNs);
};

}  // namespace roost::engine
