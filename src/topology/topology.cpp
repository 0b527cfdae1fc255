#include "topology/topology.hpp"

#include <hwloc.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

#include "platform/platform.hpp"
#include "platform/fork_hold.hpp"
#include "roost/errors.hpp"
#include "roost/options.hpp"
#include "topology/synthetic.hpp"

namespace roost::topo {

namespace {

// hwloc keeps process-wide locks of its own (its components' registry, taken by init, load and destroy),
// which fork() copies held while another thread is inside one of those calls: a child forked then hung in its
// first runtime's hwloc_topology_load (an outside-user campaign: 5 children of 150, forked while another
// thread made and destroyed runtimes). roost's uses of hwloc go one at a time under this lock, which a fork
// holds, so that no thread of the parent is inside hwloc when a child is made.
std::mutex& hwloc_mutex() {
  static std::mutex* m = new std::mutex;  // never destroyed: runtimes may be made during static destruction
  return *m;
}
__attribute__((constructor)) void watch_forks_for_hwloc() { platform::hold_across_forks_of<&hwloc_mutex>(); }

struct hwloc_handle {
  hwloc_topology_t t = nullptr;
  ~hwloc_handle() {
    if (t) hwloc_topology_destroy(t);
  }
};

// This machine as hwloc discovers it, once a process. A discovery reads about a hundred files of /sys, 1.6 to
// 1.9 ms here: most of a runtime's construction, which took 1.5 ms in all (a loop making runtimes of one
// worker). A duplicate of it takes about 3 us; each load restricts its duplicate to the calling thread's
// affinity then, as it restricted a discovery. So the CPUs, caches and NUMA nodes are those of the first
// native runtime's time: a CPU brought online later, CPUs a cgroup's cpuset gains later (hwloc leaves out the
// ones it disallowed then), NUMA memory sizes and HWLOC_* variables set since are not seen by the process's
// later runtimes (configuration.md says so); a mask that shrinks is, by the restriction. Called under
// hwloc_mutex; never destroyed (runtimes may be made during static destruction), and a fork's child finds it
// in its copy of the parent's memory, which no thread of the parent was changing (the mutex is held across
// forks).
hwloc_topology_t discovered_machine() {
  static hwloc_topology_t machine = nullptr;
  if (!machine) {
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0) throw config_error("roost: hwloc_topology_init failed");
    if (hwloc_topology_load(t) != 0) {
      hwloc_topology_destroy(t);
      throw config_error("roost: hwloc cannot read this machine's topology");
    }
    machine = t;
  }
  return machine;
}
// A loaded copy of it for one load to restrict (and destroy).
void duplicate_machine(hwloc_topology_t* into) {
  if (hwloc_topology_dup(into, discovered_machine()) != 0) {
    *into = nullptr;
    throw config_error("roost: hwloc cannot copy this machine's topology");
  }
}

bool is_file(const std::string& s) {
  struct stat st;
  return ::stat(s.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool is_data_cache(hwloc_obj_t o) {
  return hwloc_obj_type_is_cache(o->type) && o->attr->cache.type != HWLOC_OBJ_CACHE_INSTRUCTION;
}

}  // namespace

std::string cache_level_name(unsigned level) {
  std::string name(1, 'L');
  name += std::to_string(level);
  return name;
}

std::string format_bytes(std::size_t b) {
  std::ostringstream os;
  if (b >= (1ull << 30) && b % (1ull << 30) == 0) os << (b >> 30) << " GiB";
  else if (b >= (1ull << 20) && b % (1ull << 20) == 0) os << (b >> 20) << " MiB";
  else if (b >= (1ull << 10) && b % (1ull << 10) == 0) os << (b >> 10) << " KiB";
  else os << b << " B";
  return os.str();
}

topology topology::load(const std::string& description, const std::string& source) {
  topology tp;
  tp.description_ = description;
  tp.source_ = source;
  tp.virtual_ = !description.empty();
  const bool xml = tp.virtual_ && is_file(description);
  tp.from_file_ = xml;
  const char* valid = "must be an hwloc XML export (lstopo-no-graphics --of xml > FILE) or a synthetic description "
                      "such as 'pack:2 l3:1(size=1MiB) core:1 pu:1' (check it with lstopo-no-graphics -i \"...\")";
  auto reject = [&](const std::string& why) {
    throw config_error(tp.named() + ": " + why);
  };
  if (struct stat st; tp.virtual_ && !xml && ::stat(description.c_str(), &st) == 0)
    reject(std::string(S_ISDIR(st.st_mode) ? "names a directory" : "names something that is not a regular file") +
           ", not a topology file; " + valid);
  const std::uint64_t described_pus =
      tp.virtual_ && !xml ? check_synthetic(description, max_workers, tp.named()) : 0;  // before hwloc builds

  const std::lock_guard<std::mutex> one_at_a_time(hwloc_mutex());  // released after h is destroyed
  hwloc_handle h;
  if (!tp.virtual_) {
    duplicate_machine(&h.t);
  } else {
    if (hwloc_topology_init(&h.t) != 0) throw config_error("roost: hwloc_topology_init failed");
    if (xml) {
      if (hwloc_topology_set_xml(h.t, description.c_str()) != 0)
        reject(std::string("hwloc cannot read this file (") + std::strerror(errno) + "); " + valid);
    } else if (hwloc_topology_set_synthetic(h.t, description.c_str()) != 0) {
      reject(std::string("hwloc rejects this synthetic description and no such file exists; ") + valid);
    }
    if (hwloc_topology_load(h.t) != 0) {
      if (xml) reject(std::string("this file is not an hwloc XML topology (hwloc cannot load it); ") + valid);
      reject(std::string("hwloc cannot build this synthetic description; ") + valid);
    }
  }
  // The real machine within the calling thread's affinity mask (taskset, or a cpuset set in code): hwloc
  // hides only what the cgroup disallows. PUs outside the mask, and the caches and cores left without one,
  // are not part of the machine roost runs on; so the default worker count is one per allowed PU and every
  // worker can be pinned. NUMA nodes stay as hwloc numbers them (the nodes the process may place memory
  // on), as page placement does (page_placement::native_nodes), which dropping the nodes left without an
  // allowed CPU would shift; so a mask that leaves some node without a CPU (numactl --cpunodebind) keeps
  // the whole machine, and placement leaves the workers beyond the allowed CPUs unpinned, as before.
  if (!tp.virtual_) {
    const std::vector<int> allowed = platform::native_platform::allowed_cpus();
    hwloc_bitmap_t mask = hwloc_bitmap_alloc();
    if (mask) {
      for (int c : allowed) hwloc_bitmap_set(mask, static_cast<unsigned>(c));
      bool every_node_keeps_a_cpu = !allowed.empty();
      for (hwloc_obj_t nn = nullptr; every_node_keeps_a_cpu && (nn = hwloc_get_next_obj_by_type(h.t, HWLOC_OBJ_NUMANODE, nn));)
        every_node_keeps_a_cpu = nn->cpuset && hwloc_bitmap_intersects(nn->cpuset, mask);
      if (every_node_keeps_a_cpu && !hwloc_bitmap_isincluded(hwloc_topology_get_topology_cpuset(h.t), mask) &&
          hwloc_topology_restrict(h.t, mask, 0) != 0) {
        // A failed restriction leaves the topology reinitialised (hwloc's documentation): the whole machine
        // again.
        hwloc_bitmap_free(mask);
        hwloc_topology_destroy(h.t);
        duplicate_machine(&h.t);
        mask = nullptr;
      }
      if (mask) hwloc_bitmap_free(mask);
    }
  }
  // This machine as a synthetic description (as restricted above), for what is simulated on it without
  // ROOST_TOPOLOGY: a simulation's report named "" as its machine, which could not be replayed elsewhere, and
  // a process pinned to fewer CPUs simulated another machine (an outside-user campaign). Empty where hwloc
  // cannot describe it so (an asymmetric machine).
  if (!tp.virtual_) {
    std::string text(4096, '\0');
    int n = hwloc_topology_export_synthetic(h.t, text.data(), text.size(), 0);
    if (n >= static_cast<int>(text.size())) {  // cut short (snprintf's rule): once more, at its length
      text.assign(static_cast<std::size_t>(n) + 1, '\0');
      n = hwloc_topology_export_synthetic(h.t, text.data(), text.size(), 0);
    }
    if (n > 0 && n < static_cast<int>(text.size())) tp.synthetic_ = text.substr(0, static_cast<std::size_t>(n));
  }
  // Walk the normal tree, keeping machine, packages, data/unified caches, cores and PUs; other objects
  // (groups, dies, L1i) are transparent.
  unsigned numa_count = static_cast<unsigned>(hwloc_get_nbobjs_by_type(h.t, HWLOC_OBJ_NUMANODE));
  tp.num_numa_ = std::max(1u, numa_count);
  for (hwloc_obj_t nn = nullptr; (nn = hwloc_get_next_obj_by_type(h.t, HWLOC_OBJ_NUMANODE, nn)) != nullptr;) {
    const std::uint64_t b = nn->attr ? nn->attr->numanode.local_memory : 0;
    if (b != 0 && (tp.numa_node_bytes_ == 0 || b < tp.numa_node_bytes_)) tp.numa_node_bytes_ = b;
    tp.numa_os_.push_back(static_cast<int>(nn->os_index));
  }
  if (tp.numa_os_.empty()) tp.numa_os_.push_back(0);

  struct walker {
    topology& tp;
    hwloc_topology_t t;
    // A virtual machine's caches, as an XML file gives them (hwloc reads them with strtoull, so "-5" is
    // 2^64-5); synthetic ones were checked before hwloc ran. 0 is what hwloc writes for an unknown size.
    void check_cache(hwloc_obj_t o) {
      const auto& c = o->attr->cache;
      std::ostringstream why;
      why << tp.named() << ": L" << c.depth << " cache #" << o->logical_index;
      if (c.size > max_cache_bytes) {
        why << " has size " << c.size << " bytes; must be a cache size from 1 byte to 1 TiB (0: unknown)";
        throw config_error(why.str());
      }
      if (c.linesize != 0 && (c.linesize & (c.linesize - 1)) != 0) {
        why << " has line size " << c.linesize << " bytes; must be a power of two (0: unknown)";
        throw config_error(why.str());
      }
    }
    void visit(hwloc_obj_t o, int parent) {
      int me = parent;
      node_kind k{};
      bool keep = true;
      if (o->type == HWLOC_OBJ_MACHINE) k = node_kind::machine;
      else if (o->type == HWLOC_OBJ_PACKAGE) k = node_kind::package;
      else if (is_data_cache(o)) k = node_kind::cache;
      else if (o->type == HWLOC_OBJ_CORE) k = node_kind::core;
      else if (o->type == HWLOC_OBJ_PU) k = node_kind::pu;
      else keep = false;
      if (keep) {
        node n;
        n.kind = k;
        n.parent = parent;
        if (k == node_kind::cache) {
          n.cache_level = static_cast<int>(o->attr->cache.depth);
          n.cache_bytes = static_cast<std::size_t>(o->attr->cache.size);
          if (tp.virtual_) check_cache(o);
          if (o->attr->cache.linesize > 0) tp.line_size_ = n.cache_line_bytes = o->attr->cache.linesize;
        }
        n.first_pu = static_cast<unsigned>(tp.pus_.size());
        me = static_cast<int>(tp.nodes_.size());
        tp.nodes_.push_back(n);
        if (parent >= 0) tp.nodes_[parent].children.push_back(me);
        if (k == node_kind::core) ++tp.num_cores_;
        if (k == node_kind::package) ++tp.num_packages_;
        if (k == node_kind::pu) {
          pu_info p;
          p.os_index = static_cast<int>(o->os_index);
          p.core = tp.num_cores_ ? tp.num_cores_ - 1 : 0;
          p.package = tp.num_packages_ ? tp.num_packages_ - 1 : 0;
          p.numa = 0;
          int idx = 0;
          for (hwloc_obj_t nn = nullptr;
               (nn = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, nn)) != nullptr; ++idx) {
            if (hwloc_bitmap_isset(nn->cpuset, o->os_index)) {
              p.numa = static_cast<unsigned>(idx);
              break;
            }
          }
          p.leaf_node = me;
          tp.pus_.push_back(p);
        }
      }
      for (unsigned i = 0; i < o->arity; ++i) visit(o->children[i], me);
      if (keep) tp.nodes_[me].pu_count = static_cast<unsigned>(tp.pus_.size()) - tp.nodes_[me].first_pu;
    }
  } w{tp, h.t};
  w.visit(hwloc_get_root_obj(h.t), -1);
  if (tp.pus_.empty()) reject("the topology has no PU");
  // hwloc builds what it can of a description whose indexes= repeat a PU: "pack:2 ... pu:1(indexes=0,0)"
  // became one package and one PU, with a cache of 64 B, without a word (an outside-user campaign).
  if (described_pus != 0 && tp.pus_.size() != described_pus)
    reject("describes " + std::to_string(described_pus) + " PUs (the product of its arities), but hwloc built " +
           std::to_string(tp.pus_.size()) + " from it (indexes= that repeat or skip a PU?); " + valid);
  // An XML file's PUs are known only now; a synthetic description's were counted before hwloc built them.
  // The real machine is not bounded here: it is not input, and ROOST_WORKERS sets how many workers run.
  if (tp.virtual_ && tp.pus_.size() > max_workers)
    reject("describes " + std::to_string(tp.pus_.size()) + " PUs; must describe at most " +
           std::to_string(max_workers) + " PUs, roost's worker limit");
  if (tp.num_packages_ == 0) tp.num_packages_ = 1;
  if (tp.num_cores_ == 0) tp.num_cores_ = tp.num_pus();

  // NUMA distances: hwloc's latency matrix when the description has one, else the SLIT convention.
  unsigned n = tp.num_numa_;
  tp.numa_distances_.assign(n * n, 20);
  for (unsigned i = 0; i < n; ++i) tp.numa_distances_[i * n + i] = 10;
  unsigned nr = 1;
  hwloc_distances_s* dist = nullptr;
  if (hwloc_distances_get_by_type(h.t, HWLOC_OBJ_NUMANODE, &nr, &dist, HWLOC_DISTANCES_KIND_MEANS_LATENCY,
                                  0) == 0 && nr == 1 && dist->nbobjs == n) {
    // The matrix's rows and columns are in the order of dist->objs, which is the order the description
    // listed them in (an XML's "indexing=os" list: system numbers), not the nodes' logical order: where the
    // two differ (a memory-only node numbered after every node with cores, as KNL's MCDRAM and CXL memory
    // are, sits beside its package's node in the tree), every distance went to the wrong pair of nodes.
    for (unsigned i = 0; i < n; ++i)
      for (unsigned j = 0; j < n; ++j)
        tp.numa_distances_[dist->objs[i]->logical_index * n + dist->objs[j]->logical_index] =
            static_cast<unsigned>(dist->values[i * n + j]);
    hwloc_distances_release(h.t, dist);
  } else if (nr == 1 && dist) {
    hwloc_distances_release(h.t, dist);
  }

  // Sharing levels: for every kept node that covers more than one PU, group PUs by it; then order levels
  // by domain size and drop those that do not coarsen the previous one.
  std::vector<sharing_level> candidates;
  std::map<int, std::size_t> by_key;  // kind*10 + cache level -> candidate
  for (std::size_t i = 0; i < tp.nodes_.size(); ++i) {
    const node& nd = tp.nodes_[i];
    if (nd.pu_count == 0) continue;
    std::string name;
    if (nd.kind == node_kind::machine) name = "machine";
    else if (nd.kind == node_kind::package) name = "package";
    else if (nd.kind == node_kind::cache) name = cache_level_name(nd.cache_level);
    else if (nd.kind == node_kind::core) name = "core";
    else continue;
    int key = static_cast<int>(nd.kind) * 10 + nd.cache_level;
    auto it = by_key.find(key);
    if (it == by_key.end()) {
      sharing_level lv;
      lv.name = name;
      lv.cache_bytes = nd.cache_bytes;
      lv.domain_of_pu.assign(tp.pus_.size(), 0);
      it = by_key.emplace(key, candidates.size()).first;
      candidates.push_back(std::move(lv));
    }
    sharing_level& lv = candidates[it->second];
    unsigned d = static_cast<unsigned>(lv.domains.size());
    lv.domains.emplace_back();
    for (unsigned p = nd.first_pu; p < nd.first_pu + nd.pu_count; ++p) {
      lv.domain_of_pu[p] = d;
      lv.domains.back().push_back(p);
    }
  }
  // A level is usable only if it partitions all PUs.
  std::vector<sharing_level> full;
  for (auto& lv : candidates) {
    std::size_t covered = 0;
    for (auto& d : lv.domains) covered += d.size();
    if (covered == tp.pus_.size()) full.push_back(std::move(lv));
  }
  std::stable_sort(full.begin(), full.end(),
                   [](const sharing_level& a, const sharing_level& b) { return a.domains.size() > b.domains.size(); });
  for (auto& lv : full) {
    bool any_shared = false;
    for (auto& d : lv.domains) any_shared |= d.size() > 1;
    if (!any_shared && tp.pus_.size() > 1) continue;  // private levels are not sharing
    if (!tp.levels_.empty() && tp.levels_.back().domains.size() == lv.domains.size()) {
      // Same partition as the previous level (e.g. one L3 per package): keep the first, remember the cache.
      if (tp.levels_.back().cache_bytes == 0) tp.levels_.back().cache_bytes = lv.cache_bytes;
      continue;
    }
    tp.levels_.push_back(std::move(lv));
  }
  if (tp.levels_.empty()) {  // a single PU
    sharing_level lv;
    lv.name = "machine";
    lv.domain_of_pu.assign(tp.pus_.size(), 0);
    lv.domains.push_back({0});
    tp.levels_.push_back(lv);
  }
  return tp;
}

std::size_t topology::package_cache_bytes(unsigned pu) const {
  // Walk up from the PU, remembering the largest cache below the package.
  std::size_t best = 0;
  for (int i = pus_[pu].leaf_node; i >= 0; i = nodes_[i].parent) {
    const node& nd = nodes_[i];
    if (nd.kind == node_kind::cache) best = std::max(best, nd.cache_bytes);
    if (nd.kind == node_kind::package || nd.kind == node_kind::machine) break;
  }
  return best;
}

int topology::last_level_cache(unsigned pu) const {
  int best = -1;
  for (int i = pus_[pu].leaf_node; i >= 0; i = nodes_[i].parent) {
    const node& nd = nodes_[i];
    if (nd.kind == node_kind::cache && (best < 0 || nd.cache_level > nodes_[best].cache_level)) best = i;
    if (nd.kind == node_kind::package || nd.kind == node_kind::machine) return best >= 0 ? best : i;
  }
  return best;
}

std::string topology::summary() const {
  std::ostringstream os;
  os << num_packages_ << (num_packages_ == 1 ? " package, " : " packages, ") << num_numa_
     << (num_numa_ == 1 ? " NUMA node, " : " NUMA nodes, ") << num_cores_ << (num_cores_ == 1 ? " core, " : " cores, ")
     << pus_.size() << (pus_.size() == 1 ? " PU" : " PUs");
  std::size_t c = package_cache_bytes(0);
  // The last-level caches of PU 0's package: a package of two L3s said "64 KiB cache per package" of 128 KiB
  // (an outside-user campaign).
  std::vector<int> llcs;
  for (unsigned p = 0; p < pus_.size(); ++p)
    if (pus_[p].package == pus_[0].package) llcs.push_back(last_level_cache(p));
  std::sort(llcs.begin(), llcs.end());
  const std::size_t per_package = static_cast<std::size_t>(std::unique(llcs.begin(), llcs.end()) - llcs.begin());
  if (c && per_package > 1) os << ", " << per_package << " last-level caches of " << format_bytes(c) << " per package";
  else if (c) os << ", " << format_bytes(c) << " cache per package";
  os << (virtual_ ? " (virtual: " + description_ + ")" : " (this machine)");
  return os.str();
}

}  // namespace roost::topo
