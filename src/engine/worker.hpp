// A worker: one OS thread at a time (several take turns under KLT-switching: engine/klt.hpp), its deque,
// its pools, and what it is running now.
#pragma once
#include <atomic>
#include <cstdint>

#include "engine/fiber.hpp"
#include "engine/frame_pool.hpp"
#include "engine/klt.hpp"
#include "engine/task_path.hpp"
#include "platform/platform.hpp"
#include "roost/data.hpp"
#include "roost/detail/abi.hpp"
#include "ult/context.hpp"

namespace roost::engine {

struct worker;
class engine_base;

// The worker ABI (id, deque, current task, spawn path, the engine's entry points) comes first: user code
// reads it inline. What every switch reads follows it, so that it shares the ABI's last cache line (the
// current task, path and entry points): the current fiber, the thread's exception state and the fiber
// pool's head and count. After a leaf that streamed through L1, a spawn then misses on one line of the
// worker instead of three. (The deque's own lines come before: its owner line, and the thieves' lines.)
struct alignas(64) worker : detail::worker_abi {
  fiber* current_fiber = nullptr;
  ult::eh_state* eh = nullptr;  // this thread's C++ exception state (ult/context.hpp)
  fiber_pool fibers;
  frame_pool frames;

  engine_base* eng = nullptr;
  // The policy's own state for this worker, if it keeps any (adws's per_worker): one load on the spawn
  // path instead of indexing the policy's array with the worker's id.
  void* policy_state = nullptr;
  // Children of an unrecorded parent this worker named (engine.hpp, name_unnamed, and foreign children,
  // name_foreign): their indices, unique in the runtime (unrecorded_index).
  std::uint32_t unrecorded_named = 0;
  unsigned pu = 0;        // topology PU this worker stands for
  int os_cpu = -1;        // pinned CPU, -1 when unpinned
  // The inline path the policy allows (detail::spawn_path); the worker's `path` says it while no hook is on.
  detail::spawn_path inline_path = detail::spawn_path::engine;

  ult::context thread_ctx;  // the OS thread's own stack: where the worker returns at shutdown

