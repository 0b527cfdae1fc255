// Measurement harness shared by every benchmark binary (compiled by GCC and by clang): repetitions after
// warm-up, median, and one JSON line per measurement.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace bench {

struct measurement {
  std::string bench, variant, size;
  unsigned workers = 1;
  std::vector<double> seconds;  // one per repetition
  double median = 0;
  bool check_passed = false;
  std::string note;  // e.g. why a variant could not run
  double c2c_ns = -1;  // core-to-core round trip around the measurement (machine_state.hpp); < 0: unknown
  // The run's best round trip up to this measurement, its opening one included (which no measurement carries):
  // what the driver's far rule compared c2c_ns with; < 0: unknown
  double c2c_best_ns = -1;
  int round = 0;       // which of --rounds N interleaved rounds (1..N); 0: a run of one round
  // --platform sim: simulated L2 and L3 misses of the repetition whose time is the median (of the two middle
  // ones: their mean; < 0: not simulated)
  double l2_misses = -1, l3_misses = -1;
  double remote_dram = -1;  // simulated: lines fetched from another NUMA node's DRAM, in the median repetition
  std::string topology;     // simulated: the machine (--topology); empty natively
  std::uint64_t sim_seed = 0;  // simulated: the seed (ROOST_SIM_SEED) and the parameters (ROOST_SIM_PARAMS)
  std::string sim_params;
  // roost-bench --hint-error as given (det:ALPHA, rand:ALPHA): the hints were wrong on purpose, and runs with
  // and without it looked alike in the results otherwise. Empty: hints as the benchmark gives them.
  std::string hint_error;
};

// The q-quantile of v (q in [0, 1]; 0.5: the median), interpolated between the two nearest ranks (numpy's
// default): of an even count the median is the mean of the middle two, not the upper one. 0 for no values.
inline double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(v.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(pos);
  if (lo + 1 >= v.size()) return v.back();
  return v[lo] + (pos - static_cast<double>(lo)) * (v[lo + 1] - v[lo]);
}

inline double median_of(std::vector<double> v) { return quantile(std::move(v), 0.5); }

// Runs warmup + reps repetitions of run(); reset() before and check() after each one stay outside the timed
// region. The measurement passes only if every repetition's check does.
// clock: seconds from some origin, read before and after each repetition; the default is this machine's
// steady clock (a simulated runtime's virtual clock in --platform sim).
inline measurement measure(const std::string& b, const std::string& variant, const std::string& size,
                           unsigned workers, int warmup, int reps, const std::function<void()>& reset,
                           const std::function<void()>& run, const std::function<bool()>& check,
                           const std::function<double()>& clock = {}) {
  measurement m{b, variant, size, workers, {}, 0, true, ""};
  auto now = [&] {
    return clock ? clock()
                 : std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  for (int i = 0; i < warmup + reps; ++i) {
    reset();
    const double t0 = now();
    run();
    const double t1 = now();
    m.check_passed &= check();
    if (i >= warmup) m.seconds.push_back(t1 - t0);
  }
  m.median = median_of(m.seconds);
  return m;
}

inline std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o;
}

inline std::string to_json(const measurement& m) {
  std::ostringstream os;
  os.precision(9);
  os << "{\"bench\":\"" << json_escape(m.bench) << "\",\"variant\":\"" << json_escape(m.variant)
     << "\",\"size\":\"" << json_escape(m.size) << "\",\"workers\":" << m.workers << ",\"seconds\":[";
  for (std::size_t i = 0; i < m.seconds.size(); ++i) os << (i ? "," : "") << m.seconds[i];
  os << "],\"median\":" << m.median << ",\"check\":" << (m.check_passed ? "true" : "false");
  if (!m.note.empty()) os << ",\"note\":\"" << json_escape(m.note) << "\"";
  if (m.c2c_ns >= 0) os << ",\"c2c_ns\":" << static_cast<long>(m.c2c_ns + 0.5);
  if (m.c2c_best_ns >= 0) os << ",\"c2c_best_ns\":" << static_cast<long>(m.c2c_best_ns + 0.5);
  if (m.round > 0) os << ",\"round\":" << m.round;
  if (m.l2_misses >= 0) os << ",\"l2_misses\":" << static_cast<long long>(m.l2_misses + 0.5);
  if (m.l3_misses >= 0) os << ",\"l3_misses\":" << static_cast<long long>(m.l3_misses + 0.5);
  if (m.remote_dram >= 0) os << ",\"remote_dram\":" << static_cast<long long>(m.remote_dram + 0.5);
  if (!m.topology.empty()) os << ",\"topology\":\"" << json_escape(m.topology) << "\"";
  // A simulated row's seed and parameters: with the topology, what its numbers depend on (runs of other seeds
  // or parameters could not be told apart: an outside-user campaign).
  if (!m.topology.empty()) os << ",\"sim_seed\":" << m.sim_seed << ",\"sim_params\":\"" << json_escape(m.sim_params) << "\"";
  if (!m.hint_error.empty()) os << ",\"hint_error\":\"" << json_escape(m.hint_error) << "\"";
  os << "}";
  return os.str();
}

}  // namespace bench
