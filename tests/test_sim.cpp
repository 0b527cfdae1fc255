// The simulated platform (ROOST_PLATFORM=sim, src/platform/README.md): the real engine and schedulers on
// sim threads in virtual time. Every scheduler computes what the serial program computes on randomized
// task trees, on topologies up to 256 workers, with each task run exactly once; a seed replays a run bit
// for bit; seeds with cost jitter explore other interleavings (Shuttle's and VOPR's idea: a failure prints
// its seed, and ROOST_SIM_SEED=N with the same topology and parameters replays it).
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <optional>

#include <hwloc.h>
#include <string>
#include <thread>
#include <vector>

#include "adws_checker.hpp"
#include "adws_ml_checker.hpp"
#include "cab_checker.hpp"
#include "cats_checker.hpp"
#include "platform/sim_watch.hpp"
#include "random_tree.hpp"
#include "roost/roost.hpp"
#include "test_util.hpp"

namespace {

using namespace roost_test::tree;
using roost_test::available_schedulers;

roost::options sim_opts(const std::string& sched, const std::string& topology, std::uint64_t seed,
                        const std::string& params = "") {
  roost::options o;
  o.scheduler = sched;
  o.topology = topology;
  o.platform = "sim";
  o.sim_seed = seed;
  if (!params.empty()) o.sim_params = params;
  return o;
}

long fib(int n) { return roost_test::fib_tasks(n); }

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The report without its host part (the simulator's own wall time, the one number that is not virtual).
std::string virtual_part(const std::string& report) { return report.substr(0, report.find("\"host\"")); }

class Sim : public ::testing::TestWithParam<std::string> {};

// Runs random tree `tree` once on rt and checks it against the serial walk: the value or an exception a
// thrower that can reach the root threw, and, where none throws, every task exactly once.
void expect_tree_matches_serial(roost::runtime& rt, std::uint64_t tree) {
  const outcome expect = serial_outcome(tree);
  bool any_throws = false;
  const std::uint64_t nodes = count_nodes(tree, 0, 0, any_throws);
  std::set<std::uint64_t> escaping;
  bool escapes = false;
  collect_escaping(tree, 0, 0, escaping, escapes);
  g_nodes_run.store(0);
  try {
    std::uint64_t got = rt.run([&] { return parallel(tree, 0, 0); });
    ASSERT_FALSE(expect.threw) << "should have thrown";
    ASSERT_EQ(got, expect.value);
    if (!any_throws) ASSERT_EQ(g_nodes_run.load(), nodes) << "a task ran more or less than once";
  } catch (const tree_error& e) {
    ASSERT_TRUE(expect.threw) << "threw from node " << e.node;
    ASSERT_TRUE(escaping.count(e.node)) << "node " << e.node << " cannot reach the root";
  }
}

// Seeded simulated executions of random trees: exact results, every task exactly once, and the seed in
// every failure. Most on small machines, where interleavings differ most per seed; some on 64 and 256
// workers. Jitter on every cost makes each seed's interleaving its own.
TEST_P(Sim, SeededRandomTreesMatchSerial) {
  struct machine {
    const char* topology;
    int seeds;
  };
  // Under TSan a quarter of the sanitizers' seeds: it checks the host side of a run, the same at every seed
  // (5-7 s a scheduler at the sanitizers' count).
  const bool small = roost_test::under_sanitizer(), tsan = roost_test::under_tsan();
  const std::vector<machine> machines = {
      {"pack:1 l3:1(size=1MiB) core:2 pu:1", tsan ? 10 : small ? 40 : 400},
      {"pack:2 l3:1(size=2KiB) core:2 pu:1", tsan ? 10 : small ? 40 : 300},
      {"pack:2 l3:1(size=4KiB) l2:2(size=1KiB) core:2 pu:1", tsan ? 5 : small ? 20 : 200},
      {"pack:4 l3:1(size=6MiB) core:16 pu:1", small ? 4 : 80},
      {"pack:4 l3:1(size=6MiB) core:64 pu:1", small ? 1 : 20},
  };
  int executions = 0;
  for (const machine& m : machines) {
    for (int i = 0; i < m.seeds; ++i) {
      const std::uint64_t seed = 1 + static_cast<std::uint64_t>(i) * 104729 + std::hash<std::string>{}(m.topology) % 1000;
      const std::uint64_t tree = 1000 + seed % 97 * 7919;
      SCOPED_TRACE("replay: ROOST_PLATFORM=sim ROOST_SCHED=" + GetParam() + " ROOST_TOPOLOGY='" + m.topology +
                   "' ROOST_SIM_SEED=" + std::to_string(seed) + " ROOST_SIM_PARAMS=jitter=0.3, tree " +
                   std::to_string(tree));
      roost::runtime rt(sim_opts(GetParam(), m.topology, seed, "jitter=0.3"));
      expect_tree_matches_serial(rt, tree);
      if (HasFatalFailure()) return;
      ++executions;
    }
  }
  RecordProperty("executions", executions);
  std::printf("%s: %d seeded simulated executions\n", GetParam().c_str(), executions);
}

// Many trees, each run twice, one after another on one runtime, on machines of three and four memory
// levels: what a run leaves behind (a worker pulled down, a level not restored, work in a queue no worker
// of the next run looks at) can show up in a later one. A guard, not a replay: adws-ml's stalls of that kind
// (fuzzer seeds 2103, 2151) are out of these trees' reach (it passed before their fixes, also with 10x the
// seeds); tests/CMakeLists.txt replays the fuzzer's seeds.
TEST_P(Sim, RandomTreesOneAfterAnotherOnOneRuntimeMatchSerial) {
  const bool small = roost_test::under_sanitizer();
  const std::vector<std::pair<const char*, unsigned>> machines = {
      {"pack:2 l3:1(size=1MiB) l2:2(size=256KiB) core:1 pu:1", 4},
      {"pack:4 l3:1(size=6MiB) l2:4(size=512KiB) core:1 pu:1", 16},
      {"pack:4 l3:1(size=4MiB) l2:2(size=256KiB) l1:2(size=32KiB) core:1 pu:1", 16},
  };
  // ROOST_TEST_SEED_SCALE=k runs k times as many seeds (a campaign's knob; the default is the CI's).
  const int scale = std::getenv("ROOST_TEST_SEED_SCALE") ? std::max(1, std::atoi(std::getenv("ROOST_TEST_SEED_SCALE"))) : 1;
  const int seeds = (small ? 1 : 4) * scale, trees = small ? 4 : 12;
  for (const auto& [topology, workers] : machines)
    for (int i = 0; i < seeds; ++i) {
      const std::uint64_t seed = 7 + static_cast<std::uint64_t>(i) * 7919;
      roost::options o = sim_opts(GetParam(), topology, seed, "jitter=0.3");
      o.workers = workers;
      roost::runtime rt(o);
      for (int t = 0; t < trees; ++t)
        for (int run = 0; run < 2; ++run) {
          const std::uint64_t tree = 5000 + seed * 31 + static_cast<std::uint64_t>(t) * 104729;
          SCOPED_TRACE("replay: ROOST_PLATFORM=sim ROOST_SCHED=" + GetParam() + " ROOST_TOPOLOGY='" + topology +
                       "' ROOST_WORKERS=" + std::to_string(workers) + " ROOST_SIM_SEED=" + std::to_string(seed) +
                       " ROOST_SIM_PARAMS=jitter=0.3, trees 0.." + std::to_string(t) + ", run " + std::to_string(run));
          expect_tree_matches_serial(rt, tree);
          if (HasFatalFailure()) return;
        }
    }
}

// The same program, topology, seed and parameters give the same report, bit for bit; the report has the
// fields a user reads.
TEST_P(Sim, ASeedReplaysTheRunExactly) {
  const std::string topo = "pack:4 l3:1(size=6MiB) core:4 pu:1";
  std::vector<std::string> reports;
  for (int rep = 0; rep < 2; ++rep) {
    const roost_test::temp_file report_file("roost_sim_report_" + std::string(GetParam()) + std::to_string(rep) + ".json");
    const std::string& path = report_file.path();
    {
      roost::options o = sim_opts(GetParam(), topo, 42, "jitter=0.2");
      o.sim_report = path;
      roost::runtime rt(o);
      for (int i = 0; i < 3; ++i) ASSERT_EQ(rt.run([] { return fib(14); }), 377);
    }
    reports.push_back(slurp(path));
  }
  EXPECT_EQ(virtual_part(reports[0]), virtual_part(reports[1]));
  for (const char* key : {"\"virtual_time_ns\"", "\"steals\"", "\"same_cache\"", "\"other_socket\"", "\"busy_ns\"",
                          "\"idle_ns\"", "\"seed\": 42", "\"runs\": 3", "\"host\"", "\"wall_s\""})
    EXPECT_NE(reports[0].find(key), std::string::npos) << key << " missing from\n" << reports[0];
}

// Lazy settlement (sim_platform::on_touch_deferred) changes nothing but this machine's time: with cost jitter,
// on a NUMA machine whose caches the data overflows, with long touches (posted), short ones (walked at
// once), writes that invalidate other cores' copies, nested groups and several runs, the report is the one
// that charging every touch at once gives, to the bit. The report's host part says that touches were
// posted and that floors let other workers run first (so the lazy path ran).
TEST_P(Sim, LazySettlementGivesTheReportOfSettlingAtTheTouch) {
  const std::string topo = "pack:4 [numa(memory=1GiB)] l3:1(size=256KiB) l2:2(size=32KiB) core:1 pu:1";
  std::vector<double> data(1 << 18);  // 2 MiB
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<double>(i % 7);
  const std::size_t blocks = 128, block = data.size() / blocks;
  for (std::uint64_t seed : {5u, 6u}) {
    std::vector<std::string> reports;
    for (const char* settle : {"lazy", "at_touch"}) {
      const roost_test::temp_file report_file("roost_sim_lazy_" + std::string(GetParam()) + settle + ".json");
      {
        roost::options o = sim_opts(GetParam(), topo, seed, std::string("jitter=0.3,settle=") + settle);
        o.sim_report = report_file.path();
        roost::runtime rt(o);
        for (int run = 0; run < 3; ++run) {
          const double sum = rt.run([&] {
            std::vector<double> part(blocks);
            roost::parallel_for(std::size_t{0}, blocks, std::size_t{1}, [&](std::size_t lo, std::size_t hi) {
              for (std::size_t k = lo; k < hi; ++k) {
                double* b = data.data() + k * block;
                roost::touch(b, block * sizeof(double), k % 3 ? roost::access::read : roost::access::read_write);
                roost::touch(data.data() + (k * 7919) % (data.size() - 8), 5 * sizeof(double), roost::access::write);
                roost::task_group g;  // nested: a short touch and a little work in a child
                g.run([&, k] { roost::touch(b, 3 * sizeof(double), roost::access::read); roost::compute(50 + k); });
                double s = 0;
                for (std::size_t j = 0; j < block; ++j) s += b[j];
                part[k] = s;
                g.wait();
              }
            });
            double total = 0;
            for (double p : part) total += p;
            return total;
          });
          double expect = 0;
          for (double v : data) expect += v;
          ASSERT_EQ(sum, expect);
        }
      }
      reports.push_back(slurp(report_file.path()));
    }
    SCOPED_TRACE("seed " + std::to_string(seed));
    EXPECT_EQ(virtual_part(reports[0]), virtual_part(reports[1]));
    const auto host_count = [](const std::string& report, const std::string& key) {
      const std::size_t at = report.find("\"" + key + "\": ");
      return at == std::string::npos ? -1L : std::strtol(report.c_str() + at + key.size() + 4, nullptr, 10);
    };
    EXPECT_GT(host_count(reports[0], "touches_posted"), 0) << reports[0];
    EXPECT_GT(host_count(reports[0], "touches_settled_later"), 0) << reports[0];
    EXPECT_EQ(host_count(reports[1], "touches_posted"), 0) << reports[1];
  }
}

namespace {
// One run of eight tasks, each of which catches its own exception, spawns and waits inside the handler (other
// sim threads run meanwhile, and catch theirs), then rethrows it: `caught` counts the exceptions caught back,
// `wrong` those that were another task's.
void run_tasks_rethrowing_across_a_wait(roost::runtime& rt, std::atomic<int>& caught, std::atomic<int>& wrong) {
  rt.run([&] {
    roost::task_group g;
    for (int k = 0; k < 8; ++k)
      g.run([k, &wrong, &caught] {
        try {
          try {
            throw k;
          } catch (int) {
            EXPECT_EQ(fib(9), 34);  // spawns and waits while this exception is being handled
            throw;
          }
        } catch (int got) {
          caught.fetch_add(1);
          if (got != k) wrong.fetch_add(1);
        }
      });
    g.wait();
  });
}
}  // namespace

// A runtime made on one thread and run from others (run() from several threads is serialised, user-guide.md),
// and destroyed on yet another: every switch between sim threads carries the exception state of the thread
// that runs them. Each task catches its own exception, spawns and waits inside the handler (other sim threads
// run meanwhile, and catch theirs), then rethrows it. The sim platform had kept the maker's state: the tasks'
// exceptions were mixed up ("terminate called without an active exception", a caught exception freed twice)
// and the maker's thread-local state was written from the running thread (an outside-user campaign).
TEST_P(Sim, ARuntimeRunFromOtherThreadsThanItsMakerKeepsEachTasksExceptions) {
  std::unique_ptr<roost::runtime> rt =
      std::make_unique<roost::runtime>(sim_opts(GetParam(), "pack:2 l3:1(size=1MiB) l2:2(size=256KiB) core:1 pu:1", 3));
  std::atomic<int> wrong{0}, caught{0};
  for (int round = 0; round < 4; ++round) std::thread([&] { run_tasks_rethrowing_across_a_wait(*rt, caught, wrong); }).join();
  std::thread([&] { rt.reset(); }).join();
  EXPECT_EQ(caught.load(), 32);
  EXPECT_EQ(wrong.load(), 0);
}

// The same with the maker's own thread taking turns with another one that lives on: the workers' exception
// state had stayed the first driver's (engine_base.cpp, sim_thread_locals), so the runs on the other thread
// mixed the tasks' exceptions up with the maker's thread's ("terminate called without an active exception"
// under every scheduler at two workers and more), and a runtime destroyed after its last driver ended wrote
// that thread's freed memory (an outside-user campaign). The test above, whose drivers are short-lived threads
// that glibc gives the same stack, did not see it.
TEST_P(Sim, ARuntimeRunInTurnsByItsMakerAndAnotherThreadKeepsEachTasksExceptions) {
  roost::runtime rt(sim_opts(GetParam(), "pack:2 l3:1(size=1MiB) core:2 pu:1", 5));
  std::atomic<int> wrong{0}, caught{0};
  const auto one_run = [&] { run_tasks_rethrowing_across_a_wait(rt, caught, wrong); };
  one_run();  // the maker's thread starts the workers
  std::thread([&] {
    one_run();
    one_run();
  }).join();
  one_run();
  EXPECT_EQ(caught.load(), 32);
  EXPECT_EQ(wrong.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Schedulers, Sim, ::testing::ValuesIn(available_schedulers()),
                         roost_test::scheduler_test_name);

// The report counts the cache lines the kernels' touches walked through the memory model (a region spanning
// part of a line walks that line), and gives the simulator's speed over them; the summary on stderr too.
TEST(SimReport, CountsTheLinesTouchedAndTheSimulatorsSpeed) {
  static std::vector<unsigned char> data(1 << 20, 1);
  const auto aligned = (reinterpret_cast<std::uintptr_t>(data.data()) + 63) & ~std::uintptr_t{63};
  auto* base = reinterpret_cast<unsigned char*>(aligned);
  const roost_test::temp_file report_file("roost_sim_report_lines.json");
  const std::string& path = report_file.path();
  ::testing::internal::CaptureStderr();
  {
    roost::options o = sim_opts("ws", "pack:2 l3:1(size=1MiB) core:2 pu:1", 7);
    o.sim_report = path;
    roost::runtime rt(o);
    rt.run([&] {
      roost::task_group g;
      g.run([&] { roost::touch(base, 64 * 100); });                       // 100 lines
      g.run([&] { roost::touch(base + 4096 + 32, 64); });                 // straddles 2 lines
      g.run([&] { roost::touch(base + 8192, 64 * 5, roost::access::write); });  // 5 lines
      roost::touch(base + 65536 + 1, 1);                                  // 1 line
      g.wait();
    });
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  const std::string report = slurp(path);
  EXPECT_NE(report.find("\"line_accesses\": 108,"), std::string::npos) << report;
  for (const char* key : {"\"runs_s\"", "\"model_s\"", "\"run_line_accesses_per_s\"", "\"line_accesses_per_s\"",
                          "\"model_line_accesses_per_s\"", "\"model_shards\"", "\"model_host_threads\"", "\"regions_shared\""})
    EXPECT_NE(report.find(key, report.find("\"host\"")), std::string::npos) << key << " missing from the host part of\n"
                                                                             << report;
  // The walks lie inside the runs, the runs inside the runtime's life.
  const auto seconds = [&](const char* key) {
    const std::size_t at = report.find(key, report.find("\"host\""));
    return at == std::string::npos ? -1.0 : std::strtod(report.c_str() + at + std::strlen(key), nullptr);
  };
  const double wall = seconds("\"wall_s\": "), runs = seconds("\"runs_s\": "), model = seconds("\"model_s\": ");
  EXPECT_GT(runs, 0.0) << report;
  EXPECT_LE(runs, wall) << report;
  EXPECT_LE(model, runs) << report;
  EXPECT_NE(err.find("108 line accesses"), std::string::npos) << err;
  EXPECT_NE(err.find("M/s of this machine's time in runs"), std::string::npos) << err;
}

// Simulating this machine (no topology given), the report names it as a synthetic description that loads
// the same machine again: it said "" (an outside-user campaign), and a report could not be replayed.
TEST(SimPlatform, AReportOfThisMachineNamesADescriptionThatLoadsItAgain) {
  auto report_of = [](const std::optional<std::string>& topology, const std::string& name) {
    const roost_test::temp_file report_file(name);
    ::testing::internal::CaptureStderr();
    {
      roost::options o;
      o.platform = "sim";
      if (topology) o.topology = *topology;
      o.sim_report = report_file.path();
      roost::runtime rt(o);
      rt.run([] {});
    }
    ::testing::internal::GetCapturedStderr();
    return slurp(report_file.path());
  };
  auto field = [](const std::string& report, const std::string& key) {
    const std::string open = "\"" + key + "\": \"";
    const std::size_t at = report.find(open);
    if (at == std::string::npos) return std::string("<none>");
    const std::size_t from = at + open.size();
    return report.substr(from, report.find('"', from) - from);
  };
  // A machine hwloc cannot describe as a synthetic text (an asymmetric one) is reported as "", by design.
  {
    hwloc_topology_t h;
    ASSERT_EQ(hwloc_topology_init(&h), 0);
    ASSERT_EQ(hwloc_topology_load(h), 0);
    char text[8192];
    const int n = hwloc_topology_export_synthetic(h, text, sizeof text, 0);
    hwloc_topology_destroy(h);
    if (n <= 0) GTEST_SKIP() << "hwloc cannot describe this machine as a synthetic text";
  }
  const std::string mine = report_of(std::nullopt, "roost_sim_report_this_machine.json");
  const std::string described = field(mine, "topology");
  ASSERT_NE(described, "") << mine;
  ASSERT_NE(described, "<none>") << mine;
  const std::string again = report_of(described, "roost_sim_report_this_machine_again.json");
  EXPECT_EQ(field(again, "topology"), described);
  EXPECT_EQ(field(again, "memory_model"), field(mine, "memory_model"));
}

// The report file is emptied when the runtime is made and written when it ends: a run that never ends (the
// watchdog's abort) left the previous run's report in place, which read as its own (an outside-user campaign).
TEST(SimReport, AnEarlierReportIsGoneOnceTheRuntimeIsMade) {
  const roost_test::temp_file report_file("roost_sim_report_stale.json");
  const std::string& path = report_file.path();
  { std::ofstream(path) << "{\"virtual_time_ns\": 12345}"; }
  ::testing::internal::CaptureStderr();
  {
    roost::options o = sim_opts("ws", "pack:2 l3:1(size=1MiB) core:1 pu:1", 7);
    o.sim_report = path;
    roost::runtime rt(o);
    EXPECT_EQ(slurp(path), "");  // made, not yet ended: no report, and no earlier one
    rt.run([] {});
  }
  ::testing::internal::GetCapturedStderr();
  const std::string report = slurp(path);
  EXPECT_NE(report.find("\"virtual_time_ns\""), std::string::npos) << report;
  EXPECT_EQ(report.find("12345"), std::string::npos) << report;
}

// A simulated runtime that fails to be made (here: a second one tracing while the first does) leaves no
// report file behind; its check had made an empty one, which stayed (an outside-user campaign).
TEST(SimReport, ARuntimeThatFailsToBeMadeLeavesNoReportFile) {
  const roost_test::temp_file trace_a("roost_sim_report_fail_a.trace"), trace_b("roost_sim_report_fail_b.trace");
  const roost_test::temp_file report_a("roost_sim_report_fail_a.json"), report_b("roost_sim_report_fail_b.json");
  ::testing::internal::CaptureStderr();
  {
    roost::options oa = sim_opts("ws", "pack:2 l3:1(size=1MiB) core:1 pu:1", 7);
    oa.trace = trace_a.path();
    oa.sim_report = report_a.path();
    roost::runtime a(oa);
    roost::options ob = oa;
    ob.trace = trace_b.path();
    ob.sim_report = report_b.path();
    EXPECT_THROW(roost::runtime b(ob), roost::config_error);
    struct stat st;
    EXPECT_NE(::stat(report_b.path().c_str(), &st), 0) << "the failed runtime's report file is still there";
    EXPECT_EQ(::stat(report_a.path().c_str(), &st), 0);  // the made runtime's is there, written at its end
    // A file that was there before is this runtime's too: emptied, never left with an earlier run's report.
    { std::ofstream(report_b.path()) << "{\"virtual_time_ns\": 12345}"; }
    EXPECT_THROW(roost::runtime b(ob), roost::config_error);
    EXPECT_EQ(slurp(report_b.path()), "");
  }
  ::testing::internal::GetCapturedStderr();
  EXPECT_NE(slurp(report_a.path()).find("\"virtual_time_ns\""), std::string::npos);
}

// roost::compute charges its operations to a double clock: one call of 10^19 operations pushed it where a few
// ns are below its precision, every later run took 0 ns and the count of operations wrapped (an
// outside-user campaign). More than one call may charge is a usage_error naming the call; the clock and the
// count are left as they were.
// The figures a monitor thread polls while another thread's run() is in flight are those the last run()
// that ended left: they raced with the run's thread and the model's helper thread (TSan, an outside-user
// campaign). A task of the runtime sees them live. The TSan build is the check of the race; here, that the
// polled values only ever take values a run ended with, and grow.
TEST(SimFigures, AnotherThreadReadsThemAsTheLastRunLeftThem) {
  roost::options o = roost_test::opts("ws", 2);
  o.platform = "sim";
  o.topology = "pack:2 l3:1(size=1MiB) core:1 pu:1";
  roost::runtime rt(o);
  EXPECT_EQ(rt.virtual_time_ns(), 0.0);
  EXPECT_EQ(rt.simulated_misses(3), 0);
  EXPECT_EQ(rt.simulated_misses(2), -1);  // no L2 in this machine, from the start
  std::vector<char> data(1 << 18);
  std::vector<double> ends{0.0};
  std::atomic<bool> done{false};
  std::thread runs([&] {
    for (int i = 0; i < 20; ++i) {
      const long long misses_before = rt.simulated_misses(3);
      rt.run([&] {
        roost::parallel_for(std::size_t{0}, data.size(), 4096, [&](std::size_t lo, std::size_t hi) {
          roost::touch(&data[lo], hi - lo, roost::access::write);
        });
        // Live inside a task: the first run's touches missed the cold L3 (256 KiB of it, 4,096 lines).
        if (i == 0) EXPECT_GE(rt.simulated_misses(3), misses_before + 4096);
      });
      ends.push_back(rt.virtual_time_ns());
    }
    done.store(true);
  });
  std::vector<double> seen;
  long long misses = 0;
  while (!done.load()) {
    seen.push_back(rt.virtual_time_ns());
    const long long m = rt.simulated_misses(3);
    EXPECT_GE(m, misses);
    misses = m;
    EXPECT_GE(rt.simulated_remote_dram(), 0);
  }
  runs.join();
  for (std::size_t i = 1; i < seen.size(); ++i) EXPECT_GE(seen[i], seen[i - 1]);
  for (double v : seen) EXPECT_TRUE(std::find(ends.begin(), ends.end(), v) != ends.end()) << v;
  EXPECT_EQ(rt.virtual_time_ns(), ends.back());
}

// From a task, the virtual time moves with the task's own charges (it stood at the last run's end while a
// compute of 10,000 ns went by; an outside-user campaign): a phase of a run can be timed from inside it.
TEST(SimFigures, ATaskSeesTheVirtualTimeMoveWithItsOwnCharges) {
  roost::runtime rt(sim_opts("ws", "pack:1 l3:1(size=1MiB) core:2 pu:1", 1, "op_ns=0.1"));
  for (int i = 0; i < 2; ++i) {
    const double before_run = rt.virtual_time_ns();
    double at_start = 0, after_compute = 0;
    rt.run([&] {
      at_start = rt.virtual_time_ns();
      roost::compute(100000);  // 10,000 ns
      after_compute = rt.virtual_time_ns();
    });
    EXPECT_GE(at_start, before_run);
    EXPECT_GE(after_compute - at_start, 10000.0) << "run " << i;
    EXPECT_LT(after_compute - at_start, 10100.0) << "run " << i;
    EXPECT_GE(rt.virtual_time_ns(), after_compute);
  }
}

TEST(SimCompute, ACountBeyondWhatACallMayChargeIsAUsageError) {
  roost::runtime rt(sim_opts("ws", "pack:2 l3:1(size=1MiB) core:1 pu:1", 1));
  rt.run([] { roost::compute(1000); });
  const double before = rt.virtual_time_ns();
  try {
    rt.run([] { roost::compute(10'000'000'000'000'000'000ull); });
    FAIL() << "10^19 operations were charged";
  } catch (const roost::usage_error& e) {
    roost_test::expect_mentions(e.what(), {"roost::compute(10000000000000000000)", "more than one call may charge"});
  }
  rt.run([] { roost::compute(1000); });
  EXPECT_LT(rt.virtual_time_ns(), before + 1e6);  // the refused call charged nothing
  EXPECT_GT(rt.virtual_time_ns(), before);        // and later ones still count
}

// The cost table alone took the clock past 1e15 ns without a word (task_start_ns=1e15: 3e15 ns, charges of
// 0.3 ns rounded away), and a later compute was blamed for it (an outside-user campaign): a runtime
// operation that would cross the limit ends the process naming its parameter.
TEST(SimComputeDeathTest, ARuntimeOperationPastTheClockLimitNamesItsCost) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        roost::runtime rt(sim_opts("ws", "pack:1 l3:1(size=1MiB) core:2 pu:1", 1, "task_start_ns=1e15,task_end_ns=0.3"));
        rt.run([] {});
      },
      "task_end_ns in the cost table\\) would take sim thread 0's virtual clock from 1000000000000000.0 ns past 1e15");
}

// Each call's limit did not bound their sum: a hundred calls of 1e15 ns left the clock at 1e17, where a
// double's steps are 16 ns, and later charges of 10 ns were lost (an outside-user campaign).
TEST(SimCompute, CallsThatWouldTakeTheClockPast1e15nsAreAUsageError) {
  roost::runtime rt(sim_opts("ws", "pack:1 l3:1(size=1MiB) core:1 pu:1", 1, "op_ns=1e6"));
  rt.run([] { roost::compute(900'000'000); });  // 9e14 ns
  try {
    rt.run([] { roost::compute(200'000'000); });  // 2e14 ns more
    FAIL() << "the clock went past 1e15 ns";
  } catch (const roost::usage_error& e) {
    roost_test::expect_mentions(e.what(), {"roost::compute(200000000)", "past 1e15 ns"});
  }
  const double before = rt.virtual_time_ns();
  rt.run([] { roost::compute(10); });  // 1e7 ns: still counted in full
  EXPECT_GE(rt.virtual_time_ns() - before, 1e7);
}

// The same of a touch: at touch_ns_per_byte=1e15 a touch of 4 KiB charged 4.1e18 ns, and every later cost
// was rounded away (an outside-user campaign). Refused before the model walks it; later touches count.
TEST(SimCompute, ATouchBeyondWhatACallMayChargeIsAUsageError) {
  roost::runtime rt(sim_opts("ws", "pack:2 l3:1(size=1MiB) core:1 pu:1", 1, "touch_ns_per_byte=1e12"));
  static char data[4096];
  rt.run([] { roost::touch(data, 100); });
  const double before = rt.virtual_time_ns();
  try {
    rt.run([] { roost::touch(data, sizeof data); });
    FAIL() << "a touch of 4.1e15 ns was charged";
  } catch (const roost::usage_error& e) {
    roost_test::expect_mentions(e.what(), {"roost::touch(", "touch_ns_per_byte=1e+12", "more than one call may charge"});
  }
  rt.run([] { roost::touch(data, 100); });
  EXPECT_LT(rt.virtual_time_ns(), before + 2e14);  // the refused touch charged nothing
  EXPECT_GT(rt.virtual_time_ns(), before);
}

// A touch over host pages whose simulated pages are not consecutive is walked as several runs and charged as
// one stream, which waits for its slowest line in whichever run: it waited for its first run's slowest, so a
// touch whose first run hit the L2 hid the memory latency of the next (two lines cost 12.7 ns, one of them
// alone 100).
TEST(SimTouch, ATouchOfSeveralPageRunsWaitsForTheSlowestLineOfAnyRun) {
  roost::runtime rt(sim_opts("ws", "pack:1 l3:1(size=1MiB) l2:1(size=64KiB) core:1 pu:1", 1,
                             "touch_ns_per_byte=0,dram.local_ns=100,dram.core_bw=10,l2.latency_ns=5,l2.bw=50"));
  const std::size_t page = 4096;
  char* buf = static_cast<char*>(std::aligned_alloc(page, 3 * page));
  ASSERT_NE(buf, nullptr);
  double two_runs = 0, alone = 0;
  rt.run([&] {
    roost::touch(buf + page - 64, 64);  // host page 0: simulated page 0, its last line now in the L2
    roost::touch(buf + 2 * page, 64);   // host page 2: simulated page 1
    const double before = rt.virtual_time_ns();
    roost::touch(buf + page - 64, 128);  // the L2's line, then host page 1's first (simulated page 2: cold)
    two_runs = rt.virtual_time_ns() - before;
    const double before_alone = rt.virtual_time_ns();
    roost::touch(buf + 2 * page + 64, 64);  // a cold line alone
    alone = rt.virtual_time_ns() - before_alone;
  });
  std::free(buf);
  EXPECT_NEAR(alone, 100, 1e-6);
  // The slowest line's 100 ns, the L2's line at 50 B/ns and memory's at 10, but never more than the two
  // lines' latencies, 5 + 100.
  EXPECT_NEAR(two_runs, 105, 1e-6);
  EXPECT_GE(two_runs, alone);
}

// The walk's errors name the call the program made: a row of touch_rows on memory that is not the
// process's was reported as roost::touch's (an outside-user campaign).
TEST(SimTouch, TheErrorsOfTouchRowsNameTouchRows) {
  // Memory nobody maps: 8 KiB, where the kernel never places a mapping that does not ask for the address
  // (below vm.mmap_min_addr, or far below where it places mappings). A hole made with munmap was mapped
  // again by the time the run touched it under TSan (its own mappings fill such holes).
  const std::size_t page = 4096;
  const auto* nowhere = reinterpret_cast<const char*>(std::uintptr_t{2} * page);
  roost::runtime rt(sim_opts("ws", "pack:2 l3:1(size=1MiB) core:1 pu:1", 1));
  try {
    rt.run([&] { roost::touch_rows(nowhere, 64, 2, page, roost::access::read); });
    FAIL() << "a row in unmapped memory was walked";
  } catch (const roost::usage_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("roost::touch_rows", 0), 0u) << e.what();
  }
  try {  // and touch's still name touch
    rt.run([&] { roost::touch(nowhere + page, 64, roost::access::read); });
    FAIL() << "unmapped memory was walked";
  } catch (const roost::usage_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("roost::touch:", 0), 0u) << e.what();
  }
  // Another worker's touch, while a touch_rows lets it run between two rows, names its own call: the name
  // was the simulation's state, which the touch_rows set (a review).
  std::vector<char> rows_data(2000 * page);
  roost::runtime rt2(sim_opts("ws", "pack:2 l3:1(size=1MiB) core:1 pu:1", 1));
  try {
    rt2.run([&] {
      roost::task_group g;
      g.run([&] { roost::touch_rows(rows_data.data(), 64, 2000, page, roost::access::read); });
      g.run([&] { roost::touch(nowhere + page, 64, roost::access::read); });
      g.wait();
    });
    FAIL() << "unmapped memory was walked";
  } catch (const roost::usage_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("roost::touch:", 0), 0u) << e.what();
  }
}

