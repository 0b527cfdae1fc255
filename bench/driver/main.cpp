// roost-bench: one driver for every benchmark and variant (roost schedulers and peers).
//
//   roost-bench [--bench heat,fib] [--variants ws,tbb,omp-gcc-static] [--workers 1,2]
//               [--size SIZE | --small | --paper] [--reps 5] [--warmup 1] [--rounds 1] [--json out.jsonl]
//               [--hint-error det:ALPHA|rand:ALPHA]   distort heat2d's work hints (seed 003 Fig. 4.22)
//   roost-bench --demo     the curated comparison `make demo` runs (writes out/bench.jsonl)
//   roost-bench --list     benchmarks with their sizes, and the variants (schedulers not implemented yet are marked)
//
// `roost-bench --help` prints the same (kUsage below). Every measurement checks the result against the
// serial reference. Prints a table as it goes and, with --json, one JSON line per measurement: bench,
// variant, size, workers, each repetition's seconds, median, check (and a note when the variant cannot
// run). Exit status 1 if any check failed.
//
// --rounds N measures every variant N times, interleaved (all variants once, then all again, ...), and ends
// each benchmark with a summary: medians over the rounds, ratios taken inside each round, rounds taken
// while the CPUs were far apart left out (driver/rounds.hpp). The JSON lines then carry "round".
//
// Around every measurement the driver also measures the core-to-core round trip of a cache line
// (common/machine_state.hpp; "c2c_ns" in the JSON) and flags a measurement taken while it was far above
// the run's best: on a VM the host may place the CPUs far apart for a while, and such timings are not
// comparable with the others.
#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <roost/roost.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "api/closest_name.hpp"
#include "common/fj_roost.hpp"
#include "driver/alternating.hpp"
#include "common/harness.hpp"
#include "common/machine_state.hpp"
#include "driver/registry.hpp"
#include "driver/rounds.hpp"
#include "topology/topology.hpp"

namespace {

using bench::benchmark_def;
using bench::measurement;

[[noreturn]] void usage_error(const std::string& msg);

// A comma-separated list of an option's: every item named ('a,,b', a trailing comma or '' is an error).
std::vector<std::string> split(const std::string& option, const std::string& s) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = s.find(',', pos);
    const std::string item = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item.empty())
      usage_error(option + " '" + s + "': an empty item; expected names (or numbers) separated by commas");
    if (std::find(out.begin(), out.end(), item) != out.end())  // measured twice, a variant against itself
      usage_error(option + " '" + s + "': " + item + " is named twice; name each once");
    out.push_back(item);
    if (comma == std::string::npos) return out;
    pos = comma + 1;
  }
}

const std::vector<std::string>& peer_variants() {
  static const std::vector<std::string> v{"tbb", "tbb-pfor", "omp-gcc", "omp-gcc-static", "omp-gcc-dynamic",
                                          "omp-clang", "omp-clang-static", "omp-clang-dynamic",
                                          "floor-help", "floor-switch", "floor-call", "floor-linked", "floor-erased",
                                          "floor-value", "floor-bare"};
  return v;
}

std::vector<std::string> all_variants() {
  std::vector<std::string> v{"serial"};
  for (const auto& s : roost::schedulers()) v.push_back(s.name);
  for (const auto& p : peer_variants()) v.push_back(p);
  return v;
}

// The roost scheduler a variant runs (`V+trace`: V, traced), or nullptr for serial and the peers.
const roost::scheduler_info* roost_scheduler(const std::string& v) {
  const std::string name = bench::untraced(v);
  for (const auto& s : roost::schedulers())
    if (name == s.name) return &s;
  return nullptr;
}

// A roost variant's runtime options: its scheduler, and for `V+trace` a trace to a temporary file, which
// remove_trace deletes (with its FILE.json) once the runtime is gone.
roost::options roost_options(const roost::scheduler_info& s, const std::string& v, unsigned workers) {
  roost::options o;
  o.scheduler = s.name;
  o.workers = workers;
  if (bench::is_traced(v))
    o.trace = bench::temporary_trace_path();
  return o;
}
void remove_trace(const roost::options& o) {
  if (!o.trace) return;
  std::filesystem::remove(*o.trace);
  std::filesystem::remove(*o.trace + ".json");
}

