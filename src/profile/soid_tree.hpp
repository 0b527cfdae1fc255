// The profile of cats's profiling iteration (seed 000 §3.2): a tree of the tasks by spawn path, each with
// its SOID (eq. 1), kept only where the partition needs it.
//
// The partition (§3.2.2) needs the tree only down to the leaf inter-socket tasks: below a task whose
// subtree fits the socket's shared cache every task is intra-socket, whatever its path. So the tree is
// bounded, in time and in memory:
//  * only its top has nodes: tasks down to max_depth (the root is depth 0), and no deeper than the first
//    depth at which the top holds top_tasks tasks. A task below has none: its footprint is credited to its
//    nearest ancestor that has one (eq. 1 sums it there all the same), and cats runs it as ws does. In a
//    depth-first run the first branches reach deep before the top is full, so a few times top_tasks
//    tasks get nodes;
//  * when a task's subtree turns out to fit the cache (its end), its children's nodes go back to the pool:
//    they are intra-socket. What stays are the inter-socket tasks and their children, at most max_nodes
//    at once (a wide level: the root of a flat task set); a child refused for any bound folds into its
//    parent like a deep task. The top of the tree down to the first depth with 16 tasks per socket
//    (min_leaves) keeps its nodes even where they fit: finish() may need them to split a leaf (below).
//
// finish() classifies by §3.2.2 and then asks for *a leaf inter-socket task per socket at least*, a
// condition the seed never meets a need for: its inputs (16 MB and up on 4 x 6 MiB) always give one. A
// program whose data fits fewer sockets' caches than there are sockets would leave sockets idle (heat
// 1024x512 of doubles, 8 MiB: 2 leaves of 4 MiB for 4 sockets ran 1.6x slower than ws).
//
// Leaves are counted by their data: a leaf's *anchor* is the lowest address its subtree wrote (else read:
// note_touch; simulated, numa_alloc memory ranks by allocation, sim_platform::data_rank), and leaves with one anchor are one *data class* — SOR's red and black sweeps over the same
// rows are two leaves of one class, and one socket should run both. While the classes are fewer than
// min_leaves, every largest leaf (within 1.5x of the largest) whose children all have nodes becomes
// inter-socket and its children leaves: a round splits all the sweeps alike. Then every leaf gets a
// *home* socket: the classes in address order, dealt in contiguous runs of about equal SOID, so that
// neighbours, which share boundary rows, share a socket (cats.hpp says what the home is for). Without
// anchors (the hardware-counter source knows no addresses) a leaf is a class of its own, in spawn order.
// A parent whose subtree does not fit and whose children were refused (cut) leaves the boundary below it
// unknown: the profile is then incomplete (summary::cut_by_depth, cut_by_budget) and cats runs the program
// as ws and says why.
//
// Threads: a node's children are added by its own task (one spawner), credit() may come from any worker,
// end() runs on the worker where the task ends, after all its children ended. The pool is locked.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "profile/footprint.hpp"

namespace roost::profile {

class soid_tree {
 public:
  struct bounds {
    unsigned max_depth;     // also how many profiled tasks nest on one stack (they are spawned parent-first)
    std::size_t top_tasks;  // the top of the tree the profile takes, in tasks
    std::size_t max_nodes;  // live at once
  };
  // Depth 24: quicksort's boundary lies at depth 20 over 1 MiB caches (its partitions' loops nest in its
  // recursion), and 24 parent-first levels fit any task stack. 32768 tasks: a binary split's boundary
  // down to depth 14 (16384 caches' worth of data); over 1 MiB caches quicksort (23,925 tasks) and ge-ub
  // (170,000 tasks, its boundary at depth 4) are partitioned as with no bound, where at 16384 quicksort
  // sometimes ran as ws and at 4096 ge-ub did. A profiled task costs about 1,000 instructions more than
  // a task below (fib-invoke's, callgrind). 65536 nodes of 96 bytes are 6 MiB.
  static constexpr bounds kDefaultBounds{24, 32768, 65536};
  static constexpr std::uint32_t kNoKids = ~std::uint32_t{0};