// Whatever setting a runtime fails on, an earlier report at its path is emptied: one that failed before the
// simulation was made (an unknown scheduler, too many workers, a parameter its machine refuses) left the
// earlier report whole (an outside-user campaign: 7 start-up failures of 7).
TEST(SimReport, ARuntimeThatFailsOnAnySettingLeavesNoEarlierReport) {
  const roost_test::temp_file report("roost_sim_report_any_failure.json");
  const auto fails = [&](const char* what, auto&& change) {
    { std::ofstream(report.path()) << "{\"virtual_time_ns\": 12345}"; }
    roost::options o = sim_opts("ws", "pack:2 l3:1(size=1MiB) core:1 pu:1", 7);
    o.sim_report = report.path();
    change(o);
    EXPECT_ANY_THROW(roost::runtime rt(o)) << what;
    EXPECT_EQ(slurp(report.path()), "") << what;
  };
  fails("an unknown scheduler", [](roost::options& o) { o.scheduler = "nope"; });
  fails("an unknown parameter", [](roost::options& o) { o.sim_params = "bogus=1"; });
  fails("more workers than PUs", [](roost::options& o) { o.workers = 5; });
  fails("ways that do not divide the cache", [](roost::options& o) { o.sim_params = "l3.ways=3"; });
  // A trace whose path the report's begins with is another file: the report is emptied all the same.
  const roost_test::temp_file trace("roost_sim_report_any");  // the report's path begins with it
  fails("a parameter, beside a trace named like the report", [&](roost::options& o) {
    o.trace = trace.path();
    o.sim_params = "bogus=1";
  });
  // A report at the path of the cats profile is left as it was: it is the profile's too.
  {
    std::ofstream(report.path()) << "PROFILE";
    roost::options o = sim_opts("ws", "pack:2 l3:1(size=1MiB) core:1 pu:1", 7);
    o.sim_report = report.path();
    o.cats_profile = report.path();
    o.sim_params = "bogus=1";
    EXPECT_ANY_THROW(roost::runtime rt(o));
    EXPECT_EQ(slurp(report.path()), "PROFILE");
  }
  // From the environment too, where options say nothing.
  {
    std::ofstream(report.path()) << "{\"virtual_time_ns\": 12345}";
  }
  {
    roost_test::scoped_env platform("ROOST_PLATFORM", "sim");
    roost_test::scoped_env path("ROOST_SIM_REPORT", report.path().c_str());
    roost_test::scoped_env sched("ROOST_SCHED", "nope");
    EXPECT_THROW(roost::runtime rt, roost::config_error);
  }
  EXPECT_EQ(slurp(report.path()), "");
}

