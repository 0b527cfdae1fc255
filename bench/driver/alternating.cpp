#include "driver/alternating.hpp"

#include <time.h>

#include <algorithm>
#include <chrono>

namespace bench {

alternation_ratios alternate(const alternation& a, int rounds) {
  const int n = a.configs;
  alternation_ratios out;
  out.cpu.resize(static_cast<std::size_t>(n));
  out.wall.resize(static_cast<std::size_t>(n));
  std::vector<std::unique_ptr<roost::runtime>> rts(static_cast<std::size_t>(n));
  std::vector<run_times> t(static_cast<std::size_t>(n));
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < n; ++i) {
      const int k = (i + r) % n;
      rts[static_cast<std::size_t>(k)] = a.make(k);
    }
    if (a.made) a.made(rts);
    for (int i = 0; i < n; ++i) {
      const int k = (i + r) % n;
      a.run(k, *rts[static_cast<std::size_t>(k)], false);
    }
    for (int i = 0; i < n; ++i) {
      const int k = (i + 1 + r) % n;  // not the warm-up's last first
      t[static_cast<std::size_t>(k)] = a.run(k, *rts[static_cast<std::size_t>(k)], true);
    }
    for (int k = 1; k < n; ++k) {
      out.cpu[static_cast<std::size_t>(k)].push_back(t[static_cast<std::size_t>(k)].cpu_s / t[0].cpu_s);
      out.wall[static_cast<std::size_t>(k)].push_back(t[static_cast<std::size_t>(k)].wall_s / t[0].wall_s);
    }
    if (a.ending) a.ending(rts);
    for (auto& rt : rts) rt.reset();
  }
  return out;
}

double process_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

}  // namespace bench
