// Bandwidth that concurrent streams share (dram.sharing=nodes; src/sim/README.md, "Bandwidth"): each NUMA
// node's memory controller (dram.node_bw) and each node's interconnect port, one way in and one way out
// (link.bw). A touch's memory lines form one stream; the stream loads the controller of every node its lines
// come from, and, for the lines of another node, the home node's port out and its own node's port in, each
// by the fraction of its lines that pass there. A new stream may draw, on every port it uses, the port's
// bandwidth divided by the load on it (its own and that of the other workers' streams still running at its
// start): every stream at one rate, the fair share of a fluid model.
//
// First come: a stream is charged once, when it starts, against the streams running then; the worker with
// the smallest clock runs (sim_platform), so those started at or before it, and the later of two overlapping
// streams pays for their sharing. Deterministic, as the rest of the simulation. A link between two nodes that
// are not neighbours loads no port on the way: the ports stand for a node's links together.
#pragma once
#include <cstdint>
#include <vector>

namespace roost::sim {

class shared_bandwidth {
 public:
  // node_bw: bytes per ns one node's controller delivers; link_bw: bytes per ns one node's port carries each
  // way (0: no limit).
  shared_bandwidth(unsigned workers, unsigned nodes, double node_bw, double link_bw);

  // The rate (bytes per ns) a stream of `worker`, whose PU is on `node`, starting at virtual time `now`, may
  // draw, where lines[j] of its memory lines come from node j (`nodes` entries). Infinite when it has none.
  double rate_cap(unsigned worker, unsigned node, const double* lines, double now);
  // Records that the stream runs until `end` (virtual ns); a stream without memory lines is not recorded.
  void record(unsigned worker, unsigned node, const double* lines, double end);

 private:
  // The stream's fractions of its lines per home node; false when it has no memory line.
  bool fractions(const double* lines, double* out) const;

  unsigned nodes_;
  double node_bw_, link_bw_;
  std::vector<double> end_;   // per worker: when its last stream ends (0: none)
  std::vector<unsigned> node_;
  std::vector<double> frac_;  // per worker x home node
  std::vector<double> mine_, ctrl_, out_, in_;  // scratch, per node
};

}  // namespace roost::sim