// A runtime made with `o` is refused: its outputs are one file (`taken`: the failure's words otherwise).
static void expect_refused_as_one_file(const roost::options& o, const char* taken) {
  try {
    roost::runtime rt(o);
    ADD_FAILURE() << taken;
  } catch (const roost::config_error& e) {
    EXPECT_NE(std::string(e.what()).find("are one file"), std::string::npos) << e.what();
  }
}

// A report whose path is a link to the trace's file (not written yet: the link dangles) is the trace's file:
// the check that the two are apart followed only links to files that exist, and the report wrote over the
// trace (an outside-user campaign).
TEST(SimReport, AReportLinkedToTheTracesFileIsTheSameFile) {
  const roost_test::temp_file trace("roost_sim_report_link.trace"), link("roost_sim_report_link.json");
  ::unlink(trace.path().c_str());
  ASSERT_EQ(::symlink(trace.path().c_str(), link.path().c_str()), 0);
  roost::options o = sim_opts("ws", "pack:2 l3:1(size=1MiB) core:1 pu:1", 7);
  o.trace = trace.path();
  o.sim_report = link.path();
  expect_refused_as_one_file(o, "a report linked to the trace's path was taken");
  ::unlink(link.path().c_str());
  ASSERT_EQ(::symlink((trace.path() + ".json").c_str(), link.path().c_str()), 0);  // the timeline's, too
  EXPECT_THROW(roost::runtime rt(o), roost::config_error);
  ::unlink(link.path().c_str());
}

// ROOST_TRACE and ROOST_SIM_REPORT at one path are one file, simulated as natively: the error said the report
// was 'FILE.2', a later runtime's name for the trace's FILE, a path the user never gave (an outside-user
// campaign), since the report was numbered before the paths were compared.
TEST(SimReport, ATraceAndAReportGivenOnePathByTheirVariablesAreOneFile) {
  const roost_test::temp_file out("roost_sim_report_one_path");
  for (const char* platform : {"sim", "native"}) {
    roost_test::scoped_env pl("ROOST_PLATFORM", platform);
    roost_test::scoped_env tp("ROOST_TOPOLOGY", "pack:2 l3:1(size=1MiB) core:1 pu:1");
    roost_test::scoped_env tr("ROOST_TRACE", out.path().c_str());
    roost_test::scoped_env rp("ROOST_SIM_REPORT", out.path().c_str());
    try {
      roost::runtime rt;
      FAIL() << platform;
    } catch (const roost::config_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("are one file"), std::string::npos) << platform << ": " << what;
      EXPECT_EQ(what.find(out.path() + ".2"), std::string::npos) << platform << ": " << what;
    }
  }
}

// A report given in code as a link to the file ROOST_TRACE numbers for this runtime (FILE.2, the second
// runtime's) is that file, refused once numbered: compared only as given (FILE against the link), both
// outputs wrote it (a review).
TEST(SimReport, AReportLinkedToTheTracesNumberedFileIsTheSameFile) {
  const roost_test::temp_file trace("roost_sim_report_numbered_link.trace"), link("roost_sim_report_numbered_link.json");
  roost_test::scoped_env tr("ROOST_TRACE", trace.path().c_str());
  {
    roost::runtime first(sim_opts("ws", "pack:2 l3:1(size=1MiB) core:1 pu:1", 7));  // writes FILE
    first.run([] {});
  }
  ::unlink(link.path().c_str());
  ASSERT_EQ(::symlink((trace.path() + ".2").c_str(), link.path().c_str()), 0);  // dangles until FILE.2 is written
  roost::options o = sim_opts("ws", "pack:2 l3:1(size=1MiB) core:1 pu:1", 7);
  o.sim_report = link.path();
  expect_refused_as_one_file(o, "a report linked to the trace's numbered file was taken");
  ::unlink(link.path().c_str());
}

// Nor may the report be a name the trace takes in a later runtime (FILE.2 beside ROOST_TRACE=FILE), or the
// trace one the report takes: the second runtime's trace wrote over the first's report without a word (an
// outside-user campaign). Only where the variables give them (they are numbered); refused at the first
// runtime, natively as simulated.
TEST(SimReport, AReportNamedAsALaterRuntimesTraceIsRefused) {
  const roost_test::temp_file trace("roost_sim_report_numbered.trace");
  const std::string base = trace.path();
  for (const auto& [t, r] : {std::pair{base, base + ".2"}, std::pair{base, base + ".3.json"},
                             std::pair{base + ".2", base}}) {
    for (const char* platform : {"sim", "native"}) {
      roost_test::scoped_env pl("ROOST_PLATFORM", platform);
      roost_test::scoped_env tp("ROOST_TOPOLOGY", "pack:2 l3:1(size=1MiB) core:1 pu:1");
      roost_test::scoped_env tr("ROOST_TRACE", t.c_str());
      roost_test::scoped_env rp("ROOST_SIM_REPORT", r.c_str());
      try {
        roost::runtime rt;
        FAIL() << t << " " << r << " " << platform;
      } catch (const roost::config_error& e) {
        EXPECT_NE(std::string(e.what()).find("gives the output of a later runtime"), std::string::npos) << e.what();
      }
    }
  }
  // A path written with ./ is the same name (a review: ./run beside run.2 passed); names the numbering never
  // gives (0, 1, a leading zero) are no clash.
  {
    const std::string dir = base.substr(0, base.rfind('/') + 1), file = base.substr(base.rfind('/') + 1);
    roost_test::scoped_env pl("ROOST_PLATFORM", "native");
    roost_test::scoped_env tr("ROOST_TRACE", (dir + "./" + file).c_str());
    roost_test::scoped_env rp("ROOST_SIM_REPORT", (base + ".2").c_str());
    EXPECT_THROW(roost::runtime rt, roost::config_error);
  }
  for (const char* suffix : {".0", ".1", ".02"}) {
    roost_test::scoped_env pl("ROOST_PLATFORM", "native");
    roost_test::scoped_env tr("ROOST_TRACE", base.c_str());
    roost_test::scoped_env rp("ROOST_SIM_REPORT", (base + suffix).c_str());
    EXPECT_NO_THROW({ roost::runtime rt; }) << suffix;
    ::unlink((base + ".json").c_str());
  }
  // Set in code they are not numbered: each runtime writes the same two files.
  roost::options o = sim_opts("ws", "pack:2 l3:1(size=1MiB) core:1 pu:1", 7);
  o.trace = base;
  o.sim_report = base + ".2";
  { roost::runtime rt(o); }
  ::unlink((base + ".2").c_str());
  ::unlink((base + ".json").c_str());
}

// ROOST_SIM_REPORT names one file for the process, as ROOST_TRACE does: simulated runtimes made one after
// another (roost-bench's variants) each write their own report, FILE, FILE.2, FILE.3; the last one alone
// was left, written over the others without a word (an outside-researcher campaign).
TEST(SimReport, RuntimesInTurnUnderRoostSimReportEachWriteTheirOwn) {
  const roost_test::temp_file report_file("roost_sim_report_in_turn.json");
  const std::string& path = report_file.path();
  const char* scheds[] = {"ws", "cab", "cats"};
  {
    roost_test::scoped_env env("ROOST_SIM_REPORT", path.c_str());
    for (const char* sched : scheds) {
      roost::runtime rt(sim_opts(sched, "pack:2 l3:1(size=1MiB) core:2 pu:1", 1));
      rt.run([] {});
    }
    roost::runtime native(roost_test::opts("ws", 1));  // writes no report, so takes no number
  }
  const std::string files[] = {path, path + ".2", path + ".3"};
  for (int k = 0; k < 3; ++k) {
    const std::string report = slurp(files[k]);
    EXPECT_NE(report.find("\"scheduler\": \"" + std::string(scheds[k]) + "\""), std::string::npos) << files[k] << ":\n"
                                                                                                    << report;
    std::remove(files[k].c_str());
  }
  EXPECT_FALSE(std::ifstream(path + ".4").good());
}

// A task with two dealt groups open at once, joined in the order it opened them (g0.run; g1.run; g0.wait;
// g1.wait): the first join gave back the second group's node and the second gave back the distribution
// tree's root, and the next iteration hung with no node active (adws and adws-ml on 2 workers; an
// outside-user campaign's fuzzer). The second group is not dealt now. Simulated: a hang ends the process
// with the stall diagnostic, after 5 s of this machine's time without progress.
TEST(SimAdws, TwoDealtGroupsOpenAtOnceJoinInTheOrderTheyOpened) {
  for (const char* sched : {"adws", "adws-ml"})
    for (int order : {0, 1}) {
      roost::runtime rt(sim_opts(sched, "pack:2 l3:1(size=1MiB) core:2 pu:1", 3, "stall_wall_s=5"));
      for (int it = 0; it < 5; ++it) {
        int a = 0, b = 0;
        rt.run([&] {
          roost::task_group g0(8.0), g1(8.0);
          g0.run([&] { a = it; });
          g1.run([&] { b = it + 1; }, 1.0);
          if (order == 0) {
            g0.wait();
            g1.wait();
          } else {
            g1.wait();
            g0.wait();
          }
        });
        EXPECT_EQ(a, it) << sched;
        EXPECT_EQ(b, it + 1) << sched;
      }
    }
}

// dram.sharing=nodes (src/sim/shared_bandwidth.hpp): four streams at once from one node's memory share its
// controller, and those from another node's also its port out and their own node's port in; off (the
// default), each touch is charged as the only stream. Remote latency is local latency here, so only the
// sharing tells the cases apart.
TEST(SimMemory, ConcurrentStreamsShareTheControllerAndTheLinksTheyUse) {
  constexpr std::size_t kBytes = 4 << 20;
  std::vector<char*> bufs;
  for (int k = 0; k < 4; ++k) bufs.push_back(static_cast<char*>(std::aligned_alloc(4096, kBytes)));
  auto per_run_ns = [&](const char* topo, unsigned streams, const char* sharing) {
    const std::string params = std::string("dram.sharing=") + sharing +
                               ",dram.core_bw=6,dram.node_bw=12,link.bw=3,dram.local_ns=100,dram.remote_ns=100,"
                               "l3.shared_bw=0,touch_ns_per_byte=0";
    roost::options o = sim_opts("ws", topo, 1, params);
    o.workers = 4;
    roost::runtime rt(o);
    // Worker 0 touches every buffer first: their pages live on its node.
    rt.run([&] {
      for (char* b : bufs) roost::touch(b, kBytes, roost::access::write);
    });
    auto once = [&] {
      roost::task_group tg;
      for (unsigned k = 0; k < streams; ++k) tg.run([&, k] { roost::touch(bufs[k], kBytes, roost::access::read); });
      tg.wait();
    };
    rt.run(once);  // a warm-up: 4 x 4 MiB do not stay in the 1 MiB L3, every run reads memory
    const double before = rt.virtual_time_ns();
    rt.run(once);
    return rt.virtual_time_ns() - before;
  };
  const char* one_node = "pack:1 [numa(memory=1GiB)] l3:1(size=1MiB) core:4 pu:1";
  const char* four_nodes = "pack:4 [numa(memory=1GiB)] l3:1(size=1MiB) core:1 pu:1";
  for (const char* sharing : {"off", "nodes"}) {
    const double alone = per_run_ns(one_node, 1, sharing);
    const double same_node = per_run_ns(one_node, 4, sharing);
    const double from_node0 = per_run_ns(four_nodes, 4, sharing);
    ASSERT_GT(alone, 0);
    if (std::string(sharing) == "off") {  // every stream as if alone
      EXPECT_NEAR(same_node / alone, 1.0, 0.15) << alone << " " << same_node;
      EXPECT_NEAR(from_node0 / alone, 1.0, 0.15) << alone << " " << from_node0;
    } else {
      // One stream: 65,536 lines at 6 bytes/ns. Four of one node share 12 bytes/ns: the last to start draws
      // 3, twice one's time (the first started pays for none of the others: a little under 2).
      EXPECT_NEAR(same_node / alone, 2.0, 0.3) << alone << " " << same_node;
      // From node 0 to three other nodes: node 0's port out (3 bytes/ns) carries three streams, 1 byte/ns
      // for the last, six times one's time; well above what the controller alone would make of it.
      EXPECT_GT(from_node0 / alone, 3.5) << alone << " " << from_node0;
    }
  }
  for (char* b : bufs) std::free(b);
}

