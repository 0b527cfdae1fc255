#include <algorithm>
#include <cmath>

#include "dtree/dtree.hpp"

namespace bench::dtree {

// Attributes uniform in [-1, 1) from a fixed xorshift stream; label 1 when a nonlinear score of the first
// six attributes, plus 20% noise, is positive (HIGGS's signal/background, roughly balanced).
problem_t::problem_t(long n_, int depth) : n(n_), max_depth(depth), rows(n_), scratch(n_), init(n_) {
  std::uint64_t s = 0xda942042e4dd58b5ull;
  auto next = [&] {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return static_cast<double>(s >> 11) * 0x1.0p-52 - 1.0;
  };
  for (long i = 0; i < n; ++i) {
    row& r = init[i];
    for (double& v : r.x) v = next();
    const double score = r.x[0] * r.x[1] + 0.5 * r.x[2] - r.x[3] * r.x[3] + 0.3 * std::sin(3.0 * r.x[4]) - 0.2 * r.x[5] + 0.2 * next();
    r.label = score > 0 ? 1.0 : 0.0;
  }
  for (int a = 0; a < kAttrs; ++a) {
    double mn = init[0].x[a], mx = mn;
    for (long i = 1; i < n; ++i) {
      mn = std::min(mn, init[i].x[a]);
      mx = std::max(mx, init[i].x[a]);
    }
    lo[a] = mn;
    scale[a] = mx > mn ? kBins / (mx - mn) : 0.0;
  }
}

split best_split(const histogram& h, long n) {
  auto gini_sum = [](long zeros, long ones) {  // count * Gini impurity, scaled to avoid a division
    const double c = static_cast<double>(zeros + ones);
    return c == 0 ? 0.0 : c - (static_cast<double>(zeros) * zeros + static_cast<double>(ones) * ones) / c;
  };
  long ones = 0;
  for (int k = 0; k < kBins; ++k) ones += h[0][k][1];
  double best = gini_sum(n - ones, ones);
  split out;
  for (int a = 0; a < kAttrs; ++a) {
    long l0 = 0, l1 = 0;
    for (int t = 0; t + 1 < kBins; ++t) {
      l0 += h[a][t][0];
      l1 += h[a][t][1];
      if (l0 + l1 == 0 || l0 + l1 == n) continue;
      const double g = gini_sum(l0, l1) + gini_sum(n - ones - l0, ones - l1);
      if (g < best - 1e-9 * static_cast<double>(n)) {  // strictly better: ties keep the smaller (attr, bin)
        best = g;
        out = {a, t};
      }
    }
  }
  return out;
}

void serial(problem& p) { serial_of<problem_t>(p); }

std::unique_ptr<problem> prepare(const std::string& name, const std::string& size) {
  auto v = parse_size(name, size, 2, "ROWSxMAX_DEPTH, e.g. 100000x12");
  if (v[1] > 40) throw size_error("size '" + size + "' for " + name + ": MAX_DEPTH must be <= 40");
  check_fits(name, size, 3.0L * sizeof(row) * static_cast<long double>(v[0]));  // rows, their copy, the reference
  auto p = std::make_unique<problem_t>(v[0], static_cast<int>(v[1]));
  p->reset();
  serial(*p);
  p->ref = p->result;
  p->reset();
  return p;
}

}  // namespace bench::dtree