  struct node {
    std::uint64_t own_bytes;      // credited to this task and to the tasks folded into it (atomic_ref)
    std::uint64_t children_soid;  // its children's SOIDs, added as they end (atomic_ref)
    std::uint64_t soid;           // eq. 1, written at the task's end
    node* parent;
    node* first_child;  // children with nodes, in spawn order; pruned when this task's subtree fits
    node* last_child;
    node* next_sibling;  // also the pool's free list
    std::uint32_t index;        // among its parent's children
    std::uint32_t depth;        // the root is 0
    std::uint32_t spawned;      // children its task spawned, with nodes or not (written at its end)
    std::uint32_t first_kid;    // after finish(): its children's slots in kids_, by index (or kNoKids)
    tier t;                     // after finish()
    bool cut_by_depth, cut_by_budget;  // a child was refused a node
    // Set (atomic_ref, release) as the last act of its task's end(): a task may end before a child of its
    // own, one it spawned into another task's group (a parallel_for piece calling the caller's tg.run(), or
    // any task's run() run on the group owner's stack), and its end then must not free that child's node,
    // which the child's task still uses (a review's ThreadSanitizer run: a freed node given to another task,
    // two tasks ending one node).
    std::uint8_t ended;
    std::uint16_t home;         // after finish(), a leaf's home socket (kNoHome for other tiers)
    std::uintptr_t write_lo, read_lo;  // lowest address written and read by its task and the tasks folded
                                       // into it (atomic_ref; kNoAddress: none)
  };
  static constexpr std::uint16_t kNoHome = 0xffff;
  static constexpr std::uintptr_t kNoAddress = ~std::uintptr_t{0};
  static_assert(sizeof(node) <= 96);

  struct summary {
    std::size_t profiled = 0;       // tasks that had a node
    std::size_t peak_nodes = 0;     // nodes live at once, at most
    std::size_t leaves = 0;         // leaf inter-socket tasks
    std::size_t split = 0;          // leaves made inter-socket so that every socket has one
    std::size_t classes = 0;        // data classes among the leaves (one per leaf without anchors)
    std::size_t intra = 0;          // children of tasks whose subtree fits: intra-socket
    unsigned depth = 0;             // the profile's depth bound: max_depth, or where the top had top_tasks
    std::size_t cut_by_depth = 0;   // inter-socket tasks whose children were below the depth bound
    std::size_t cut_by_budget = 0;  // inter-socket tasks with children refused for max_nodes
    std::uint64_t root_soid = 0;
    bool complete() const { return cut_by_depth == 0 && cut_by_budget == 0; }
  };

  // min_leaves: the sockets, which finish() gives a leaf inter-socket task each where the tree allows.
  explicit soid_tree(bounds b = kDefaultBounds, unsigned min_leaves = 1) : bounds_(b), min_leaves_(min_leaves) {
    clear();
  }
  const bounds& limits() const { return bounds_; }

  // Before a profiling iteration: every node back to the pool, the counts to zero.
  void clear();
  node* make_root();
  // The node of `parent`'s child number `index`, or nullptr when a bound refuses it (noted in `parent`).
  node* add_child(node& parent, std::uint32_t index);
  static void credit(node& n, std::uint64_t bytes);
  // A touch of `addr` by n's task or one folded into it (the annotation source): n's anchor.
  static void note_touch(node& n, std::uintptr_t addr, bool write);
  // n's task ended (all its children did before): its SOID, added to its parent's; if it fits `cache`,
  // its children's nodes are freed and counted intra-socket.
  void end(node& n, std::uint32_t spawned, std::uint64_t cache);

  // After the iteration: a tier for every node left (§3.2.2), at least min_leaves leaves where the nodes
  // allow, a home for each, and, when the profile is complete, the lookup of a child by its index (child()).
  summary finish(std::uint64_t cache);
  const node* root() const { return root_; }
  const node* child(const node& parent, std::uint32_t index) const {
    return parent.first_kid != kNoKids && index < parent.spawned ? kids_[parent.first_kid + index] : nullptr;
  }

 private:
  node* allocate(unsigned depth);  // pool lock held; nullptr when max_nodes are live
  std::vector<node*> leaves_in_spawn_order() const;
  static std::size_t data_classes(const std::vector<node*>& leaves);
  void split_until_every_socket_has_a_leaf(summary& s);
  void deal_homes(summary& s);
  static constexpr std::size_t kChunk = 1024;

  bounds bounds_;
  unsigned min_leaves_;
  std::mutex m_;
  std::vector<std::unique_ptr<node[]>> chunks_;
  std::size_t next_fresh_ = 0;  // into the chunks, over all of them
  node* free_ = nullptr;
  std::size_t live_ = 0, peak_ = 0, profiled_ = 0;
  std::vector<std::size_t> top_to_depth_;  // profiled tasks at this depth or above (pool lock)
  std::atomic<unsigned> depth_limit_{0};    // children of a node at this depth or deeper get none
  std::vector<std::size_t> at_depth_;       // profiled tasks at exactly this depth (pool lock)
  // The first depth that has kKeepPerSocket x min_leaves tasks: a fitting task above it keeps its
  // children's nodes. It only falls as tasks are added, so a node freed earlier was never one a later value
  // would keep. The margin over min_leaves is for programs in phases (SOR's red and black sweeps are two
  // sets of tasks at one depth, run one after the other): a few rounds of splits, any few phases.
  static constexpr unsigned kKeepPerSocket = 16;
  std::atomic<unsigned> keep_depth_{0};
  std::atomic<std::size_t> intra_{0};
  node* root_ = nullptr;
  std::vector<const node*> kids_;
};

}  // namespace roost::profile