// A plain group opened after a dealt one and joined after it (d(8).run(a); p.run(P); d.wait(); p.wait()),
// where P opens a group of its own: the root's continuation is stolen while P runs, and d's join returns the
// root to its owner, which restores the root's level (DRAM) while P's continuation still lies in the leaf
// level's queue, which nobody at DRAM looked at: every worker asleep (adws-ml, 2 workers; an outside-user
// campaign). The owner now takes its own work below the level it represents. The durations (declared with
// roost::compute) are what make the steal land while P runs; a hang ends the process with the simulator's
// "every simulated worker is blocked".
TEST(SimAdws, APlainGroupJoinedAfterTheDealtGroupOpenedBeforeItCompletes) {
  for (const char* sched : {"adws", "adws-ml"})
    for (std::uint64_t seed : {1, 2, 3}) {
      roost::runtime rt(sim_opts(sched, "pack:1 l3:1(size=32MiB) l2:2(size=512KiB) core:1 pu:1", seed,
                                 "stall_wall_s=5"));
      for (int it = 0; it < 10; ++it) {
        std::atomic<int> done{0};
        rt.run([&] {
          roost::task_group d(8.0), p;
          d.run([&] {
            roost::compute(10);
            done.fetch_add(1);
          });
          p.run([&] {
            roost::task_group q;
            q.run([&] {
              roost::compute(100000);
              done.fetch_add(10);
            });
            q.run([&] { done.fetch_add(100); });
            q.wait();
          });
          d.wait();
          p.wait();
        });
        EXPECT_EQ(done.load(), 111) << sched << " seed " << seed;
      }
    }
}

// Two more shapes of groups joined out of order under adws-ml, each minimised from an outside-user
// campaign's random task trees, each a stall before the fix (every simulated worker blocked):
//  * a plain group's children spawned at DRAM's level, then a later group of the task descends, and the
//    task joins the first group first: its work lay in DRAM's queues while their head represented the lower
//    level (a dealt group whose data fits no cache, one child running parallel_invoke; 6 workers);
//  * two plain groups open at once, joined first-opened first, the second's child long, then a third group
//    (4 workers in 2 caches, stealing on).
TEST(SimAdws, GroupsJoinedOutOfOrderAcrossLevelsComplete) {
  for (std::uint64_t seed : {1, 2, 3}) {
    roost::runtime rt(sim_opts("adws-ml", "pack:1 l3:4(size=4MiB) l2:2(size=256KiB) core:1 pu:1", seed,
                               "stall_wall_s=5"));
    std::atomic<int> ran{0};
    for (int it = 0; it < 5; ++it)
      rt.run([&] {
        roost::task_group p;             // plain
        roost::task_group d(14, 1e12);   // dealt, its data fits no cache
        d.run([&] { ran++; });
        d.run([&] { roost::parallel_invoke([&] { ran++; }, [&] { ran++; }); ran++; }, 100);
        p.run([&] { ran++; });
        d.wait();
        p.wait();
      });
    EXPECT_EQ(ran.load(), 25) << "seed " << seed;
  }
  for (std::uint64_t seed : {1, 2, 3}) {
    roost::options o = sim_opts("adws-ml", "pack:1 l3:2(size=4MiB) core:2 pu:1", seed, "jitter=0.3,stall_wall_s=5");
    o.adws_steal = roost::adws_stealing::on;
    roost::runtime rt(o);
    std::atomic<int> ran{0};
    for (int it = 0; it < 50; ++it)  // it stalled in iterations 17, 19 and 22 of seeds 1-3
      rt.run([&] {
        {
          roost::task_group a, b;
          a.run([&] { ran++; });
          b.run([&] {
            roost::compute(80000);
            ran++;
          });
          a.wait();
          b.wait();
        }
        roost::task_group c;
        c.run([&] { ran++; });
        c.wait();
      });
    EXPECT_EQ(ran.load(), 150) << "seed " << seed;
  }
}

// A task that descends with a later group and then joins an earlier one (p; d(hint, huge); d.run x 2;
// p.run; d.wait; p.wait): the root's continuation is stolen by the head of another package, where p
// descends (moving that head down to its leaves), while d's second child, still at the packages' level,
// deals a parallel_invoke's half to that same head's mailbox there. The head represented the leaves until
// the root joined p, the root waited for d, d for the half: every simulated worker blocked (seed 1) or
// spinning on work no one may take (seeds 2-6; 16 workers, an outside-user campaign's random tree, seed
// 1105). While the task that moved a head down waits behind an older group, the head serves the levels
// above again. A hang ends the process with the simulator's "every simulated worker is blocked" or, when the
// workers spin, the test's timeout.
TEST(SimAdws, AHeadMovedDownServesTheLevelAboveWhileItsTaskWaitsForAnOlderGroup) {
  for (std::uint64_t seed : {1, 2, 3, 4}) {
    roost::runtime rt(sim_opts("adws-ml", "pack:4 l3:1(size=4MiB) l2:2(size=256KiB) l1:2(size=32KiB) core:1 pu:1",
                               seed, "jitter=0.3,stall_wall_s=5"));
    std::atomic<long> ran{0};
    for (int it = 0; it < 3; ++it)
      rt.run([&] {
        roost::task_group p(1.0);
        roost::task_group d(14, 1e12);
        d.run([&] {
          roost::compute(81845);
          ran++;
        });
        d.run_if(
            true,
            [&] {
              roost::parallel_invoke([&] { roost::compute(43157), ran++; }, [&] { roost::compute(79903), ran++; });
              roost::parallel_invoke([&] {
                ran += roost::parallel_reduce(0, 8, std::size_t(1), 0L, [](int lo, int hi) { return long(hi - lo); },
                                              std::plus<long>());
              });
            },
            100);
        p.run([&] { ran++; });
        d.wait();
        p.wait();
      });
    EXPECT_EQ(ran.load(), 3 * (4 + 8)) << "seed " << seed;
  }
}

// The common nesting, a group opened while another of the task is open and joined first (tg.run(left);
// right(); tg.wait() inside a dealt group: every split of parallel_for on the engine's path), stays dealt:
// the leaves keep their workers from one iteration to the next. A rule that dealt one group of a task at a
// time moved 89 of 160 leaves a step (24 dealt; a review).
TEST(SimAdws, NestedGroupsJoinedInOrderStayDealt) {
  for (const char* sched : {"adws", "adws-ml"}) {
    roost::runtime rt(sim_opts(sched, "pack:4 l3:1(size=6MiB) l2:4(size=512KiB) core:1 pu:1", 1));
    constexpr int kLeaves = 160, kSteps = 10;
    std::vector<double> data(std::size_t{kLeaves} * 512);
    std::vector<int> worker_of(kLeaves, -1);
    int moved = 0;
    for (int step = 0; step < kSteps; ++step)
      rt.run([&] {
        roost::parallel_for(0, kLeaves, 1, [&](int lo, int hi) {
          for (int i = lo; i < hi; ++i) {
            roost::touch(&data[std::size_t(i) * 512], 512 * sizeof(double), roost::access::read_write);
            const int w = roost::this_worker_id();
            moved += step > 0 && worker_of[std::size_t(i)] != w;
            worker_of[std::size_t(i)] = w;
          }
        });
      });
    EXPECT_LE(moved, kLeaves * (kSteps - 1) / 4) << sched << ": leaves that changed worker between steps";
  }
}

// Runtimes made at once on two threads take different numbers (each read the count before either added to
// it, and both wrote the same file); one whose making fails gives its number back. Each runtime writes a
// report with its own seed, so a file written twice would show one seed twice and lack another.
TEST(SimReport, RuntimesMadeAtOnceOnTwoThreadsEachWriteTheirOwn) {
  const roost_test::temp_file report_file("roost_sim_report_at_once.json");
  const std::string& path = report_file.path();
  constexpr int kPerThread = 12;
  {
    roost_test::scoped_env env("ROOST_SIM_REPORT", path.c_str());
    {
      roost::runtime first(sim_opts("ws", "pack:2 l3:1(size=1MiB) core:2 pu:1", 1000));
      // Fails after it took a number (more workers than the machine's PUs): gives it back.
      roost::options too_many = sim_opts("ws", "pack:2 l3:1(size=1MiB) core:2 pu:1", 1001);
      too_many.workers = 64;
      EXPECT_THROW(roost::runtime{too_many}, roost::config_error);
    }
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t)
      threads.emplace_back([t] {
        for (int k = 0; k < kPerThread; ++k) {
          roost::runtime rt(sim_opts("ws", "pack:2 l3:1(size=1MiB) core:2 pu:1", static_cast<unsigned>(1 + t * kPerThread + k)));
          rt.run([] {});
        }
      });
    for (auto& th : threads) th.join();
  }
  std::set<std::string> seeds;
  for (int n = 1; n <= 1 + 2 * kPerThread; ++n) {
    const std::string file = n == 1 ? path : path + "." + std::to_string(n);
    const std::string report = slurp(file);
    const std::size_t at = report.find("\"seed\": ");
    ASSERT_NE(at, std::string::npos) << file << ":\n" << report;
    seeds.insert(report.substr(at, report.find_first_of(",\n", at) - at));
    std::remove(file.c_str());
  }
  EXPECT_EQ(seeds.size(), std::size_t{1 + 2 * kPerThread});
  EXPECT_FALSE(std::ifstream(path + "." + std::to_string(2 + 2 * kPerThread)).good());
}

// A report says every parameter its numbers came from: the memory model's too, not only the cost table
// (two reports with dram.local_ns=50, interleave, 2 MiB pages and l3.latency_ns=3 and without showed the
// same params, so neither could be made again from itself; an outside-user campaign).
TEST(SimReport, NamesTheMemoryModelsParameters) {
  const roost_test::temp_file report_file("roost_sim_report_params.json");
  const std::string& path = report_file.path();
  {
    roost::options o = sim_opts("ws", "pack:2 [numa(memory=1GiB)] l3:1(size=1MiB) core:2 pu:1", 7,
                                "dram.local_ns=50,numa_policy=interleave,page_size=2MiB,l3.latency_ns=3,spawn_ns=4");
    o.sim_report = path;
    roost::runtime rt(o);
    rt.run([] {});
  }
  const std::string report = slurp(path);
  const std::size_t at = report.find("\"memory_params\": {");
  ASSERT_NE(at, std::string::npos) << report;
  for (const char* part : {"\"dram.local_ns\": 50", "\"numa_policy\": \"interleave\"", "\"page_size\": 2097152",
                           "\"l3.latency_ns\": 3", "\"preset\": \"", "\"mode\": \"roost\""})
    EXPECT_NE(report.find(part, at), std::string::npos) << part << " in:\n" << report;
  EXPECT_NE(report.find("\"spawn_ns\": 4"), std::string::npos) << report;
}

}  // namespace

namespace {

// The line that replays a seeded execution of the SimPolicies tests; `env` holds the policy's own settings.
std::string replay(const std::string& sched, const std::string& env, const std::string& topology, int seed) {
  return "replay: ROOST_PLATFORM=sim ROOST_SCHED=" + sched + " " + env + (env.empty() ? "" : " ") + "ROOST_TOPOLOGY='" +
         topology + "' ROOST_SIM_SEED=" + std::to_string(seed) + " ROOST_SIM_PARAMS=jitter=0.3";
}

// Each policy's machines: 4 sockets of 4 cores with many seeds, 4 of 16 with few.
struct machine {
  std::string topology;
  unsigned sockets, cores;
  int seeds;
};

}  // namespace

// cab's own invariants (seed 000 §3.3) under seeded interleavings: every intra-socket subtree stays in its
// socket, only head cores start inter-socket tasks, a socket runs one subtree at a time.
TEST(SimPolicies, CabTiersHoldUnderSeededInterleavings) {
  const int seeds = roost_test::under_sanitizer() ? 10 : 200;
  for (int seed = 1; seed <= seeds; ++seed) {
    SCOPED_TRACE(replay("cab", "ROOST_CAB_LEVEL=2", "pack:4 l3:1(size=1MiB) core:4 pu:1", seed));
    roost::options o = sim_opts("cab", "pack:4 l3:1(size=1MiB) core:4 pu:1", static_cast<std::uint64_t>(seed), "jitter=0.3");
    o.cab_level = 2;
    roost::runtime rt(o);
    roost_test::cab::checker chk(2, 4);
    roost::set_task_observer(&chk);
    const long r = rt.run([] { return roost_test::cab::tree(7, 1); });
    roost::set_task_observer(nullptr);
    ASSERT_EQ(r, roost_test::cab::tree_serial(7, 1));
    for (const auto& e : chk.errors) ADD_FAILURE() << e;
    ASSERT_TRUE(chk.errors.empty());
    ASSERT_EQ(chk.leaf_inter_starts, 4L);  // every leaf inter-socket task ran once
    ASSERT_LE(chk.max_active, 1) << "a socket ran two intra-socket subtrees at once";
  }
}

// adws's deterministic allocation (seed 003 §4.2; digest §2.2) under seeded interleavings: without stealing
// every task of a quad tree starts on the first worker of the range the range arithmetic deals it, in every
// iteration, however the workers' clocks interleave.
TEST(SimPolicies, AdwsTasksRunWhereTheRangesSayWithoutStealing) {
  const bool small = roost_test::under_sanitizer();
  const std::vector<machine> machines = {{"pack:4 l3:1(size=1MiB) core:4 pu:1", 4, 4, small ? 10 : 200},
                                         {"pack:4 l3:1(size=6MiB) core:16 pu:1", 4, 16, small ? 2 : 10}};
  const int depth = 3;
  int executions = 0;
  for (const machine& m : machines) {
    std::map<std::string, int> expected;
    roost_test::adws::predict({0, static_cast<double>(m.sockets * m.cores)}, depth, "0", expected);
    for (int seed = 1; seed <= m.seeds; ++seed) {
      SCOPED_TRACE(replay("adws", "ROOST_ADWS_STEAL=false", m.topology, seed));
      roost::options o = sim_opts("adws", m.topology, static_cast<std::uint64_t>(seed), "jitter=0.3");
      o.adws_steal = roost::adws_stealing::off;
      roost::runtime rt(o);
      std::vector<double> out(64, 0.0);
      for (int it = 0; it < 2; ++it) {
        roost_test::adws::recorder rec;
        roost::set_task_observer(&rec);
        rt.run([&] { roost_test::adws::quad(depth, out, 0); });
        roost::set_task_observer(nullptr);
        ASSERT_EQ(rec.worker_of, expected) << "iteration " << it;
        ++executions;
      }
      for (double v : out) ASSERT_EQ(v, 2.0);
    }
  }
  RecordProperty("executions", executions);
}

namespace {
std::vector<unsigned char> g_touched(8 << 20, 1);  // what the simulated kernels below declare they read
}  // namespace

// adws's hierarchical localized stealing (seed 003 §4.2.4; digest §2.3) under seeded interleavings: while
// both halves of the root group run, no worker of one half runs a leaf of the other, though the fast
// quarter's workers idle early; they do steal inside their own half. Random work stealing, under the same
// check, crosses the halves: the check can fail.
TEST(SimPolicies, AdwsStealsStayInsideTheTopmostActiveNode) {
  const bool small = roost_test::under_sanitizer();
  const std::vector<machine> machines = {{"pack:4 l3:1(size=1MiB) core:4 pu:1", 4, 4, small ? 10 : 200},
                                         {"pack:4 l3:1(size=6MiB) core:16 pu:1", 4, 16, small ? 2 : 10}};
  // A leaf's virtual time is its declared bytes (src/platform/README.md): half 0 = a slow quarter and a
  // fast one, half 1 = medium.
  const std::size_t leaf_bytes[2][2] = {{64 << 10, 1 << 10}, {32 << 10, 32 << 10}};
  auto leaf = [&](int h, int q) { roost::touch(g_touched.data() + ((2 * h + q) << 16), leaf_bytes[h][q]); };
  auto run = [&](const std::string& sched, const machine& m, int seed) {
    roost::options o = sim_opts(sched, m.topology, static_cast<std::uint64_t>(seed), "jitter=0.3");
    o.adws_steal = roost::adws_stealing::on;
    roost::runtime rt(o);
    const int leaves = static_cast<int>(m.sockets * m.cores) / 2;  // two a worker in each quarter
    roost_test::adws::half_check chk(rt.workers());
    roost::set_task_observer(&chk);
    rt.run([&] { roost_test::adws::halves_tree(leaves, leaf); });
    roost::set_task_observer(nullptr);
    EXPECT_EQ(chk.leaves, 4 * leaves);
    return std::make_pair(chk.errors, chk.inside);
  };
  int executions = 0;
  for (const machine& m : machines) {
    int inside = 0;
    for (int seed = 1; seed <= m.seeds; ++seed) {
      SCOPED_TRACE(replay("adws", "ROOST_ADWS_STEAL=true", m.topology, seed));
      const auto [errors, in] = run("adws", m, seed);
      for (std::size_t i = 0; i < errors.size() && i < 5; ++i) ADD_FAILURE() << errors[i];
      ASSERT_TRUE(errors.empty()) << errors.size() << " leaves crossed";
      inside += in;
      ++executions;
    }
    EXPECT_GT(inside, 0) << m.topology << ": the fast quarter's workers never stole from the slow one";
    bool ws_crossed = false;
    for (int seed = 1; seed <= 10 && !ws_crossed; ++seed) ws_crossed = !run("ws", m, seed).first.empty();
    EXPECT_TRUE(ws_crossed) << m.topology << ": random work stealing never crossed the halves";
  }
  RecordProperty("executions", executions);
}