constexpr const char* kUsage =
    "usage: roost-bench [--bench B1,B2] [--variants V1,V2] [--workers 1,2] [--size S | --small | --paper]\n"
    "                   [--reps 5] [--warmup 1] [--rounds 1] [--json out.jsonl] [--hint-error det:A|rand:A]\n"
    "                   [--platform native|sim] [--topology T]\n"
    "       roost-bench --demo | --list | --help | --preempt-cost N | --preempt-barrier WORKERS |\n"
    "                   --preempt-timers ROUNDS | --preempt-overhead ROUNDS | --trace-overhead ROUNDS\n"
    "  --bench       benchmarks (default: every one); --list names them with their sizes\n"
    "  --variants    serial, roost schedulers and peers (default: all that exist); --list names them;\n"
    "                V+trace: roost scheduler V writing a trace (a temporary file): its 'vs ws' is to V untraced\n"
    "                (name V first: a row's ratio is to what its round measured before it)\n"
    "  --workers     worker counts to measure, each in turn\n"
    "  --platform    native (default) or sim: roost's schedulers on the simulated machine --topology names, timed\n"
    "                in virtual time, with the L2 and L3 misses of its median repetition (of an even number: the\n"
    "                mean of the middle two, as the median time is; src/platform/README.md)\n"
    "  --topology    with --platform sim: the simulated machine, an hwloc synthetic description with cache sizes\n"
    "                or the path of an hwloc XML export\n"
    "  --size        the size of the one benchmark --bench names; --small: every benchmark at the tests' size;\n"
    "                --paper: at the seeds' size (one of the three)\n"
    "  --reps        timed repetitions per measurement (the median is reported); --warmup: untimed ones first\n"
    "  --rounds      measure every variant N times, interleaved, and summarize each benchmark over the rounds\n"
    "  --json        also append one JSON line per measurement to the file (roost-report reads it and shows\n"
    "                each run's lines apart; remove the file to start afresh)\n"
    "  --hint-error  distort heat2d's work hints: det:ALPHA or rand:ALPHA, ALPHA in [0, 1] (seed 003 Fig. 4.22);\n"
    "                recorded in --json as hint_error, and roost-report names such a run apart\n"
    "  --demo        the comparison `make demo` runs (writes out/bench.jsonl)\n"
    "  --preempt-cost N     the cost of one preemption, median of N (at least 10), pthreads vs ROOST_PREEMPT=signal and klt\n"
    "                       (seed 003 Table 3.1's method: two spinning threads on one core; 10 ms interval)\n"
    "  --preempt-barrier W  a busy-wait barrier of 4 tasks per worker on W workers, preemption off, signal, klt\n"
    "  --preempt-overhead R what preemption costs at 1 ms against off (signal and klt, under CPU-time, aligned,\n"
    "                       chained and monitor timers; the aligned ticks alone, and a second off as control): R rounds alternating\n"
    "                       the runs one by one, on --bench (default fib,heat2d,\n"
    "                       matmul), --variants (default ws,ws-help), --workers (default 1), --size\n"
    "  --preempt-timers R   what the timer designs cost with an empty handler at 1 ms (the floor under\n"
    "                       ROOST_PREEMPT's overhead), and what one interruption of a busy CPU costs (x86-64),\n"
    "                       R interleaved rounds\n"
    "  --trace-overhead R   what ROOST_TRACE costs against untraced (and a second untraced as control): R rounds\n"
    "                       alternating the runs one by one, on --bench (default heat,heat2d,fib), --variants\n"
    "                       (default ws,ws-help), --workers (default 2), --size\n"
    "Every measurement is checked against the serial program; the exit status is 1 if a check failed,\n"
    "2 for bad input or when every variant asked for was left out (nothing measured).\n";

// A platform's name read as the runtime reads ROOST_PLATFORM: trimmed, any case.
std::string platform_word(std::string v) {
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.erase(v.begin());
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return v;
}

