// cab — cache-aware bi-tier stealing with a boundary level given by the user (seed 000 §3.1 and §3.3; the
// predecessor of cats, which finds the boundary itself).
//
// Tasks at depth <= ROOST_CAB_LEVEL (the root is depth 0; by default the least depth at which a binary tree
// has a task for every socket) form the inter-socket tier: they are spawned parent-first into the
// inter-socket pool of the spawner's socket. Deeper tasks form the intra-socket tier: spawned child-first,
// continuations in the core's own deque. A task at exactly the boundary level is a
// *leaf inter-socket task*: the root of an intra-socket subtree, which runs inside one socket.
//
// A free core takes from its own deque, then steals from the cores of its socket. Only the head core of a
// socket (its lowest-numbered worker, the seed's "core 0") takes from the socket's inter-socket pool and
// steals inter-socket tasks from other sockets — and, by default, only while no intra-socket subtree of its
// socket is running (a socket runs one subtree at a time, the seed's policy; ROOST_CAB_SUBTREES=many lets
// it run several). Under ROOST_PREEMPT a socket may start one more for each tick that stopped a task of its
// cores since its latest subtree began: the subtree may be spinning for a sibling nobody has started
// (subtree_may_start). Sockets are the topology's packages.
//
// A derived policy may give a leaf inter-socket task a home socket (place_home; cats does, from its
// profile): it waits in that socket's home pool, which its head takes from first. Another socket's head
// takes it only while its home runs a subtree already, so a home that is free to take it gets it.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "queues/locked_deque.hpp"
#include "sched/policy.hpp"

namespace roost::sched {

class cab_policy : public policy_base {
 public:
  static constexpr const char* name = "cab";
  // A two-way join in an intra-socket task (depth >= the level) is what order() makes of it, a child-first
  // spawn whose continuation goes to the core's own deque: the inline join does it there (join_queue, kept
  // per running task). Above the level its halves are inter-socket tasks and go through the engine.
  static constexpr bool inline_join_queue = true;
  // cab reads a task's depth (its naming), never its scheduling state (policy.hpp); cats, which does, says so.
  static constexpr bool reads_task_sched_state = false;
  // A child-first child lies below the level (order()), so it and its parent both name the worker's deque
  // (sync_join_queue) and neither is at the level (subtree_started/ended): its start on its parent's worker
  // and its parent's resume after its local end find the worker's queue named already. Skipped: 33
  // instructions a task_group spawn (callgrind, fib). cats, whose hooks do more, says false.
  static constexpr bool child_first_hooks_idle = true;
  explicit cab_policy(engine::engine_base& e);  // level and subtree policy from the configuration

  spawn_order order(engine::worker&, const detail::task_frame& f) const {
    return f.id.depth <= level_ ? spawn_order::parent_first : spawn_order::child_first;
  }
  // order()'s child-first case (policy.hpp, plain_spawns), for the engine's plain spawn: a child below the
  // level. fib: 261 -> 251 instructions a spawn (callgrind; issue #25).
  static constexpr bool plain_spawns = true;
  bool order_plain(engine::worker&, detail::group_state&, const detail::task_frame& f, bool) const noexcept {
    return f.id.depth > level_;
  }
  void place(engine::worker& w, detail::task_frame* f);
  detail::job* steal(engine::worker& w);
  bool has_visible_work(engine::worker& w) const;
  // Children of an escaped group in the socket pools, which only heads take from (take_inter): worker 0, a
  // head, runs its socket's before run() returns, as it runs its deque. Once the engine stops, every worker
  // empties every socket's pools before it leaves: worker 0 has no thread during the destruction, so
  // socket 0's pool has no head then, and a pool may be filled after its head left (a task another worker
  // of its socket runs spawns there; cats homes a task on another socket).
  detail::job* take_left_behind(engine::worker& w);
  void on_task_start(engine::worker& w, detail::task_id& id) {
    sync_join_queue(w, id);
    if (id.depth == level_) subtree_started(w);
  }
  void on_task_resume(engine::worker& w, detail::task_id& id) { sync_join_queue(w, id); }
  // A half an inline join pushed, run as a task elsewhere (or by the engine's join): it was pushed by an
  // intra-socket task, so it is one too, whatever depth the engine's naming gave it (1).
  void adopt_unnamed(engine::worker&, detail::task_id& id) {
    if (id.depth <= level_) id.depth = level_ + 1;
  }
  void on_task_end(engine::worker& w, detail::task_id& id) {
    if (id.depth == level_) subtree_ended(w, id);
  }
  std::string notes() const;

  // For tests: the socket of a worker, whether it is its socket's head, the boundary level.
  unsigned socket_of(unsigned worker) const { return socket_of_[worker]; }
  bool is_head(unsigned worker) const { return head_of_[socket_of_[worker]] == worker; }
  unsigned level() const { return level_; }

 protected:
  cab_policy(engine::engine_base& e, unsigned level, bool one_subtree);
  void subtree_started_on(engine::worker& w) { subtree_started(w); }
  void place_home(engine::worker& w, detail::task_frame* f, unsigned socket);
  // Sockets that have a head (a worker), in order: where homes can be.
  const std::vector<unsigned>& sockets_with_workers() const { return staffed_; }
  void subtree_ended_on(engine::worker& w, detail::task_id& id) { subtree_ended(w, id); }

 private:
  void sync_join_queue(engine::worker& w, const detail::task_id& id) {
    detail::name_join_queue(w, id.depth >= level_ ? &w.deque : nullptr);
  }
  struct alignas(64) socket {
    queues::locked_deque<detail::job> inter;  // inter-socket pool
    queues::locked_deque<detail::job> home;   // leaf inter-socket tasks whose home this socket is
    std::atomic<int> subtrees{0};             // intra-socket subtrees running now
    std::atomic<std::uint64_t> preemptions_at_start{0};  // its workers' preemptions when one last started
  };
  void subtree_started(engine::worker& w);
  void subtree_ended(engine::worker& w, detail::task_id& id);
  std::uint64_t preemptions_of(unsigned socket) const;
  bool subtree_may_start(unsigned socket) const;
  detail::job* take_inter(engine::worker& w);

  unsigned level_;
  bool one_subtree_;
  bool preempting_;  // ROOST_PREEMPT: ticks may stop a subtree (subtree_may_start)
  std::vector<unsigned> socket_of_;            // worker -> socket
  std::vector<unsigned> head_of_;              // socket -> head worker
  std::vector<std::vector<unsigned>> members_;  // socket -> workers
  std::vector<unsigned> staffed_;               // sockets with at least one worker
  std::vector<socket> sockets_;
};

}  // namespace roost::sched
