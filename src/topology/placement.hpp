// Where each worker runs: worker i stands for PU (i mod PUs) of the topology; when the workers fit in the
// CPUs this process may use, PU j is mapped onto the j-th allowed CPU and workers are pinned (a virtual
// topology larger than the machine included: its first PUs are the ones workers stand for); otherwise
// they run unpinned (oversubscribed: correct, not fast) and the runtime says so once.
#pragma once
#include <string>
#include <vector>

#include "topology/topology.hpp"

namespace roost::topo {

struct placement {
  std::vector<unsigned> pu_of_worker;
  std::vector<int> cpu_of_worker;  // -1: unpinned
  bool oversubscribed = false;
  std::string note;                // what to tell the user once (empty: nothing to say)
};

placement place_workers(const topology& tp, unsigned workers, bool bind, const std::vector<int>& allowed_cpus);

}  // namespace roost::topo