[[noreturn]] void usage_error(const std::string& msg) {
  std::cerr << "roost-bench: " << msg << "\n(roost-bench --list shows benchmarks, sizes and variants)\n";
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

std::string json_field(const std::string& line, const std::string& key) {
  auto k = line.find("\"" + key + "\":");
  if (k == std::string::npos) return "";
  k += key.size() + 3;
  auto e = line.find_first_of(",}", k);
  return line.substr(k, e - k);
}

// The omp-clang* variants run in a helper built by clang against LLVM libomp.
measurement run_omp_clang(const std::string& b, const std::string& size, const std::string& variant,
                          unsigned workers, int warmup, int reps) {
  measurement m{b, variant, size, workers, {}, 0, false, ""};
  std::string helper = self_dir() + "/roost-bench-omp-clang";
  if (access(helper.c_str(), X_OK) != 0) {
    m.note = "not built: the clang helper needs Debian's clang and libomp-dev (scripts/bootstrap.sh installs them)";
    return m;
  }
  std::string kind = variant == "omp-clang" ? "tasks" : variant.substr(10);
  std::string cmd = helper + " " + b + " " + size + " " + kind + " " + std::to_string(workers) + " " +
                    std::to_string(warmup) + " " + std::to_string(reps);
  FILE* p = popen(cmd.c_str(), "r");
  std::string line;
  char buf[8192];
  while (p && fgets(buf, sizeof buf, p)) line += buf;
  int rc = p ? pclose(p) : -1;
  auto s = line.find("\"seconds\":[");
  if (s == std::string::npos) {
    m.note = "clang helper failed (exit " + std::to_string(rc) + ")";
    return m;
  }
  auto e = line.find(']', s);
  std::stringstream seconds(line.substr(s + 11, e - s - 11));  // the helper's JSON array of numbers
  for (std::string x; std::getline(seconds, x, ',');)
    if (!x.empty()) m.seconds.push_back(std::atof(x.c_str()));
  m.median = std::atof(json_field(line, "median").c_str());
  m.check_passed = json_field(line, "check") == "true";
  return m;
}

// A result file the driver could not write: the run ends with exit status 1 (main).
struct output_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct run_config {
  std::vector<std::string> benches, variants;
  std::vector<unsigned> workers{1, 2};
  std::optional<std::string> size;
  enum class size_kind { normal, small, paper } sizes = size_kind::normal;
  int reps = 5, warmup = 1;
  std::string hint_error;  // --hint-error as given, recorded with each measurement
  int rounds = 1;  // --rounds: interleaved rounds of every variant, then a summary (driver/rounds.hpp)
  std::string json;
  bool fresh_json = false;  // --demo's out/bench.jsonl: emptied when it is opened, not appended to
  // Written into every --json line: the lines one invocation wrote, so that roost-report shows runs appended
  // to one file apart (it guessed from repeated rows, and merged two runs of different variants).
  std::string run_id;
  bool variants_named = false;  // --variants given (otherwise every variant, floors only where they exist)
  // --platform sim --topology T: roost's schedulers on the simulated machine T, timed in virtual time.
  bool simulated = false;
  std::string topology;
};

void print_header() {
  std::printf("%-8s %-14s %-18s %7s %11s %9s %8s %6s\n", "bench", "size", "variant", "workers", "median ms",
              "vs serial", "vs ws", "check");
}

void print_row(const measurement& m, double serial_s, double ws_s) {
  auto ratio = [](double a, double b) -> std::string {
    if (a <= 0 || b <= 0) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2fx", a / b);
    return buf;
  };
  if (m.seconds.empty()) {
    std::printf("%-8s %-14s %-18s %7u %11s   %s\n", m.bench.c_str(), m.size.c_str(), m.variant.c_str(), m.workers,
                "-", m.note.c_str());
  } else {
    std::printf("%-8s %-14s %-18s %7u %11.2f %9s %8s %6s\n", m.bench.c_str(), m.size.c_str(), m.variant.c_str(),
                m.workers, m.median * 1e3, ratio(m.median, serial_s).c_str(), ratio(m.median, ws_s).c_str(),
                m.check_passed ? "ok" : "FAILED");
    if (!m.note.empty()) std::printf("  ^ %s\n", m.note.c_str());
  }
  std::fflush(stdout);
}

// The variant's function, for every variant that is not a roost scheduler (omp-clang* run in a helper).
bench::variant_fn peer_fn(const benchmark_def& b, const std::string& v) {
  if (v == "serial") return b.serial;
  if (v == "tbb") return b.tbb_tasks;
  if (v == "tbb-pfor") return b.tbb_pfor;
  if (v == "omp-gcc") return b.omp_tasks;
  if (v == "omp-gcc-static") return b.omp_static;
  if (v == "omp-gcc-dynamic") return b.omp_dynamic;
  if (v == "floor-help") return b.floor_help;
  if (v == "floor-switch") return b.floor_switch;
  if (v == "floor-call") return b.floor_call;
  if (v == "floor-linked") return b.floor_linked;
  if (v == "floor-erased") return b.floor_erased;
  if (v == "floor-value") return b.floor_value;
  if (v == "floor-bare") return b.floor_bare;
  return nullptr;
}

// The single-threaded floors (fib/floor.cpp): measured once, at one worker, and only where a benchmark has
// them; a benchmark without them lists them as missing only when they were asked for by name.
bool is_floor(const std::string& v) { return v.rfind("floor-", 0) == 0; }
// Variants measured once, at one worker, whatever --workers says: the serial program and the floors.
bool single_threaded(const std::string& v) { return v == "serial" || is_floor(v); }

bool has_clang_variant(const benchmark_def& b, const std::string& v) {
  if (v == "omp-clang") return b.omp_tasks;
  if (v == "omp-clang-static") return b.omp_static;
  if (v == "omp-clang-dynamic") return b.omp_dynamic;
  return false;
}

int run(const run_config& cfg) {
  // Opened once the first size is found good, before any measurement: a run refused for its size leaves no
  // empty --json file behind (it made one, and roost-report then read a file of no lines).
  std::ofstream json;
  const auto open_json = [&] {
    if (cfg.json.empty()) return;
    errno = 0;
    // A file whose last line a failed write cut short (see write_json) gets a line break first: appended to,
    // the new run's first line was glued onto the cut one and lost with it (an outside-user campaign).
    bool ends_inside_a_line = false;
    std::error_code ec;  // a pipe or a device is not read (a pipe would wait for a writer)
    if (!cfg.fresh_json && std::filesystem::is_regular_file(cfg.json, ec)) {
      std::ifstream before(cfg.json, std::ios::binary | std::ios::ate);
      if (before && before.tellg() > 0) {
        before.seekg(-1, std::ios::end);
        ends_inside_a_line = before.get() != '\n';
      }
    }
    json.open(cfg.json, cfg.fresh_json ? std::ios::trunc : std::ios::app);
    // With the system's reason (a missing directory, a directory): said alone, it left the user guessing.
    if (!json) usage_error("cannot write --json file '" + cfg.json + "'" + (errno ? std::string(": ") + std::strerror(errno) : ""));
    if (ends_inside_a_line) {
      json << '\n';
      std::fprintf(stderr, "roost-bench: --json file '%s' ended inside a line (a write cut short?): this run's lines "
                   "start on a line of their own, and roost-report leaves the cut one out\n", cfg.json.c_str());
    }
  };
  // Lines as they are measured, each with the run's id. A write that fails (a full disk, /dev/full) ends the
  // run with an error: it left a line cut short, which roost-report then refused with the whole file, and
  // exit status 0.
  const auto write_json = [&](const std::string& lines) {
    if (!json.is_open()) return;
    errno = 0;
    for (std::size_t at = 0; at < lines.size();) {
      std::size_t end = lines.find('\n', at);
      if (end == std::string::npos) end = lines.size();
      if (end > at && lines[at] == '{')
        json << "{\"run\":\"" << cfg.run_id << "\"," << lines.substr(at + 1, end - at - 1) << "\n";
      at = end + 1;
    }
    json.flush();
    if (!json) throw output_error("cannot write --json file '" + cfg.json + "' (" + std::strerror(errno ? errno : EIO) +
                                  "); it holds what was written before, its last line perhaps cut short");
  };
  bool all_ok = true;
  std::size_t measured = 0;  // rows over every benchmark: none at all is an error (below), not a success
  double c2c_best = -1;
  bool started = false, headed = false;
  for (const auto& bn : cfg.benches) {
    const benchmark_def& b = *bench::find_benchmark(bn);
    std::string size = cfg.size ? *cfg.size
                       : cfg.sizes == run_config::size_kind::small ? b.small_size
                       : cfg.sizes == run_config::size_kind::paper ? b.paper_size
                                                                   : b.default_size;
    std::unique_ptr<bench::problem> p;
    try {
      p = b.prepare(size);  // computes the serial reference
    } catch (const bench::size_error& e) {
      usage_error(e.what());
    }
    if (!started) {  // after the first size was found good: a bad one is the run's only output
      started = true;
      open_json();
      // Virtual time does not depend on the host's cores: no round trip for a simulated run.
      if (!cfg.simulated) c2c_best = bench::core_to_core_round_trip_ns();
    }
    double serial_s = 0;
    std::map<std::pair<std::string, unsigned>, double> time_of;  // this round's, by variant and workers
    std::vector<measurement> all;  // every round's, for the summary
    int round = 0;                 // 0 while running a single round
    // The heading (and a round's line) with the first row under it: a configuration the runtime refuses
    // (a simulated topology without caches) throws before it, and is then the run's only output.
    int round_due = 0;
    auto head = [&] {
      if (!headed) {
        headed = true;
        if (c2c_best >= 0) std::printf("core-to-core round trip of a cache line: %.0f ns\n", c2c_best);
        print_header();
      }
      if (round_due) std::printf("round %d of %d\n", round_due, cfg.rounds);
      round_due = 0;
    };
    auto emit = [&](measurement& m) {
      head();
      m.round = round;
      if (bn == "heat2d") m.hint_error = cfg.hint_error;  // the one benchmark whose hints it distorts
      if (m.variant == "serial") serial_s = m.median;
      time_of[{m.variant, m.workers}] = m.median;
      const auto ref = time_of.find({bench::ratio_reference(m.variant), m.workers});
      print_row(m, serial_s, ref != time_of.end() ? ref->second : 0);
      if (m.c2c_ns >= 0 && (c2c_best < 0 || m.c2c_ns < c2c_best)) c2c_best = m.c2c_ns;
      m.c2c_best_ns = c2c_best;  // for roost-report's far rule: the opening measurement is in no line
      if (bench::far_apart(m.c2c_ns, c2c_best))
        std::printf("  ^ the core-to-core round trip was %.0f ns around this measurement (%.0f ns at best in "
                    "this run): the CPUs were far apart; do not compare this timing with the others\n",
                    m.c2c_ns, c2c_best);
      write_json(bench::to_json(m));
      if (!m.seconds.empty()) all_ok &= m.check_passed;
      ++measured;
      all.push_back(m);
    };
    // Variants that cannot run for this benchmark (here), by reason, in order: left out of the table and
    // named once below it, and in the JSON as "left_out" lines (roost-report does the same with them).
    std::vector<std::pair<std::string, std::vector<std::string>>> left_out;
    auto leave_out = [&](const std::string& v, const std::string& why) {
      auto it = std::find_if(left_out.begin(), left_out.end(), [&](const auto& e) { return e.first == why; });
      if (it == left_out.end()) it = left_out.insert(left_out.end(), {why, {}});
      if (std::find(it->second.begin(), it->second.end(), v) != it->second.end()) return;  // a later round
      it->second.push_back(v);
      write_json("{\"left_out\":true,\"bench\":\"" + bench::json_escape(bn) + "\",\"size\":\"" +
                 bench::json_escape(size) + "\",\"variant\":\"" + bench::json_escape(v) + "\",\"note\":\"" +
                 bench::json_escape(why) + "\"}");
    };
    auto timed = [&](const std::string& v, unsigned w, const std::function<void()>& body) {
      return bench::measure(bn, v, size, w, cfg.warmup, cfg.reps, [&] { p->reset(); }, body,
                            [&] { return p->check(); });
    };
    for (int r = 1; r <= cfg.rounds; ++r) {
      if (cfg.rounds > 1) {
        round = r;
        serial_s = 0;  // the ratios of a round's rows are to that round's serial and ws
        time_of.clear();
        round_due = r;
      }
      for (const auto& v : cfg.variants) {
        const roost::scheduler_info* rs = roost_scheduler(v);
        bool exists = rs ? (rs->available && b.roost) : (peer_fn(b, v) || has_clang_variant(b, v));
        if (exists && cfg.simulated && !rs) {  // only roost's engine runs on the simulated platform
          leave_out(v, "not simulated: only roost's schedulers run on the simulated platform");
          continue;
        }
        if (exists && cfg.simulated && bench::is_traced(v)) {
          leave_out(v, "not simulated: a trace costs no virtual time (+trace measures native runs)");
          continue;
        }
        if (!exists && is_floor(v) && !cfg.variants_named) continue;
        if (!exists) {  // no row (it could never have one), but named below the table: never silently skipped
          leave_out(v, rs && !rs->available ? "scheduler not implemented yet (see README)"
                                            : "no such version of this benchmark");
          continue;
        }
        for (unsigned w : single_threaded(v) ? std::vector<unsigned>{1} : cfg.workers) {
          const double before = cfg.simulated ? -1 : bench::core_to_core_round_trip_ns();
          measurement m;
          if (rs && cfg.simulated) {
            roost::options o = roost_options(*rs, v, w);
            o.platform = "sim";
            o.topology = cfg.topology;
            roost::runtime rt(o);
            bench::current_runtime() = &rt;
            // The misses at every reading of the clock (before and after each repetition, warm-ups first):
            // those of the timed repetitions are the differences from reading 2 * warmup on.
            std::vector<std::pair<long long, long long>> at_clock;
            std::vector<long long> remote_at_clock;
            m = bench::measure(bn, v, size, w, cfg.warmup, cfg.reps, [&] { p->reset(); }, [&] { b.roost(*p); },
                               [&] { return p->check(); },
                               [&] {
                                 at_clock.emplace_back(rt.simulated_misses(2), rt.simulated_misses(3));
                                 remote_at_clock.push_back(rt.simulated_remote_dram());
                                 return rt.virtual_time_ns() * 1e-9;
                               });
            bench::current_runtime() = nullptr;
            // Each count on its own: a topology without an L2 (or an L3) has no count for it (-1), the others do.
            // The counts of the repetition whose time is the median (of the two, with an even number: their
            // mean), so that the row's counts and its time are of the same runs: the mean over every repetition
            // beside the median time paired a cold first run's misses with a warm run's time.
            const std::size_t first_timed = static_cast<std::size_t>(cfg.warmup);
            std::vector<std::size_t> order(m.seconds.size());
            std::iota(order.begin(), order.end(), std::size_t{0});
            std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return m.seconds[a] < m.seconds[b]; });
            std::vector<std::size_t> middle;
            if (!order.empty()) {
              middle.push_back(order[(order.size() - 1) / 2]);
              if (order.size() % 2 == 0) middle.push_back(order[order.size() / 2]);
            }
            double l2 = 0, l3 = 0, remote = 0;
            for (std::size_t k : middle) {
              const std::size_t i = 2 * (first_timed + k);
              if (i + 1 >= at_clock.size()) continue;
              l2 += static_cast<double>(at_clock[i + 1].first - at_clock[i].first);
              l3 += static_cast<double>(at_clock[i + 1].second - at_clock[i].second);
              remote += static_cast<double>(remote_at_clock[i + 1] - remote_at_clock[i]);
            }
            const double n = std::max<double>(1, static_cast<double>(middle.size()));
            if (at_clock.front().first >= 0) m.l2_misses = l2 / n;
            if (at_clock.front().second >= 0) m.l3_misses = l3 / n;
            if (remote_at_clock.front() >= 0) m.remote_dram = remote / n;
            m.topology = cfg.topology;
            m.sim_seed = rt.config().sim_seed;
            m.sim_params = rt.config().sim_params;
            auto count = [](double x) { return x >= 0 ? std::to_string(static_cast<long long>(x + 0.5)) : std::string("none (no such cache)"); };
            const std::string which = middle.size() == 2 ? "the mean of the median two, as the time" : "the median one";
            m.note = "virtual time; per timed repetition (" + which + "): L2 misses " + count(m.l2_misses) + ", L3 misses " +
                     count(m.l3_misses) + ", remote DRAM lines " +
                     (m.remote_dram >= 0 ? std::to_string(static_cast<long long>(m.remote_dram + 0.5)) : std::string("none"));
          } else if (rs) {
            const roost::options o = roost_options(*rs, v, w);
            {
              roost::runtime rt(o);
              bench::current_runtime() = &rt;
              m = timed(v, w, [&] { b.roost(*p); });
              bench::current_runtime() = nullptr;
            }
            remove_trace(o);
          } else if (v == "tbb" || v == "tbb-pfor") {
            tbb::global_control gc(tbb::global_control::max_allowed_parallelism, w);
            tbb::task_arena arena(static_cast<int>(w));
            bench::variant_fn fn = peer_fn(b, v);
            m = timed(v, w, [&] { arena.execute([&] { fn(*p); }); });
          } else if (single_threaded(v)) {
            bench::variant_fn fn = peer_fn(b, v);
            m = timed(v, w, [&] { fn(*p); });
          } else if (v.rfind("omp-gcc", 0) == 0) {
            omp_set_dynamic(0);
            omp_set_num_threads(static_cast<int>(w));
            bench::variant_fn fn = peer_fn(b, v);
            m = timed(v, w, [&] { fn(*p); });
          } else {
            m = run_omp_clang(bn, size, v, w, cfg.warmup, cfg.reps);
          }
          // Virtual time does not depend on the host's cores: no round trip, so no simulated measurement is
          // flagged far or left out of a round summary for it.
          m.c2c_ns = cfg.simulated ? -1 : std::max(before, bench::core_to_core_round_trip_ns());
          emit(m);
        }
      }
    }
    if (!left_out.empty()) head();
    for (const auto& [why, vs] : left_out) {
      std::string names;
      for (const auto& v : vs) names += (names.empty() ? "" : ", ") + v;
      std::printf("  (%s left out: %s: %s)\n", bn.c_str(), why.c_str(), names.c_str());
    }
    if (cfg.rounds > 1) {
      const bench::round_summary s = bench::summarize_rounds(all, cfg.rounds, c2c_best);
      bench::print_round_summary(bn, size, s);
      write_json(bench::round_summary_json(bn, size, s));
    }
  }
  // Every variant asked for was left out of every benchmark (a peer on the simulated platform, a version a
  // benchmark lacks): an empty table is no result, so the status says so (an outside-user campaign: 0).
  if (measured == 0) {
    std::fprintf(stderr, "roost-bench: nothing was measured: every variant --variants names was left out of "
                         "every benchmark --bench names (the reasons are below each table)\n");
    return 2;
  }
  return all_ok ? 0 : 1;
}

