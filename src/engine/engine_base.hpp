// What every engine shares regardless of scheduler: the workers and their threads, the topology, the
// injection queue for root tasks, idle sleep/wake and shutdown. engine<Policy> (engine.hpp) adds the
// scheduling paths, specialised per policy; the virtual functions here are called only at start-up,
// shutdown and iteration boundaries, never per task.
#pragma once
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/idle.hpp"
#include "engine/worker.hpp"
#include "platform/platform.hpp"
#include "roost/options.hpp"
#include "topology/placement.hpp"
#include "topology/topology.hpp"

namespace roost::engine {

class engine_base {
 public:
  engine_base(const resolved_options& cfg, std::shared_ptr<const topo::topology> tp, topo::placement pl);
  virtual ~engine_base();
  engine_base(const engine_base&) = delete;

  // Starts the worker threads (after the derived constructor ran).
  void start();
  // Stops and joins them; every root task must have finished.
  void stop();

  // Queues a root task (from a thread that is not a worker) and wakes a worker for it.
  void submit_root(detail::job* j);

  virtual void iteration_begin() {}
  virtual void iteration_end() {}
  virtual void request_reprofile() {}
  virtual std::string policy_notes() const { return {}; }

  const resolved_options& config() const { return cfg_; }
  const topo::topology& topology() const { return *topo_; }
  const topo::placement& placement() const { return place_; }
  unsigned num_workers() const { return static_cast<unsigned>(workers_.size()); }
  worker& worker_at(unsigned i) { return *workers_[i]; }
  idle_state& idle() { return idle_; }
  bool stopping() const { return stop_.load(std::memory_order_acquire); }
  bool oversubscribed() const { return place_.oversubscribed; }

  // Takes a root task, if any is queued (cheap check first).
  detail::job* take_injected();
  // Any work visible anywhere: the last look before sleeping.
  bool any_work_visible();

 protected:
  virtual ult::entry_fn fiber_entry() const = 0;
  virtual const worker_ops* ops() const = 0;
  virtual detail::spawn_path spawn_path() const = 0;

 private:
  void thread_main(unsigned id);

  resolved_options cfg_;
  std::shared_ptr<const topo::topology> topo_;
  topo::placement place_;
  fiber_overflow spare_fibers_;  // declared before the workers: their pools spill into it
  std::vector<std::unique_ptr<worker>> workers_;
  std::vector<platform::os::thread_handle> threads_;
  idle_state idle_;
  std::atomic<bool> stop_{false};

  std::mutex inject_mutex_;
  std::deque<detail::job*> injected_;
  std::atomic<std::uint32_t> injected_count_{0};
};

}  // namespace roost::engine
