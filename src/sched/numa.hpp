// numa — locality-aware work dealing and finding over NUMA nodes (seed 002 §4.1, Algorithms 1 and 2).
//
// Dealing (Algorithm 1), when a task is created: the bytes it declared (roost/data.hpp) are counted per
// node where their pages live (D). A task whose footprint exceeds the LLC's share of one core
// (sum(D) > LLC/C) and whose data is not spread evenly (stddev(D) > 0) goes to the node with the least
// distance-weighted cost, sum_j D[j] * distance(i, j) (of nodes that cost the same, the one with the fewest
// tasks waiting); any other task stays on the spawner's node.
// ROOST_NUMA_DEAL=writes (the default) counts only the bytes a task writes (all it declared if it writes
// none) and drops the size threshold: the owner of the output computes, as the seed's access-intensive
// dependence does on the TILEPro (§4.2, Algorithm 3). The threshold reasons that a footprint that fits the
// cache costs little wherever it runs; but what a task writes is what the next step's or phase's task
// reads, and that one finds it in this node's cache and memory only if it is dealt by the same rule.
// Measured on the seed's machine (coarse pages): sparselu 2.08x and vecmul 1.94x faster than ws with
// interleaved pages, where under the threshold, which never dealt their 48 KiB and 288 KiB tasks, they were
// 0.94x and 0.19x; no benchmark slower (src/sched/README.md).
//
// Queues: each node has an inbox, the seed's node queue, for tasks dealt to it from elsewhere (FIFO: added
// at the front, taken from the back, §4). A task dealt to the spawner's own node goes to the spawner's
// deque instead, where its parent's join finds it first: a recursion stays depth-first, as under ws-help
// (a node-wide FIFO would run a recursion breadth-first and keep a suspended stack per open join).
//
// Finding (Algorithm 2), when a worker's own deque is empty: its node's inbox, then its node's other
// workers; then the other nodes in order of distance, taking from a node only while the node holds more
// than d(i, n) / d(n, n) * C tasks (inbox and deques; C = the node's workers; the seed: raw distance times the
// cores of a node, numa.cpp says why not), so that a nearly empty node is not robbed of the tasks its own
// cores would run next. A worker that found nothing remote waits
// exponentially more rounds before it looks remote again (1, 2, 4, ... 64 rounds). The threshold protects
// tasks placed on a node for their data; a node that holds none has nothing to protect, and any visible
// task of it may be taken (search_threshold): a recursion spawned depth-first never queued the seed's distance * C
// tasks anywhere, nor does a loop of evenly spread tasks on its spawner's node, and other nodes would
// never take part.
//
// Vicinities (§4.2-4.3, ROOST_NUMA_VICINITY=k): a worker steals only from its own node and the k-1 nodes
// nearest it. Distances are the topology's (hwloc's matrix; 10 local and 20 remote when it has none).
// Tasks are dealt only to nodes that have workers.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "queues/locked_deque.hpp"
#include "sched/policy.hpp"

namespace roost::sched {

class numa_policy : public policy_base {
 public:
  static constexpr const char* name = "numa";
  static constexpr bool uses_declarations = true;
  // Another node's tasks are out of reach below its threshold: has_visible_work answers for every deque.
  static constexpr bool steals_from_any_deque = false;
  explicit numa_policy(engine::engine_base& e);

  spawn_order order(engine::worker&, const detail::task_frame&) const { return spawn_order::parent_first; }
  void place(engine::worker& w, detail::task_frame* f);
  detail::job* pop_own(engine::worker& w);
  // Once the engine stops, every node's inbox, not only the worker's node's (pop_own): a task dealt to a node
  // whose workers had left, or whose only worker is worker 0 (no thread during the destruction), was never run
  // (a review; policy.hpp, take_left_behind).
  detail::job* take_left_behind(engine::worker& w);
  detail::job* steal(engine::worker& w);
  bool has_visible_work(engine::worker& w) const;
  void on_task_start(engine::worker&, detail::task_id& id) {
    if (id.sched_node) {  // a task placed for its data leaves its node's count (place)
      // The node's last one: its threshold falls to 0 (search_threshold), and what it holds may be taken by
      // workers of other nodes that went to sleep barred from it (a review: one slept while the node's
      // only worker ran a long placed task, and a task it could take then waited for it).
      if (static_cast<node_state*>(id.sched_node)->placed_by_data.fetch_sub(1, std::memory_order_relaxed) == 1)
        eng_.idle().notify_all_new_work();
      id.sched_node = nullptr;
    }
  }
  std::string notes() const;

