// cats — cache-aware bi-tier stealing with online profiling (seed 000): cab, with the tier of every task
// found from a profile of the first iteration instead of a level given by the user.
//
//  * Each runtime::run is an iteration; tasks are matched across iterations by their spawn path.
//  * Profiling iteration (the first, and the next after reprofile()): random work stealing. The profile is
//    a bounded tree (profile/soid_tree.hpp): a task in the top of the task tree (down to depth 24, and no
//    deeper than where the top holds 32768 tasks) gets a node of its own and is spawned parent-first (§3.4);
//    each node's SOID = own footprint + its children's SOIDs (eq. 1). A task below, or one the node budget
//    refuses, has no node: its footprint is credited to its nearest ancestor's node, and it runs as ws runs
//    it (child-first, two-way joins inline), so a program that never comes back for a second iteration pays
//    about what ws costs (issue #23). Nodes whose subtree fits the cache free their children's.
//    The footprint of the interval between two switches of a worker (a task with a node starting, ending,
//    resuming or suspending, or the worker going to steal) goes to the node it ran for, from the footprint
//    source (profile/footprint.hpp): hardware counters where the machine has them (private-cache misses
//    times the line size), else roost::touch annotations (the distinct bytes touched: overlapping touches
//    in one interval count once). At its end every node left gets a tier (§3.2.2) against the socket's
//    shared cache from the topology.
//    The partition asks for a leaf inter-socket task per socket at least (soid_tree.hpp says why and how),
//    and gives every leaf a home socket: contiguous runs of leaves in spawn order, by SOID.
//  * Following iterations: bi-tier scheduling as cab, each leaf inter-socket task placed in its home
//    socket's pool (cab.hpp: another head takes it only while its home is busy). The seed lets any head
//    take any leaf, so a subtree's data, left in one socket's cache by one iteration, is found there by
//    the next only by chance: with four sockets, three times in four the next iteration misses its L3
//    for it (docs/reproductions.md measures both). A child of an intra-socket task is intra-socket;
//    a child of an inter-socket task whose path was never profiled (the program's shape changed) is treated
//    as inter-socket: parent-first into the socket pool, so heads still spread it — results never change.
//  * A program whose footprint per worker-nanosecond of the profiling iteration (its duration times the
//    workers) is below ROOST_CATS_MIN_INTENSITY (default 0.05) is CPU-bound and runs as ws, as is a run where no source measured anything,
//    and one whose profile stopped (depth or node budget) above a task that does not fit the cache: there
//    the boundary is unknown. On one socket (of the workers') the profile is reported, and the program runs
//    as ws: there is no other socket's cache to keep a subtree out of.
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "profile/footprint.hpp"
#include "profile/soid_tree.hpp"
#include "roost/touch.hpp"
#include "sched/cab.hpp"

namespace roost::sched {

class cats_policy : public cab_policy {
 public:
  static constexpr const char* name = "cats";
  // cab's inline join where a two-way join's halves need no spawn path: in a task of the intra-socket tier
  // or a leaf inter-socket task (their children are intra-socket whatever their paths), in a program
  // run as ws, and while profiling in a task without a node of its own (its children get none either). In
  // a profiled task, and in an inter-socket task, whose children's nodes and tiers go by their paths, the
  // join names no queue and takes the engine's path (sync_join_queue).
  static constexpr bool inline_join_queue = true;
  // A task's tier and profile node are cats's (cab's spawn leaves them unwritten).
  static constexpr bool reads_task_sched_state = true;
  // Its start and resume hooks profile and name queues by node and mode, not by depth alone: always called.
  static constexpr bool child_first_hooks_idle = false;
  explicit cats_policy(engine::engine_base& e);
  ~cats_policy();

  enum class mode : std::uint8_t { profiling, bi_tier, as_ws };

