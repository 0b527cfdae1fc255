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

class runtime_core {
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

  resolved_options cfg;
  std::shared_ptr<const topo::topology> tp;
  std::unique_ptr<simulation> sim;  // ROOST_PLATFORM=sim; outlives the engine that runs on it
  std::unique_ptr<engine::engine_base> eng;
  std::unique_ptr<trace::tracer> tracer;

 private:
  // The end of a copy in a child of fork(): its worker threads, timers and files are the parent's, so what
  // it holds is left as it is (not stopped, not written).
  void abandon();

  std::mutex iteration_mutex_;              // external run() calls are one iteration each, in turn
  std::atomic<int> runs_in_progress_{0};    // run() calls not returned (the outermost of each thread)
};

}  // namespace roost::detail
