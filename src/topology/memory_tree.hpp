// The memory hierarchy as multi-level ADWS sees it (seed 003 §5.2, digest §3.2): a tree of memory groups
// whose root, level 0, is DRAM (unbounded) and whose leaves are the workers' private caches. Every other
// level is one kind of cache shared by a set of workers, read from the topology (hwloc or ROOST_TOPOLOGY)
// instead of typed in by hand as in the thesis.
//
// Groups at a level are numbered so that the children of group j are j*fanout .. (j+1)*fanout-1: the
// tree must be uniform (every group of a level has as many children), which hwloc synthetic topologies
// and ordinary machines are. A non-uniform one falls back to DRAM over per-worker leaves, and says so.
#pragma once
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "topology/placement.hpp"
#include "topology/topology.hpp"

namespace roost::topo {

struct memory_level {
  std::string name;              // "DRAM", "L3", "L2", ... ("worker" for leaves without a cache)
  double group_capacity = 0;     // bytes per group; +infinity for DRAM
  unsigned groups = 0;           // groups at this level
  unsigned fanout = 0;           // children per group at the next level; 0 at the leaves
  std::vector<unsigned> head;    // each group's lowest-ranked worker (its leader)
  std::vector<unsigned> group_of_worker;
};

struct memory_tree {
  std::vector<memory_level> levels;  // levels[0]: DRAM, one group; levels.back(): one group per worker
  std::string note;                  // set when the topology could not be used as it is

  unsigned depth() const { return static_cast<unsigned>(levels.size()); }
  // One line: "DRAM > 2 x L3 1 MiB > 8 x L2 256 KiB".
  std::string summary() const;
};

memory_tree build_memory_tree(const topology& tp, const placement& pl, unsigned workers);

}  // namespace roost::topo
