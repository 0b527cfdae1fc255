// What roost::runtime owns: the resolved configuration, the topology and the engine.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "api/simulation.hpp"
#include "engine/engine_base.hpp"
#include "trace/tracer.hpp"
#include "roost/options.hpp"

namespace roost::detail {

// The files a live runtime writes (its trace and timeline, its simulated report, its cats profile), claimed
// for its life: a runtime made meanwhile that would write one of them is refused (runtime.cpp,
// claim_outputs). Released when the runtime, or a constructor that failed after claiming, goes.
class output_claim {
 public:
  output_claim() = default;
  explicit output_claim(std::uint64_t id) : id_(id) {}
  output_claim(output_claim&& o) noexcept : id_(o.id_) { o.id_ = 0; }
  output_claim& operator=(output_claim&& o) noexcept {
    if (this != &o) {
      release();
      id_ = o.id_;
      o.id_ = 0;
    }
    return *this;
  }
  output_claim(const output_claim&) = delete;
  output_claim& operator=(const output_claim&) = delete;
  ~output_claim() { release(); }

 private:
  void release() noexcept;
  std::uint64_t id_ = 0;
};

class runtime_core {
  // First, so that it goes last: the tracer and the simulation remove the files of a runtime that failed to
  // be made, and a claim released before could let another runtime take a path about to be unlinked.
  output_claim outputs_;  // the files it writes, which no other live runtime may write

 public:
  // How the engine is made: sched::make_engine (the scheduler o names), or, in the engine's tests, an
  // engine<P> of a probe policy (tests/test_engine.cpp).
  using engine_maker = std::unique_ptr<engine::engine_base> (*)(const resolved_options&,
                                                                 std::shared_ptr<const topo::topology>,
                                                                 topo::placement);
  explicit runtime_core(const options& o);
  runtime_core(const options& o, engine_maker make);
  ~runtime_core();

  void run(void (*fn)(void*), void* arg);
  std::string describe() const;

  // The simulated platform's figures (runtime::virtual_time_ns, simulated_misses, simulated_remote_dram): live
  // to a task of this runtime, and to any other thread as they stood when the last run() ended (or when the
  // runtime was made). The live ones change during a run, on the run's thread and the model's helper thread:
  // read from a monitor thread meanwhile they raced (TSan, an outside-user campaign).
  double virtual_time_ns() const;
  long long simulated_misses(int cache_level) const;
  long long simulated_remote_dram() const;

  resolved_options cfg;
  std::shared_ptr<const topo::topology> tp;
  std::unique_ptr<simulation> sim;  // ROOST_PLATFORM=sim; outlives the engine that runs on it
  std::unique_ptr<engine::engine_base> eng;
  std::unique_ptr<trace::tracer> tracer;

 private:
  // The end of a copy in a child of fork(): its worker threads, timers and files are the parent's, so what
  // it holds is left as it is (not stopped, not written).
  void abandon();

  // The figures above as the last run() left them (publish_sim_figures); cache levels 1..kLevels-1.
  static constexpr int kLevels = 8;
  void publish_sim_figures();
  bool inside_own_task() const;
  std::atomic<double> published_virtual_ns_{0};
  std::atomic<long long> published_remote_dram_{0};
  std::atomic<long long> published_misses_[kLevels] = {};

  std::mutex iteration_mutex_;              // external run() calls are one iteration each, in turn
  std::atomic<int> runs_in_progress_{0};    // run() calls not returned (the outermost of each thread)
  // Added to runs_in_progress_ by the destructor when no run is in progress, in one step: a run() that
  // begins after it finds it there (exit() on a thread while another calls run() in a loop: between two
  // runs the count was 0, the destructor went on, and the next run() crashed on the engine it stopped).
  static constexpr int kDestroying = 1 << 30;
};

}  // namespace roost::detail
