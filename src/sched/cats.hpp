// cats — cache-aware bi-tier stealing with online profiling (seed 000): cab, with the tier of every task
// found from a profile of the first iteration instead of a level given by the user.
//
//  * Each runtime::run is an iteration; tasks are matched across iterations by their spawn path.
//  * Profiling iteration (the first, and the next after reprofile()): random work stealing with
//    parent-first spawns (§3.3); each task's SOID = own footprint + its children's SOIDs (eq. 1), from the
//    footprint source (profile/footprint.hpp): hardware counters where the machine has them (each task is
//    credited with the private-cache misses between its start/resume and its end/suspension, times the line
//    size), else roost::touch annotations (the distinct bytes a task touches itself: overlapping touches of
//    one task count once). At its end every path gets a tier (§3.2.2) against the socket's shared cache
//    from the topology.
//  * Following iterations: bi-tier scheduling as cab. A child of an intra-socket task is intra-socket;
//    a child of an inter-socket task whose path was never profiled (the program's shape changed) is treated
//    as inter-socket: parent-first into the socket pool, so heads still spread it — results never change.
//  * A program whose footprint per nanosecond of the profiling iteration is below ROOST_CATS_MIN_INTENSITY
//    (bytes/ns, default 0.05) is CPU-bound and runs as ws, as is a run where no source measured anything.
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "profile/footprint.hpp"
#include "roost/touch.hpp"
#include "sched/cab.hpp"

namespace roost::sched {

class cats_policy : public cab_policy {
 public:
  static constexpr const char* name = "cats";
  // cab's inline join where a two-way join's halves need no spawn path: in a task of the intra-socket tier
  // or a leaf inter-socket task (their children are intra-socket whatever their paths), and in a program
  // run as ws. While profiling, and in an inter-socket task, whose children's tiers are looked up by their
  // paths, the join names no queue and takes the engine's path (sync_join_queue).
  static constexpr bool inline_join_queue = true;
  explicit cats_policy(engine::engine_base& e);
  ~cats_policy();

  enum class mode : std::uint8_t { profiling, bi_tier, as_ws };

  // A program found CPU-bound runs as ws: the per-spawn and per-task hooks then cost one load each.
  spawn_order order(engine::worker& w, detail::task_frame& f) {
    if (mode_.load(std::memory_order_relaxed) == mode::as_ws) return spawn_order::child_first;
    return order_slow(w, f);
  }
  void place(engine::worker& w, detail::task_frame* f);
  detail::job* steal(engine::worker& w);
  bool has_visible_work(engine::worker& w) const;
  void on_task_start(engine::worker& w, detail::task_id& id) {
    if (mode_.load(std::memory_order_relaxed) == mode::as_ws) return;
    on_task_start_slow(w, id);
    sync_join_queue(w, id);
  }
  // A half an inline join pushed, run as a task elsewhere (or by the engine's join). Under bi-tier stealing
  // an intra-socket or leaf task pushed it, so it and its children are intra-socket; run as ws, no tier counts.
  void adopt_unnamed(engine::worker&, detail::task_id& id) {
    if (mode_.load(std::memory_order_relaxed) == mode::bi_tier)
      id.tier = static_cast<std::uint8_t>(profile::tier::intra);
  }
  void on_task_end(engine::worker& w, detail::task_id& id) {
    if (mode_.load(std::memory_order_relaxed) != mode::as_ws) on_task_end_slow(w, id);
  }
  void on_task_resume(engine::worker& w, detail::task_id& id) {
    if (mode_.load(std::memory_order_relaxed) == mode::as_ws) return;
    if (counting()) meter_switch(w, &id);
    sync_join_queue(w, id);
  }
  void on_task_suspend(engine::worker& w, detail::task_id&) {
    if (counting()) meter_switch(w, nullptr);  // the task leaves this worker: stop crediting it here
  }
  void resumed_after_join(engine::worker& w, detail::group_state&) {
    if (counting()) meter_switch(w, w.current_task);
  }
  void iteration_begin();
  void iteration_end();
  void request_reprofile() { reprofile_.store(true, std::memory_order_release); }
  std::string notes() const;

  mode current_mode() const { return mode_.load(std::memory_order_acquire); }
  const std::string& source_name() const { return source_; }

 private:
  class touch_meter;  // the annotation source: a roost::touch consumer
  struct touched;     // one task's touched intervals while profiling with annotations
  // The counter source: per worker a reader opened on the worker's own thread at its first profiled task,
  // and a meter crediting each interval between two switches to the task that ran it.
  struct alignas(64) counter_slot {
    std::unique_ptr<profile::counter_reader> reader;
    profile::segment_meter meter;
    bool opened = false;
  };
  // The queue the running task's two-way joins push onto (worker_abi::join_queue), or none: see
  // inline_join_queue. Kept per task while profiling and under bi-tier stealing; a program run as ws names
  // every worker's deque once, when the profile decides so (name_own_deques): a store per task start and
  // resume made fib through task_group 1.04x slower. The mode changes only between iterations, so a task's
  // answer holds while it runs.
  void sync_join_queue(engine::worker& w, const detail::task_id& id) {
    const bool below_the_boundary = id.tier == static_cast<std::uint8_t>(profile::tier::intra) ||
                                    id.tier == static_cast<std::uint8_t>(profile::tier::leaf);
    const bool bi_tier = mode_.load(std::memory_order_relaxed) == mode::bi_tier;
    w.join_queue = bi_tier && below_the_boundary ? &w.deque : nullptr;
  }
  void name_own_deques();
  bool counting() const { return use_counters_ && mode_.load(std::memory_order_relaxed) == mode::profiling; }
  void meter_switch(engine::worker& w, detail::task_id* now_running);
  static void add_distinct_touched_bytes(detail::task_id& id);
  // The profile as a tree of spawn paths: a child's tier is one index step from its parent's node.
  struct profile_node {
    profile::tier t = profile::tier::unknown;
    std::vector<std::unique_ptr<profile_node>> children;
  };
  spawn_order order_slow(engine::worker& w, detail::task_frame& f);
  void on_task_start_slow(engine::worker& w, detail::task_id& id);
  void on_task_end_slow(engine::worker& w, detail::task_id& id);
  void build_trie(const std::unordered_map<std::string, profile::tier>& tiers);
  profile::tier tier_of_child(const detail::task_id& parent, detail::task_id& child) const;

  std::atomic<mode> mode_{mode::profiling};
  std::atomic<bool> reprofile_{false};
  std::string source_;            // "perf_event", "annotations (roost::touch)"
  std::string why_no_counters_;
  std::string decision_;          // what the last profile concluded, for notes()
  std::uint64_t cache_bytes_;
  double min_intensity_;
  std::unique_ptr<touch_meter> annotations_;
  bool use_counters_ = false;
  std::vector<counter_slot> counters_;
  touch_consumer* previous_consumer_ = nullptr;  // restored after the profiling iteration
  profile::soid_table table_;
  profile_node trie_;
  std::uint64_t iteration_start_ns_ = 0;
  // Written at the root's end, read by iteration_end: the engine reports a root's end before run()'s caller
  // goes on (engine_base::finish_root), so every task's end is recorded when the profile is concluded.
  std::uint64_t root_soid_ = 0;
  unsigned iterations_ = 0;
};

}  // namespace roost::sched