void list() {
  std::printf("benchmarks: name, seed, default / small (tests) / paper size\n");
  for (const auto& b : bench::registry())
    std::printf("  %-13s %-9s %-13s / %-9s / %-13s %s\n", b.name, b.seed, b.default_size, b.small_size, b.paper_size, b.what);
  std::printf("variants:\n  serial             the plain program\n");
  for (const auto& s : roost::schedulers())
    std::printf("  %-18s roost: %s%s\n", s.name, s.summary, s.available ? "" : "  [not implemented yet]");
  std::printf("  tbb                oneTBB task_group\n"
              "  tbb-pfor           oneTBB parallel_for (affinity_partitioner; simple_partitioner in pfor) (loop-shaped benchmarks)\n"
              "  omp-gcc            OpenMP tasks, GCC libgomp\n"
              "  omp-gcc-static     OpenMP parallel for schedule(static), libgomp\n"
              "  omp-gcc-dynamic    OpenMP parallel for schedule(dynamic), libgomp\n"
              "  omp-clang[-static|-dynamic]  the same sources built by clang against LLVM libomp\n"
              "  floor-help         fib only, 1 worker: the least a help-first spawn costs here (no runtime);\n"
              "                     fib-invoke: a two-way join with Lace's task slots in the deque\n"
              "  floor-switch       fib only, 1 worker: a work-first spawn with two stack switches, nothing else\n"
              "  floor-call         fib only, 1 worker: the least a work-first spawn costs here (the child called on\n"
              "                     another stack, the parent's context saved for a thief: roost's design)\n"
              "  floor-linked       fib and fib-invoke, 1 worker: floor-help with the deque's private part a list linked\n"
              "                     through the frames, no index to count (issue #25)\n"
              "  floor-erased       fib-invoke, 1 worker: floor-linked's join calling the pushed half through the\n"
              "                     function its frame holds, as a join that does not know the child's type must\n"
              "  floor-value        fib-invoke and fib-join, 1 worker: a join that returns both results (Rayon's join,\n"
              "                     roost::join's floor), the pushed\n"
              "                     closure copied into the deque's slot (Lace's task slots), the head in memory\n"
              "  floor-bare         fib-invoke, 1 worker: parallel_invoke's shape with a join that does only a push and\n"
              "                     a pop (a global array and head, no room or request test): the least a join of\n"
              "                     that shape costs\n");
}

}  // namespace