// adws-ml (seed 003 ch. 5; digest §3) under seeded interleavings, over more data than all the caches hold
// together (a group that fits them together is aggregated, dealt flat over their cores, and is not what
// this checks). Without stealing, level descent and per-level dealing put every leaf where
// predicted_worker says; with stealing, the leaves running under one cache at any moment never belong to
// more data than the cache holds (one root per cache, §5.3.3). Single-level adws, under the same check,
// breaks it: the check can fail.
TEST(SimPolicies, AdwsMlCachePiecesStayUnderTheirCache) {
  const bool small = roost_test::under_sanitizer();
  struct ml_machine {
    machine m;
    std::size_t capacity, bytes;
  };
  const std::vector<ml_machine> machines = {
      {{"pack:4 l3:1(size=256KiB) core:4 pu:1", 4, 4, roost_test::under_tsan() ? 3 : small ? 10 : 200}, 256 << 10, 2 << 20},
      {{"pack:4 l3:1(size=1MiB) core:16 pu:1", 4, 16, small ? 2 : 10}, 1 << 20, 8 << 20}};
  auto leaf = [](std::size_t lo, std::size_t hi) {
    roost::touch(g_touched.data() + lo, hi - lo);
    return static_cast<long>((hi - lo) / 64);
  };
  int executions = 0;
  for (const auto& [m, capacity, bytes] : machines) {
    const std::size_t n = bytes;  // captured by the lambdas below (clang 14 captures no structured binding)
    for (int seed = 1; seed <= m.seeds; ++seed) {
      {
        SCOPED_TRACE(replay("adws-ml", "ROOST_ADWS_STEAL=false", m.topology, seed));
        roost::options o = sim_opts("adws-ml", m.topology, static_cast<std::uint64_t>(seed), "jitter=0.3");
        o.adws_steal = roost::adws_stealing::off;
        roost::runtime rt(o);
        roost_test::adws_ml::leaf_map lm(n);
        roost::set_task_observer(&lm);
        ASSERT_EQ(rt.run([&] { return roost_test::adws_ml::chunks(0, n, leaf); }), static_cast<long>(n / 64));
        roost::set_task_observer(nullptr);
        ASSERT_EQ(lm.worker_of_leaf.size(), n / roost_test::adws_ml::kLeaf);
        for (const auto& [l, worker] : lm.worker_of_leaf)
          ASSERT_EQ(worker, roost_test::adws_ml::predicted_worker(l, n, m.sockets, m.cores, capacity)) << "leaf " << l;
      }
      {
        SCOPED_TRACE(replay("adws-ml", "ROOST_ADWS_STEAL=true", m.topology, seed));
        roost::options o = sim_opts("adws-ml", m.topology, static_cast<std::uint64_t>(seed), "jitter=0.3");
        o.adws_steal = roost::adws_stealing::on;
        roost::runtime rt(o);
        roost_test::adws_ml::cache_check chk(n, capacity, m.cores);
        roost::set_task_observer(&chk);
        ASSERT_EQ(rt.run([&] { return roost_test::adws_ml::chunks(0, n, leaf); }), static_cast<long>(n / 64));
        roost::set_task_observer(nullptr);
        ASSERT_EQ(chk.leaves, n / roost_test::adws_ml::kLeaf);
        ASSERT_EQ(chk.violations, 0u) << "worst: leaves of a " << chk.worst << "-byte subtree ran under one cache of "
                                      << capacity;
      }
      {
        // The check can fail: single-level adws deals the leaves flat over every core, so a cache's cores
        // run leaves of more data than it holds at the same (virtual) time.
        SCOPED_TRACE(replay("adws", "ROOST_ADWS_STEAL=false", m.topology, seed));
        roost::options o = sim_opts("adws", m.topology, static_cast<std::uint64_t>(seed), "jitter=0.3");
        o.adws_steal = roost::adws_stealing::off;
        roost::runtime rt(o);
        roost_test::adws_ml::cache_check chk(n, capacity, m.cores);
        roost::set_task_observer(&chk);
        ASSERT_EQ(rt.run([&] { return roost_test::adws_ml::chunks(0, n, leaf); }), static_cast<long>(n / 64));
        roost::set_task_observer(nullptr);
        ASSERT_GT(chk.worst, capacity) << "single-level adws kept every cache's leaves within it";
      }
      executions += 3;
    }
  }
  RecordProperty("executions", executions);
}

// cats (seed 000 §3.2) under seeded interleavings: the profiled first iteration finds the leaf inter-socket
// tasks where eq. 1 puts them (leaves of 4 KiB: a subtree of height 4 is the largest that fits the 64 KiB
// cache, so they lie at depth 4), and every later iteration keeps cab's tier rules (seed 000 §3.3) with that
// boundary: each intra-socket subtree stays in its socket, only head cores start inter-socket tasks, a
// socket runs one subtree at a time.
TEST(SimPolicies, CatsTiersHoldAfterTheProfiledIteration) {
  const bool small = roost_test::under_sanitizer();
  const std::vector<machine> machines = {{"pack:4 l3:1(size=64KiB) core:4 pu:1", 4, 4, roost_test::under_tsan() ? 3 : small ? 10 : 200},
                                         {"pack:4 l3:1(size=64KiB) core:16 pu:1", 4, 16, small ? 2 : 10}};
  using roost_test::cats::tree;
  using roost_test::cats::tree_serial;
  int executions = 0;
  for (const machine& m : machines) {
    for (int seed = 1; seed <= m.seeds; ++seed) {
      SCOPED_TRACE(replay("cats", "ROOST_CATS_MIN_INTENSITY=0", m.topology, seed));
      roost::options o = sim_opts("cats", m.topology, static_cast<std::uint64_t>(seed), "jitter=0.3");
      o.cats_min_intensity = 0;  // what is profiled is the tiers, not whether the program is memory-bound
      roost::runtime rt(o);
      ASSERT_EQ(rt.run([] { return tree(8, 1, 4096); }), tree_serial(8, 1));
      const std::string d = rt.describe();
      ASSERT_NE(d.find("bi-tier"), std::string::npos) << d;
      ASSERT_NE(d.find("511 tasks profiled, 16 leaf inter-socket tasks"), std::string::npos) << d;
      for (int it = 0; it < 2; ++it) {
        roost_test::cab::checker chk(4, m.cores);
        roost::set_task_observer(&chk);
        ASSERT_EQ(rt.run([] { return tree(8, 1, 4096); }), tree_serial(8, 1));
        roost::set_task_observer(nullptr);
        for (std::size_t i = 0; i < chk.errors.size() && i < 5; ++i) ADD_FAILURE() << chk.errors[i];
        ASSERT_TRUE(chk.errors.empty()) << "iteration " << it << ": " << chk.errors.size() << " tier rules broken";
        ASSERT_EQ(chk.leaf_inter_starts, 16L);  // every leaf inter-socket task ran once
        ASSERT_LE(chk.max_active, 1) << "a socket ran two intra-socket subtrees at once";
      }
      executions += 3;
    }
  }
  RecordProperty("executions", executions);
}

// cats's homes under seeded interleavings. Leaves of 256 bytes: the whole tree (64 KiB) fits one socket's
// cache, so the seed's rule gives one leaf inter-socket task (the root) for four sockets; cats splits it
// down to the four subtrees at depth 2, one per socket, and deals them by address: the k-th in the k-th
// socket, the same every iteration (a socket's head takes another's homed subtree only while that one is
// busy, and with a subtree each none is).
TEST(SimPolicies, CatsGivesEverySocketASubtreeAndKeepsItThere) {
  const bool small = roost_test::under_sanitizer();
  const std::string topology = "pack:4 l3:1(size=64KiB) core:4 pu:1";
  using roost_test::cats::tree;
  using roost_test::cats::tree_serial;
  int executions = 0;
  for (int seed = 1; seed <= (small ? 5 : 60); ++seed) {
    SCOPED_TRACE(replay("cats", "ROOST_CATS_MIN_INTENSITY=0", topology, seed));
    roost::options o = sim_opts("cats", topology, static_cast<std::uint64_t>(seed), "jitter=0.3");
    o.cats_min_intensity = 0;
    roost::runtime rt(o);
    ASSERT_EQ(rt.run([] { return tree(8, 1, 256); }), tree_serial(8, 1));
    const std::string d = rt.describe();
    ASSERT_NE(d.find("4 leaf inter-socket tasks for a 64 KiB socket cache (3 split so that every socket has one) in "
                     "4 data classes"),
              std::string::npos)
        << d;
    for (int it = 0; it < 3; ++it) {
      roost_test::cab::checker chk(2, 4);
      roost::set_task_observer(&chk);
      ASSERT_EQ(rt.run([] { return tree(8, 1, 256); }), tree_serial(8, 1));
      roost::set_task_observer(nullptr);
      for (std::size_t i = 0; i < chk.errors.size() && i < 5; ++i) ADD_FAILURE() << chk.errors[i];
      ASSERT_TRUE(chk.errors.empty());
      const std::map<std::string, unsigned> homes = {{"0.0.0", 0}, {"0.0.1", 1}, {"0.1.0", 2}, {"0.1.1", 3}};
      ASSERT_EQ(chk.subtree_socket, homes) << "iteration " << it;
    }
    executions += 4;
  }
  RecordProperty("executions", executions);
}

// Simulated, cats ranks its leaves by simulated addresses, which follow the program's touches: by host
// addresses, the homes of a program's subtrees followed where mmap had put each one's buffer, which ASLR
// moves from one process to the next, and a simulated report changed from run to run (an outside-user
// campaign). Two runtimes, whose four buffers the host put in opposite orders, give each subtree one home.
TEST(SimPolicies, CatsHomesDoNotFollowWhereTheHostPutTheData) {
  const std::string topology = "pack:4 l3:1(size=64KiB) core:4 pu:1";
  constexpr std::size_t kBytes = 8 * 1024;
  auto homes_with = [&](bool reversed) {
    char* buf[4];
    for (int k = 0; k < 4; ++k) buf[reversed ? 3 - k : k] = static_cast<char*>(roost::numa_alloc(kBytes));
    roost::options o = sim_opts("cats", topology, 1);
    o.cats_min_intensity = 0;
    std::map<std::string, unsigned> homes;
    {
      roost::runtime rt(o);
      auto program = [&] {
        roost::task_group top;
        for (int half = 0; half < 2; ++half)
          top.run([&, half] {
            roost::task_group g;
            for (int k = 2 * half; k < 2 * half + 2; ++k)
              g.run([&, k] {
                roost::touch(buf[k], kBytes, roost::access::write);
                roost::task_group leaves;
                for (int j = 0; j < 4; ++j)
                  leaves.run([&, k, j] { roost::touch(buf[k] + j * (kBytes / 4), kBytes / 4, roost::access::read); });
                leaves.wait();
              });
            g.wait();
          });
        top.wait();
      };
      rt.run(program);  // profiled
      roost_test::cab::checker chk(2, 4);
      roost::set_task_observer(&chk);
      rt.run(program);
      roost::set_task_observer(nullptr);
      for (std::size_t i = 0; i < chk.errors.size() && i < 5; ++i) ADD_FAILURE() << chk.errors[i];
      homes = chk.subtree_socket;
    }
    for (char* b : buf) roost::numa_free(b);
    return homes;
  };
  const std::map<std::string, unsigned> in_order = homes_with(false), reversed = homes_with(true);
  ASSERT_EQ(in_order.size(), 4u);
  std::set<unsigned> sockets;
  for (const auto& [path, socket] : in_order) sockets.insert(socket);
  EXPECT_EQ(sockets.size(), 4u);  // a socket each
  EXPECT_EQ(in_order, reversed);
}

// cats's profiled iteration (its first run) costs about what ws's run does on a wide machine too: its
// idle workers' rounds of random stealing end at a mode change within an attempt, and the end of the
// iteration waits for those alone. It took 17.8x ws's virtual time on 64 simulated workers and 120x on 256
// (fib(18)), almost all of it after the root had ended, while iteration_end waited to see each worker
// between two rounds of P-1 attempts. Virtual time is a function of the program, topology and seed: no timing.
TEST(SimPolicies, CatsProfiledIterationCostsAboutWhatWsDoesOnManyWorkers) {
  auto virtual_ns = [](const std::string& sched, const std::string& topo) {
    roost::runtime rt(sim_opts(sched, topo, 5));
    EXPECT_EQ(rt.run([] { return fib(16); }), 987);
    return rt.virtual_time_ns();
  };
  // What cats adds to ws's run (the profiling, its mode change at the end: about 2.6 us here) does not grow
  // with the machine. (A ratio to ws's time, 1.5x, no longer says that: ws's own run no longer carries a
  // round of P-1 attempts after its root ended, 5.1 us at 256 workers where it took 28.4.)
  double excess[2];
  int i = 0;
  for (const char* topo : {"pack:4 l3:1(size=6MiB) core:4 pu:1", "pack:4 l3:1(size=6MiB) core:64 pu:1"}) {
    SCOPED_TRACE(topo);
    const double ws = virtual_ns("ws", topo), cats = virtual_ns("cats", topo);
    EXPECT_GT(ws, 0);
    EXPECT_LT(cats, 2 * ws) << "cats's profiled iteration: " << cats << " ns of virtual time, ws: " << ws << " ns";
    excess[i++] = cats - ws;
  }
  EXPECT_LT(excess[1], 2 * excess[0] + 1000) << "cats's excess over ws: " << excess[0] << " ns on 16 workers, "
                                              << excess[1] << " on 256";
}

// A task ends on the worker it last started or resumed on, as the observer and the tracer hear it: a parent
// whose work-first child ended locally on the worker the child had moved to goes on there, and was heard of
// on neither (37 tasks of one ws-help run here; cats and numa natively, now and then; an outside-user
// campaign). Natively too, for the schedulers it was seen under.
TEST_P(Sim, ATaskEndsWhereItLastStartedOrResumed) {
  struct where_check : roost::task_observer {
    std::mutex mu;
    std::map<std::string, int> last;
    long ends = 0, elsewhere = 0;
    std::string first_bad;
    void on_task_start(const roost::task_event& e) override {
      std::lock_guard<std::mutex> lk(mu);
      last[e.path_string()] = e.worker;
    }
    void on_task_resume(const roost::task_event& e) override { on_task_start(e); }
    void on_task_end(const roost::task_event& e) override {
      std::lock_guard<std::mutex> lk(mu);
      ++ends;
      auto it = last.find(e.path_string());
      if (it != last.end() && it->second != e.worker && elsewhere++ == 0)
        first_bad = e.path_string() + " on " + std::to_string(it->second) + ", ends on " + std::to_string(e.worker);
    }
  };
  auto tree = [](auto& self, int depth) -> void {
    if (depth == 0) {
      roost::compute(2000);
      return;
    }
    roost::task_group tg;
    tg.run([&] { self(self, depth - 1); });
    tg.run([&] { self(self, depth - 1); });
    tg.wait();
  };
  std::vector<roost::options> configs{sim_opts(GetParam(), "pack:2 l3:1(size=1MiB) core:4 pu:1", 1)};
  if (GetParam() == "cats" || GetParam() == "numa" || GetParam() == "ws-help") {
    configs.push_back(roost::options{});
    configs.back().scheduler = GetParam();
    configs.back().workers = 3;
  }
  for (const roost::options& o : configs) {
    where_check chk;
    roost::set_task_observer(&chk);
    {
      roost::runtime rt(o);
      for (int i = 0; i < 5; ++i) rt.run([&] { tree(tree, 9); });
    }
    roost::set_task_observer(nullptr);
    EXPECT_GT(chk.ends, 5 * 1000);
    EXPECT_EQ(chk.elsewhere, 0) << o.platform.value_or("native") << ": " << chk.first_bad;
  }
}