  // A program found CPU-bound runs as ws: the per-spawn and per-task hooks then cost one load each. While
  // profiling, a task below the profile's top (most tasks of a deep tree) costs a few more: its child is
  // spawned as ws spawns it, credited to the same node (order), and nothing is measured at its start or end
  // on the worker that spawned it (meter_switch finds the node unchanged).
  // The child's parent is the group's owner (engine/observe.hpp, name_child), its spawner but where a child
  // the owner's join ran on the owner's stack spawns into the owner's group: its index counts the owner's
  // children, so its profile node hangs under the owner's (under the spawner's, two children of one node
  // had one index, and a later iteration found the first one's tier for both).
  spawn_order order(engine::worker& w, detail::task_frame& f) {
    if (order_plain(w, *f.group, f, f.group->spawned == 1)) return spawn_order::child_first;
    return order_slow(w, f);
  }
  // order()'s two inline cases (policy.hpp, plain_spawns): the engine's plain spawn takes them, with no call
  // out of line, where no hook is installed; the others (a profiled parent, bi-tier stealing) go to order().
  // fib run as ws: 280 -> 270 instructions a spawn, the spawn's own 79 -> 69 (callgrind; issue #25).
  static constexpr bool plain_spawns = true;
  bool order_plain(engine::worker&, detail::group_state&, detail::task_frame& f, bool) noexcept {
    const mode m = mode_.load(std::memory_order_relaxed);
    if (m == mode::as_ws) [[likely]] return true;
    if (m == mode::profiling && !owns_node(*f.id.parent)) {
      f.id.sched_node = f.id.parent->sched_node;  // no node of its own: credited to its parent's
      return true;
    }
    return false;
  }
  void place(engine::worker& w, detail::task_frame* f);
  detail::job* steal(engine::worker& w);
  bool has_visible_work(engine::worker& w) const;
  // Run as ws, a task's start and resume are one load and a return, inlined into the engine's spawn, with the
  // rest out of line (on_task_start_tiers, on_task_resume_tiers). GCC had kept the whole resume hook out of
  // line, a call at every local end of a child, and cats ran fib at 1.12x ws's time (issue #25: 1.00x now,
  // fib(32), one worker, 6 alternated rounds of the two aligned builds).
  __attribute__((always_inline)) void on_task_start(engine::worker& w, detail::task_id& id) {
    if (mode_.load(std::memory_order_relaxed) == mode::as_ws) [[likely]] return;
    on_task_start_tiers(w, id);
  }
  // While profiling, or under bi-tier stealing.
  __attribute__((noinline)) void on_task_start_tiers(engine::worker& w, detail::task_id& id) {
    const mode m = mode_.load(std::memory_order_relaxed);
    // A task without a node starts where its node's footprint is being measured already: spawned
    // child-first by its parent here, or taken from a queue as an unnamed half (adopt_unnamed, steal()).
    if (m == mode::profiling && !owns_node(id) && id.parent) {
      // sync_join_queue's answer for a task without a node; a task group's wait must not pop in place the
      // children profiling places on the deque (abi.hpp, name_join_queue)
      detail::name_join_queue(w, &w.deque, false);
      return;
    }
    on_task_start_slow(w, id);
    sync_join_queue(w, id);
  }
  // A half an inline join pushed, run as a task elsewhere (or by the engine's join). Under bi-tier stealing
  // an intra-socket or leaf task pushed it, so it and its children are intra-socket; run as ws, no tier counts.
  // While profiling a task without a node pushed it: it is credited to the node the worker ran for when it
  // took it (the victim's, for a stolen one: steal()), most likely the pusher's.
  void adopt_unnamed(engine::worker& w, detail::task_id& id) {
    const mode m = mode_.load(std::memory_order_relaxed);
    if (m == mode::bi_tier) id.tier = static_cast<std::uint8_t>(profile::tier::intra);
    else if (m == mode::profiling) id.sched_node = meters_[w.id].crediting.load(std::memory_order_relaxed);
  }
  void on_task_end(engine::worker& w, detail::task_id& id) {
    const mode m = mode_.load(std::memory_order_relaxed);
    if (m == mode::as_ws || (m == mode::profiling && !owns_node(id))) return;  // measured at the next switch
    on_task_end_slow(w, id);
  }
  __attribute__((always_inline)) void on_task_resume(engine::worker& w, detail::task_id& id) {
    if (mode_.load(std::memory_order_relaxed) == mode::as_ws) [[likely]] return;
    on_task_resume_tiers(w, id);
  }
  __attribute__((noinline)) void on_task_resume_tiers(engine::worker& w, detail::task_id& id) {
    const mode m = mode_.load(std::memory_order_relaxed);
    if (m == mode::profiling) {  // one load of the mode: every local completion of a spawn comes here
      meter_switch(w, credited_node(id));
      detail::name_join_queue(w, owns_node(id) ? nullptr : &w.deque, false);  // sync_join_queue's answer while profiling
      return;
    }
    sync_join_queue(w, id);
  }
  void on_task_suspend(engine::worker& w, detail::task_id&) {
    if (profiling()) meter_switch(w, nullptr);  // the task leaves this worker: stop crediting it here
  }
  // What this worker measured goes to its node before the owner can see the end, and end that node (or an
  // ancestor): a worker runs a task without a node and its descendants without a switch, so its measure
  // can hold a whole chain's footprint. Delivered at the next switch instead (a steal, usually), it came
  // too late when the thread lost its CPU in between: the node had ended without it, and a deep tree's
  // boundary moved (Cats.ADeepTreeIsProfiledOnlyAtItsTop found 7 leaf tasks instead of 8, under TSan on 2
  // CPUs). The node stays the worker's: the job it runs next may be one it pushed for that node.
  void before_remote_end(engine::worker& w) {
    if (!profiling()) return;
    if (node* n = meters_[w.id].crediting.load(std::memory_order_relaxed)) switch_node(w, n);
  }
  void resumed_after_join(engine::worker& w, detail::group_state&) {
    if (profiling()) meter_switch(w, credited_node(*w.current_task));
  }
  // Outside the profiled iteration the join hooks are cab's, which do nothing; the mode changes only
  // between runs (iteration_begin, iteration_end), and a group's children and join lie inside one run.
  bool join_hooks_idle(engine::worker&, const detail::group_state&) const { return !profiling(); }
  void iteration_begin();
  void iteration_end();
  void request_reprofile() { reprofile_.store(true, std::memory_order_release); }
  std::string notes() const;