  // Preemption (engine/preemption.cpp), while ROOST_PREEMPT is on. preempt: engine<P>::preempt_signal or
  // preempt_klt, which suspends the running task from the timer signal's handler (false: it cannot now, the
  // tick is deferred); nullptr while preemption is off. The FIFO and the counters are written by this worker's
  // thread alone; others read the counters (the runtime's totals, cab's subtree rule) and whether the FIFO
  // holds a task (preempted_fifo::holds_any). klts: the kernel threads that serve this worker
  // while preemption is on (engine/klt.hpp): its own, and under KLT-switching spares and holders.
  bool (*preempt)(worker&) = nullptr;
  bool (*preempt_by[2])(worker&) = {nullptr, nullptr};  // signal-yield, KLT-switching (roost::preempt_as)
  preempted_fifo preempted;
  klt_pool klts;
  // The floating-point state of the task a KLT-switching preemption suspended, for the spare that serves the
  // worker next, which runs that task's children left in the deque (fp_control.hpp; engine.hpp, preempt_klt).
  std::uint64_t fp_at_handover = 0;
  std::atomic<std::uint64_t> preemptions{0};  // tasks suspended by a tick
  std::atomic<std::uint64_t> ticks_deferred{0};  // ticks that found the runtime's or a system library's code
  // progress_signature at this worker's last tick: a tick preempts only a task that made no progress for a
  // whole interval (engine/README.md).
  std::uint64_t progress_at_tick = 0;
  // Whether the worker sleeps for want of work (set only while preemption is on): the chained timer passes
  // it by (engine/preemption.hpp).
  std::atomic<bool> sleeping{false};
  void passed_scheduling_point() {
    sched_points.store(sched_points.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  std::uint64_t rng_state = 0x9e3779b97f4a7c15ull;

  // The data declaration of the spawn in progress on this worker (roost/data.hpp), for a policy that
  // uses_declarations; nullptr otherwise. Set and cleared by detail::spawn_declared around the engine's
  // spawn, on this worker's thread; such a policy spawns parent-first, so the spawn never leaves the worker.
  const roost::data* spawn_decl = nullptr;

  // Worker 0 only, while a caller runs a root as worker 0 (engine_base::run_root): leave the scheduling
  // loop once this is set. The worker that ends the root sets it (engine_base::finish_root).
  std::atomic<std::uint32_t>* leave_when = nullptr;
  bool should_leave() const { return leave_when && leave_when->load(std::memory_order_acquire) != 0; }
  // Worker 0 only: the lent thread was bound to os_cpu for this call, and its own affinity to give back.
  bool lent_bound = false;
  platform::os::saved_affinity lent_affinity;

  // The task observer's paths of this worker's tasks (engine/task_path.hpp): the last one built, reused.
  observed_paths observed;

  // roost::run_final (src/api/final.cpp): how many final regions the task on this worker is inside, and the
  // entry points they replaced. Only this worker's thread touches them: nothing migrates inside a region.
  // in_final is also read by refresh_spawn_paths (any thread), which must keep the path at `engine` then.
  unsigned final_depth = 0;
  void (*saved_spawn)(detail::worker_abi&, detail::group_state&, detail::task_frame&) = nullptr;
  void (*saved_wait)(detail::worker_abi&, detail::group_state&) = nullptr;
  std::atomic<bool> in_final{false};
  // Binds a lent thread (worker 0 during run) to its CPU, once per call: before it first sleeps, or at the
  // start when it is elsewhere. A thread woken from sleep may be put on any allowed CPU, including a pinned
  // worker's, which cannot make room. (The 3x heat2d slowdowns once blamed on this were the VM placing its
  // vCPUs far apart: bench/common/machine_state.hpp; ROOST_BIND=false did not change them.)
  void bind_lent_thread() {
    // Under KLT-switching only the lent thread itself: a spare's affinity is not the caller's to get back.
    if (lent_bound || os_cpu < 0 || !leave_when || klts.active != klts.original) return;
    lent_affinity = platform::os::save_affinity();
    platform::os::pin_this_thread(os_cpu);
    lent_bound = true;
  }
  // At the end of the call: the lent thread gets its own affinity back.
  void release_lent_thread() {
    leave_when = nullptr;
    if (!lent_bound) return;
    platform::os::restore_affinity(lent_affinity);
    lent_bound = false;
  }

  // Makes f the fiber this worker runs, and tells f so (detail::fiber_abi::worker).
  __attribute__((always_inline)) void become(fiber* f) {
    current_fiber = f;
    f->worker = this;
    detail::t_running_fiber = f;
  }

  // xorshift64*: cheap, per-worker, reproducible from the worker id.
  std::uint64_t next_random() {
    std::uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545f4914f6cdd1dull;
  }
};

// What a tick compares with the previous tick's to tell a stuck task (engine/preemption.cpp): the
// scheduling points the worker passed and its deque's bottom, which every push and pop moves, inline or
// not, at no cost to them. A task that spawns and joins makes it differ at almost every tick; a task that
// spins leaves both alone. (A progressing task found at the same count and depth is preempted: a reordering,
// never an error.) Atomic loads only: the chained timer reads other workers'.
inline std::uint64_t progress_signature(const worker& w) {
  return w.sched_points.load(std::memory_order_relaxed) +
         0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(w.deque.bottom_index());
}

// A task switched away by a preemption takes its final region (src/api/final.cpp) with it: the worker's
// region state is left before the switch (returns the depth, 0 outside a region) and entered again on the
// worker the task resumes on.
unsigned leave_final_for_switch(worker& w);
void reenter_final_after_switch(worker& w, unsigned depth);

// The worker running the calling code, or nullptr. Deliberately out of line: a task may resume on another
// thread after a switch, and an inlined thread_local access could be cached across it.
worker* current_worker();
// The worker running fiber f now, for code running on f: become() writes it whenever f starts or resumes on
// a worker, so after a body that may have suspended and moved, one load finds the worker (user code finds
// its worker the same way, abi.hpp), where current_worker() is a call and a thread_local read (6
// instructions per work-first spawn in fib).
inline worker& worker_of(const fiber& f) { return static_cast<worker&>(*f.worker); }
void set_current_worker(worker* w);

}  // namespace roost::engine