// Buffers follow ROOST_DATA_DISTRIBUTION (seed 002 §3): fine and coarse through roost::numa_alloc, a
// buffer's parts each placed whole under coarse; standard keeps the default allocator.
void place_buffers() {
  try {
    (void)roost::default_distribution();
  } catch (const roost::config_error& e) {
    usage_error(e.what());
  }
  bench::current_buffer_placement() = {
      [](std::size_t bytes, std::size_t parts) -> void* {
        const roost::distribution d = roost::default_distribution();
        if (d == roost::distribution::standard) return nullptr;
        const std::size_t pages = (bytes + 4095) / 4096;
        return roost::numa_alloc(bytes, d, std::max<std::size_t>(1, std::min(parts, pages)));
      },
      [](void* p) { roost::numa_free(p); }};
}

namespace bench {
int preempt_cost(int count);                          // driver/preempt.cpp
int preempt_barrier(unsigned workers, double bound_s);
int preempt_timers(int rounds);
int preempt_overhead(int rounds, std::vector<std::string> benches, std::vector<std::string> variants,
                     std::vector<unsigned> workers, const size_choice& size);
int trace_overhead(int rounds, std::vector<std::string> benches, std::vector<std::string> variants,  // trace_overhead.cpp
                   std::vector<unsigned> workers, const size_choice& size);
}  // namespace bench

