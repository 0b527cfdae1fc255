#include "driver/alternating.hpp"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "common/fj_roost.hpp"
#include "common/harness.hpp"

namespace bench {

namespace {
// The temporary trace and its timeline, removed by a signal that ends the program (Ctrl-C in the middle of
// a traced measurement left a trace of 24 MB in the temporary directory: an outside-user campaign). Fixed
// buffers, written once before the handlers go in: the handler only unlinks them and dies of the signal.
char g_trace_path[4096], g_timeline_path[4096 + 8];
void remove_temporary_trace(int sig) {
  ::unlink(g_trace_path);
  ::unlink(g_timeline_path);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}
void remove_at_interrupt(const std::string& path) {
  if (g_trace_path[0] || path.size() >= sizeof g_trace_path) return;
  std::snprintf(g_trace_path, sizeof g_trace_path, "%s", path.c_str());
  std::snprintf(g_timeline_path, sizeof g_timeline_path, "%s.json", path.c_str());
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction now {};
    if (::sigaction(sig, nullptr, &now) == 0 && now.sa_handler == SIG_DFL)  // ignored or handled stays so
      ::signal(sig, &remove_temporary_trace);
  }
}
}  // namespace

std::string temporary_trace_path() {
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) {
    const char* tmpdir = std::getenv("TMPDIR");
    throw roost::config_error(std::string("TMPDIR='") + (tmpdir ? tmpdir : "") + "': " + ec.message() +
                              "; a traced measurement writes its trace in the temporary directory: give an "
                              "existing directory");
  }
  std::string path = (dir / ("roost-bench-" + std::to_string(::getpid()) + ".trace")).string();
  remove_at_interrupt(path);
  return path;
}

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

int for_each_case(const char* option, const std::string& heading, const std::vector<std::string>& benches,
                  const std::vector<std::string>& variants, const std::vector<unsigned>& workers,
                  const size_choice& size, const std::function<void(const overhead_case&)>& each) {
  if (!size.size.empty() && benches.size() != 1) {
    std::fprintf(stderr, "roost-bench: %s: --size applies to one benchmark; pick it with --bench\n", option);
    return 2;
  }
  for (const std::string& v : variants) {  // what is measured is the runtime's own overhead
    bool roost_scheduler = false;
    std::string names;
    for (const roost::scheduler_info& s : roost::schedulers()) {
      roost_scheduler |= s.available && v == s.name;
      if (s.available) names += (names.empty() ? "" : ", ") + std::string(s.name);
    }
    if (!roost_scheduler) {
      std::fprintf(stderr, "roost-bench: %s: variant '%s' is no roost scheduler; valid: %s\n", option, v.c_str(),
                   names.c_str());
      return 2;
    }
  }
  bool started = false;
  for (const std::string& bn : benches) {
    const benchmark_def* b = find_benchmark(bn);
    if (!b || !b->roost) {
      std::fprintf(stderr, "roost-bench: %s: no roost version of benchmark '%s' (--list names them)\n", option,
                   bn.c_str());
      return 2;
    }
    const std::string sz = !size.size.empty()                            ? size.size
                           : size.which == size_choice::set::small ? b->small_size
                           : size.which == size_choice::set::paper ? b->paper_size
                                                                   : b->default_size;
    std::unique_ptr<problem> p;
    try {
      p = b->prepare(sz);
    } catch (const size_error& e) {
      std::fprintf(stderr, "roost-bench: %s: %s\n", option, e.what());
      return 2;
    }
    if (!started) std::printf("%s\n", heading.c_str());
    started = true;
    for (const std::string& v : variants)
      for (unsigned w : workers) {
        std::printf("  %s %s %s, %u worker%s\n", bn.c_str(), sz.c_str(), v.c_str(), w, w == 1 ? "" : "s");
        std::fflush(stdout);
        each(overhead_case{*b, *p, sz, v, w});
      }
  }
  return 0;
}

run_times time_run(const overhead_case& c, roost::runtime& rt, const char* config, bool& correct,
                   const std::function<void()>& before, const std::function<void()>& after) {
  c.p.reset();
  current_runtime() = &rt;
  if (before) before();
  const double c0 = process_cpu_s(), t0 = now_s();
  c.bench.roost(c.p);
  const run_times took{process_cpu_s() - c0, now_s() - t0};
  if (after) after();
  current_runtime() = nullptr;
  if (!c.p.check()) {
    std::fprintf(stderr, "roost-bench: %s %s under %s, %u workers: WRONG RESULT\n", c.bench.name,
                 c.variant.c_str(), config, c.workers);
    correct = false;
  }
  return took;
}

std::string ratio_columns(const alternation_ratios& r, int k) {
  const auto& cpu = r.cpu[static_cast<std::size_t>(k)];
  const auto& wall = r.wall[static_cast<std::size_t>(k)];
  char line[160];
  std::snprintf(line, sizeof line, "CPU %.4fx (%.4f-%.4f)   wall %.4fx (%.4f-%.4f)", quantile(cpu, 0.5),
                quantile(cpu, 0.25), quantile(cpu, 0.75), quantile(wall, 0.5), quantile(wall, 0.25),
                quantile(wall, 0.75));
  return line;
}

double process_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace bench
