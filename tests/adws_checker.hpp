// adws's own invariants (seed 003 ch. 4; digest §2) as observers, and the task trees their tests run: shared
// by test_adws (native threads) and test_sim (seeded simulated interleavings).
//  * Deterministic allocation (digest §2.2): without stealing, every task starts on the first worker of the
//    range the range arithmetic deals it (`predict`, `recorder`).
//  * Hierarchical localized stealing (seed 003 §4.2.4; digest §2.3): a thief steals only inside its topmost
//    active node, and the root group's node becomes active only when one of its search-root children ends;
//    so while both halves of a two-way root group run, no worker of one half runs a leaf of the other
//    (`halves_tree`, `half_check`).
#pragma once
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "roost/roost.hpp"
#include "sched/adws_range.hpp"

namespace roost_test::adws {

namespace ar = roost::sched::adws;

struct recorder : roost::task_observer {
  std::mutex m;
  std::map<std::string, int> worker_of;
  void on_task_start(const roost::task_event& e) override {
    std::lock_guard<std::mutex> lk(m);
    worker_of[e.path_string()] = e.worker;
  }
};

// A quad tree of depth `depth`, all four children spawned with equal hints (heat2d's shape).
inline void quad(int depth, std::vector<double>& out, std::size_t idx) {
  if (depth == 0) {
    out[idx] += 1.0;
    return;
  }
  roost::task_group tg(4);
  for (int k = 0; k < 4; ++k) tg.run([&out, depth, idx, k] { quad(depth - 1, out, idx * 4 + k); }, 1);
  tg.wait();
}

// The mapping the range arithmetic predicts: a task with a multi-worker range deals its four children
// over it; a task with a single-worker range keeps its whole subtree. Paths as the observer writes them.
inline void predict(ar::range r, int depth, const std::string& path, std::map<std::string, int>& out) {
  out[path] = static_cast<int>(ar::first(r));
  if (depth == 0) return;
  if (!ar::multi(r)) {
    for (int k = 0; k < 4; ++k) predict(r, depth - 1, path + "." + std::to_string(k), out);
    return;
  }
  ar::range cur = r;
  double remaining = 4;
  for (int k = 0; k < 4; ++k) {
    ar::split_result s = ar::split(cur, remaining, 1);
    predict(s.child, depth - 1, path + "." + std::to_string(k), out);
    cur = s.continuation;
    remaining = s.remaining;
  }
}

// Two halves of two quarters of `leaves` leaves each, every group with equal hints: the root deals the
// halves over the line, each half its quarters over its own part. `leaf(half, quarter)` is the leaf's
// body; the caller makes quarter 0 of half 0 slow and quarter 1 fast, so that the fast quarter's workers
// idle while their half, and the other half, still hold stealable leaves.
template <class Leaf>
void halves_tree(int leaves, const Leaf& leaf) {
  roost::task_group tg(2);
  for (int h = 0; h < 2; ++h)
    tg.run([&, h] {
      roost::task_group halves(2);
      for (int q = 0; q < 2; ++q)
        halves.run([&, h, q] {
          roost::task_group group(leaves);
          for (int k = 0; k < leaves; ++k) group.run([&, h, q] { leaf(h, q); }, 1);
          group.wait();
        }, 1);
      halves.wait();
    }, 1);
  tg.wait();
}

// On halves_tree over `workers` workers: leaves run outside their half's workers before either half ended
// (`crossed`, never under adws), and leaves of the slow quarter run by another worker of its half
// (`inside`: stealing did happen). Events, not clocks: a half's end is seen before the policy's task-end
// hook activates the root group's node (engine.hpp: observe_end, then on_task_end).
struct half_check : roost::task_observer {
  ar::range half_range[2];
  int slow_worker;
  std::mutex m;
  int halves_ended = 0, crossed = 0, inside = 0, leaves = 0;
  std::vector<std::string> errors;

  explicit half_check(unsigned workers) {
    // The halves as the range arithmetic deals them: the first child spawned gets the upper range.
    const ar::split_result root = ar::split({0, static_cast<double>(workers)}, 2, 1);
    half_range[0] = root.child;
    half_range[1] = root.continuation;
    // The slow quarter is half 0's first child: it gets the upper part of the half's range.
    slow_worker = static_cast<int>(ar::first(ar::split(half_range[0], 2, 1).child));
  }
  void on_task_start(const roost::task_event& e) override {
    if (e.path.size() != 4) return;  // root.half.quarter.leaf
    const unsigned h = e.path[1], q = e.path[2], w = static_cast<unsigned>(e.worker);
    const bool outside = w < ar::first(half_range[h]) || w > ar::last(half_range[h]);
    std::lock_guard<std::mutex> lk(m);
    ++leaves;
    if (outside && halves_ended == 0) {
      ++crossed;
      errors.push_back("leaf " + e.path_string() + " of half " + std::to_string(h) + " ran on worker " +
                       std::to_string(w) + " while both halves ran");
    }
    if (h == 0 && q == 0 && !outside && e.worker != slow_worker) ++inside;
  }
  void on_task_end(const roost::task_event& e) override {
    if (e.path.size() != 2) return;
    std::lock_guard<std::mutex> lk(m);
    ++halves_ended;
  }
};

}  // namespace roost_test::adws
