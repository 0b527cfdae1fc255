// roost-bench --trace-overhead R: what ROOST_TRACE costs a benchmark (issue #23: under 5% on heat-like
// programs, under 10% on fine-grained ones; seed 001's tracer costs under 5%). For each benchmark, variant
// and worker count named (--bench, default heat,heat2d,fib; --variants, default ws,ws-help; --workers,
// default 2; --size), three runtimes live side by side (driver/alternating.hpp): untraced, traced (the
// default recording depth, auto, to a file in the temporary directory, removed after each round), and
// untraced again, the control, whose ratio to the first is what the method reads into two identical
// runtimes. R rounds of one run each, alternating; every result is checked. Prints the median of the
// per-round ratios to untraced, of process CPU time and of wall time, with their quartiles.
//
// While the traced runtime lives, the hook flag is the process's: the untraced runtimes' workers take the
// hook points' calls too and find no tracer of theirs (engine_base::tracer), a few instructions a task and
// a touch, so the ratio understates the cost by that much (docs/benchmarks.md says how much).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "driver/alternating.hpp"
#include "roost/roost.hpp"

namespace bench {

int trace_overhead(int rounds, std::vector<std::string> benches, std::vector<std::string> variants,
                   std::vector<unsigned> workers, const size_choice& size) {
  if (benches.empty()) benches = {"heat", "heat2d", "fib"};
  if (variants.empty()) variants = {"ws", "ws-help"};
  if (workers.empty()) workers = {2};
  const std::string file = temporary_trace_path();
  const char* names[] = {"untraced", "traced (ROOST_TRACE)", "untraced again (control)"};
  const std::string heading = "ROOST_TRACE's overhead against untraced: median of " + std::to_string(rounds) +
                              " interleaved rounds (quartiles), process CPU time and wall time";
  bool all_ok = true;
  const int status = for_each_case("--trace-overhead", heading, benches, variants, workers, size, [&](const overhead_case& c) {
    alternation a;
    a.configs = 3;
    a.make = [&](int k) {
      roost::options o;
      o.scheduler = c.variant;
      o.workers = c.workers;
      if (k == 1) o.trace = file;
      return std::make_unique<roost::runtime>(o);
    };
    a.ending = [&](std::vector<std::unique_ptr<roost::runtime>>& rts) {
      rts[1].reset();  // writes the trace's end and its timeline, then they go
      std::filesystem::remove(file);
      std::filesystem::remove(file + ".json");
    };
    a.run = [&](int k, roost::runtime& rt, bool) { return time_run(c, rt, names[k], all_ok); };
    const alternation_ratios r = alternate(a, rounds);
    for (int k = 1; k < 3; ++k) std::printf("    %-26s %s\n", names[k], ratio_columns(r, k).c_str());
    std::fflush(stdout);
  });
  if (status != 0) return status;
  return all_ok ? 0 : 1;
}

}  // namespace bench
