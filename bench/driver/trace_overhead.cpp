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

#include "common/bench.hpp"
#include "common/fj_roost.hpp"
#include "driver/alternating.hpp"
#include "driver/registry.hpp"
#include "roost/roost.hpp"

namespace bench {

int trace_overhead(int rounds, std::vector<std::string> benches, std::vector<std::string> variants,
                   std::vector<unsigned> workers, const std::string& size) {
  if (benches.empty()) benches = {"heat", "heat2d", "fib"};
  if (variants.empty()) variants = {"ws", "ws-help"};
  if (workers.empty()) workers = {2};
  const std::string file =
      (std::filesystem::temp_directory_path() / ("roost-bench-" + std::to_string(::getpid()) + ".trace")).string();
  const char* names[] = {"untraced", "traced (ROOST_TRACE)", "untraced again (control)"};
  std::printf("ROOST_TRACE's overhead against untraced: median of %d interleaved rounds (quartiles), process CPU "
              "time and wall time\n", rounds);
  bool all_ok = true;
  for (const std::string& bn : benches) {
    const benchmark_def* b = find_benchmark(bn);
    if (!b || !b->roost) {
      std::fprintf(stderr, "roost-bench: --trace-overhead: no roost version of benchmark '%s' (--list names them)\n",
                   bn.c_str());
      return 2;
    }
    const std::string sz = size.empty() ? b->default_size : size;
    std::unique_ptr<problem> p = b->prepare(sz);
    for (const std::string& v : variants)
      for (unsigned w : workers) {
        alternation a;
        a.configs = 3;
        a.make = [&](int k) {
          roost::options o;
          o.scheduler = v;
          o.workers = w;
          if (k == 1) o.trace = file;
          return std::make_unique<roost::runtime>(o);
        };
        a.ending = [&](std::vector<std::unique_ptr<roost::runtime>>& rts) {
          rts[1].reset();  // writes the trace's end and its timeline, then they go
          std::filesystem::remove(file);
          std::filesystem::remove(file + ".json");
        };
        a.run = [&](int k, roost::runtime& rt, bool) {
          p->reset();
          current_runtime() = &rt;
          const double c0 = process_cpu_s(), t0 = now_s();
          b->roost(*p);
          const run_times took{process_cpu_s() - c0, now_s() - t0};
          current_runtime() = nullptr;
          if (!p->check()) {
            std::fprintf(stderr, "roost-bench: %s %s %s, %u workers: WRONG RESULT\n", bn.c_str(), v.c_str(), names[k], w);
            all_ok = false;
          }
          return took;
        };
        const alternation_ratios r = alternate(a, rounds);
        std::printf("  %s %s %s, %u worker%s\n", bn.c_str(), sz.c_str(), v.c_str(), w, w == 1 ? "" : "s");
        for (int k = 1; k < 3; ++k)
          std::printf("    %-26s CPU %.4fx (%.4f-%.4f)   wall %.4fx (%.4f-%.4f)\n", names[k],
                      quantile(r.cpu[static_cast<std::size_t>(k)], 0.5), quantile(r.cpu[static_cast<std::size_t>(k)], 0.25),
                      quantile(r.cpu[static_cast<std::size_t>(k)], 0.75), quantile(r.wall[static_cast<std::size_t>(k)], 0.5),
                      quantile(r.wall[static_cast<std::size_t>(k)], 0.25), quantile(r.wall[static_cast<std::size_t>(k)], 0.75));
        std::fflush(stdout);
      }
  }
  return all_ok ? 0 : 1;
}

}  // namespace bench