int bench_main(int argc, char** argv) {
  run_config cfg;
  cfg.run_id = std::to_string(static_cast<long long>(std::time(nullptr))) + "-" + std::to_string(static_cast<long>(::getpid()));
  place_buffers();
  std::vector<std::string> args(argv + 1, argv + argc);
  auto value = [&](std::size_t& i) -> std::string {
    if (i + 1 >= args.size()) usage_error(args[i] + " needs a value");
    return args[++i];
  };
  auto to_int = [](const std::string& opt, const std::string& v, int lo, long hi = 100000) {
    char* end = nullptr;
    long x = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end || x < lo || x > hi)
      usage_error(opt + " '" + v + "': expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
    return static_cast<int>(x);
  };
  // The mode (at most one of --list, --demo and the measurement modes; none: the benchmark table) and every
  // flag given, so that a flag the mode does not read is an error, not silently dropped.
  std::string mode;
  int mode_count = 0;
  std::vector<std::string> given;
  auto set_mode = [&](const std::string& m, int count = 0) {
    if (!mode.empty()) usage_error(mode + " and " + m + ": pick one");
    mode = m;
    mode_count = count;
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--", 0) == 0) {
      // A flag given twice: the last one won without a word (--bench fib --bench nqueens ran nqueens alone).
      // The hint on commas only for the flags that take a list (it was given for --reps and --json too).
      if (std::find(given.begin(), given.end(), a) != given.end())
        usage_error(a + " is given twice; give it once" +
                    (a == "--bench" || a == "--variants" || a == "--workers" ? " (a list takes commas: " + a + " A,B)"
                                                                            : std::string()));
      given.push_back(a);
    }
    if (a == "--list") set_mode(a);
    else if (a == "--preempt-cost") set_mode(a, to_int(a, value(i), 10));
    else if (a == "--preempt-barrier") set_mode(a, to_int(a, value(i), 1, roost::max_workers));
    else if (a == "--preempt-timers" || a == "--preempt-overhead" || a == "--trace-overhead") set_mode(a, to_int(a, value(i), 1));
    else if (a == "--demo") set_mode(a);
    else if (a == "--bench") cfg.benches = split(a, value(i));
    else if (a == "--variants") {
      cfg.variants = split(a, value(i));
      cfg.variants_named = true;
    }
    else if (a == "--workers") {
      cfg.workers.clear();
      for (auto& w : split(a, value(i))) cfg.workers.push_back(static_cast<unsigned>(to_int("--workers", w, 1, roost::max_workers)));
    } else if (a == "--size") cfg.size = value(i);
    else if (a == "--small" || a == "--paper") {
      const auto kind = a == "--small" ? run_config::size_kind::small : run_config::size_kind::paper;
      if (cfg.sizes != run_config::size_kind::normal && cfg.sizes != kind)
        usage_error("--small and --paper: pick one size set");
      cfg.sizes = kind;
    }
    else if (a == "--reps") cfg.reps = to_int("--reps", value(i), 1);
    else if (a == "--warmup") cfg.warmup = to_int("--warmup", value(i), 0);
    else if (a == "--rounds") cfg.rounds = to_int("--rounds", value(i), 1);
    else if (a == "--json") {
      cfg.json = value(i);
      if (cfg.json.empty()) usage_error("--json '': expected a file path to append the results to");
    }
    else if (a == "--platform") {
      const std::string given = value(i), v = platform_word(given);
      if (v != "native" && v != "sim") usage_error("--platform '" + given + "': expected native or sim");
      cfg.simulated = v == "sim";
    } else if (a == "--topology") {
      cfg.topology = value(i);
      if (cfg.topology.empty())  // not "missing" below, nor silently ignored natively
        usage_error("--topology '': empty; give the machine to simulate, an hwloc synthetic description with "
                    "cache sizes or an hwloc XML path (e.g. \"pack:4 l3:1(size=6MiB) l2:4(size=512KiB) core:1 pu:1\")");
    }
    else if (a == "--hint-error") {
      std::string v = value(i);
      auto colon = v.find(':');
      std::string kind = v.substr(0, colon);
      char* end = nullptr;
      double alpha = colon == std::string::npos ? -1 : std::strtod(v.c_str() + colon + 1, &end);
      const bool no_alpha = colon == std::string::npos || colon + 1 == v.size();  // "det:" read as 0
      if ((kind != "det" && kind != "rand") || no_alpha || !(alpha >= 0 && alpha <= 1) || (end && *end))
        usage_error("--hint-error '" + v + "': expected det:ALPHA or rand:ALPHA with ALPHA from 0 to 1");
      bench::current_hint_error() = {kind == "det" ? bench::hint_error::kind::deterministic
                                                   : bench::hint_error::kind::random, alpha};
      cfg.hint_error = v;
    }
    else if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else usage_error("unknown argument '" + a + "'");
  }
  // What each mode reads; the benchmark table (no mode) and --demo read every flag but the modes.
  const bool workers_named = std::find(given.begin(), given.end(), "--workers") != given.end();
  const bool reps_named = std::find(given.begin(), given.end(), "--reps") != given.end();
  if (!mode.empty() && mode != "--demo") {
    std::vector<std::string> reads;  // besides the mode itself
    if (mode == "--preempt-overhead" || mode == "--trace-overhead")
      reads = {"--bench", "--variants", "--workers", "--size", "--small", "--paper", "--hint-error"};
    std::string takes;
    for (const auto& x : reads) takes += (takes.empty() ? "; it takes " : ", ") + x;
    for (const auto& f : given)
      if (f != mode && std::find(reads.begin(), reads.end(), f) == reads.end())
        usage_error(f + " does not apply to " + mode + (takes.empty() ? ", which takes no other flag" : takes));
  }
  // The platform is roost-bench's own flag: the environment's would run the roost rows simulated on a
  // machine nobody named, in a table of native times.
  if (const char* p = std::getenv("ROOST_PLATFORM"); p && platform_word(p) != "native")
    usage_error(std::string("ROOST_PLATFORM='") + p +
                "': roost-bench picks the platform with --platform (and the simulated machine with --topology); "
                "unset ROOST_PLATFORM");
  // Simulated rows run on --topology's machine; the environment's would otherwise be dropped without a word.
  if (const char* t = std::getenv("ROOST_TOPOLOGY"); t && *t && cfg.simulated)
    std::fprintf(stderr, "roost-bench: ROOST_TOPOLOGY='%s' is not read by the simulated rows: they run on --topology's "
                 "machine\n", t);
  if (mode == "--list") {
    list();
    return 0;
  }
  if (mode == "--preempt-cost") return bench::preempt_cost(mode_count);
  if (mode == "--preempt-barrier") return bench::preempt_barrier(static_cast<unsigned>(mode_count), 10.0);
  if (mode == "--preempt-timers") return bench::preempt_timers(mode_count);
  // Checks every mode shares, before the overhead modes return.
  if (cfg.size && cfg.sizes != run_config::size_kind::normal) usage_error("--size and --small or --paper: pick one");
  // Only heat2d's task groups take distorted_weight (heat2d.hpp); heat2d-pfor's loops have no hints.
  if (bench::current_hint_error().k != bench::hint_error::kind::none && !cfg.benches.empty() &&
      std::find(cfg.benches.begin(), cfg.benches.end(), "heat2d") == cfg.benches.end())
    usage_error("--hint-error distorts heat2d's work hints; none of the benchmarks named has them");
  const bench::size_choice sizes{cfg.size.value_or(""), cfg.sizes == run_config::size_kind::small
                                                           ? bench::size_choice::set::small
                                                       : cfg.sizes == run_config::size_kind::paper
                                                           ? bench::size_choice::set::paper
                                                           : bench::size_choice::set::normal};
  if (mode == "--preempt-overhead")
    return bench::preempt_overhead(mode_count, cfg.benches,
                                   cfg.variants_named ? cfg.variants : std::vector<std::string>{},
                                   workers_named ? cfg.workers : std::vector<unsigned>{}, sizes);
  if (mode == "--trace-overhead" && std::getenv("ROOST_TRACE") && *std::getenv("ROOST_TRACE"))
    usage_error(std::string("--trace-overhead measures a trace against untraced runs, but ROOST_TRACE='") +
                std::getenv("ROOST_TRACE") + "' traces every runtime; unset ROOST_TRACE");
  if (mode == "--trace-overhead")
    return bench::trace_overhead(mode_count, cfg.benches,
                                 cfg.variants_named ? cfg.variants : std::vector<std::string>{},
                                 workers_named ? cfg.workers : std::vector<unsigned>{}, sizes);
  const bool demo = mode == "--demo";
  if (demo) {
    if (cfg.benches.empty()) cfg.benches = {"fib", "fib-invoke", "heat", "heat-ub", "heat2d", "heat2d-pfor", "matmul"};
    if (!reps_named) cfg.reps = 3;
    if (cfg.json.empty()) {
      if (std::system("mkdir -p out") != 0) usage_error("cannot create out/");
      cfg.json = "out/bench.jsonl";
      cfg.fresh_json = true;  // emptied when the first size is found good: a refused run leaves it as it was
    }
  }
  if (!cfg.json.empty()) {
    // The runtime's own files must not be the results file: ROOST_TRACE=FILE with --json FILE left a binary
    // trace where the results were (and wiped those already there), with exit status 0. The runtime numbers
    // later runtimes' files FILE.1, FILE.2 and writes FILE.json beside a trace: those are refused too.
    // ROOST_CATS_PROFILE too: each cats runtime rewrites its profile, and wiped the rows before it. Paths are
    // made absolute first: weakly_canonical leaves a relative path with no existing prefix ("x.jsonl", not yet
    // written) relative, and ROOST_TRACE=x.jsonl with --json ./x.jsonl passed (an outside-user campaign).
    namespace fs = std::filesystem;
    // Each step's error kept: the second call clears the code the first set (a deleted working directory).
    const auto resolved = [](const char* path, std::error_code& ec) {
      std::error_code absolute_ec;
      const fs::path p = fs::absolute(path, absolute_ec);
      const fs::path r = absolute_ec ? fs::path() : fs::weakly_canonical(p, ec);
      if (absolute_ec) ec = absolute_ec;
      return r;
    };
    std::error_code ec;
    const fs::path mine = resolved(cfg.json.c_str(), ec);
    for (const char* var : {"ROOST_TRACE", "ROOST_SIM_REPORT", "ROOST_CATS_PROFILE"}) {
      const char* value = std::getenv(var);
      if (!value || !*value || ec) continue;
      std::error_code ec2;
      const std::string theirs = resolved(value, ec2).string();
      if (ec2) continue;
      // The file itself, or a later runtime's FILE.N; for a trace also FILE.json and FILE.N.json beside it.
      const auto is_theirs = [&](const std::string& m) {
        if (m == theirs) return true;
        return m.size() > theirs.size() + 1 && m.compare(0, theirs.size(), theirs) == 0 && m[theirs.size()] == '.' &&
               std::all_of(m.begin() + static_cast<std::ptrdiff_t>(theirs.size()) + 1, m.end(),
                           [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
      };
      const std::string m = mine.string();
      bool clash = is_theirs(m);
      if (!clash && std::strcmp(var, "ROOST_TRACE") == 0 && m.size() > 5 && m.compare(m.size() - 5, 5, ".json") == 0)
        clash = is_theirs(m.substr(0, m.size() - 5));
      if (clash)
        usage_error(std::string("--json '") + cfg.json + "' is where " + var + "='" + value +
                    "' writes (the runtime's own file, or one it numbers or writes beside it); give the results "
                    "another file");
    }
  }
  if (cfg.benches.empty())
    for (const auto& b : bench::registry()) cfg.benches.push_back(b.name);
  if (cfg.variants.empty()) cfg.variants = all_variants();
  for (const auto& b : cfg.benches) {
    if (bench::find_benchmark(b)) continue;
    std::string names;
    for (const auto& x : bench::registry()) names += (names.empty() ? "" : ", ") + std::string(x.name);
    usage_error("unknown benchmark '" + b + "'; " +
                roost::detail::did_you_mean(b, bench::registry(), &bench::benchmark_def::name) + "available: " + names);
  }
  for (const auto& v : cfg.variants) {
    bool known = bench::is_traced(v) && roost_scheduler(v);
    for (const auto& x : all_variants()) known |= x == v;
    if (!known) {
      std::string names;
      for (const auto& x : all_variants()) names += (names.empty() ? "" : ", ") + x;
      usage_error("unknown variant '" + v + "'; " + roost::detail::did_you_mean(v, all_variants()) + "valid: " + names +
                  ", and V+trace for a roost scheduler V");
    }
  }
  // ROOST_TRACE traces every runtime, the untraced V of a V+trace row too: its ratio compared traced with
  // traced, while the table says "to V untraced".
  if (const char* t = std::getenv("ROOST_TRACE"); t && *t)
    for (const auto& v : cfg.variants)
      if (bench::is_traced(v))
        usage_error("variant '" + v + "' measures a trace against the untraced run, but ROOST_TRACE='" + t +
                    "' traces every runtime; unset ROOST_TRACE, or leave out the +trace variants");
  if (cfg.size && cfg.benches.size() > 1) usage_error("--size applies to one benchmark; pick it with --bench");
  if (cfg.simulated && cfg.topology.empty())
    usage_error("--platform sim needs --topology, the machine to simulate (e.g. \"pack:4 l3:1(size=6MiB) l2:4(size=512KiB) core:1 pu:1\")");
  if (!cfg.simulated && !cfg.topology.empty()) usage_error("--topology applies to --platform sim (natively, set ROOST_TOPOLOGY)");
  if (cfg.simulated) {
    // Before any row: a topology hwloc refuses, or more workers than its PUs (each simulated worker is one),
    // is the run's only output, not an error after the rows of the counts that fit.
    const unsigned pus = roost::topo::topology::load(cfg.topology, "--topology").num_pus();
    if (!workers_named)  // the default counts (1 and 2): those the machine has
      cfg.workers.erase(std::remove_if(cfg.workers.begin(), cfg.workers.end(), [&](unsigned w) { return w > pus; }),
                        cfg.workers.end());
    for (unsigned w : cfg.workers)
      if (w > pus)
        usage_error("--workers='" + std::to_string(w) + "': simulated, each worker is one of the machine's PUs, and --topology='" +
                    cfg.topology + "' has " + std::to_string(pus) + "; give at most " + std::to_string(pus) +
                    " workers, or a topology with more PUs");
  }
  return run(cfg);
}

// A configuration the runtime refuses (a simulated topology hwloc rejects) or a size a benchmark does not
// take is the user's input: said as one line and exit status 2, as every other bad argument, not an abort.
int main(int argc, char** argv) {
  // Under a file-size limit (ulimit -f) the write that passes it raises SIGXFSZ, whose default ends the
  // process without a word, its table unwritten and --json or the trace cut short (an outside-user
  // campaign). Ignored, the write fails with EFBIG, which the --json, standard output, trace and report
  // paths report as any failed write.
  std::signal(SIGXFSZ, SIG_IGN);
  try {
    const int status = bench_main(argc, argv);
    // The table is the run's output: a stdout that could not take it (a full disk, /dev/full) is a failure,
    // not exit status 0.
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
      std::fprintf(stderr, "roost-bench: cannot write the results to standard output (%s)\n", std::strerror(errno ? errno : EIO));
      return 1;
    }
    return status;
  } catch (const output_error& e) {
    std::fprintf(stderr, "roost-bench: %s\n", e.what());
    return 1;
  } catch (const roost::config_error& e) {
    // The driver sets these fields from its own flags: name the flag the user typed.
    std::string why = e.what();
    for (const auto& [field, flag] : {std::pair<std::string, std::string>{"options::workers", "--workers"},
                                      {"options::topology", "--topology"}})
      for (std::size_t at; (at = why.find(field)) != std::string::npos;) why.replace(at, field.size(), flag);
    usage_error(why);
  } catch (const bench::size_error& e) {
    usage_error(e.what());
  } catch (const std::bad_alloc&) {
    // A size the machine cannot hold (--size 99999999999999 aborted in std::bad_alloc).
    usage_error("the benchmark's data at this --size does not fit in this machine's memory; give a smaller --size");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "roost-bench: %s\n", e.what());
    return 1;
  }
}