// A short run with a steal in it: once the root has ended, its worker leaves at once, not after its round
// of P-1 steal attempts (two tasks of 1 us took 120 us of virtual time at 1,024 workers under ws, and grew
// with the worker count under every random-victim policy; an outside-user campaign).
// Under TSan on 64 workers rather than 256: it took 7-9 s a scheduler there, each worker a fiber whose clock
// TSan keeps, for a property of virtual time that TSan cannot check.
TEST_P(Sim, AShortRunDoesNotGrowWithTheWorkerCount) {
  auto per_run_ns = [&](const char* topo) {
    roost::runtime rt(sim_opts(GetParam(), topo, 3));
    for (int i = 0; i < 20; ++i)
      rt.run([] { roost::parallel_invoke([] { roost::compute(10000); }, [] { roost::compute(10000); }); });
    return rt.virtual_time_ns() / 20;
  };
  const double few = per_run_ns("pack:2 l3:1(size=4MiB) core:2 pu:1");
  const double many = per_run_ns(roost_test::under_tsan() ? "pack:4 l3:1(size=4MiB) core:16 pu:1"
                                                          : "pack:4 l3:1(size=4MiB) core:64 pu:1");
  EXPECT_GT(few, 1000);  // the 1 us task of the worker that ends the run, at the least
  EXPECT_LE(many, 2 * few) << GetParam() << ": " << few << " ns a run at 4 workers, " << many << " at "
                           << (roost_test::under_tsan() ? 64 : 256);
}

// A run ends when its root does: worker 0, back in its loop after the root ended, leaves before it looks
// for work elsewhere. It made a round of P-1 steal attempts first, so an empty run cost 25 us of virtual
// time on 256 simulated workers under ws (4.4 us on 16) against 10 ns on one.
TEST_P(Sim, AnEmptyRunCostsTheSameVirtualTimeOnOneWorkerAndOnMany) {
  auto virtual_ns = [&](const char* topo) {
    roost::runtime rt(sim_opts(GetParam(), topo, 3));
    for (int i = 0; i < 10; ++i) rt.run([] {});
    return rt.virtual_time_ns();
  };
  const double one = virtual_ns("pack:1 l3:1(size=6MiB) core:1 pu:1");
  EXPECT_GT(one, 0);
  // cats's first run profiles (a mode change at its end): a few relaxations more, not a round.
  EXPECT_LE(virtual_ns("pack:4 l3:1(size=6MiB) core:64 pu:1"), 3 * one) << GetParam();
}

// Destroying a simulated runtime stops its workers without a round of steal attempts each: every worker
// was in a round when the engine stopped and finished it, P(P-1) attempts, which took the host 36-53 s at
// 4,096 workers (an outside-user campaign). The report, written after the stop, counts them all.
TEST_P(Sim, StoppingMakesNoRoundOfStealAttemptsPerWorker) {
  const roost_test::temp_file report_file("roost_sim_stop_attempts.json");
  {
    roost::options o = sim_opts(GetParam(), "pack:4 l3:1(size=6MiB) core:64 pu:1", 3);
    o.sim_report = report_file.path();
    roost::runtime rt(o);
    rt.run([] {});
  }
  const std::string r = slurp(report_file.path());
  const auto at = r.find("\"attempts\": ");
  ASSERT_NE(at, std::string::npos) << r;
  const double attempts = std::stod(r.substr(at + 12));
  EXPECT_LE(attempts, 4 * 256) << GetParam() << ": steal attempts of 256 workers, one empty run and the stop";
}

