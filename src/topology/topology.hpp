// The machine as one tree: machine → packages (with their NUMA nodes) → shared caches → cores → PUs, with
// cache sizes, the line size and NUMA distances. Built from hwloc: the real machine (restricted to the
// process affinity mask) or a virtual one from ROOST_TOPOLOGY (hwloc synthetic description or XML file).
// Schedulers read it; nothing here talks to the OS except through hwloc.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace roost::topo {

enum class node_kind : std::uint8_t { machine, package, cache, core, pu };

struct node {
  node_kind kind;
  int cache_level = 0;          // 1, 2, 3 for caches
  std::size_t cache_bytes = 0;  // caches only
  std::size_t cache_line_bytes = 0;  // caches only; 0: not given
  int parent = -1;              // index into topology::nodes(); -1 for the machine
  std::vector<int> children;
  unsigned first_pu = 0;        // the PUs below a node are contiguous in logical order
  unsigned pu_count = 0;
};

struct pu_info {
  int os_index;          // the OS CPU number in the described machine
  unsigned core;         // logical core index
  unsigned package;      // logical package index
  unsigned numa;         // logical NUMA node index
  int leaf_node;         // index of the PU in nodes()
};

// One level of sharing: PUs grouped by a common ancestor (a shared cache, a package, the machine).
struct sharing_level {
  std::string name;              // "L3", "package", "machine", ...
  std::size_t cache_bytes = 0;   // for cache levels
  std::vector<unsigned> domain_of_pu;  // PU -> domain index at this level
  std::vector<std::vector<unsigned>> domains;  // domain -> PUs
};

class topology {
 public:
  // description: "" for the real machine; otherwise an hwloc synthetic description or a path to an XML
  // file. Throws roost::config_error naming `source` (where the description came from: ROOST_TOPOLOGY or
  // options::topology) and the description when hwloc rejects it, or when it describes more than
  // roost::max_workers PUs (a synthetic one is counted before hwloc builds it: synthetic.hpp), a cache
  // size outside 1 B .. 1 TiB or a line size that is not a power of two.
  static topology load(const std::string& description, const std::string& source = "ROOST_TOPOLOGY");

  bool is_virtual() const { return virtual_; }
  // A virtual topology read from an hwloc XML file, not a synthetic description (asked once, at load: a
  // description asked again as a file name threw for one longer than a file name may be, ENAMETOOLONG).
  bool from_file() const { return from_file_; }
  const std::string& description() const { return description_; }
  // What ROOST_TOPOLOGY would take to load this machine again: the description, or for the real machine its
  // synthetic description as hwloc exports it ("" where hwloc cannot describe it so).
  const std::string& replayable() const { return virtual_ ? description_ : synthetic_; }
  // What an error about the description names: "ROOST_TOPOLOGY='pack:2 ...'" (or options::topology).
  std::string named() const { return source_ + "='" + description_ + "'"; }
  unsigned num_pus() const { return static_cast<unsigned>(pus_.size()); }
  unsigned num_cores() const { return num_cores_; }
  unsigned num_packages() const { return num_packages_; }
  unsigned num_numa_nodes() const { return num_numa_; }
  // The memory of the smallest NUMA node, as hwloc describes it (a synthetic node's memory=...); 0 unknown.
  std::uint64_t numa_node_bytes() const { return numa_node_bytes_; }
  std::size_t line_size() const { return line_size_; }
  const pu_info& pu(unsigned i) const { return pus_[i]; }
  const std::vector<node>& nodes() const { return nodes_; }
  // NUMA distances (row-major num_numa_nodes()^2, logical order): hwloc's when present, else 10 local / 20
  // remote.
  const std::vector<unsigned>& numa_distances() const { return numa_distances_; }
  // The system number (hwloc's os_index, the kernel's node number) of each NUMA node, in logical order. The
  // two orders differ where a node without cores (KNL's MCDRAM, CXL memory) is numbered after every node with
  // cores but sits beside its package's node in the tree: the kernel's answers about pages (move_pages,
  // mbind's masks) name system numbers.
  const std::vector<int>& numa_os_indexes() const { return numa_os_; }
  // Levels of sharing from the smallest domains shared by more than one PU up to the machine, each a
  // strict coarsening of the one before. Empty domains are never listed. A 1-PU machine has one level.
  const std::vector<sharing_level>& sharing_levels() const { return levels_; }
  // The largest cache shared by the PUs of pu's package (its "socket cache"); 0 if none is described.
  std::size_t package_cache_bytes(unsigned pu) const;
  // The last-level cache pu shares: the node (index into nodes()) of the highest-level cache on its path
  // below its package, or the package's node when none is described. A package may hold several (AMD's
  // CCXs, the two dies of seed 002's Opteron 6172), so this is not the package.
  int last_level_cache(unsigned pu) const;
  // One line for humans: "2 packages, 2 cores, 2 PUs, L3 1 MiB per package (virtual: pack:2 ...)".
  std::string summary() const;

 private:
  bool virtual_ = false;
  bool from_file_ = false;
  std::string description_;
  std::string synthetic_;  // the real machine's, hwloc's export
  std::string source_ = "ROOST_TOPOLOGY";
  std::vector<node> nodes_;
  std::vector<pu_info> pus_;
  std::vector<sharing_level> levels_;
  std::vector<unsigned> numa_distances_;
  std::vector<int> numa_os_;
  unsigned num_cores_ = 0, num_packages_ = 0, num_numa_ = 0;
  std::uint64_t numa_node_bytes_ = 0;
  std::size_t line_size_ = 64;
};

std::string format_bytes(std::size_t bytes);
// "L3" for level 3 (built without `"L" + std::to_string(...)`, which GCC 12 flags with a -Wrestrict false
// positive at -O3).
std::string cache_level_name(unsigned level);

}  // namespace roost::topo
