#include "topology/memory_tree.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <sstream>

namespace roost::topo {

namespace {

// The caches above a PU as sets of PUs (first PU, PU count), outermost first, each with the largest
// capacity among the caches that cover exactly that set (an L2 and an L1 private to one core are one
// memory group: the L2).
std::vector<std::pair<std::pair<unsigned, unsigned>, std::size_t>> cache_chain(const topology& tp, unsigned pu) {
  std::map<std::pair<unsigned, unsigned>, std::size_t> by_set;
  for (int i = tp.pu(pu).leaf_node; i >= 0; i = tp.nodes()[i].parent) {
    const node& n = tp.nodes()[i];
    if (n.kind != node_kind::cache) continue;
    auto key = std::make_pair(n.first_pu, n.pu_count);
    by_set[key] = std::max(by_set[key], n.cache_bytes);
  }
  std::vector<std::pair<std::pair<unsigned, unsigned>, std::size_t>> chain(by_set.begin(), by_set.end());
  std::sort(chain.begin(), chain.end(), [](const auto& a, const auto& b) { return a.first.second > b.first.second; });
  return chain;
}

std::string cache_name(const topology& tp, unsigned pu, std::pair<unsigned, unsigned> set) {
  int level = 0;
  for (int i = tp.pu(pu).leaf_node; i >= 0; i = tp.nodes()[i].parent) {
    const node& n = tp.nodes()[i];
    if (n.kind == node_kind::cache && n.first_pu == set.first && n.pu_count == set.second)
      level = std::max(level, n.cache_level);
  }
  return level ? cache_level_name(level) : "cache";
}

memory_tree flat(unsigned workers, std::string note) {
  memory_tree t;
  memory_level dram{"DRAM", std::numeric_limits<double>::infinity(), 1, workers, {0}, std::vector<unsigned>(workers, 0)};
  memory_level leaves{"worker", 0, workers, 0, {}, {}};
  for (unsigned w = 0; w < workers; ++w) {
    leaves.head.push_back(w);
    leaves.group_of_worker.push_back(w);
  }
  t.levels = {dram, leaves};
  t.note = std::move(note);
  return t;
}

}  // namespace

memory_tree build_memory_tree(const topology& tp, const placement& pl, unsigned workers) {
  // A cache's workers are those on its PUs. They are known by a count and the least of them, from the workers
  // on each PU, not as a set per worker and cache: those sets made this quadratic in the workers (4,096
  // oversubscribed workers under adws-ml: 1.26 GB and 14 s to make the runtime; an outside-user campaign).
  // A worker's caches are nested (its PU's ancestors), so two of them hold the same workers exactly when
  // they hold as many.
  unsigned pus = 0;
  for (unsigned w = 0; w < workers; ++w) pus = std::max(pus, pl.pu_of_worker[w] + 1);
  std::vector<unsigned> before(pus + 1, 0);  // workers on the PUs below each PU number
  std::vector<unsigned> least_on(pus, std::numeric_limits<unsigned>::max());
  for (unsigned w = 0; w < workers; ++w) {
    ++before[pl.pu_of_worker[w] + 1];
    least_on[pl.pu_of_worker[w]] = std::min(least_on[pl.pu_of_worker[w]], w);
  }
  for (unsigned p = 0; p < pus; ++p) before[p + 1] += before[p];
  using pu_range = std::pair<unsigned, unsigned>;  // first PU, PU count
  const auto clamp = [&](std::size_t p) { return static_cast<unsigned>(std::min<std::size_t>(p, pus)); };
  const auto count_in = [&](pu_range r) { return before[clamp(r.first + std::size_t{r.second})] - before[clamp(r.first)]; };
  std::map<pu_range, unsigned> least_memo;
  const auto least_in = [&](pu_range r) {
    auto [it, fresh] = least_memo.emplace(r, std::numeric_limits<unsigned>::max());
    if (fresh)
      for (unsigned p = clamp(r.first); p < clamp(r.first + std::size_t{r.second}); ++p) it->second = std::min(it->second, least_on[p]);
    return it->second;
  };
  // Per worker, its groups outermost first: a cache's PU range, or its own leaf; with capacity and name.
  struct group_of {
    pu_range pus;
    bool own_leaf;
    std::size_t bytes;
    std::string name;
  };
  std::vector<std::vector<group_of>> chain(workers);
  for (unsigned w = 0; w < workers; ++w) {
    const unsigned pu = pl.pu_of_worker[w];
    for (const auto& [set, bytes] : cache_chain(tp, pu)) {
      if (!chain[w].empty() && count_in(chain[w].back().pus) == count_in(set)) continue;  // the same workers: one group
      chain[w].push_back({set, false, bytes, cache_name(tp, pu, set)});
    }
    if (chain[w].empty() || count_in(chain[w].back().pus) > 1)  // leaves are always one worker each
      chain[w].push_back({{w, 0}, true, 0, "worker"});
  }
  const std::size_t depth = chain[0].size();
  for (unsigned w = 1; w < workers; ++w)
    if (chain[w].size() != depth) {
      // A cache that holds the same workers as the one below it is one group: where the workers fill some
      // caches and not others (6 workers on 8 PUs, 3 on 2), a worker's chain is shorter (an outside-user
      // campaign found the old words, "caches of different depths", wrong for such a machine).
      const auto shared = [&](unsigned v) {
        return std::count_if(chain[v].begin(), chain[v].end(), [&](const group_of& g) { return !g.own_leaf && count_in(g.pus) > 1; });
      };
      std::ostringstream why;
      why << "the workers do not fill the caches evenly (worker 0 shares " << shared(0) << " cache"
          << (shared(0) == 1 ? "" : "s") << " with other workers, worker " << w << " shares " << shared(w)
          << "; a cache whose workers are all those of the cache below it counts once, and a worker count that is "
             "not a multiple of the PUs can leave some caches with fewer workers than others): DRAM over "
             "per-worker leaves";
      return flat(workers, why.str());
    }

  memory_tree t;
  t.levels.push_back({"DRAM", std::numeric_limits<double>::infinity(), 1, 0, {0}, std::vector<unsigned>(workers, 0)});
  std::vector<unsigned> head_of(workers);
  for (std::size_t d = 0; d < depth; ++d) {
    memory_level lv;
    lv.name = chain[0][d].name;
    lv.group_capacity = static_cast<double>(chain[0][d].bytes);
    // Groups ordered by (parent group, head), so that a group's children are contiguous.
    std::vector<std::pair<unsigned, unsigned>> order;  // (parent index, head)
    std::vector<bool> seen(workers, false);
    for (unsigned w = 0; w < workers; ++w) {
      const group_of& g = chain[w][d];
      if (g.bytes != chain[0][d].bytes) return flat(workers, "caches of different sizes at one level: DRAM over per-worker leaves");
      const unsigned head = g.own_leaf ? w : least_in(g.pus);
      head_of[w] = head;
      if (!seen[head]) {
        seen[head] = true;
        order.emplace_back(t.levels.back().group_of_worker[head], head);
      }
    }
    std::sort(order.begin(), order.end());
    lv.groups = static_cast<unsigned>(order.size());
    std::vector<unsigned> group_of_head(workers, 0);
    for (unsigned g = 0; g < lv.groups; ++g) {
      lv.head.push_back(order[g].second);
      group_of_head[order[g].second] = g;
    }
    lv.group_of_worker.assign(workers, 0);
    for (unsigned w = 0; w < workers; ++w) lv.group_of_worker[w] = group_of_head[head_of[w]];
    memory_level& parent = t.levels.back();
    if (lv.groups % parent.groups != 0) return flat(workers, "a non-uniform cache tree: DRAM over per-worker leaves");
    parent.fanout = lv.groups / parent.groups;
    for (unsigned g = 0; g < lv.groups; ++g)
      if (parent.group_of_worker[lv.head[g]] != g / parent.fanout)
        return flat(workers, "a non-uniform cache tree: DRAM over per-worker leaves");
    t.levels.push_back(std::move(lv));
  }
  return t;
}

std::string memory_tree::summary() const {
  std::ostringstream os;
  for (std::size_t l = 0; l < levels.size(); ++l) {
    if (l) os << " > " << levels[l].groups << " x ";
    os << levels[l].name;
    if (l && levels[l].group_capacity > 0) os << " " << format_bytes(static_cast<std::size_t>(levels[l].group_capacity));
  }
  if (!note.empty()) os << " (" << note << ")";
  return os.str();
}

}  // namespace roost::topo