  mode current_mode() const { return mode_.load(std::memory_order_acquire); }
  const std::string& source_name() const { return source_; }

 private:
  using node = profile::soid_tree::node;
  class touch_meter;  // the annotation source: a roost::touch consumer
  // While profiling, task_id::tier says whether a task has a profile node of its own (task_id::sched_node is
  // then that node) or none (sched_node is the ancestor's node it is credited to). A value no tier takes.
  static constexpr std::uint8_t kOwnsNode = 0xff;
  static bool owns_node(const detail::task_id& id) { return id.tier == kOwnsNode; }
  static node* credited_node(const detail::task_id& id) { return static_cast<node*>(id.sched_node); }

  // Per worker, what its footprint is credited to now, and the source's state since its last switch
  // (meter_switch). Only its own worker touches it, and only while profiling (`crediting` is also read by
  // thieves, steal()); iteration_begin resets what an earlier profile left, before any worker can see the
  // mode. `random_round` is the exception: its worker writes it around every round of random stealing, in
  // any mode, and iteration_end and conclude() read it (wait_for_random_rounds).
  struct alignas(64) worker_meter {
    std::atomic<node*> crediting{nullptr};
    std::atomic<std::uint32_t> random_round{0};  // round_word: the worker's last round of random stealing
    std::unique_ptr<profile::counter_reader> reader;  // opened on the worker's own thread, at its first switch
    bool opened = false;
    profile::counter_meter counts;
    profile::touched_spans touched;
  };
  // The worker now runs for node `next` (nullptr: nothing): what it measured since its last switch goes to
  // the node it ran for. Nothing to do while the node stays the same, as for every task without a node of
  // its own on the worker that spawned it, which is what keeps the profiling iteration at ws's cost.
  void meter_switch(engine::worker& w, node* next) {
    if (meters_[w.id].crediting.load(std::memory_order_relaxed) != next) switch_node(w, next);
  }
  void switch_node(engine::worker& w, node* next);
  // The queue the running task's two-way joins push onto (worker_abi::join_queue), or none: see
  // inline_join_queue. Kept per task while profiling and under bi-tier stealing; a program run as ws names
  // every worker's deque once, when the profile decides so (name_own_deques): a store per task start and
  // resume made fib through task_group 1.04x slower. The mode changes only between iterations, so a task's
  // answer holds while it runs.
  void sync_join_queue(engine::worker& w, const detail::task_id& id) {
    const mode m = mode_.load(std::memory_order_relaxed);
    const bool below_the_boundary = id.tier == static_cast<std::uint8_t>(profile::tier::intra) ||
                                    id.tier == static_cast<std::uint8_t>(profile::tier::leaf);
    const bool inline_join = m == mode::bi_tier ? below_the_boundary : m == mode::profiling && !owns_node(id);
    // While profiling, a task group's wait must not pop in place a child that profiling placed on the deque.
    detail::name_join_queue(w, inline_join ? &w.deque : nullptr, m != mode::profiling);
  }
  void name_own_deques();
  // What a worker's random_round says: its rounds' count, and while it is in one, the mode that round read
  // (kModeUnread until it has): bit 0 "in a round", bits 1-2 the mode, the rest the count.
  static constexpr std::uint32_t kInRound = 1, kModeUnread = 3;
  static std::uint32_t round_word(std::uint32_t count, std::uint32_t mode_bits, bool in_round) {
    return count << 3 | mode_bits << 1 | (in_round ? kInRound : 0);
  }
  void wait_for_random_rounds(mode now);
  bool profiling() const { return mode_.load(std::memory_order_relaxed) == mode::profiling; }
  spawn_order order_slow(engine::worker& w, detail::task_frame& f);
  void on_task_start_slow(engine::worker& w, detail::task_id& id);
  void on_task_end_slow(engine::worker& w, detail::task_id& id);
  profile::tier tier_of_child(const detail::task_id& parent, detail::task_id& child) const;
  std::string conclude(std::uint64_t ns);  // the profile's end: the mode of the next iterations, and why
  bool write_profile(const std::string& path) const;  // ROOST_CATS_PROFILE; false: it could not be written

  std::atomic<mode> mode_{mode::profiling};
  std::atomic<bool> reprofile_{false};
  std::string source_;            // "perf_event", "annotations (roost::touch)"
  std::string why_no_counters_;
  // What the last profile concluded, for notes(). Written by the thread that runs run(), read by describe()
  // from any thread meanwhile (a heap-use-after-free under ASan: an outside-user campaign): decision_mu_.
  std::string decision_;
  mutable std::mutex decision_mu_;
  std::uint64_t cache_bytes_;
  double min_intensity_;
  std::unique_ptr<touch_meter> annotations_;
  bool use_counters_ = false;
  std::vector<worker_meter> meters_;
  touch_consumer* previous_consumer_ = nullptr;  // restored after the profiling iteration
  // The profile. Every node ends before iteration_end reads it: the engine reports a root's end before
  // run()'s caller goes on (engine_base::finish_root).
  profile::soid_tree tree_;
  std::uint64_t iteration_start_ns_ = 0;
  unsigned iterations_ = 0;
};

}  // namespace roost::sched
