// roost::runtime — owns the workers. Construct one, hand it root tasks with run().
//
//   roost::runtime rt;                            // reads ROOST_SCHED, ROOST_WORKERS, ROOST_TOPOLOGY, ...
//   int r = rt.run([] { return solve(); });       // blocks; rethrows the root task's exception
//
// The calling thread runs the root as worker 0 until it is done (no hand-off to another thread). Each call
// of run() from outside the runtime is one iteration (schedulers that learn across iterations,
// such as cats, count them). run() called from inside a task of the same runtime runs the function inline,
// as nested parallelism; called from inside a task of another runtime it throws roost::usage_error.
#pragma once
#include "roost/detail/min_max_aside.hpp"  // C headers' min/max macros kept out, given back at the end
#include <cstddef>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "roost/options.hpp"

namespace roost {

namespace detail {
class runtime_core;
}

class runtime {
 public:
  runtime() : runtime(options{}, detail::build_mode()) {}  // configuration from the environment
  // Fields set in `o` win over the environment.
  explicit runtime(const options& o) : runtime(o, detail::build_mode()) {}
  ~runtime();
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  template <class F>
  auto run(F&& f) -> std::invoke_result_t<F&> {
    using R = std::invoke_result_t<F&>;
    if constexpr (std::is_void_v<R>) {
      run_root([&] { f(); });
    } else if constexpr (std::is_reference_v<R>) {  // a reference, as run_final returns one (final.hpp)
      std::remove_reference_t<R>* result = nullptr;
      run_root([&] {
        auto&& r = f();
        result = std::addressof(r);
      });
      return static_cast<R>(*result);
    } else if constexpr (!std::is_move_constructible_v<R>) {
      // The root's value is made where the root runs and moved out of the run: a direct call of f could build
      // it in place, a call that returns from another stack cannot. Said once, not as errors in <optional>.
      static_assert(std::is_move_constructible_v<R>,
                    "roost::runtime::run: the root returns a type that cannot be moved; return it in a "
                    "std::unique_ptr, or construct it in a variable of the caller's");
    } else {
      std::optional<R> result;
      run_root([&] { result.emplace(f()); });
      return std::move(*result);
    }
  }

  // Schedulers that learn from a profiled iteration (cats) profile the next run() again: call it when the
  // program's shape or data size changed. No effect on the other schedulers.
  void reprofile();

  unsigned workers() const;
  const std::string& scheduler() const;
  const resolved_options& config() const;
  // A one-paragraph description: scheduler, workers, topology, pinning, stack size.
  std::string describe() const;

  // A runtime on the simulated platform (ROOST_PLATFORM=sim): the virtual time its run() calls took so far,
  // in ns (from a task of the run in flight: up to the calling worker's clock), and the misses of its
  // simulated caches of one level (1 for L1, ...) so far. -1 for a runtime on this machine, or a level the
  // topology does not have.
  double virtual_time_ns() const;
  long long simulated_misses(int cache_level) const;
  // Lines the simulated machine fetched from the DRAM of another NUMA node than the fetching core's, so far
  // (seed 002's remote accesses); -1 for a runtime on this machine.
  // "So far": to a task of this runtime, up to now; to any other thread (a monitor polling them while another
  // thread's run() is in flight), as the last run() that ended left them.
  long long simulated_remote_dram() const;

  // Preemption (ROOST_PREEMPT=signal, roost/preempt.hpp): how many times a timer tick suspended a task of
  // this runtime so far, and how many ticks found a task where it may not be preempted (the runtime's code,
  // a system library, a non_preemptible region) and left it to the next tick. 0 while preemption is off.
  unsigned long long preemptions() const;
  unsigned long long preempt_ticks_deferred() const;

 private:
  // build_mode: the program's libstdc++ mode (detail/build_mode.hpp), which the link checks.
  runtime(const options& o, const int* build_mode);
  template <class F>
  void run_root(F&& body) {
    struct thunk {
      static void call(void* p) { (*static_cast<std::remove_reference_t<F>*>(p))(); }
    };
    run_erased(&thunk::call, &body);
  }
  void run_erased(void (*fn)(void*), void* arg);

  std::unique_ptr<detail::runtime_core> core_;
};

// The id (0 .. workers-1) of the worker running the calling task; -1 outside any worker.
int this_worker_id();
// The number of workers of the runtime running the calling task (its runtime::workers()); 0 outside any
// worker. oneTBB's this_task_arena::max_concurrency(), OpenMP's omp_get_num_threads() in a parallel region.
unsigned this_runtime_workers();

}  // namespace roost

#include "roost/detail/min_max_back.hpp"
