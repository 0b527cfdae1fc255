#include "sim/shared_bandwidth.hpp"

#include <algorithm>
#include <limits>

namespace roost::sim {

shared_bandwidth::shared_bandwidth(unsigned workers, unsigned nodes, double node_bw, double link_bw)
    : nodes_(nodes),
      node_bw_(node_bw),
      link_bw_(link_bw),
      end_(workers, 0.0),
      node_(workers, 0),
      frac_(std::size_t{workers} * nodes, 0.0),
      mine_(nodes),
      ctrl_(nodes),
      out_(nodes),
      in_(nodes) {}

bool shared_bandwidth::fractions(const double* lines, double* out) const {
  double total = 0;
  for (unsigned j = 0; j < nodes_; ++j) total += lines[j];
  if (!(total > 0)) return false;
  for (unsigned j = 0; j < nodes_; ++j) out[j] = lines[j] / total;
  return true;
}

double shared_bandwidth::rate_cap(unsigned worker, unsigned node, const double* lines, double now) {
  constexpr double kUnlimited = std::numeric_limits<double>::infinity();
  if (!fractions(lines, mine_.data())) return kUnlimited;
  // The load on each port: this stream's fractions, then every other stream still running at `now`.
  for (unsigned j = 0; j < nodes_; ++j) {
    ctrl_[j] = mine_[j];
    out_[j] = j != node ? mine_[j] : 0.0;
    in_[j] = 0;
  }
  in_[node] = 1.0 - mine_[node];
  for (std::size_t v = 0; v < end_.size(); ++v) {
    if (v == worker || !(end_[v] > now)) continue;
    const double* f = &frac_[v * nodes_];
    const unsigned home = node_[v];
    for (unsigned j = 0; j < nodes_; ++j) {
      ctrl_[j] += f[j];
      if (j != home) out_[j] += f[j];
    }
    in_[home] += 1.0 - f[home];
  }
  double cap = kUnlimited;
  for (unsigned j = 0; j < nodes_; ++j) {
    if (!(mine_[j] > 0)) continue;
    cap = std::min(cap, node_bw_ / ctrl_[j]);
    if (j != node && link_bw_ > 0) cap = std::min(cap, link_bw_ / out_[j]);
  }
  if (link_bw_ > 0 && mine_[node] < 1.0) cap = std::min(cap, link_bw_ / in_[node]);  // only if it has remote lines
  return cap;
}

void shared_bandwidth::record(unsigned worker, unsigned node, const double* lines, double end) {
  if (!fractions(lines, &frac_[std::size_t{worker} * nodes_])) return;
  end_[worker] = end;
  node_[worker] = node;
}

}  // namespace roost::sim