// A touch whose region no memory can hold is a usage_error from the call, not a walk around the address
// space: the simulation segfaulted on touch(p, SIZE_MAX) and on a base near the top, and a strided touch whose
// rows overflow hung the tracer and the simulation. Empty regions stay allowed.
TEST(SimPlatform, ATouchOfBytesThatCannotExistIsAClearError) {
  roost::runtime rt(sim_opts("ws", "pack:2 l3:1(size=1MiB) core:2 pu:1", 1));
  static char data[4096];
  auto expect_usage_error = [&](auto annotate, const char* what) {
    try {
      rt.run(annotate);
      ADD_FAILURE() << what << ": no error";
    } catch (const roost::usage_error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("address space"), std::string::npos) << e.what();
    }
  };
  expect_usage_error([] { roost::touch(data, SIZE_MAX); }, "roost::touch(");
  expect_usage_error([] { roost::touch(reinterpret_cast<const void*>(UINTPTR_MAX - 100), 4096); }, "roost::touch(");
  expect_usage_error([] { roost::touch_rows(data, 64, SIZE_MAX / 2, SIZE_MAX / 4); }, "roost::touch_rows(");
  EXPECT_THROW(rt.run([] { roost::touch(nullptr, 64); }), roost::usage_error);
  // Rows that overlap (a stride below the row) named bytes twice, and were charged twice: 512 bytes touched
  // and 8 line accesses for 128 bytes (an outside-user campaign). roost::data refuses them too.
  for (std::size_t stride : {std::size_t{0}, std::size_t{64}}) {
    try {
      rt.run([&] { roost::touch_rows(data, 128, 4, stride); });
      ADD_FAILURE() << "stride " << stride << ": no error";
    } catch (const roost::usage_error& e) {
      EXPECT_NE(std::string(e.what()).find("rows longer than their stride overlap"), std::string::npos) << e.what();
    }
  }
  rt.run([] { roost::touch_rows(data, 128, 1, 0); });  // one row: no stride to overlap
  // A mode that is no roost::access was charged as a read (an outside-user campaign).
  for (const bool rows : {false, true}) {
    try {
      rt.run([&] {
        const auto bad = static_cast<roost::access>(9);
        rows ? roost::touch_rows(data, 128, 2, 128, bad) : roost::touch(data, 64, bad);
      });
      ADD_FAILURE() << "mode 9: no error";
    } catch (const roost::usage_error& e) {
      EXPECT_NE(std::string(e.what()).find("its mode is no roost::access"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("bytes that exist"), std::string::npos) << e.what();
    }
  }
  // 1 TiB past a 4 KiB array: every byte could exist, none is this process's. The model numbered and
  // walked its pages, gigabytes of page map, until the watchdog blamed a spin-wait.
  try {
    rt.run([] { roost::touch(data, std::size_t{1} << 40); });
    ADD_FAILURE() << "1 TiB: no error";
  } catch (const roost::usage_error& e) {
    EXPECT_NE(std::string(e.what()).find("not all memory of this process"), std::string::npos) << e.what();
  }
  // The same as rows, each under the size a touch is checked from: 32,768 rows of 32 MiB past a 512 KiB
  // buffer grew the page map until the process ran out of memory (an outside-user campaign).
  static char buf[512 << 10];
  try {
    rt.run([] { roost::touch_rows(buf, std::size_t{32} << 20, 32768, std::size_t{32} << 20); });
    ADD_FAILURE() << "1 TiB of rows: no error";
  } catch (const roost::usage_error& e) {
    EXPECT_NE(std::string(e.what()).find("roost::touch_rows("), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not all memory of this process"), std::string::npos) << e.what();
  }
  // Below that size too: a page the model meets for the first time must be this process's (unmapped bytes
  // were simulated as memory without a word: an outside-user campaign). A page unmapped for the purpose,
  // and one whose first half is mapped.
  const long page = ::sysconf(_SC_PAGESIZE);
  void* two = ::mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(two, MAP_FAILED);
  char* hole = static_cast<char*>(two) + page;
  ASSERT_EQ(::munmap(hole, page), 0);
  for (std::size_t at : {std::size_t{0}, std::size_t(page) - 64}) {
    try {
      rt.run([&] { roost::touch(hole - at, 128 + at); });
      ADD_FAILURE() << "an unmapped page: no error";
    } catch (const roost::usage_error& e) {
      EXPECT_NE(std::string(e.what()).find("is not memory of this process"), std::string::npos) << e.what();
    }
  }
  rt.run([&] { roost::touch(two, 64); });  // the mapped page still counts
  ::munmap(two, page);
  std::vector<char> big(std::size_t{64} << 20);  // as large as the check starts at, and all mapped
  rt.run([&] { roost::touch(big.data(), big.size()); });
  rt.run([&] { roost::touch_rows(big.data(), 1 << 20, 64, 1 << 20); });  // the rows of a mapped array pass
  rt.run([&] { roost::touch_rows(big.data(), 64, 1024, 64 << 10, roost::access::write); });
  // Rows in separate mappings, 64 MiB apart, the gaps between them unmapped: every row is memory of this
  // process, and they pass (their span, as large as the rows are checked together from, was refused as "not
  // all memory": an outside-user campaign). A row that is not is named.
  {
    const std::size_t stride = std::size_t{64} << 20;
    char* rows = static_cast<char*>(
        ::mmap(nullptr, 2 * stride + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(rows, MAP_FAILED);
    ASSERT_EQ(::munmap(rows + page, stride - page), 0);
    ASSERT_EQ(::munmap(rows + stride + page, stride - page), 0);
    rt.run([&] { roost::touch_rows(rows, 64, 2, stride); });
    ASSERT_EQ(::munmap(rows + 2 * stride, page), 0);
    try {
      rt.run([&] { roost::touch_rows(rows, 64, 3, stride); });
      ADD_FAILURE() << "an unmapped third row: no error";
    } catch (const roost::usage_error& e) {
      EXPECT_NE(std::string(e.what()).find("row 2 (at "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("not all memory of this process"), std::string::npos) << e.what();
    }
    ::munmap(rows, page);
    ::munmap(rows + stride, page);
  }
  rt.run([] {
    roost::touch(nullptr, 0);
    roost::touch_rows(data, 0, 8, 64);
    roost::touch_rows(data, 64, 8, 64, roost::access::write);
    roost::touch(data, sizeof data);
  });
}

// An array on the main thread's stack. The kernel starts that stack at a random offset in its page, and the
// environment's length moves it too, so one program's array spanned 16 lines in one process and 17 in the
// next, and its reports differed (an outside-user campaign). The simulation numbers main's stack down from
// its first stack pointer (api/simulation.hpp, sim_key): children of this test, each started with an
// environment of another length, report the same. A local array starts 16-byte aligned, at one of four
// offsets in a line: 1,072 bytes span 17 lines at two of them and 18 at the others, so that twelve children
// agreed by chance once in 2,000 runs without it. Not under AddressSanitizer:
// its frames are realigned to 32 bytes, so a local's distance below the first stack pointer changes with
// that pointer by 16 bytes (as any frame's with an over-aligned local; user-guide.md says so).
TEST(SimPlatform, AnArrayOnMainsStackGivesTheSameReportInEveryProcess) {
  if (roost_test::under_asan()) GTEST_SKIP() << "AddressSanitizer realigns every frame to 32 bytes";
  if (std::getenv("ROOST_TEST_STACK_CHILD")) {  // a child: gtest runs a test's body on the main thread
    char local[1072];
    std::memset(local, 1, sizeof local);
    roost::options o;
    o.scheduler = "ws";
    o.platform = "sim";
    o.topology = "pack:1 l3:1(size=1MiB) core:1 pu:1";
    o.workers = 1;
    roost::runtime rt(o);
    rt.run([&] { roost::touch(local, sizeof local); });
    std::printf("main's stack: L3 misses %lld, virtual time %.3f ns\n", rt.simulated_misses(3), rt.virtual_time_ns());
    return;
  }
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  ASSERT_GT(n, 0);
  exe[n] = 0;
  std::set<std::string> reports;
  for (int pad = 0; pad < 12; ++pad) {
    // Without gtest's sharding and output settings, which would make the child run nothing or write the
    // parent's report.
    const std::string cmd = "env -u GTEST_SHARD_INDEX -u GTEST_TOTAL_SHARDS -u GTEST_OUTPUT ROOST_TEST_STACK_CHILD=" +
                            std::string(static_cast<std::size_t>(pad) * 23 + 1, 'x') + " '" + exe +
                            "' --gtest_filter=SimPlatform.AnArrayOnMainsStackGivesTheSameReportInEveryProcess 2>&1";
    FILE* child = ::popen(cmd.c_str(), "r");
    ASSERT_NE(child, nullptr);
    std::string out;
    char buf[512];
    while (std::fgets(buf, sizeof buf, child)) out += buf;
    ASSERT_EQ(::pclose(child), 0) << out;
    const std::size_t at = out.find("main's stack: ");
    ASSERT_NE(at, std::string::npos) << out;
    reports.insert(out.substr(at, out.find('\n', at) - at));
  }
  EXPECT_EQ(reports.size(), 1u) << *reports.begin() << " ... " << *reports.rbegin();
}

// A simulated cache the model cannot keep in this machine's memory is a config_error that says what it would
// take (a 1 TiB L3, inside the documented range of a size, ended in a bare std::bad_alloc; an outside-user
// campaign). A large one that fits is made.
TEST(SimPlatform, CachesLargerThanTheHostCanModelAreAConfigError) {
  const std::string what = roost_test::config_error_of(
      [] { roost::runtime rt(sim_opts("ws", "pack:2 l3:1(size=1TiB) core:2 pu:1", 2)); });
  for (const char* part : {"options::topology", "l3:1(size=1TiB)", "GiB of this machine's memory", "give smaller caches"})
    EXPECT_NE(what.find(part), std::string::npos) << part << " in: " << what;
  roost::runtime rt(sim_opts("ws", "pack:2 l3:1(size=256MiB) core:2 pu:1", 2));
  EXPECT_EQ(rt.run([] { return fib(10); }), 55);
}

// A cache whose ways do not divide it says where the ways came from: the parameters the program gave (by
// their variable or option), a preset they named, or the preset the machine was matched to (it read "preset
// generic or the parameters", naming neither; an outside-user campaign).
TEST(SimPlatform, WaysThatDoNotFitACacheNameWhereTheyCameFrom) {
  const std::string topo = "pack:2 l2:1(size=1MiB) core:1 pu:1";
  std::string what = roost_test::config_error_of([&] { roost::runtime rt(sim_opts("ws", topo, 1, "l2.ways=3")); });
  EXPECT_NE(what.find("(l2.ways=3 from options::sim_params)"), std::string::npos) << what;
  what = roost_test::config_error_of(
      [&] { roost::runtime rt(sim_opts("ws", "pack:2 l3:1(size=32MiB) core:1 pu:1", 1, "preset=xeon-gold-6130")); });
  EXPECT_NE(what.find("(l3.ways=11 from preset xeon-gold-6130, which options::sim_params names)"), std::string::npos)
      << what;
  what = roost_test::config_error_of([&] { roost::runtime rt(sim_opts("ws", "pack:2 l2:1(size=1088) core:1 pu:1", 1)); });
  EXPECT_NE(what.find("from preset generic)"), std::string::npos) << what;
}

// The model has one line size: an XML topology whose caches differ (128 B L2 lines, 64 B L3) was modelled
// with 128 B lines everywhere, without a word (an outside-user campaign). Natively it is only a topology.
TEST(SimPlatform, CachesOfDifferentLineSizesAreAConfigError) {
  std::ifstream in(std::string(ROOST_SOURCE_DIR) + "/topologies/seed002-opteron-6172.xml");
  std::stringstream xml;
  xml << in.rdbuf();
  std::string text = xml.str();
  const std::string l2 = "depth=\"2\" cache_linesize=\"64\"";
  for (std::size_t at = text.find(l2); at != std::string::npos; at = text.find(l2, at))
    text.replace(at, l2.size(), "depth=\"2\" cache_linesize=\"128\"");
  const std::string path = ::testing::TempDir() + "roost_mixed_lines." + std::to_string(::getpid()) + ".xml";
  std::ofstream(path) << text;
  const std::string what = roost_test::config_error_of([&] { roost::runtime rt(sim_opts("ws", path, 1)); });
  for (const char* part : {"128 B (L2)", "64 B (L3)", "one line size"})
    EXPECT_NE(what.find(part), std::string::npos) << part << " in: " << what;
  roost::options native;
  native.topology = path;
  native.workers = 2;
  roost::runtime rt(native);
  EXPECT_EQ(rt.run([] { return fib(10); }), 55);
  std::remove(path.c_str());
}

// Virtual time is the program's, not this machine's: more simulated workers finish a wide tree sooner.
TEST(SimPlatform, MoreWorkersTakeLessVirtualTime) {
  auto virtual_ns = [](const std::string& topo) {
    const roost_test::temp_file report_file("roost_sim_vt.json");
    const std::string& path = report_file.path();
    {
      roost::options o = sim_opts("ws", topo, 1);
      o.sim_report = path;
      roost::runtime rt(o);
      EXPECT_EQ(rt.run([] { return fib(16); }), 987);
    }
    const std::string r = slurp(path);
    const auto at = r.find("\"virtual_time_ns\": ");
    return std::stod(r.substr(at + 19));
  };
  const double one = virtual_ns("pack:1 l3:1(size=1MiB) core:1 pu:1"), sixteen = virtual_ns("pack:1 l3:1(size=1MiB) core:16 pu:1");
  EXPECT_GT(one, 0);
  EXPECT_LT(sixteen * 4, one) << "16 workers: " << sixteen << " ns, 1 worker: " << one << " ns";
}

// A steal's distance on an SMT machine whose cores have no cache of their own: two PUs of a core, and the
// cores of a package, share the package's L3 and nothing nearer. The core was taken for the smallest
// shared cache (it has no size), so each PU was a cache of its own and every steal under one L3 was
// counted, and charged, as another cache's on the same socket (an outside-user campaign).
TEST(SimPlatform, StealsUnderOneL3OfAnSmtMachineAreSameCache) {
  const roost_test::temp_file report_file("roost_sim_smt_steals.json");
  {
    roost::options o = sim_opts("ws", "pack:2 l3:1(size=1MiB) core:2 pu:2", 1);
    o.sim_report = report_file.path();
    roost::runtime rt(o);
    EXPECT_EQ(rt.run([] { return fib(16); }), 987);
  }
  const std::string r = slurp(report_file.path());
  auto number_after = [&](const std::string& key) {
    const auto at = r.find("\"" + key + "\": ");
    EXPECT_NE(at, std::string::npos) << key;
    return at == std::string::npos ? -1.0 : std::stod(r.substr(at + key.size() + 4));
  };
  EXPECT_GT(number_after("same_cache"), 0) << r;
  EXPECT_EQ(number_after("same_socket"), 0) << r;
}

// A failed steal attempt costs the thief virtual time, as idle time, by the distance to its victim: an idle
// worker's round of random stealing is not free (it was: only successes and the poll's relax were charged).
// Two workers on two sockets: every attempt is remote, so the remote cost shows in the idle time and the
// same-cache cost does not.
TEST(SimPlatform, AFailedStealAttemptCostsIdleTimeByDistance) {
  struct figures {
    double failed, idle;
  };
  auto run = [](const std::string& params) {
    const roost_test::temp_file report_file("roost_sim_attempts.json");
    const std::string& path = report_file.path();
    {
      roost::options o = sim_opts("ws", "pack:2 l3:1(size=1MiB) core:1 pu:1", 3, params);
      o.sim_report = path;
      roost::runtime rt(o);
      EXPECT_EQ(rt.run([] { return fib(12); }), 144);
    }
    const std::string r = slurp(path);
    auto number_after = [&](const std::string& key) {
      const auto at = r.find("\"" + key + "\": ");
      EXPECT_NE(at, std::string::npos) << key;
      return at == std::string::npos ? 0.0 : std::stod(r.substr(at + key.size() + 4));
    };
    figures f{number_after("attempts") -
                  (number_after("same_cache") + number_after("same_socket") + number_after("other_socket")),
              0};
    for (auto at = r.find("\"idle_ns\": "); at != std::string::npos; at = r.find("\"idle_ns\": ", at + 1))
      f.idle += std::stod(r.substr(at + 11));
    return f;
  };
  const figures remote = run("steal_attempt_ns=0,steal_attempt_socket_ns=0,steal_attempt_remote_ns=100000");
  EXPECT_GE(remote.failed, 1);
  EXPECT_GE(remote.idle, remote.failed * 100000);
  const figures near = run("steal_attempt_ns=100000,steal_attempt_socket_ns=100000,steal_attempt_remote_ns=0");
  EXPECT_GE(near.failed, 1);
  EXPECT_LT(near.idle, 100000) << "a same-socket cost was charged for an attempt on another socket";
}

// roost::compute declares a kernel's arithmetic: the simulator charges op_ns per operation to the worker
// that declared it (and counts them in the report); a task that declares none costs only its operations.
TEST(SimPlatform, DeclaredArithmeticCostsOpNsEachOperation) {
  auto run = [](std::uint64_t ops, const std::string& params) {
    const roost_test::temp_file report_file("roost_sim_ops.json");
    const std::string& path = report_file.path();
    {
      roost::options o = sim_opts("ws", "pack:1 l3:1(size=1MiB) core:1 pu:1", 1, params);
      o.sim_report = path;
      roost::runtime rt(o);
      rt.run([ops] {
        roost::task_group g;
        g.run([ops] { roost::compute(ops); });
        g.wait();
      });
    }
    const std::string r = slurp(path);
    const double vt = std::stod(r.substr(r.find("\"virtual_time_ns\": ") + 19));
    const double counted = std::stod(r.substr(r.find("\"operations\": ") + 14));
    return std::pair{vt, counted};
  };
  const auto [none, none_ops] = run(0, "op_ns=0.5");
  const auto [some, some_ops] = run(1'000'000, "op_ns=0.5");
  const auto [cheap, cheap_ops] = run(1'000'000, "op_ns=0.25");
  EXPECT_EQ(none_ops, 0);
  EXPECT_EQ(some_ops, 1'000'000);
  EXPECT_DOUBLE_EQ(some - none, 500'000);
  EXPECT_DOUBLE_EQ(cheap - none, 250'000);
  roost::compute(5);  // outside any runtime: nothing to charge, nothing happens
}

// A root is a task of the cost table like any other: its start costs task_start_ns and its end task_end_ns
// (src/platform/README.md). Its end was never charged: an empty run cost task_start_ns whatever task_end_ns
// said. One worker, so that nothing else moves the clock.
TEST(SimPlatform, ARootsStartAndEndAreChargedAsATasksAre) {
  auto empty_runs_ns = [](const std::string& params) {
    roost::runtime rt(sim_opts("ws", "pack:1 l3:1(size=1MiB) core:1 pu:1", 1, params));
    for (int i = 0; i < 4; ++i) rt.run([] {});
    return rt.virtual_time_ns() / 4;
  };
  const double base = empty_runs_ns("task_start_ns=10,task_end_ns=10");
  EXPECT_DOUBLE_EQ(empty_runs_ns("task_start_ns=10,task_end_ns=1010") - base, 1000);
  EXPECT_DOUBLE_EQ(empty_runs_ns("task_start_ns=510,task_end_ns=10") - base, 500);
}

// A simulated runtime's listeners are its own: another runtime made while it lives (a traced one, whose
// tracer took the process's one consumer slot) must not take its tasks' annotations away from the model, and
// the program's own consumer sees them too. The same touches cost the same virtual time either way.
TEST(SimPlatform, AnotherRuntimeDoesNotTakeTheSimulationsAnnotations) {
  static std::vector<char> buf(1 << 20);
  static const std::string trace_file =
      ::testing::TempDir() + "/roost_sim_neighbour.trace." + std::to_string(::getpid());
  auto touched_time = [](bool with_traced_neighbour, std::size_t bytes = std::size_t{1} << 20) {
    roost::runtime sim(sim_opts("ws", "pack:1 l3:1(size=1MiB) core:1 pu:1", 1));
    std::unique_ptr<roost::runtime> traced;
    if (with_traced_neighbour) {
      roost::options o;
      o.workers = 1;
      o.trace = trace_file;
      traced = std::make_unique<roost::runtime>(o);
    }
    sim.run([bytes] {
      roost::task_group g;
      g.run([bytes] { roost::touch(buf.data(), bytes, roost::access::read); });
      g.wait();
    });
    return sim.virtual_time_ns();
  };
  struct counting : roost::touch_consumer {
    std::atomic<long> bytes{0};
    void on_touch(int, const void*, std::size_t b, roost::access) override { bytes += static_cast<long>(b); }
  } program;
  const auto alone = touched_time(false);
  EXPECT_GT(alone, 2 * touched_time(false, 0));  // 16,384 lines from memory
  roost::set_touch_consumer(&program);
  EXPECT_EQ(touched_time(true), alone);
  EXPECT_EQ(program.bytes.load(), 1L << 20);
  EXPECT_EQ(roost::set_touch_consumer(nullptr), &program);
  std::remove(trace_file.c_str());
  std::remove((trace_file + ".json").c_str());
}

// While cats profiles (its first iteration), its meter is the runtime's first listener: a kernel's declared
// arithmetic passes through it to the simulation as on any other iteration (it swallowed it, and the
// profiling iteration's operations cost nothing).
TEST(SimPlatform, DeclaredArithmeticIsChargedWhileCatsProfiles) {
  const std::string path = ::testing::TempDir() + "/roost_sim_cats_ops.json." + std::to_string(::getpid());
  {
    roost::options o = sim_opts("cats", "pack:2 l3:1(size=1MiB) core:1 pu:1", 1, "op_ns=0.5");
    o.sim_report = path;
    roost::runtime rt(o);
    rt.run([] {
      roost::task_group g;
      g.run([] { roost::compute(1'000'000); });
      g.run([] { roost::compute(1'000'000); });
      g.wait();
    });
  }
  const std::string r = slurp(path);
  EXPECT_EQ(std::stod(r.substr(r.find("\"operations\": ") + 14)), 2'000'000) << r;
  std::remove(path.c_str());
}

TEST(SimPlatform, BadInputIsAClearError) {
  auto error_of = [](roost::options o) -> std::string {
    try {
      roost::runtime rt(o);
    } catch (const roost::config_error& e) {
      return e.what();
    }
    return "";
  };
  roost::options o;
  o.platform = "simulated";
  EXPECT_NE(error_of(o).find("options::platform='simulated': must be one of native"), std::string::npos) << error_of(o);
  o = sim_opts("ws", "pack:1 l3:1(size=1MiB) core:2 pu:1", 1, "spawn_ns=5,stel_ns=3");
  EXPECT_NE(error_of(o).find("unknown parameter 'stel_ns'; did you mean steal_ns? valid: the runtime's costs (spawn_ns"),
            std::string::npos)
      << error_of(o);
  // The memory model's names are valid in the same list, and an unknown name lists them too (it listed the
  // costs alone; an outside-user campaign).
  for (const char* name : {"l3.way=16", "dram.local=50", "host_thread=1"}) {
    o = sim_opts("ws", "pack:1 l3:1(size=1MiB) core:2 pu:1", 1, name);
    for (const char* part : {"unknown parameter", "spawn_ns", "l3.ways", "dram.local_ns", "host_threads", "page_size"})
      EXPECT_NE(error_of(o).find(part), std::string::npos) << name << ": " << part << " in: " << error_of(o);
  }
  o = sim_opts("ws", "pack:1 l3:1(size=1MiB) core:2 pu:1", 1, "spawn_ns=-5");
  EXPECT_NE(error_of(o).find("spawn_ns='-5': must be a number in [0, 1e15]"), std::string::npos) << error_of(o);
  // An idle poll that costs nothing kept its worker the earliest for ever (adws, adws-ml, cab hung).
  for (const char* idle : {"relax_ns=0", "yield_ns=0.5"}) {
    o = sim_opts("ws", "pack:1 l3:1(size=1MiB) core:2 pu:1", 1, idle);
    EXPECT_NE(error_of(o).find("must be a number in [1, 1e15] (an idle worker's poll"), std::string::npos)
        << error_of(o);
  }
  o = sim_opts("ws", "pack:1 l3:1(size=1MiB) core:2 pu:1", 1, "jitter=0.9");
  EXPECT_NE(error_of(o).find("jitter='0.9': must be a number in [0, 0.5]"), std::string::npos) << error_of(o);
  o = sim_opts("ws", "pack:1 l3:1(size=1MiB) core:2 pu:1", 1, "spawn_ns");
  EXPECT_NE(error_of(o).find("has no value"), std::string::npos) << error_of(o);
  // A value with no name is said so (it was the unknown parameter ''; an outside-user campaign).
  o = sim_opts("ws", "pack:1 l3:1(size=1MiB) core:2 pu:1", 1, "=1");
  EXPECT_NE(error_of(o).find("'=1' has no name; must be name=value pairs separated by commas"), std::string::npos) << error_of(o);
  o = sim_opts("ws", "pack:2 core:2 pu:1", 1);  // no cache sizes: nothing for the memory model to model
  EXPECT_NE(error_of(o).find("describes no data cache"), std::string::npos) << error_of(o);
  o = sim_opts("ws", "pack:1 l3:1(size=1MiB) core:2 pu:1", 1, "l3.ways=0");
  EXPECT_NE(error_of(o).find("l3.ways"), std::string::npos) << error_of(o);
  // A level the machine has no cache of: nothing would read the parameter (it was taken and ignored).
  for (const char* other : {"l1.ways=8", "l4.latency_ns=40", "l2.bw=10"}) {
    o = sim_opts("ws", "pack:1 l3:1(size=1MiB) core:2 pu:1", 1, other);
    EXPECT_NE(error_of(o).find(std::string(other) + ": options::topology="), std::string::npos) << error_of(o);
    EXPECT_NE(error_of(o).find("cache, so nothing would read it; its caches: L3"), std::string::npos) << error_of(o);
  }
  {
    roost_test::scoped_env e("ROOST_PLATFORM", "gpu");
    EXPECT_NE(error_of({}).find("ROOST_PLATFORM='gpu'"), std::string::npos);
  }
}

// The least idle poll, with failed steal attempts that cost nothing, still lets the workers holding the work
// run: the shapes that hung with relax_ns=0 (an outside-user campaign) finish with exact results.
TEST(SimPlatform, TheCheapestIdlePollsStillLetTheWorkRun) {
  struct shape {
    const char* sched;
    const char* topology;
    const char* params;
  };
  for (const shape& s : {shape{"adws", "pack:1 l3:1(size=1MiB) core:4 pu:1", "relax_ns=1"},
                         shape{"adws-ml", "pack:1 l3:1(size=1MiB) core:4 pu:1", "relax_ns=1"},
                         shape{"cab", "pack:2 l3:1(size=1MiB) core:1 pu:1", "relax_ns=1,steal_attempt_remote_ns=0"},
                         shape{"cab", "pack:1 l3:1(size=1MiB) core:4 pu:1", "relax_ns=1,steal_attempt_ns=0"}}) {
    roost::runtime rt(sim_opts(s.sched, s.topology, 0, s.params));
    EXPECT_EQ(rt.run([] { return fib(12); }), 144) << s.sched << " " << s.params;
    std::atomic<long> sum{0};
    rt.run([&] {
      roost::parallel_for(0, 1000, 1, [&](int lo, int hi) {
        for (int i = lo; i < hi; ++i) sum += i;
      });
    });
    EXPECT_EQ(sum.load(), 499500) << s.sched << " " << s.params;
  }
}

// The watchdog's rule (platform/sim_watch.hpp), on sequences of the sim thread's counters: a limit of 1 s
// looked at every 0.25 s.
namespace {
roost::platform::sim_sample sample(std::uint64_t progress, std::uint64_t busy, double clock, double busy_clock,
                                   bool in_run = true) {
  roost::platform::sim_sample s;
  s.in_run = in_run;
  s.progress = progress;
  s.busy_progress = busy;
  s.clock = clock;
  s.busy_clock = busy_clock;
  return s;
}
using verdict = roost::platform::sim_watch::verdict;
}  // namespace

// Workers that only poll, past the last busy end, for the limit: named (adws-ml without stealing once hung
// so, each poll counted as progress). A busy charge in between starts the count again.
TEST(SimWatch, IdlePollsPastTheLastBusyEndAreNamedAfterTheLimit) {
  roost::platform::sim_watch w(1.0, 0.25, sample(0, 0, 0, 0));
  const double past = roost::platform::sim_watch::kIdlePastBusyNs + 1e4;  // past both busy ends below
  EXPECT_EQ(w.look(sample(10, 0, past, 5e3)), verdict::fine);
  EXPECT_EQ(w.look(sample(20, 0, past + 1, 5e3)), verdict::fine);
  EXPECT_EQ(w.look(sample(30, 1, past + 2, 6e3)), verdict::fine);  // a busy charge: counted again
  for (int i = 0; i < 3; ++i) EXPECT_EQ(w.look(sample(40 + 10 * i, 1, past + 3 + i, 6e3)), verdict::fine) << i;
  EXPECT_EQ(w.look(sample(80, 1, past + 9, 6e3)), verdict::idling);
  EXPECT_DOUBLE_EQ(w.idling_s(), 1.0);
}

// Idle polls that have not passed the last busy end are workers waiting for a long kernel (its charge ended
// far ahead) or the gap between two tasks: never named, however long they last in real time. Nor is
// anything between runs.
TEST(SimWatch, IdlePollsBeforeTheLastBusyEndOrOutsideARunAreFine) {
  roost::platform::sim_watch w(1.0, 0.25, sample(0, 0, 0, 0));
  for (int i = 1; i <= 40; ++i) EXPECT_EQ(w.look(sample(10u * i, 0, 1e3 * i, 1e9)), verdict::fine) << i;
  for (int i = 1; i <= 40; ++i) EXPECT_EQ(w.look(sample(400u + 10u * i, 0, 2e9 + i, 1e9, false)), verdict::fine) << i;
  EXPECT_DOUBLE_EQ(w.idling_s(), 0);
}

// Busy charges that are declared work alone, no runtime operation among them, for the limit: noted (a task
// polling another task's flag with roost::compute(1) hung without a word). A runtime operation in between
// starts the count again, and so does the note.
TEST(SimWatch, DeclaredWorkAloneForTheLimitIsNoted) {
  const auto with_ops = [](roost::platform::sim_sample s, std::uint64_t ops) {
    s.op_progress = ops;
    return s;
  };
  roost::platform::sim_watch w(1.0, 0.25, sample(0, 0, 0, 0));
  for (int i = 1; i <= 3; ++i) EXPECT_EQ(w.look(with_ops(sample(10u * i, 10u * i, 1e3 * i, 1e3 * i), 0)), verdict::fine) << i;
  EXPECT_EQ(w.look(with_ops(sample(40, 40, 4e3, 4e3), 1)), verdict::fine);  // a runtime operation
  for (int i = 5; i <= 7; ++i) EXPECT_EQ(w.look(with_ops(sample(10u * i, 10u * i, 1e3 * i, 1e3 * i), 1)), verdict::fine) << i;
  EXPECT_EQ(w.look(with_ops(sample(80, 80, 8e3, 8e3), 1)), verdict::declared_only);
  EXPECT_DOUBLE_EQ(w.declared_only_s(), 1.0);
  w.forgive_declared_only();
  EXPECT_EQ(w.look(with_ops(sample(90, 90, 9e3, 9e3), 1)), verdict::fine);
  // Outside a run nothing is noted.
  for (int i = 10; i <= 20; ++i)
    EXPECT_EQ(w.look(with_ops(sample(10u * i, 10u * i, 1e3 * i, 1e3 * i, false), 1)), verdict::fine) << i;
}

// No charge at all for the limit: stalled (the spin-wait diagnostics below). A caller that knows the stall
// to be slow work forgives it, and the count starts again.
TEST(SimWatch, NoChargeForTheLimitIsAStall) {
  roost::platform::sim_watch w(1.0, 0.25, sample(5, 5, 100, 100));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(w.look(sample(5, 5, 100, 100)), verdict::fine) << i;
  EXPECT_EQ(w.look(sample(5, 5, 100, 100)), verdict::stalled);
  w.forgive_stall();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(w.look(sample(5, 5, 100, 100)), verdict::fine) << i;
  EXPECT_EQ(w.look(sample(5, 5, 100, 100)), verdict::stalled);
  EXPECT_EQ(w.look(sample(6, 5, 100, 100)), verdict::fine);  // a charge
}

// A task that spin-waits for another task can never see it progress on one OS thread: a diagnostic that
// names the worker and the task, after a bounded time, never a silent hang.
TEST(SimPlatformDeathTest, ASpinWaitIsReportedWithItsWorkerAndTask) {
  if (roost_test::under_sanitizer()) GTEST_SKIP() << "the watchdog reads the stalled task from another thread";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        roost::runtime rt(sim_opts("ws", "pack:1 l3:1(size=1MiB) core:2 pu:1", 1, "stall_wall_s=1"));
        rt.run([] {
          std::atomic<bool> flag{false};
          roost::task_group tg;
          tg.run([&] {
            while (!flag.load()) {
            }
          });
          tg.run([&] { flag.store(true); });
          tg.wait();
        });
      },
      "no progress: worker 0 has run task 0\\.0 .*spin-waits");
}

// A task blocked in the kernel (here a read of a pipe nobody writes to) is named as blocked, not as spinning:
// the watchdog told a task that read its input, or joined a thread of its own that ran another runtime, that it
// spin-waited for another task (an outside-user campaign). It still ends the process: nothing else can run.
TEST(SimPlatformDeathTest, ATaskBlockedInTheKernelIsReportedAsBlocked) {
  if (roost_test::under_sanitizer()) GTEST_SKIP() << "the watchdog reads the stalled task from another thread";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        alarm(60);
        int fds[2];
        if (pipe(fds) != 0) std::abort();
        roost::runtime rt(sim_opts("ws", "pack:1 l3:1(size=1MiB) core:2 pu:1", 1, "stall_wall_s=0.2"));
        rt.run([&] {
          char c;
          if (read(fds[0], &c, 1) < 0) std::abort();
        });
      },
      "no progress: worker 0's task 0 has been blocked in the kernel for .*raise it");
}

// A worker switched out by the charge of its touch leaves no walk in flight: another worker's task that
// spins meanwhile is reported. The touch's bytes stayed "in walk" until the touch returned, so the spin was
// forgiven as a slow walk for ever: a silent hang, said as worker 1 being inside a 4 KiB touch (an outside-user
// campaign). And a spinner that is a stolen continuation is named: the watchdog said "task ?", because only
// a task's start told the platform which task ran.
TEST(SimPlatformDeathTest, ASpinWhileAnotherWorkerIsSwitchedOutInATouchIsReported) {
  if (roost_test::under_sanitizer()) GTEST_SKIP() << "the watchdog reads the stalled task from another thread";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        alarm(60);  // the old code hung here without a word: end it, unmatched, rather than at ctest's limit
        roost::runtime rt(sim_opts("ws", "pack:1 l3:1(size=1MiB) core:2 pu:1", 1, "stall_wall_s=0.2"));
        static double a[512];
        rt.run([] {
          std::atomic<int> flag{0};
          roost::task_group tg;
          tg.run([&] {
            roost::touch(a, sizeof a);
            flag.store(1);
          });
          tg.run([&] {
            while (!flag.load()) {
            }
          });
          tg.wait();
        });
      },
      "no progress: worker 1 has run task 0\\.1 .*spin-waits");
  EXPECT_DEATH(
      {
        roost::runtime rt(sim_opts("ws", "pack:1 l3:1(size=1MiB) core:2 pu:1", 1, "stall_wall_s=0.2"));
        rt.run([] {
          std::atomic<int> flag{0};
          roost_test::escape(&flag);
          roost::task_group tg;
          tg.run([] { roost::compute(1000); });
          while (!flag.load()) {  // the root's continuation, stolen by worker 1 while its child runs
          }
          tg.wait();
        });
      },
      "no progress: worker 1 has run task 0 for");
}

