#include "driver/rounds.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "common/machine_state.hpp"

namespace bench {

round_summary summarize_rounds(const std::vector<measurement>& all, int rounds, double c2c_best) {
  round_summary s;
  s.rounds = rounds;
  std::set<int> far;
  for (const auto& m : all)
    if (!m.seconds.empty() && far_apart(m.c2c_ns, c2c_best)) far.insert(m.round);
  s.near_rounds = rounds - static_cast<int>(far.size());
  auto used = [&](int r) { return s.near_rounds == 0 || far.count(r) == 0; };

  // The reference times of each round: serial, and every variant at each worker count (ratio_reference).
  std::map<int, double> serial;
  std::map<std::tuple<int, std::string, unsigned>, double> time_of;
  for (const auto& m : all) {
    if (m.seconds.empty()) continue;
    if (m.variant == "serial") serial[m.round] = m.median;
    time_of[{m.round, m.variant, m.workers}] = m.median;
  }

  struct samples {
    std::vector<double> t, vs_serial, vs_ws;
    bool ok = true;
    std::string note;
  };
  std::vector<std::pair<std::string, unsigned>> order;
  std::map<std::pair<std::string, unsigned>, samples> by;
  for (const auto& m : all) {
    const auto key = std::make_pair(m.variant, m.workers);
    if (!by.count(key)) order.push_back(key);
    samples& x = by[key];
    if (m.seconds.empty()) {
      x.note = m.note;
      continue;
    }
    x.ok &= m.check_passed;
    if (!used(m.round)) continue;
    x.t.push_back(m.median);
    if (auto it = serial.find(m.round); it != serial.end() && it->second > 0) x.vs_serial.push_back(m.median / it->second);
    if (auto it = time_of.find({m.round, ratio_reference(m.variant), m.workers}); it != time_of.end() && it->second > 0)
      x.vs_ws.push_back(m.median / it->second);
  }
  for (const auto& key : order) {
    const samples& x = by[key];
    round_summary_row row;
    row.variant = key.first;
    row.workers = key.second;
    row.rounds_used = static_cast<int>(x.t.size());
    row.check_passed = x.ok;
    row.note = x.note;
    if (!x.t.empty()) {
      row.median_s = median_of(x.t);
      const auto [lo, hi] = std::minmax_element(x.t.begin(), x.t.end());
      row.spread = *lo > 0 ? *hi / *lo : 0;
    }
    if (!x.vs_serial.empty()) row.vs_serial = median_of(x.vs_serial);
    if (!x.vs_ws.empty()) row.vs_ws = median_of(x.vs_ws);
    s.rows.push_back(std::move(row));
  }
  return s;
}

void print_round_summary(const std::string& bench, const std::string& size, const round_summary& s) {
  if (s.near_rounds == 0)
    std::printf("summary of %s %s: the CPUs were far apart in every one of the %d rounds; all are used, and "
                "these figures are not comparable with a normal run's\n",
                bench.c_str(), size.c_str(), s.rounds);
  else if (s.near_rounds == s.rounds)
    std::printf("summary of %s %s over its %d rounds; ratios are medians of each round's own ratios\n",
                bench.c_str(), size.c_str(), s.rounds);
  else
    std::printf("summary of %s %s over %d of %d rounds (%d left out: taken while the CPUs were far apart); "
                "ratios are medians of each round's own ratios\n",
                bench.c_str(), size.c_str(), s.near_rounds, s.rounds, s.rounds - s.near_rounds);
  std::printf("  %-18s %7s %11s %8s %9s %8s %6s %6s\n", "variant", "workers", "median ms", "max/min", "vs serial",
              "vs ws", "rounds", "check");
  auto ratio = [](double r) {
    char buf[32];
    if (r < 0) return std::string("-");
    std::snprintf(buf, sizeof buf, "%.2fx", r);
    return std::string(buf);
  };
  for (const auto& r : s.rows) {
    if (r.rounds_used == 0) {
      std::printf("  %-18s %7u %11s   %s\n", r.variant.c_str(), r.workers, "-",
                  r.note.empty() ? "ran only in rounds left out" : r.note.c_str());
      continue;
    }
    std::printf("  %-18s %7u %11.2f %8.2f %9s %8s %6d %6s\n", r.variant.c_str(), r.workers, r.median_s * 1e3,
                r.spread, ratio(r.vs_serial).c_str(), ratio(r.vs_ws).c_str(), r.rounds_used,
                r.check_passed ? "ok" : "FAILED");
  }
  std::fflush(stdout);
}

std::string round_summary_json(const std::string& bench, const std::string& size, const round_summary& s) {
  std::ostringstream os;
  os.precision(9);
  auto number_or_null = [&os](double x) {
    if (x < 0) os << "null";
    else os << x;
  };
  for (const auto& r : s.rows) {
    os << "{\"summary\":true,\"bench\":\"" << json_escape(bench) << "\",\"size\":\"" << json_escape(size)
       << "\",\"variant\":\"" << json_escape(r.variant) << "\",\"workers\":" << r.workers << ",\"median\":";
    number_or_null(r.rounds_used ? r.median_s : -1);
    os << ",\"spread\":";
    number_or_null(r.rounds_used ? r.spread : -1);
    os << ",\"vs_serial\":";
    number_or_null(r.vs_serial);
    os << ",\"vs_ws\":";
    number_or_null(r.vs_ws);
    os << ",\"rounds_used\":" << r.rounds_used << ",\"rounds\":" << s.rounds << ",\"near_rounds\":" << s.near_rounds
       << ",\"check\":" << (r.check_passed ? "true" : "false") << ",\"note\":\"" << json_escape(r.note) << "\"}\n";
  }
  return os.str();
}

}  // namespace bench