  // Algorithm 1 on a footprint: the node a task with D[i] bytes on node i is dealt to by a spawner on
  // `here` (public for tests).
  // Why a task stays here (for ROOST_VERBOSE's counts): its footprint is below LLC/C, it is spread evenly,
  // or here is where it costs least.
  enum class kept { small, even, nearest };
  unsigned deal(unsigned here, const std::vector<double>& bytes_per_node, kept* why = nullptr) const;
  // The bytes of a declaration per node of this topology (pages not placed yet are not counted).
  std::vector<double> footprint(const roost::data& d) const;
  // The topology's node of each node the allocator's rules and move_pages name natively (page_placement's
  // usable nodes, by their system numbers `usable_os`), found by system number among the topology's nodes
  // (`topology_os`, in logical order); -1 for one the topology does not list. Public for tests.
  static std::vector<int> topology_nodes_of(const std::vector<int>& usable_os, const std::vector<int>& topology_os);
  // Algorithm 2's order: the nodes a worker of `node` searches after its own, nearest first, within its
  // vicinity; and the queue size above which it may take from `victim`.
  const std::vector<unsigned>& search_order(unsigned node) const { return order_[node]; }
  double steal_threshold(unsigned node, unsigned victim) const;
  // The threshold worker w searches `victim` with now: steal_threshold while the victim holds tasks placed
  // there for their data, else 0 (numa.cpp).
  double search_threshold(unsigned w, unsigned victim) const;
  unsigned node_of_worker(unsigned w) const { return node_of_[w]; }
  std::size_t llc_bytes() const { return llc_; }
  unsigned cores_per_node() const { return cores_; }
  // Rounds worker w skips before it searches other nodes again (the back-off; for tests).
  unsigned rounds_before_remote_search(unsigned w) const { return per_worker_[w].skip; }
  // Tasks waiting for a node: its inbox and its workers' deques (an estimate, as thieves see it).
  std::int64_t node_load(unsigned node) const;

 private:
  struct alignas(64) node_state {
    queues::locked_deque<detail::job> inbox;
    // Tasks placed on this node for their data (place) that have not started: queued here, or taken by a
    // thief that has not started them yet. Relaxed: a stale count only picks the other threshold once.
    std::atomic<std::int64_t> placed_by_data{0};
  };
  struct alignas(64) worker_state {
    unsigned skip = 0;     // rounds left before the next remote search
    unsigned backoff = 0;  // log2 of the next wait
    // Counted by the worker alone, read by notes(): relaxed atomics, bumped with a load and a store.
    std::atomic<std::uint64_t> dealt_home{0}, dealt_away{0}, small{0}, even{0}, nearest{0}, steals_far{0};
  };
  detail::job* take_from_node(engine::worker& w, unsigned node);

  bool deal_by_writes_;  // ROOST_NUMA_DEAL=writes
  unsigned num_nodes_;
  // Natively on this machine's own topology, a page's node is one of page_placement's usable nodes (the
  // allocator's rules spread over rule_nodes_ of them, move_pages answers a system number made one): the
  // topology's node of each (topology_nodes_of). Empty where both number the same nodes the same way: a
  // simulated machine (its page map and rules use the topology's nodes), a virtual topology natively (the
  // rules are evaluated for its nodes), and a machine whose system and logical orders agree.
  unsigned rule_nodes_;
  std::vector<int> topology_node_of_rule_;
  std::vector<unsigned> node_of_;                 // worker -> node
  std::vector<std::vector<unsigned>> members_;    // node -> workers
  std::vector<unsigned> distance_;                // node x node
  std::vector<std::vector<unsigned>> order_;      // node -> other staffed nodes in the vicinity, nearest first
  std::vector<bool> staffed_;
  std::size_t llc_ = 0;
  unsigned cores_ = 1;
  unsigned vicinity_;
  std::vector<node_state> nodes_;
  std::vector<worker_state> per_worker_;
};

}  // namespace roost::sched
