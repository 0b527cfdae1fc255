// KLT-switching (seed 003 §3.3; digest §4.3): the kernel threads behind a worker while ROOST_PREEMPT=klt.
//
// Signal-yield suspends a preempted task's fiber and runs the worker's next task on the same kernel thread,
// so that task sees, and may change, the first one's thread_local values, and takes locks as the thread
// that holds them. KLT-switching keeps the task on its kernel thread instead: the tick's handler hands the
// worker to a spare kernel thread and sleeps where it is, inside the handler, with the task; the worker
// goes on scheduling on the spare. When the worker's scheduler comes to the task again, it wakes the
// sleeping thread, which returns from the tick as the worker, and the thread that woke it becomes a spare.
// So a worker is served by one kernel thread at a time (its `active` one) out of several: spares asleep in
// its pool, and holders asleep with a preempted task each, queued in its FIFO. Threads never change worker:
// a worker's spares are pinned where it is, as the thesis's worker-local pools keep them (Fig. 3.7).
//
// Hand-overs are futex posts (digest §4.3, optimisation 1): the thread that hands over writes what the
// next one needs into the worker, then posts a command on the next thread's word with a release store; the
// next thread reads it with an acquire load. Between the two, neither touches the worker.
//
// A spare cannot be made inside a handler (pthread_create is not async-signal-safe, and may need a lock the
// preempted code holds), so a tick that finds no spare is deferred and asks the engine's creator thread for
// one; the next tick finds it. The worst case is a kernel thread per preempted task (1:1 threading).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "platform/platform.hpp"
#include "platform/preempt_signal.hpp"
#include "ult/context.hpp"

namespace roost::engine {

struct worker;

// One kernel thread that can serve a worker. Lives as long as its thread: on the stack of a worker's own
// thread, in the caller's thread-local state for worker 0, or owned by the creator for a spare.
struct klt {
  enum class command : std::uint32_t {
    none,
    take_over,  // a spare: serve the worker from now on (schedule on a pooled fiber)
    resume,     // a holder: the worker is yours again, return from the tick into your task
    leave,      // the worker's own thread: the worker leaves (run's end, shutdown) on you
    exit,       // a spare: the engine stops, end the thread
  };

  // Posted by the thread handing over; async-signal-safe (an atomic store and a futex wake).
  void post(command c);
  // Sleeps until a command is posted, takes it and returns it; async-signal-safe (futex waits).
  command wait();

  ult::context home;            // this thread's own stack, suspended while the thread serves the worker
  ult::eh_state* eh = nullptr;  // this thread's C++ exception state (ult/context.hpp)
  long tid = 0;
  // ROOST_PREEMPT=klt gives each thread its own timer, armed while it serves the worker: a worker's timer
  // could signal only the thread that made it (SIGEV_THREAD_ID), and the worker moves between threads.
  platform::preempt::thread_timer timer;
  unsigned long slack_before = 0;  // this thread's timer slack while it does not serve (0: not lowered)
  // Between start_serving and stop_serving (engine_base): its timer is armed. A run's caller may reach the
  // run's end without serving (its worker came back to it to leave, after it handed the worker over), and
  // only a timer that is armed may be left to linger.
  bool serving = false;
  // Run's caller only (engine_base::run_root): when its last run ended (CLOCK_MONOTONIC ns, 0: none yet), and
  // whether the run under way began within an interval of it. Only such a run leaves its timer to linger:
  // a program that calls run back to back; one that runs once and then blocks gets no tick after it.
  std::uint64_t last_run_end_ns = 0;
  std::uint64_t last_gap_ns = 0;  // from the end of the run before to the start of the run under way
  bool back_to_back = false;
  bool lingered = false;  // stop_serving left its timer lingering
  klt* next = nullptr;  // klt_pool's spare list

 private:
  std::atomic<std::uint32_t> word_{0};  // the posted command, none while nothing waits
};

// One worker's kernel threads. `active` and the spare list are the active thread's alone (it reads them in a
// tick's handler, where it interrupted the task's own code, never this class's); the creator only pushes
// onto `incoming`.
class klt_pool {
 public:
  klt* active = nullptr;    // the thread serving the worker now
  klt* original = nullptr;  // the thread the worker started on (worker 0: run's caller): the worker leaves there

  // A spare, or nullptr (then ask the creator). Async-signal-safe.
  klt* take();
  // Whether take() would find one.
  bool has_spare() const { return spares_ || incoming_.load(std::memory_order_acquire); }
  // The active thread, about to sleep as a spare.
  void give(klt* k) {
    k->next = spares_;
    spares_ = k;
  }
  // Takes `k` out of the spare list (the worker's own thread, woken to leave); false if it is not there.
  bool remove(klt* k);
  // A new spare, from its own thread (the creator started it): any thread, any time.
  void add_new(klt* k);

  // Set by a tick that found no spare, cleared by the creator when it starts one.
  std::atomic<bool> wanted{false};

 private:
  klt* spares_ = nullptr;
  std::atomic<klt*> incoming_{nullptr};
};

// The engine's creator thread (digest §4.3, "KLT creation"): starts spares for the workers whose pool ran
// dry, outside every handler. `spare_main(w, k)` is what a spare runs on its thread (engine_base).
class klt_creator {
 public:
  using spare_fn = void (*)(void* engine, worker& w, klt& k);
  klt_creator(void* engine, spare_fn spare_main, std::vector<worker*> workers);
  ~klt_creator();  // ends every spare (they must all be in their pools: the workers have stopped)
  klt_creator(const klt_creator&) = delete;

  // Async-signal-safe: marks w's pool as wanting a spare and wakes the creator.
  void request(worker& w);

 private:
  void main();

  void* engine_;
  spare_fn spare_main_;
  std::vector<worker*> workers_;
  std::atomic<std::uint32_t> requests_{0};  // futex word: bumped by request()
  std::atomic<bool> stopping_{false};
  std::mutex mu_;  // guards spares_
  struct spare {
    std::unique_ptr<klt> k;  // filled in by the spare's thread as it starts
    platform::os::thread_handle h;
  };
  std::vector<spare> spares_;
  platform::os::thread_handle self_ = 0;
};

}  // namespace roost::engine
