// roost-bench: one driver for every benchmark and variant (roost schedulers and peers).
//
//   roost-bench --bench fib,nqueens --variants serial,ws,ws-help,tbb,omp-gcc,omp-clang --workers 1,2
//               [--size N | --paper] [--reps 5] [--warmup 1] [--json out.jsonl]
//   roost-bench --demo        the curated comparison `make demo` runs
//   roost-bench --list        benchmarks, sizes and variants
//
// Prints a table as it goes (one row per measurement) and, with --json, one JSON line per measurement:
// bench, variant, size, workers, every repetition's seconds, median, check.
#include <sys/wait.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <roost/roost.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/harness.hpp"
#include "driver/omp_runner.hpp"
#include "fib/fib.hpp"
#include "nqueens/nqueens.hpp"

namespace {

struct bench_info {
  std::string name;
  int default_size;
  int paper_size;
  std::string what;
  std::function<bool(int)> serial;
  std::function<bool(int)> roost;  // called inside runtime::run
  std::function<bool(int)> tbb;    // called inside a task_arena of the right size
};

const std::vector<bench_info>& benches() {
  static const std::vector<bench_info> b{
      {"fib", 35, 40, "fib(n), one spawn per call: spawn overhead (seed 003 §4.5)",
       [](int n) { return bench::fib::serial(n) == bench::fib::expected(n); },
       [](int n) { return bench::fib::roost_tasks(n) == bench::fib::expected(n); },
       [](int n) { return bench::fib::tbb_tasks(n) == bench::fib::expected(n); }},
      {"nqueens", 12, 14, "n-queens, one task per legal placement (BOTS; seeds 000 and 003)",
       [](int n) { return bench::nqueens::serial(n, 0, {}) == bench::nqueens::expected(n); },
       [](int n) { return bench::nqueens::roost_tasks(n, 0, {}) == bench::nqueens::expected(n); },
       [](int n) { return bench::nqueens::tbb_tasks(n, 0, {}) == bench::nqueens::expected(n); }},
  };
  return b;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::vector<std::string> all_variants() {
  std::vector<std::string> v{"serial"};
  for (const auto& s : roost::schedulers()) v.push_back(s.name);
  for (const char* p : {"tbb", "omp-gcc", "omp-clang"}) v.push_back(p);
  return v;
}

bool is_roost(const std::string& v) {
  for (const auto& s : roost::schedulers())
    if (v == s.name) return true;
  return false;
}
bool roost_available(const std::string& v) {
  for (const auto& s : roost::schedulers())
    if (v == s.name) return s.available;
  return false;
}

[[noreturn]] void usage_error(const std::string& msg) {
  std::cerr << "roost-bench: " << msg << "\n(roost-bench --list shows benchmarks and variants)\n";
  std::exit(2);
}

std::string self_dir() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  buf[n] = 0;
  std::string p(buf);
  return p.substr(0, p.rfind('/'));
}

// Runs the clang-built helper and parses its JSON line back into a measurement.
bench::measurement run_omp_clang(const std::string& b, int size, unsigned workers, int warmup, int reps) {
  bench::measurement m{b, "omp-clang", std::to_string(size), workers, {}, 0, false, ""};
  std::string helper = self_dir() + "/roost-bench-omp-clang";
  if (access(helper.c_str(), X_OK) != 0) {
    m.note = "not built: install clang and libomp-dev (Debian packages 'clang', 'libomp-dev') and rebuild";
    return m;
  }
  std::string cmd = helper + " " + b + " " + std::to_string(size) + " " + std::to_string(workers) + " " +
                    std::to_string(warmup) + " " + std::to_string(reps);
  FILE* p = popen(cmd.c_str(), "r");
  std::string line;
  char buf[4096];
  while (p && fgets(buf, sizeof buf, p)) line += buf;
  if (p) pclose(p);
  auto num_after = [&](const std::string& key) -> std::string {
    auto k = line.find("\"" + key + "\":");
    if (k == std::string::npos) return "";
    k += key.size() + 3;
    auto e = line.find_first_of(",}]", k);
    return line.substr(k, e - k);
  };
  auto s = line.find("\"seconds\":[");
  if (s == std::string::npos) {
    m.note = "helper failed";
    return m;
  }
  auto e = line.find(']', s);
  for (const auto& x : split(line.substr(s + 11, e - s - 11))) m.seconds.push_back(std::atof(x.c_str()));
  m.median = std::atof(num_after("median").c_str());
  m.check_passed = num_after("check") == "true";
  return m;
}

struct run_config {
  std::vector<std::string> benches, variants;
  std::vector<unsigned> workers{1, 2};
  std::optional<int> size;
  bool paper = false;
  int reps = 5, warmup = 1;
  std::string json;
};

void print_header() {
  std::printf("%-9s %-6s %-10s %7s %12s %10s %8s %7s\n", "bench", "size", "variant", "workers", "median ms",
              "vs serial", "vs ws", "check");
}

void print_row(const bench::measurement& m, double serial_s, double ws_s) {
  auto ratio = [](double a, double b) -> std::string {
    if (a <= 0 || b <= 0) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2fx", a / b);
    return buf;
  };
  if (!m.note.empty() && m.seconds.empty()) {
    std::printf("%-9s %-6s %-10s %7u %12s   %s\n", m.bench.c_str(), m.size.c_str(), m.variant.c_str(), m.workers, "-",
                m.note.c_str());
  } else {
    std::printf("%-9s %-6s %-10s %7u %12.1f %10s %8s %7s\n", m.bench.c_str(), m.size.c_str(), m.variant.c_str(),
                m.workers, m.median * 1e3, ratio(m.median, serial_s).c_str(), ratio(m.median, ws_s).c_str(),
                m.check_passed ? "ok" : "FAILED");
  }
  std::fflush(stdout);
}

int run(const run_config& cfg) {
  std::ofstream json;
  if (!cfg.json.empty()) {
    json.open(cfg.json, std::ios::app);
    if (!json) usage_error("cannot write --json file '" + cfg.json + "'");
  }
  bool all_ok = true;
  print_header();
  for (const auto& bn : cfg.benches) {
    const bench_info* bi = nullptr;
    for (const auto& b : benches())
      if (b.name == bn) bi = &b;
    int size = cfg.size ? *cfg.size : (cfg.paper ? bi->paper_size : bi->default_size);
    double serial_s = 0;
    std::map<unsigned, double> ws_s;
    auto emit = [&](bench::measurement& m) {
      if (m.variant == "serial") serial_s = m.median;
      if (m.variant == "ws") ws_s[m.workers] = m.median;
      print_row(m, serial_s, ws_s.count(m.workers) ? ws_s[m.workers] : 0);
      if (json.is_open()) json << bench::to_json(m) << "\n";
      if (m.note.empty() || !m.seconds.empty()) all_ok &= m.check_passed;
    };
    for (const auto& v : cfg.variants) {
      if (v == "serial") {
        auto m = bench::measure(bn, v, std::to_string(size), 1, cfg.warmup, cfg.reps, [&] { return bi->serial(size); });
        emit(m);
        continue;
      }
      if (is_roost(v) && !roost_available(v)) {  // listed as such, never faked or silently skipped
        bench::measurement m{bn, v, std::to_string(size), cfg.workers.front(), {}, 0, false,
                             "scheduler not implemented yet (see README)"};
        emit(m);
        continue;
      }
      for (unsigned w : cfg.workers) {
        bench::measurement m{bn, v, std::to_string(size), w, {}, 0, false, ""};
        if (is_roost(v)) {
          {
            roost::options o;
            o.scheduler = v;
            o.workers = w;
            roost::runtime rt(o);
            m = bench::measure(bn, v, std::to_string(size), w, cfg.warmup, cfg.reps,
                               [&] { return rt.run([&] { return bi->roost(size); }); });
          }
        } else if (v == "tbb") {
          tbb::global_control gc(tbb::global_control::max_allowed_parallelism, w);
          tbb::task_arena arena(static_cast<int>(w));
          m = bench::measure(bn, v, std::to_string(size), w, cfg.warmup, cfg.reps,
                             [&] { return arena.execute([&] { return bi->tbb(size); }); });
        } else if (v == "omp-gcc") {
          bench::run_omp(bn, size, w, cfg.warmup, cfg.reps, v, m);
        } else if (v == "omp-clang") {
          m = run_omp_clang(bn, size, w, cfg.warmup, cfg.reps);
        }
        emit(m);
      }
    }
  }
  return all_ok ? 0 : 1;
}

void list() {
  std::printf("benchmarks (default size / paper size):\n");
  for (const auto& b : benches()) std::printf("  %-9s %4d / %-4d %s\n", b.name.c_str(), b.default_size, b.paper_size, b.what.c_str());
  std::printf("variants:\n  serial\n");
  for (const auto& s : roost::schedulers())
    std::printf("  %-9s roost: %s%s\n", s.name, s.summary, s.available ? "" : "  [not implemented yet]");
  std::printf("  tbb       oneTBB task_group\n  omp-gcc   OpenMP tasks, GCC libgomp\n  omp-clang OpenMP tasks, clang + LLVM libomp\n");
}

}  // namespace

