#include "sched/numa.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "platform/page_placement.hpp"
#include "roost/data.hpp"

namespace roost::sched {

namespace {

const std::atomic<detail::job*> kNothingRunsFirst{nullptr};

void bump(std::atomic<std::uint64_t>& c) { c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }

// Pages looked up per region at most: a larger region is sampled (its bytes scaled), so that dealing a
// task costs the same however much it declares.
constexpr std::size_t kMaxPagesPerRegion = 256;
constexpr std::size_t kMaxRowsCounted = 1 << 16;

// Which item of a stratum footprint() looks up: a fixed function of the stratum's index (splitmix64's
// finalizer), so that the same declaration is always sampled the same way.
std::size_t stratum_hash(std::size_t i);

// The one item of run i (items [i * step, i * step + size)) that footprint() looks at.
std::size_t pick(std::size_t i, std::size_t size) { return size <= 1 ? 0 : stratum_hash(i) % size; }

// Adds `weight` times the bytes [x, y) (offsets into a distributed allocation) to D, by the rule that puts
// part p of the allocation (placed_range::parts: runs of pages whose sizes differ by a page at most; fine
// memory is one part a page) on node (first_node + p) mod D.size(). The parts wholly inside [x, y) are
// counted one by one up to a bound; past it, by how many fall on each node, at their mean size (the total
// stays exact; a node's share is off by less than a page a part, and exact when the parts are equal).
void spread_by_parts(std::vector<double>& D, std::size_t x, std::size_t y, const platform::placed_range& r,
                     std::size_t page, std::size_t first_node, double weight) {
  if (x >= y) return;
  const std::size_t n = D.size();
  // Pages counted as page_placement::node_by_rule counts them, the last one partial: a simulated page larger
  // than the host's need not divide the allocation (40 KiB in 16 KiB pages is 3 of them; 2 put every part's
  // bound elsewhere than the rule, and most tasks on coarse memory went to another node).
  const std::uint64_t pages = (r.bytes + page - 1) / page;
  const auto node = [&](std::uint64_t p) { return (first_node + p) % n; };
  const auto start = [&](std::uint64_t p) { return platform::part_first_page(r, pages, p) * page; };
  const std::uint64_t p0 = platform::part_of_page(r, pages, x / page), p1 = platform::part_of_page(r, pages, (y - 1) / page);
  if (p0 == p1) {
    D[node(p0)] += weight * static_cast<double>(y - x);
    return;
  }
  D[node(p0)] += weight * static_cast<double>(start(p0 + 1) - x);
  D[node(p1)] += weight * static_cast<double>(y - start(p1));
  const std::uint64_t whole = p1 - p0 - 1;  // parts p0 + 1 .. p1 - 1
  if (whole <= 4 * n) {
    for (std::uint64_t p = p0 + 1; p < p1; ++p) D[node(p)] += weight * static_cast<double>(start(p + 1) - start(p));
    return;
  }
  const double mean = static_cast<double>(start(p1) - start(p0 + 1)) / static_cast<double>(whole);
  for (std::size_t k = 0; k < n; ++k)
    D[node(p0 + 1 + k)] += weight * mean * static_cast<double>(whole / n + (k < whole % n ? 1 : 0));
}

std::size_t stratum_hash(std::size_t i) {
  std::uint64_t z = static_cast<std::uint64_t>(i) + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<std::size_t>(z ^ (z >> 31));
}

}  // namespace

numa_policy::numa_policy(engine::engine_base& e)
    : policy_base(e), deal_by_writes_(e.config().numa_deal_writes), vicinity_(e.config().numa_vicinity) {
  const auto& tp = e.topology();
  num_nodes_ = std::max(1u, tp.num_numa_nodes());
  const unsigned n = e.num_workers();
  node_of_.resize(n);
  members_.resize(num_nodes_);
  for (unsigned w = 0; w < n; ++w) {
    unsigned node = std::min(tp.pu(e.placement().pu_of_worker[w]).numa, num_nodes_ - 1);
    node_of_[w] = node;
    members_[node].push_back(w);
    e.worker_at(w).run_first = &kNothingRunsFirst;
  }
  staffed_.resize(num_nodes_);
  for (unsigned i = 0; i < num_nodes_; ++i) staffed_[i] = !members_[i].empty();
  distance_ = tp.numa_distances();  // always num_nodes^2: hwloc's, or 10 local / 20 remote (topology.cpp)
  rule_nodes_ = num_nodes_;
  if (!e.config().simulated && !tp.is_virtual() && platform::page_placement::native_nodes() > 1) {
    std::vector<int> usable;
    for (unsigned i = 0; i < platform::page_placement::native_nodes(); ++i)
      usable.push_back(platform::page_placement::usable_native_node(i));
    std::vector<int> of = topology_nodes_of(usable, tp.numa_os_indexes());
    bool same = of.size() == num_nodes_;
    for (std::size_t i = 0; same && i < of.size(); ++i) same = of[i] == static_cast<int>(i);
    if (!same) {
      rule_nodes_ = static_cast<unsigned>(of.size());
      topology_node_of_rule_ = std::move(of);
    }
  }
  // C: the seed's cores per node (the most workers any node has here).
  for (const auto& m : members_) cores_ = std::max<unsigned>(cores_, static_cast<unsigned>(m.size()));
  // LLC: the largest cache of a worker's package, shared or not (a package of one core has an L3 that no
  // sharing level lists: LLC/C was 0 there, and every declared task was dealt).
  for (const auto& l : tp.sharing_levels()) llc_ = std::max(llc_, l.cache_bytes);
  for (unsigned w = 0; w < n; ++w) llc_ = std::max(llc_, tp.package_cache_bytes(e.placement().pu_of_worker[w]));
  // Algorithm 2, line 3: the other nodes sorted by distance from each node (ties by index), cut to the vicinity.
  order_.resize(num_nodes_);
  for (unsigned i = 0; i < num_nodes_; ++i) {
    for (unsigned j = 0; j < num_nodes_; ++j)
      if (j != i && staffed_[j]) order_[i].push_back(j);
    std::stable_sort(order_[i].begin(), order_[i].end(), [&](unsigned a, unsigned b) {
      return distance_[i * num_nodes_ + a] < distance_[i * num_nodes_ + b];
    });
    if (vicinity_ > 0 && order_[i].size() > vicinity_ - 1) order_[i].resize(vicinity_ - 1);
  }
  nodes_ = std::vector<node_state>(num_nodes_);
  per_worker_ = std::vector<worker_state>(n);
}

std::vector<int> numa_policy::topology_nodes_of(const std::vector<int>& usable_os, const std::vector<int>& topology_os) {
  std::vector<int> of(usable_os.size(), -1);
  for (std::size_t i = 0; i < usable_os.size(); ++i) {
    const auto at = std::find(topology_os.begin(), topology_os.end(), usable_os[i]);
    if (at != topology_os.end()) of[i] = static_cast<int>(at - topology_os.begin());
  }
  return of;
}

std::vector<double> numa_policy::footprint(const roost::data& d) const {
  if (num_nodes_ == 1) return std::vector<double>(1, static_cast<double>(d.bytes()));
  // Counted by the nodes the rules and move_pages name (rule_nodes_), then given to the topology's nodes.
  std::vector<double> D(rule_nodes_, 0.0);
  // Pages looked up one by one where they lie now: the host's, each lookup at an address of the region (a
  // larger simulated page rounded lookups down into other allocations, first touched elsewhere: a review).
  const std::size_t page = platform::os::page_size();
  // The page the placement rules split by: the simulated machine's where it is larger than the host's (at 16 or
  // 64 KiB simulated pages, tasks on fine and coarse memory were dealt to the wrong node: an outside-user
  // campaign), as page_placement::node_by_rule and the simulator place them.
  const std::size_t rule_page = platform::page_placement::rule_page_bytes();
  // Dealing by writes counts the written regions; a task that writes nothing declared is dealt by all.
  bool writes_only = false;
  if (deal_by_writes_)
    for (const region& r : d) writes_only |= r.mode != access::read && r.bytes() != 0;
  for (const region& r : d) {
    const std::size_t bytes = r.bytes();
    if (bytes == 0 || (writes_only && r.mode == access::read)) continue;
    const auto row_base = [&](std::size_t row) { return reinterpret_cast<std::uintptr_t>(r.base) + row * r.stride; };
    // A region of more rows than kMaxRowsCounted is taken by a sample of its rows (kMaxPagesPerRegion of
    // them, one in each run of `row_step`, at a place a fixed hash picks), each weighing for its run, so
    // that what a spawn costs does not grow with its declaration (a spawn that declared 10 TB visited
    // every page and took 14 s, and a simulated run was stopped as stuck).
    const std::size_t row_step = r.rows > kMaxRowsCounted ? (r.rows + kMaxPagesPerRegion - 1) / kMaxPagesPerRegion : 1;
    const auto for_each_row = [&](auto&& row_fn) {  // row_fn(row, weight)
      for (std::size_t i = 0; i * row_step < r.rows; ++i) {
        const std::size_t size = std::min(row_step, r.rows - i * row_step);
        row_fn(i * row_step + pick(i, size), static_cast<double>(size));
      }
    };
    // Memory placed by a rule (fine, coarse) that holds the whole region: each row's bytes are split over
    // the nodes exactly, in a few steps whatever their size. Sampling its pages would alias with the rule:
    // every 4th page of a fine array on 8 nodes lies on nodes 0 and 4 alone.
    platform::placed_range range;
    const std::uintptr_t lo = reinterpret_cast<std::uintptr_t>(r.base);
    const std::uintptr_t hi = row_base(r.rows - 1) + r.row_bytes;  // one past the last byte
    if (platform::page_placement::find(lo, range) && range.rule != platform::page_rule::first_touch &&
        hi - range.base <= range.bytes) {
      const bool fine = range.rule == platform::page_rule::round_robin;
      const std::size_t first_node = fine ? 0 : static_cast<std::size_t>(range.first_part % rule_nodes_);
      platform::placed_range rule = range;
      if (fine) rule.parts = (range.bytes + rule_page - 1) / rule_page;  // a part a page, the last one partial
      for_each_row([&](std::size_t row, double weight) {
        const std::size_t x = row_base(row) - range.base, y = x + r.row_bytes;
        spread_by_parts(D, x, y, rule, rule_page, first_node, weight);
      });
      continue;
    }
    // Anything else, page by page, where the page lies now (the simulator's page map or move_pages(2)): one
    // page of every `step` is looked up, at a place a fixed hash picks inside each run, at most
    // kMaxPagesPerRegion of them.
    bool have_range = false;
    const auto add_page = [&](std::uintptr_t p, double weight) {
      // One registry lookup per run of pages of one distributed allocation.
      if (!have_range || p < range.base || p - range.base >= range.bytes) have_range = platform::page_placement::find(p, range);
      int node = have_range ? platform::page_placement::node_by_rule(range, p, rule_nodes_) : platform::page_placement::unknown;
      if (node < 0) node = platform::page_placement::node_now(p, rule_nodes_);  // the rule was asked above
      if (node >= 0) D[static_cast<unsigned>(node)] += weight;
    };
    const auto pages_of_row = [&](std::size_t row) {
      const std::uintptr_t a = row_base(row);
      return (a + r.row_bytes - 1) / page - a / page + 1;
    };
    if (row_step > 1) {  // a page of each sampled row, picked as the row was (a row's first alone aliases)
      const double per_row = static_cast<double>(r.row_bytes);
      std::size_t i = 0;
      for_each_row([&](std::size_t row, double weight) {
        add_page(row_base(row) / page * page + pick(~i++, pages_of_row(row)) * page, per_row * weight);
      });
      continue;
    }
    std::size_t pages = 0;
    for (std::size_t row = 0; row < r.rows; ++row) pages += pages_of_row(row);
    const std::size_t step = (pages + kMaxPagesPerRegion - 1) / kMaxPagesPerRegion;
    const double per_page = static_cast<double>(bytes) / static_cast<double>(pages);
    std::size_t first = 0;  // the index, over the whole region, of this row's first page
    for (std::size_t row = 0; row < r.rows; ++row) {
      const std::size_t n = pages_of_row(row);
      const std::uintptr_t p0 = row_base(row) / page * page;
      for (std::size_t i = first / step; i * step < first + n; ++i) {  // the runs this row's pages meet
        const std::size_t size = std::min(step, pages - i * step);
        const std::size_t k = i * step + pick(i, size);
        if (k >= first && k < first + n) add_page(p0 + (k - first) * page, per_page * static_cast<double>(size));
      }
      first += n;
    }
  }
  if (topology_node_of_rule_.empty()) return D;
  std::vector<double> by_topology(num_nodes_, 0.0);
  for (unsigned i = 0; i < rule_nodes_; ++i)
    if (topology_node_of_rule_[i] >= 0) by_topology[static_cast<unsigned>(topology_node_of_rule_[i])] += D[i];
  return by_topology;
}

unsigned numa_policy::deal(unsigned here, const std::vector<double>& D, kept* why) const {
  kept ignored;
  if (!why) why = &ignored;
  const double sum = std::accumulate(D.begin(), D.end(), 0.0);
  // Line 3: a working set above the LLC's share of one core, not spread evenly over the nodes. Dealt by
  // writes, the size does not matter: what a task writes is what the next task that reads or updates it
  // (the next step, the next phase) finds in this node's caches and memory.
  *why = kept::small;
  if (!deal_by_writes_ && sum <= static_cast<double>(llc_) / cores_) return here;
  const double mean = sum / static_cast<double>(D.size());
  double var = 0;
  for (double x : D) var += (x - mean) * (x - mean);
  *why = kept::even;
  if (!(var / static_cast<double>(D.size()) > 0)) return here;
  *why = kept::nearest;
  // Line 4: the least NUMA distance-weighted cost to D. Among nodes that cost the same, the one with the
  // fewest tasks waiting (node_load), here first, then the lowest; the seed does not say. Ties kept here,
  // else sent to the lowest node, the rule before, overloaded those nodes: jacobi's blocks on fine pages
  // each write two nodes equally (c / 2 and c / 2 + 4 for block column c), and its 64 blocks a step ran on
  // 24 of 48 workers (simulated seed-002 machine: numa + fine 9.30 ms of virtual time, 6.25 now, ws + fine
  // 6.96; sparselu + fine 2.55 -> 1.39 ms; reduction + coarse dealt by footprint 44 -> 37 ms).
  unsigned best = here;
  double best_cost = 0;
  std::int64_t best_load = -1;  // node_load(best), once a tie needs it (it reads other workers' lines)
  for (unsigned j = 0; j < num_nodes_; ++j) best_cost += D[j] * distance_[here * num_nodes_ + j];
  for (unsigned i = 0; i < num_nodes_; ++i) {
    if (!staffed_[i] || i == here) continue;
    double cost = 0;
    for (unsigned j = 0; j < num_nodes_; ++j) cost += D[j] * distance_[i * num_nodes_ + j];
    // Equal within rounding: sampled footprints are not whole numbers of bytes.
    const bool tie = std::fabs(cost - best_cost) <= 1e-9 * std::max(cost, best_cost);
    if (!tie && cost < best_cost) {
      best = i;
      best_cost = cost;
      best_load = -1;
    } else if (tie) {
      // Per worker: on nodes with unequal worker counts the raw count sent the data of nodes with no worker
      // to the least loaded node, a one-worker one (an outside-user campaign). Compared as products, so
      // that nodes with equal counts compare their loads exactly as before.
      if (best_load < 0) best_load = node_load(best);
      const std::int64_t load = node_load(i);
      if (load * static_cast<std::int64_t>(members_[best].size()) <
          best_load * static_cast<std::int64_t>(members_[i].size())) {
        best = i;
        best_cost = cost;
        best_load = load;
      }
    }
  }
  return best;
}

void numa_policy::place(engine::worker& w, detail::task_frame* f) {
  const unsigned here = node_of_[w.id];
  worker_state& st = per_worker_[w.id];
  unsigned to = here;
  kept why = kept::small;
  if (w.spawn_decl && num_nodes_ > 1) {
    const std::vector<double> D = footprint(*w.spawn_decl);
    to = deal(here, D, &why);
    if (to == here) bump(why == kept::small ? st.small : why == kept::even ? st.even : st.nearest);
  }
  // Placed for its data (dealt away, or kept because its data is nearest here): counted on its node from its
  // push until it starts (on_task_start), for the threshold other nodes search this one with
  // (search_threshold). Counted after the push, which may throw (a queue that cannot grow), so that a task
  // never queued is never counted; one that starts first leaves the count at -1 for that moment.
  const bool placed = w.spawn_decl && num_nodes_ > 1 && (to != here || why == kept::nearest);
  if (placed) f->id.sched_node = &nodes_[to];
  if (to == here) {
    if (w.spawn_decl) bump(st.dealt_home);
    // Shared at once, not left private until the next push or pop (ws_deque.hpp): this node's other
    // workers must see a task dealt here while the spawner runs a long leaf (a flat loop of the seed's
    // shape pushes all its tasks, then runs them: private, they waited for its pops, one leaf each).
    w.deque.ask_to_share();
    w.deque.push(f);  // the deque wakes a sleeper when it shares the task
    // ...but one may be a worker of another node barred from it, which sleeps again, while one that may
    // take it sleeps on (a review): every sleeper looks. Only when someone sleeps: a fence otherwise.
    eng_.idle().notify_all_new_work();
  } else {
    bump(st.dealt_away);
    nodes_[to].inbox.push_top(f);  // the front; taken from the back: oldest first (§4)
  }
  if (placed) nodes_[to].placed_by_data.fetch_add(1, std::memory_order_relaxed);
  if (to != here) eng_.idle().notify_all_new_work();
}

detail::job* numa_policy::take_left_behind(engine::worker&) {
  if (!eng_.stopping()) return nullptr;
  for (auto& n : nodes_)
    if (detail::job* j = n.inbox.pop_bottom()) return j;
  return nullptr;
}

detail::job* numa_policy::pop_own(engine::worker& w) {
  if (detail::job* j = w.deque.pop()) return j;
  detail::job* j = nodes_[node_of_[w.id]].inbox.pop_bottom();
  if (j) per_worker_[w.id].backoff = 0;  // work found: the next remote search comes at once
  return j;
}

std::int64_t numa_policy::node_load(unsigned node) const {
  std::int64_t n = static_cast<std::int64_t>(nodes_[node].inbox.size_hint());
  for (unsigned m : members_[node]) n += eng_.worker_at(m).deque.size_estimate();
  return n;
}

// Seed 002 Algorithm 2: distance x C, C the cores of a node. Two deviations, both measured:
// - C is the victim node's own worker count. On a machine whose nodes have workers unequally (a worker count
//   that does not fill the last node, an asymmetric topology), C of the largest node let a one-worker node keep
//   its data's tasks (48 under a threshold of 80) and run them alone: numa at 5 workers on the simulated
//   4 x 4 Opteron took 2.3x ws's time (an outside-user campaign).
// - The distance is relative to the victim's own, d(i, v) / d(v, v): the factor by which a task that waits on
//   its memory runs slower on the thief's node (seed 002 §2 reads the SLIT as relative latency; 10 is local).
//   So a thief takes from a node whose workers have more than that many tasks each still queued, which they
//   would reach later than the thief finishes the one it takes. The raw SLIT value (10 for local) asked for
//   20 tasks a worker on a 10/20 machine: at 9 workers on the 4 x 4 Opteron (4 + 4 + 1) the one-worker node
//   never had that many and ran its quarter of the data alone, numa 1.36-2.0x ws's time with coarse pages
//   (jacobi 1.66x, map 1.76x, matmul-blocked 2.01x), 0.87-1.07x now; on the seed's own machine (48 workers)
//   sparselu with coarse pages 2.47x -> 2.81x faster than ws, no benchmark slower (src/sched/README.md).
double numa_policy::steal_threshold(unsigned node, unsigned victim) const {
  const double relative = static_cast<double>(distance_[node * num_nodes_ + victim]) /
                          static_cast<double>(std::max(1u, distance_[victim * num_nodes_ + victim]));
  return relative * static_cast<double>(std::max<std::size_t>(1, members_[victim].size()));
}

// Algorithm 2's threshold protects tasks that Algorithm 1 placed on a node for their data: the seed's
// rule, kept for every node that holds one. A node that holds none (its tasks declared nothing, or their
// data is small or spread evenly: nothing ties them to it) has nothing to protect, and any visible task of
// it may be taken (threshold 0), as under ws. The seed's programs create their tasks from one thread and
// their node queues grow long; but a recursion spawned depth-first keeps a few tasks per open level, never
// the seed's distance x C (96 on its machine), and a loop of tasks spread evenly over the nodes (fine pages)
// queues them all on its spawner's node: with the seed's threshold alone other nodes never took part (fib
// on four simulated 4-core packages ran on 4 of 16 workers; an outside-user campaign). Halving the threshold at each fruitless search (down
// to 1/64), the rule before this one, still left the few widest tasks of a merge tree on one node's six
// cores: reduction with fine pages ran 1.46x as long as under ws (36.7 ms of virtual time now, 52.9 then;
// map, sparselu and vecmul with standard or fine pages 5-20% faster, every coarse run the same). Keeping the
// seed's threshold for placed tasks is measured too: halving it for them robbed nodes of their own data's
// tasks (jacobi with coarse pages fell from 1.46x to 1.22x ws's speed, vecmul from 2.08x to 1.63x).
double numa_policy::search_threshold(unsigned w, unsigned victim) const {
  if (nodes_[victim].placed_by_data.load(std::memory_order_relaxed) > 0) return steal_threshold(node_of_[w], victim);
  return 0;
}

detail::job* numa_policy::take_from_node(engine::worker& w, unsigned node) {
  if (detail::job* j = nodes_[node].inbox.pop_bottom()) {
    engine::observe_steal(w, members_[node].front(), true);
    return j;
  }
  const auto& m = members_[node];
  return steal_one_of(w, static_cast<unsigned>(m.size()), [&](unsigned k) { return m[k]; });
}

detail::job* numa_policy::steal(engine::worker& w) {
  const unsigned here = node_of_[w.id];
  // Own node: its inbox (pop_own looked already, but another worker may have dealt since), its workers.
  // Work found anywhere ends the back-off: the next fruitless search waits one round again.
  worker_state& st = per_worker_[w.id];
  if (detail::job* j = nodes_[here].inbox.pop_bottom()) {
    st.backoff = 0;
    return j;
  }
  const auto& mine = members_[here];
  for (std::size_t i = 1; i < mine.size(); ++i)
    if (detail::job* j = steal_one_of(w, static_cast<unsigned>(mine.size()), [&](unsigned k) { return mine[k]; })) {
      st.backoff = 0;
      return j;
    }
  // Algorithm 2: other nodes nearest first, only above the threshold; back off after a fruitless search.
  if (st.skip > 0) {
    --st.skip;
    return nullptr;
  }
  for (unsigned v : order_[here]) {
    if (static_cast<double>(node_load(v)) <= search_threshold(w.id, v)) continue;
    if (detail::job* j = take_from_node(w, v)) {
      st.backoff = 0;
      bump(st.steals_far);
      return j;
    }
  }
  st.skip = 1u << st.backoff;
  if (st.backoff < 6) ++st.backoff;
  return nullptr;
}

// What steal could take: the node's inbox, a shared task of the node's deques, another node's above its
// threshold. Alone (steals_from_any_deque): with the engine's look at every deque, a worker on another node
// than tasks kept for their data never slept while they waited below the threshold, and spun at full speed
// (a review). Private tasks are asked to be shared where a thief may take them, as the engine's look does
// (engine_base::any_work_visible): an owner that shares one wakes a sleeper.
bool numa_policy::has_visible_work(engine::worker& w) const {
  const unsigned here = node_of_[w.id];
  if (!nodes_[here].inbox.empty_hint()) return true;
  const auto ask_node = [&](unsigned node) {
    bool shared = false;
    for (unsigned m : members_[node]) {
      engine::worker& owner = eng_.worker_at(m);
      if (owner.deque.shared_estimate()) shared = true;
      else owner.deque.ask_to_share();
    }
    return shared;
  };
  if (ask_node(here)) return true;
  for (unsigned v : order_[here])
    if (static_cast<double>(node_load(v)) > search_threshold(w.id, v) &&
        (!nodes_[v].inbox.empty_hint() || ask_node(v)))
      return true;
  return false;
}

std::string numa_policy::notes() const {
  std::uint64_t home = 0, away = 0, small = 0, even = 0, nearest = 0, far = 0;
  for (const worker_state& s : per_worker_) {
    home += s.dealt_home.load(std::memory_order_relaxed);
    away += s.dealt_away.load(std::memory_order_relaxed);
    small += s.small.load(std::memory_order_relaxed);
    even += s.even.load(std::memory_order_relaxed);
    nearest += s.nearest.load(std::memory_order_relaxed);
    far += s.steals_far.load(std::memory_order_relaxed);
  }
  std::ostringstream os;
  unsigned staffed = 0;
  for (bool b : staffed_) staffed += b;
  os << num_nodes_ << " NUMA node" << (num_nodes_ == 1 ? "" : "s") << " (" << staffed << " with workers), at most "
     << cores_ << " workers a node, LLC " << (llc_ >> 10) << " KiB";
  if (staffed <= 1) {
    os << "; dealing has nothing to choose from (one node with workers): runs as help-first work stealing";
    return os.str();
  }
  os << ", vicinity " << (vicinity_ == 0 ? std::string("all") : std::to_string(vicinity_)) << ", dealt by "
     << (deal_by_writes_ ? "writes" : "footprint");
  if (!topology_node_of_rule_.empty()) {
    unsigned listed = 0;
    for (int t : topology_node_of_rule_) listed += t >= 0;
    os << "; pages' nodes by system number, matched to the topology's order (" << listed << " of "
       << topology_node_of_rule_.size() << " usable nodes listed)";
  }
  // Counts only once there is something to count (the start-up line printed zeros of a run not begun).
  if (home + away + far == 0) return os.str() + "; no task has declared its data";
  os << "; declared tasks: " << away << " dealt to another node, " << home << " kept (" << small
     << " below LLC/C, " << even << " spread evenly, " << nearest << " nearest their data here); " << far
     << " steals from other nodes";
  return os.str();
}

}  // namespace roost::sched
