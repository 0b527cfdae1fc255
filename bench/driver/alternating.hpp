// Overheads measured by alternation (roost-bench --preempt-overhead, --trace-overhead): what a runtime
// setting costs a benchmark is a few percent, and a shared machine drifts by tens of percent between
// seconds (a VM's neighbours), so measurements taken one after another in blocks read the drift as cost.
// Here the runtimes to compare live side by side, and each round runs the benchmark once on each, one run
// after another, so that the drift falls on all alike. Each round makes the runtimes afresh, in an order
// that rotates with the round (where a runtime's stacks and pools lie moved the first-made one's time by 3%
// against an identical later one), runs each once untimed (pools, pages), then once timed, starting after
// the warm-up's last. The ratios are taken inside each round, to configuration 0.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/bench.hpp"
#include "driver/registry.hpp"
#include "roost/roost.hpp"

namespace bench {

// Where a traced measurement writes its trace (`V+trace`, --trace-overhead): a file of this process in the
// temporary directory. A roost::config_error naming TMPDIR when there is none (it was an uncaught
// filesystem_error, and an abort).
std::string temporary_trace_path();

struct run_times {
  double cpu_s = 0, wall_s = 0;
};

struct alternation {
  int configs = 0;
  // Makes configuration k's runtime.
  std::function<std::unique_ptr<roost::runtime>(int k)> make;
  // Runs the benchmark once on configuration k's runtime (`timed`: false for the warm-up) and says how long
  // it took; it checks the result itself.
  std::function<run_times(int k, roost::runtime& rt, bool timed)> run;
  // Optional: after a round's runtimes are made, and before they go.
  std::function<void(std::vector<std::unique_ptr<roost::runtime>>& rts)> made, ending;
};

// Per configuration k >= 1, the per-round ratios of its process CPU time and wall time to configuration 0's
// (entry 0 stays empty).
struct alternation_ratios {
  std::vector<std::vector<double>> cpu, wall;
};
alternation_ratios alternate(const alternation& a, int rounds);

// One case of a comparison: a benchmark prepared at its size, a roost scheduler and a worker count.
struct overhead_case {
  const benchmark_def& bench;
  problem& p;
  const std::string& size;
  const std::string& variant;
  unsigned workers;
};
// The size each benchmark runs at: `size` (--size, which names one benchmark's), else the benchmark's size of
// `set` (--small: the tests', --paper: the seeds', else its default).
struct size_choice {
  std::string size;
  enum class set { normal, small, paper } which = set::normal;
};
// Calls `each` for every benchmark x variant x worker count, after a line naming the case; `heading` comes
// first, once the first benchmark's size was found good. 2 when a benchmark has no roost version, a variant
// is no roost scheduler, --size names several benchmarks or does not fit the benchmark (each said on
// stderr, for `option`; where it is the first benchmark, nothing was printed before), else 0.
int for_each_case(const char* option, const std::string& heading, const std::vector<std::string>& benches,
                  const std::vector<std::string>& variants, const std::vector<unsigned>& workers,
                  const size_choice& size, const std::function<void(const overhead_case&)>& each);
// One run of the case's benchmark on rt, timed from just after `before` to just before `after`; false in
// `correct` when its result differs from the serial program's (said on stderr, with `config`).
run_times time_run(const overhead_case& c, roost::runtime& rt, const char* config, bool& correct,
                   const std::function<void()>& before = {}, const std::function<void()>& after = {});
// "CPU 1.0123x (1.0050-1.0200)   wall 1.0110x (...)": configuration k's medians and quartiles.
std::string ratio_columns(const alternation_ratios& r, int k);

double process_cpu_s();
double now_s();

}  // namespace bench