int main(int argc, char** argv) {
  run_config cfg;
  std::vector<std::string> args(argv + 1, argv + argc);
  auto value = [&](std::size_t& i) -> std::string {
    if (i + 1 >= args.size()) usage_error(args[i] + " needs a value");
    return args[++i];
  };
  auto to_int = [](const std::string& opt, const std::string& v, int lo) {
    char* end = nullptr;
    long x = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end || x < lo || x > 1000000) usage_error(opt + " '" + v + "': expected an integer >= " + std::to_string(lo));
    return static_cast<int>(x);
  };
  bool demo = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--list") { list(); return 0; }
    else if (a == "--demo") demo = true;
    else if (a == "--bench") cfg.benches = split(value(i));
    else if (a == "--variants") cfg.variants = split(value(i));
    else if (a == "--workers") { cfg.workers.clear(); for (auto& w : split(value(i))) cfg.workers.push_back(static_cast<unsigned>(to_int("--workers", w, 1))); }
    else if (a == "--size") cfg.size = to_int("--size", value(i), 1);
    else if (a == "--paper") cfg.paper = true;
    else if (a == "--reps") cfg.reps = to_int("--reps", value(i), 1);
    else if (a == "--warmup") cfg.warmup = to_int("--warmup", value(i), 0);
    else if (a == "--json") cfg.json = value(i);
    else if (a == "--help" || a == "-h") { std::printf("see the comment at the top of bench/driver/main.cpp, or README.md\n"); return 0; }
    else usage_error("unknown argument '" + a + "'");
  }
  if (demo) {
    if (cfg.reps == 5) cfg.reps = 3;
    if (cfg.json.empty()) {
      std::system("mkdir -p out");
      cfg.json = "out/bench.jsonl";
      std::remove(cfg.json.c_str());
    }
  }
  if (cfg.benches.empty()) for (const auto& b : benches()) cfg.benches.push_back(b.name);
  if (cfg.variants.empty()) cfg.variants = all_variants();
  for (const auto& b : cfg.benches) {
    bool known = false;
    for (const auto& x : benches()) known |= x.name == b;
    if (!known) {
      std::string names;
      for (const auto& x : benches()) names += (names.empty() ? "" : ", ") + x.name;
      usage_error("unknown benchmark '" + b + "'; available: " + names);
    }
  }
  for (const auto& v : cfg.variants) {
    bool known = false;
    for (const auto& x : all_variants()) known |= x == v;
    if (!known) {
      std::string names;
      for (const auto& x : all_variants()) names += (names.empty() ? "" : ", ") + x;
      usage_error("unknown variant '" + v + "'; valid: " + names);
    }
  }
  if (cfg.size && cfg.benches.size() > 1) usage_error("--size applies to one benchmark; pick it with --bench");
  return run(cfg);
}
