#include "topology/placement.hpp"

#include <algorithm>
#include <sstream>
#include <string>

namespace roost::topo {

placement place_workers(const topology& tp, unsigned workers, bool bind, const std::vector<int>& allowed) {
  placement pl;
  pl.pu_of_worker.resize(workers);
  pl.cpu_of_worker.assign(workers, -1);
  for (unsigned w = 0; w < workers; ++w) pl.pu_of_worker[w] = w % tp.num_pus();

  const std::size_t cpus = allowed.size();
  // More workers than CPUs, or than the PUs they stand for (workers w and w + PUs share PU w, so its CPU).
  // A virtual topology with more PUs than CPUs is not, by itself: workers stand for PUs 0, 1, ... (at most
  // `workers` of them), each of which has an allowed CPU when the workers fit.
  pl.oversubscribed = cpus == 0 || workers > cpus || workers > tp.num_pus();
  if (pl.oversubscribed) {
    // The reason that holds: more workers than CPUs, or (a virtual topology) than its PUs.
    auto count = [](std::size_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); };
    std::ostringstream os;
    os << "roost: " << count(workers, "worker");
    if (tp.is_virtual()) os << " on a virtual topology of " << count(tp.num_pus(), "PU");
    if (workers > cpus) os << " but this process may use " << count(cpus, "CPU");
    else os << ", more than " << (tp.is_virtual() ? "its" : "the machine's") << " PUs, which they share";
    os << ": running oversubscribed and unpinned (correct, not fast)";
    pl.note = os.str();
    return pl;
  }
  if (!bind) return pl;
  for (unsigned w = 0; w < workers; ++w) {
    unsigned pu = pl.pu_of_worker[w];
    if (tp.is_virtual()) {
      pl.cpu_of_worker[w] = allowed[pu];  // virtual PU j -> j-th allowed CPU
    } else {
      int os_cpu = tp.pu(pu).os_index;   // the real machine is restricted to the allowed CPUs (topology.cpp)
      pl.cpu_of_worker[w] = std::find(allowed.begin(), allowed.end(), os_cpu) != allowed.end() ? os_cpu : -1;
    }
  }
  return pl;
}

}  // namespace roost::topo
