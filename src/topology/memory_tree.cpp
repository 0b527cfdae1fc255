#include "topology/memory_tree.hpp"

#include <algorithm>
#include <map>
#include <set>
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
  // Per worker, the worker sets of its caches, outermost first (workers on the same PUs share them).
  std::vector<std::vector<std::set<unsigned>>> sets(workers);
  std::vector<std::vector<std::size_t>> caps(workers);
  std::vector<std::vector<std::string>> names(workers);
  for (unsigned w = 0; w < workers; ++w) {
    const unsigned pu = pl.pu_of_worker[w];
    for (const auto& [set, bytes] : cache_chain(tp, pu)) {
      std::set<unsigned> members;
      for (unsigned v = 0; v < workers; ++v) {
        unsigned p = pl.pu_of_worker[v];
        if (p >= set.first && p < set.first + set.second) members.insert(v);
      }
      if (!sets[w].empty() && sets[w].back() == members) continue;  // the same workers: one group
      sets[w].push_back(members);
      caps[w].push_back(bytes);
      names[w].push_back(cache_name(tp, pu, set));
    }
    if (sets[w].empty() || sets[w].back().size() > 1) {  // leaves are always one worker each
      sets[w].push_back({w});
      caps[w].push_back(0);
      names[w].push_back("worker");
    }
  }
  const std::size_t depth = sets[0].size();
  for (unsigned w = 1; w < workers; ++w)
    if (sets[w].size() != depth) return flat(workers, "caches of different depths above the workers: DRAM over per-worker leaves");

  memory_tree t;
  t.levels.push_back({"DRAM", std::numeric_limits<double>::infinity(), 1, 0, {0}, std::vector<unsigned>(workers, 0)});
  for (std::size_t d = 0; d < depth; ++d) {
    memory_level lv;
    lv.name = names[0][d];
    lv.group_capacity = static_cast<double>(caps[0][d]);
    // Groups ordered by (parent group, head), so that a group's children are contiguous.
    std::vector<std::pair<unsigned, unsigned>> order;  // (parent index, head)
    std::map<unsigned, std::set<unsigned>> by_head;
    for (unsigned w = 0; w < workers; ++w) {
      const std::set<unsigned>& s = sets[w][d];
      if (caps[w][d] != caps[0][d]) return flat(workers, "caches of different sizes at one level: DRAM over per-worker leaves");
      unsigned head = *s.begin();
      if (by_head.emplace(head, s).second) order.emplace_back(t.levels.back().group_of_worker[head], head);
    }
    std::sort(order.begin(), order.end());
    lv.groups = static_cast<unsigned>(order.size());
    lv.group_of_worker.assign(workers, 0);
    for (unsigned g = 0; g < lv.groups; ++g) {
      lv.head.push_back(order[g].second);
      for (unsigned w : by_head[order[g].second]) lv.group_of_worker[w] = g;
    }
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