// A task that goes on after a child ended locally is named, not the child: the watchdog named the ended
// child (its id on a stack that goes back to the pool, read from another thread), since neither a
// work-first parent's continuation nor a help-first join that ran its child inline starts or resumes a task
// (a review). One worker, both kinds of spawn.
TEST(SimPlatformDeathTest, ATaskSpinningAfterItsChildEndedLocallyIsNamed) {
  if (roost_test::under_sanitizer()) GTEST_SKIP() << "the watchdog reads the stalled task from another thread";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (const char* sched : {"ws", "ws-help"}) {
    EXPECT_DEATH(
        {
          alarm(60);
          roost::runtime rt(sim_opts(sched, "pack:1 l3:1(size=1MiB) core:1 pu:1", 1, "stall_wall_s=0.2"));
          rt.run([] {
            std::atomic<int> flag{0};
            roost_test::escape(&flag);
            roost::task_group tg;
            tg.run([] {});
            tg.wait();
            while (!flag.load()) {
            }
          });
        },
        "no progress: worker 0 has run task 0 for")
        << sched;
  }
}

// Work that costs no virtual time is no progress: a task polling a flag with roost::compute(0) stayed the
// earliest worker for ever while each poll counted, so the watchdog never named it (an outside-user campaign).
TEST(SimPlatformDeathTest, ASpinWaitPollingWithFreeWorkIsReportedToo) {
  if (roost_test::under_sanitizer()) GTEST_SKIP() << "the watchdog reads the stalled task from another thread";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (const char* params : {"stall_wall_s=1", "stall_wall_s=1,op_ns=0"}) {
    const std::uint64_t ops = std::string(params).find("op_ns") == std::string::npos ? 0 : 1;
    EXPECT_DEATH(
        {
          roost::runtime rt(sim_opts("ws", "pack:1 l3:1(size=1MiB) core:2 pu:1", 1, params));
          rt.run([&] {
            std::atomic<bool> flag{false};
            roost::task_group tg;
            tg.run([&] {
              while (!flag.load()) roost::compute(ops);
            });
            tg.run([&] { flag.store(true); });
            tg.wait();
          });
        },
        "no progress: worker 0 has run task 0\\.0 .*spin-waits")
        << params;
  }
}

// A task that polls a sibling's flag declaring real work at each poll (compute(1), a touch) moves its own
// clock, and the sibling, behind it on the only worker, never runs: the run hung without a word (an
// outside-user campaign). After stall_wall_s of declared work alone the simulation names the worker and the
// task, once, and goes on (a long kernel looks the same). Here the poller also stops when it sees the note,
// which it reads from stderr, sent to a file: the test waits for the note, not for a time.
TEST(SimPlatform, APollingTaskThatDeclaresWorkIsNamedOnce) {
  for (const char* sched : {"ws", "ws-help"})
    for (const bool by_touch : {false, true}) {
      char path[] = "/tmp/roost-test-stderr-XXXXXX";
      const int fd = mkstemp(path);
      ASSERT_GE(fd, 0);
      std::fflush(stderr);
      const int saved = dup(2);
      dup2(fd, 2);
      const auto said = [&path] {
        std::ifstream in(path);
        const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        return text;
      };
      long polls = 0;
      {
        roost::runtime rt(sim_opts(sched, "pack:1 l3:1(size=1MiB) core:1 pu:1", 1, "stall_wall_s=0.2"));
        static double a[64];
        rt.run([&] {
          std::atomic<bool> flag{false};
          const auto poll = [&] {
            while (!flag.load()) {
              if (by_touch) roost::touch(a, sizeof a);
              else roost::compute(1);
              if (++polls % 4096 == 0 && said().find("only declared work") != std::string::npos) break;
            }
          };
          const auto set = [&] { flag.store(true); };
          // The poller runs first: at once under ws (work-first), popped first at the wait under ws-help.
          roost::task_group tg;
          if (std::string(sched) == "ws") {
            tg.run(poll);
            tg.run(set);
          } else {
            tg.run(set);
            tg.run(poll);
          }
          tg.wait();
        });
      }
      std::fflush(stderr);
      dup2(saved, 2);
      close(saved);
      close(fd);
      const std::string text = said();
      unlink(path);
      const std::string poller = std::string(sched) == "ws" ? "0.0" : "0.1";  // its group's first or second child
      EXPECT_NE(text.find("last by worker 0's task " + poller + ", and no task has started"), std::string::npos)
          << sched << " " << by_touch << ": " << text;
      EXPECT_NE(text.find("the run never ends"), std::string::npos) << text;
      // Once a runtime, however long the poller went on after it.
      EXPECT_EQ(text.find("only declared work", text.find("only declared work") + 1), std::string::npos) << text;
      EXPECT_GT(polls, 0);
    }
}

// A touch whose walk outlasts stall_wall_s is slow, not stuck: the simulation says so once and goes on (it
// ended the process, so whether a correct program ran depended on the host's speed: an outside-user
// campaign). At stall_wall_s=0 every look of the watchdog that finds no charge is past the limit.
TEST(SimPlatform, ALongTouchOutlastingTheWatchdogsLimitCompletes) {
  std::vector<char> big(std::size_t{64} << 20);
  roost::runtime rt(sim_opts("ws", "pack:1 l3:1(size=1MiB) core:1 pu:1", 1, "stall_wall_s=0"));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(rt.run([&] {
    roost::touch(big.data(), big.size());
    return 7;
  }), 7);
}

namespace {
// The simulation's own threads run on the CPUs the process may use, even for a runtime made inside a task
// of a native runtime, whose worker is pinned to one CPU: its watchdog was a std::thread, which inherited that
// CPU. (A runtime cannot run inside another's task; this one runs after.) The model's helper, which walks half
// of every long touch (src/sim/sharded_model.hpp), is started by the simulating thread. Both are found by
// their names (cpus_of_threads_named).
TEST(SimPlatform, ItsThreadsRunOnTheProcesssCpusWhenMadeInsideATask) {
  cpu_set_t process;
  ASSERT_EQ(sched_getaffinity(0, sizeof(process), &process), 0);
  if (CPU_COUNT(&process) < 2) GTEST_SKIP() << "one CPU: a pinned worker has them all";
  bool outer_pinned = false;
  std::unique_ptr<roost::runtime> inner;
  roost::runtime outer(roost_test::opts("ws", 1));
  outer.run([&] {
    cpu_set_t here;
    ASSERT_EQ(sched_getaffinity(0, sizeof(here), &here), 0);
    outer_pinned = CPU_COUNT(&here) == 1;
    inner = std::make_unique<roost::runtime>(
        sim_opts("ws", "pack:2 l3:1(size=1MiB) l2:1(size=64KiB) core:1 pu:1", 1, "host_threads=2"));
  });
  std::vector<char> data(64 * 1024);
  inner->run([&] { roost::touch(data.data(), data.size()); });  // long enough to start the helper
  const std::vector<cpu_set_t> watch = roost_test::cpus_of_threads_named("roost-simwatch");
  const std::vector<cpu_set_t> model = roost_test::cpus_of_threads_named("roost-simmodel");
  inner.reset();
  ASSERT_EQ(watch.size(), 1u) << "one watchdog thread, named roost-simwatch";
  ASSERT_EQ(model.size(), 1u) << "one model helper thread, named roost-simmodel";
  EXPECT_TRUE(CPU_EQUAL(&model[0], &process)) << "the model's helper runs on " << CPU_COUNT(&model[0]) << " CPUs";
  if (!outer_pinned) GTEST_SKIP() << "the outer worker was not pinned: nothing to inherit";
  EXPECT_TRUE(CPU_EQUAL(&watch[0], &process)) << "the watchdog runs on " << CPU_COUNT(&watch[0]) << " CPUs of the "
                                              << CPU_COUNT(&process) << " the process may use";
}
}  // namespace
