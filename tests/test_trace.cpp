// ROOST_TRACE: a traced run's events match what the observation hook saw; spawn paths rebuilt from the
// trace's (parent serial, index) equal the observer's; touches and iterations are recorded; the JSON is a
// Chrome trace; damaged files give errors with the byte offset. The trace streams to its file while the
// runtime runs, with memory that does not grow; a file that cannot be written is an error at construction,
// a write that fails later is an exception from run() or a message from ~runtime, never silence.
#include <gtest/gtest.h>
#include <filesystem>

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "api/runtime_core.hpp"
#include "roost/roost.hpp"
#include "test_util.hpp"
#include "trace/trace_format.hpp"
#include "trace/tracer.hpp"

namespace tr = roost::trace;

namespace {

std::vector<char> g_buf(4096);

long fib(int n) {
  if (n < 2) {
    roost::touch(g_buf.data(), 64, roost::access::read);
    return n;
  }
  long a = 0;
  roost::task_group tg;
  tg.run([&] { a = fib(n - 1); });
  long b = fib(n - 2);
  tg.wait();
  return a + b;
}

using paths = roost_test::start_paths;

std::uint64_t file_bytes(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

std::uint64_t resident_bytes() {
  long pages = 0, resident = 0;
  std::ifstream statm("/proc/self/statm");
  statm >> pages >> resident;
  return static_cast<std::uint64_t>(resident) * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

std::size_t chunks_in(const std::string& path) {
  tr::chunk_reader in(path);
  std::uint16_t lane = 0;
  std::vector<tr::record> rs;
  std::size_t n = 0;
  while (in.next(lane, rs)) ++n;
  return n;
}

// A simulated runtime on two sockets of two cores (1 MiB of L3 each), every task traced to `file`.
roost::options every_task_traced_on_two_sockets(const std::string& sched, unsigned workers, const std::string& file) {
  roost::options o = roost_test::opts(sched, workers);
  o.platform = "sim";
  o.topology = "pack:2 l3:1(size=1MiB) core:2 pu:1";
  o.trace = file;
  o.trace_depth = "all";
  return o;
}

void remove_trace(const std::string& file) {
  std::remove(file.c_str());
  std::remove((file + ".json").c_str());
}

// Where a runtime keeps its trace when its path no longer names it (tracer.cpp, keep_if_replaced_locked).
std::string kept_trace_of(const std::string& file) {
  return file + ".pid" + std::to_string(static_cast<long>(::getpid())) + ".kept";
}

roost::options one_worker_tracing_to(const std::string& file) {
  roost::options o;
  o.workers = 1;
  o.trace = file;
  return o;
}

}  // namespace

class Trace : public ::testing::TestWithParam<const char*> {};

TEST_P(Trace, EventsMatchTheObserver) {
  const std::string file = roost_test::temp_path(std::string("roost_test_") + GetParam() + ".trace");
  paths obs;
  {
    roost::options o;
    o.scheduler = GetParam();
    o.workers = 2;
    o.trace = file;
    roost::runtime rt(o);
    roost::set_task_observer(&obs);
    // Large enough for several chunks per worker (tracer::kChunkRecords each): the reader joins them.
    EXPECT_EQ(rt.run([] { return fib(18); }), 2584);
    EXPECT_EQ(rt.run([] { return fib(16); }), 987);
    roost::set_task_observer(nullptr);
  }  // the trace is complete here
  tr::trace_file t = tr::read(file);
  EXPECT_TRUE(t.complete);
  EXPECT_GT(chunks_in(file), 2u * 3);
  EXPECT_EQ(t.workers, 2u);
  EXPECT_EQ(t.llc_domain.size(), 2u);
  EXPECT_GT(t.llc_bytes, 0u);
  std::map<std::uint64_t, std::pair<std::uint64_t, std::uint32_t>> begins;  // serial -> (parent, index)
  std::size_t ends = 0, touches = 0, iterations = 0, spawns = 0, idle_open = 0;
  for (const auto& r : t.records) {
    switch (static_cast<tr::kind>(r.kind)) {
      case tr::kind::task_begin: begins[r.a] = {r.b, r.index}; break;
      case tr::kind::task_end: ++ends; break;
      case tr::kind::touch: ++touches; EXPECT_EQ(r.b, 64u); break;
      case tr::kind::iteration_begin: ++iterations; break;
      case tr::kind::spawn: ++spawns; break;
      case tr::kind::steal:
        EXPECT_LT(r.a, 2u) << "victim";
        EXPECT_NE(r.a, r.worker) << "a worker does not steal from itself";
        EXPECT_EQ(r.b, 1u) << "a failed attempt is counted in steal_failures, not recorded";
        break;
      case tr::kind::steal_failures:
        EXPECT_GE(r.a, 1u) << "attempts";
        EXPECT_LT(r.b, 2u) << "the last victim";
        EXPECT_NE(r.b, r.worker) << "a worker does not steal from itself";
        break;
      case tr::kind::idle_begin: ++idle_open; break;
      case tr::kind::idle_end: EXPECT_GT(idle_open, 0u); --idle_open; break;
      default: break;
    }
  }
  EXPECT_EQ(begins.size(), obs.starts.size());
  EXPECT_EQ(ends, begins.size());  // the two roots too (the observer sees no root end; the tracer does)
  EXPECT_EQ(touches, 4181u + 1597u);   // fib(n) has fib(n+1) leaves: fib(18) and fib(16)
  EXPECT_EQ(iterations, 2u);
  EXPECT_EQ(spawns, 0u);  // a child's begin names its spawner and rank: no spawn records
  std::multiset<std::string> rebuilt;
  for (const auto& [serial, pi] : begins) {
    std::vector<std::uint32_t> rev{pi.second};
    for (std::uint64_t p = pi.first; p != 0; p = begins.at(p).first) rev.push_back(begins.at(p).second);
    std::string s;
    for (auto it = rev.rbegin(); it != rev.rend(); ++it) {
      if (!s.empty()) s += '.';
      s += std::to_string(*it);  // not ("." + ...): GCC 12 warned of a false -Wstringop-overflow there
    }
    rebuilt.insert(s);
  }
  EXPECT_EQ(rebuilt, obs.starts);
  std::ifstream js(file + ".json");
  std::string json((std::istreambuf_iterator<char>(js)), {});
  EXPECT_EQ(json.rfind("{\"traceEvents\":[", 0), 0u);
  EXPECT_NE(json.find("\"ph\":\"X\""), std::string::npos);
  EXPECT_EQ(json.substr(json.size() - 3), "]}\n");
  remove_trace(file);
}

INSTANTIATE_TEST_SUITE_P(Schedulers, Trace, ::testing::Values("ws", "ws-help", "adws"),
                         [](const auto& info) { return std::string(info.index == 1 ? "ws_help" : info.param); });

namespace {
// The tasks fib(n) spawns (fib's shape above: fib(n-1) spawned, fib(n-2) in the spawner) whose split depth
// (task_id::split_depth: the spawner's + 1 + rank) is at most max_split, when called in a task of split depth
// `split` that has spawned `rank` children so far.
std::size_t fib_tasks_within(int n, unsigned max_split, unsigned split = 0, unsigned rank = 0) {
  if (n < 2) return 0;
  const unsigned child = split + 1 + rank;
  const std::size_t spawned = child <= max_split ? 1 + fib_tasks_within(n - 1, max_split, child, 0) : 0;
  return spawned + fib_tasks_within(n - 2, max_split, split, rank + 1);
}

struct lane_counts {
  std::size_t begins = 0, ends = 0, resumes = 0, spawns = 0, touches = 0;
};
lane_counts count_kinds(const tr::trace_file& t) {
  lane_counts c;
  for (const auto& r : t.records) {
    c.begins += r.kind == static_cast<std::uint16_t>(tr::kind::task_begin);
    c.ends += r.kind == static_cast<std::uint16_t>(tr::kind::task_end);
    c.resumes += r.kind == static_cast<std::uint16_t>(tr::kind::task_resume);
    c.spawns += r.kind == static_cast<std::uint16_t>(tr::kind::spawn);
    c.touches += r.kind == static_cast<std::uint16_t>(tr::kind::touch);
  }
  return c;
}
}  // namespace

// ROOST_TRACE_DEPTH: a task that runs where it was spawned is recorded down to that split depth; deeper, its
// time is its spawner's. One worker, so that nothing is stolen and the answer is exact: under ws (work-first,
// every child through the engine) the root and the tasks of split depth <= D; under ws-help (an inline help-first spawn
// the tracer no longer turns off) the root alone. Touches are recorded at any depth.
// The header names each worker's last-level cache, for KRD to merge its accesses: a package with two L3s is
// two domains (it was one, the package: KRD then merged both caches' accesses; an outside-user campaign).
TEST(TraceHeader, EachWorkersDomainIsItsLastLevelCacheNotItsPackage) {
  auto domains = [](const char* topology) {
    const roost_test::temp_file temp("roost_test_llc_domains.trace");  // the trace and its PATH.json
    const std::string& file = temp.path();
    {
      roost::options o;
      o.workers = 4;
      o.topology = topology;
      o.trace = file;
      roost::runtime rt(o);
      rt.run([] {});
    }
    const tr::trace_file t = tr::read(file);
    return std::make_pair(t.llc_domain, t.llc_bytes);
  };
  using v = std::vector<std::uint32_t>;
  EXPECT_EQ(domains("pack:1 l3:2(size=64KiB) l2:2(size=16KiB) core:1 pu:1"), std::make_pair(v{0, 0, 1, 1}, std::uint64_t{65536}));
  EXPECT_EQ(domains("pack:2 l3:1(size=64KiB) l2:2(size=16KiB) core:1 pu:1"), std::make_pair(v{0, 0, 1, 1}, std::uint64_t{65536}));
  EXPECT_EQ(domains("pack:1 l3:1(size=64KiB) l2:4(size=16KiB) core:1 pu:1"), std::make_pair(v{0, 0, 0, 0}, std::uint64_t{65536}));
  EXPECT_EQ(domains("pack:2 l3:2(size=64KiB) core:1 pu:1"), std::make_pair(v{0, 1, 2, 3}, std::uint64_t{65536}));
  // No cache described: the package is the domain.
  EXPECT_EQ(domains("pack:2 core:2 pu:1").first, (v{0, 0, 1, 1}));
}

// A runtime made while another lives may not write one of that one's files: a simulated report or a cats
// profile at a live runtime's trace or timeline emptied it and wrote over it without a word (an
// outside-user campaign). Once the first runtime is gone, the path is free.
TEST(TraceOutputs, ALiveRuntimesFilesAreNotAnotherRuntimesOutputs) {
  const std::string file = roost_test::temp_path("roost_test_claimed.trace");
  auto second = [&](const std::string& path, bool cats) {
    roost::options o;
    o.workers = 2;
    if (cats) {
      o.scheduler = "cats";
      o.cats_profile = path;
    } else {
      o.platform = "sim";
      o.topology = "pack:2 l3:1(size=1MiB) core:1 pu:1";
      o.sim_report = path;
    }
    roost::runtime rt(o);
    rt.run([] {});
  };
  {
    roost::options o;
    o.workers = 2;
    o.trace = file;
    roost::runtime first(o);
    first.run([] {});
    for (const auto& [path, cats] : {std::pair{file, false}, std::pair{file + ".json", false}, std::pair{file, true}}) {
      try {
        second(path, cats);
        ADD_FAILURE() << path << (cats ? " as a cats profile" : " as a report") << ": no error";
      } catch (const roost::config_error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find(cats ? "cats_profile" : "sim_report"), std::string::npos) << m;
        EXPECT_NE(m.find("another live roost::runtime writes"), std::string::npos) << m;
      }
    }
    // Nor does a runtime that fails to be made (a setting that does not resolve) empty it as its report (a
    // review: the claim was checked only once the settings resolved).
    const auto size_before = std::filesystem::file_size(file);
    EXPECT_GT(size_before, 0u);
    try {
      roost::options bad;
      bad.platform = "sim";
      bad.sim_report = file;
      bad.scheduler = "no-such-scheduler";
      roost::runtime rt(bad);
      ADD_FAILURE() << "a runtime with no such scheduler was made";
    } catch (const roost::config_error&) {
    }
    EXPECT_EQ(std::filesystem::file_size(file), size_before);
    first.run([] {});
  }
  const tr::trace_file t = tr::read(file);
  EXPECT_TRUE(t.complete);  // the first runtime's trace, whole
  second(file, false);      // free now
  std::remove(file.c_str());
  std::remove((file + ".json").c_str());
}

// Another process's runtime tracing to the same path renames its own file over this one's when it starts
// (stood in for here by a rename of another file): this runtime's trace is kept beside it, at the path with
// the process's id and ".kept" appended, with its timeline, and stderr names both; the other file stays at
// the path, and this runtime's event-less FILE.json, still there, is removed. It
// went on writing a file no directory held, said nothing, and made its timeline from the other's trace (an
// outside-user campaign).
TEST(TraceOutputs, ATraceWhosePathAnotherWriterTookIsKeptBesideIt) {
  const std::string file = roost_test::temp_path("roost_test_replaced.trace"), kept = kept_trace_of(file);
  remove_trace(file);
  remove_trace(kept);
  {
    roost::runtime rt(one_worker_tracing_to(file));
    EXPECT_EQ(rt.run([] { return fib(12); }), 144);
    const std::string other = file + ".other";
    {
      std::ofstream out(other);
      out << "another writer's file\n";
    }
    ASSERT_EQ(std::rename(other.c_str(), file.c_str()), 0);
    EXPECT_EQ(rt.run([] { return fib(12); }), 144);
    testing::internal::CaptureStderr();
  }
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("took the trace file's path while this runtime wrote it; this runtime's trace is kept at '" +
                      kept + "'"),
            std::string::npos) << said;
  std::ifstream at_path(file);
  std::string line;
  std::getline(at_path, line);
  EXPECT_EQ(line, "another writer's file");
  const tr::trace_file t = tr::read(kept);
  EXPECT_TRUE(t.complete);
  EXPECT_GT(std::filesystem::file_size(kept + ".json"), 20u) << "a timeline with events";
  EXPECT_FALSE(std::filesystem::exists(file + ".json"));
  remove_trace(file);
  remove_trace(kept);
}

// A trace file removed while its runtime writes it is kept the same way, and said as removed.
TEST(TraceOutputs, ATraceFileRemovedWhileWrittenIsKept) {
  const std::string file = roost_test::temp_path("roost_test_removed.trace"), kept = kept_trace_of(file);
  remove_trace(file);
  remove_trace(kept);
  {
    roost::runtime rt(one_worker_tracing_to(file));
    rt.run([] {});
    ASSERT_EQ(std::remove(file.c_str()), 0);
    testing::internal::CaptureStderr();
  }
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("was removed or moved while this runtime wrote it; this runtime's trace is kept at '" + kept + "'"),
            std::string::npos) << said;
  EXPECT_TRUE(tr::read(kept).complete);
  EXPECT_FALSE(std::filesystem::exists(file + ".json")) << "its event-less timeline goes";
  remove_trace(file);
  remove_trace(kept);
}

// A native runtime writes no report: ROOST_SIM_REPORT's path it was given is not taken, and the first simulated
// runtime after it writes FILE itself (an earlier version of the numbers' skip counted it as written: FILE.2).
TEST(TraceOutputs, ANativeRuntimeLeavesTheReportsFirstNumberFree) {
  const std::string report = roost_test::temp_path("roost_test_native_report.json");
  std::remove(report.c_str());
  std::remove((report + ".2").c_str());
  roost_test::scoped_env env("ROOST_SIM_REPORT", report.c_str());
  {
    roost::options o;
    o.workers = 1;
    roost::runtime native(o);
    native.run([] {});
  }
  {
    roost::options o;
    o.workers = 2;
    o.platform = "sim";
    o.topology = "pack:2 l3:1(size=1MiB) core:1 pu:1";
    roost::runtime sim(o);
    sim.run([] {});
  }
  EXPECT_GT(std::filesystem::file_size(report), 0u);
  EXPECT_FALSE(std::filesystem::exists(report + ".2"));
  std::remove(report.c_str());
  std::remove((report + ".2").c_str());
}

// ROOST_TRACE's numbers skip a file a runtime of this process was given in code: ROOST_TRACE's first runtime
// after a runtime given FILE in code wrote over that trace without a word (an outside-user campaign; its third
// after one given FILE.2 did too, the same skip). Workers tell the traces apart: 1 in code, 2 from the variable.
// The path in code is spelled with a "./" the variable's lacks: one file.
TEST(TraceOutputs, TheVariablesNumbersSkipAPathARuntimeWasGivenInCode) {
  const std::string file = roost_test::temp_path("roost_test_numbers_skip.trace");
  for (const std::string& f : {file, file + ".2", file + ".3"}) remove_trace(f);
  {
    roost::options o;
    o.workers = 1;
    const std::size_t slash = file.find_last_of('/');
    o.trace = file.substr(0, slash) + "/." + file.substr(slash);
    roost::runtime rt(o);
    rt.run([] {});
  }
  {
    roost_test::scoped_env env("ROOST_TRACE", file.c_str());
    roost::options o;
    o.workers = 2;
    testing::internal::CaptureStderr();
    {
      roost::runtime rt(o);
      rt.run([] {});
    }
    const std::string said = testing::internal::GetCapturedStderr();
    EXPECT_NE(said.find("writes its trace to '" + file + ".2'"), std::string::npos) << said;
  }
  EXPECT_EQ(tr::read(file).workers, 1u) << "the trace given in code is still there";
  EXPECT_EQ(tr::read(file + ".2").workers, 2u);
  for (const std::string& f : {file, file + ".2", file + ".3"}) remove_trace(f);
}

// Nor does a later value of the variable take a file an earlier value's numbers gave: ROOST_TRACE=FILE twice
// writes FILE and FILE.2, and ROOST_TRACE=FILE.2 then wrote over FILE.2 (a review).
TEST(TraceOutputs, ANumberTheVariableGaveIsNotTakenUnderAnotherValue) {
  const std::string file = roost_test::temp_path("roost_test_numbers_values.trace");
  for (const std::string& f : {file, file + ".2", file + ".2.2"}) remove_trace(f);
  auto traced_run = [](const char* value, unsigned workers) {
    roost_test::scoped_env env("ROOST_TRACE", value);
    roost::options o;
    o.workers = workers;
    testing::internal::CaptureStderr();  // the numbers' notes
    {
      roost::runtime rt(o);
      rt.run([] {});
    }
    (void)testing::internal::GetCapturedStderr();
  };
  traced_run(file.c_str(), 1);
  traced_run(file.c_str(), 2);
  traced_run((file + ".2").c_str(), 1);
  EXPECT_EQ(tr::read(file + ".2").workers, 2u) << "the second runtime's trace is still there";
  EXPECT_EQ(tr::read(file + ".2.2").workers, 1u);
  for (const std::string& f : {file, file + ".2", file + ".2.2"}) remove_trace(f);
}

// A trace path that is a symbolic link is written through: the trace lands in the link's target and the link
// stays. A dangling link into a directory that does not exist is an error naming that directory; it was
// accepted and replaced by a regular file (an outside-user campaign).
TEST(TraceOutputs, ATraceThroughASymbolicLinkKeepsTheLink) {
  const std::string link = roost_test::temp_path("roost_test_trace_link");
  const std::string target = roost_test::temp_path("roost_test_trace_link_target");
  const std::string missing_dir = roost_test::temp_path("roost_test_no_such_dir");
  auto trace_to = [&](const std::string& path) {
    roost::options o;
    o.workers = 1;
    o.trace = path;
    roost::runtime rt(o);
    rt.run([] {});
  };
  std::remove(link.c_str());
  std::remove(target.c_str());
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);  // dangling: the target is made by the trace
  trace_to(link);
  struct stat st;
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_TRUE(tr::read(target).complete);
  std::remove(link.c_str());
  std::remove(target.c_str());
  std::remove((target + ".json").c_str());
  ASSERT_EQ(::symlink((missing_dir + "/t.trace").c_str(), link.c_str()), 0);
  try {
    trace_to(link);
    ADD_FAILURE() << "a link into a missing directory: no error";
  } catch (const roost::config_error& e) {
    EXPECT_NE(std::string(e.what()).find(missing_dir), std::string::npos) << e.what();
  }
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the link was replaced";
  std::remove(link.c_str());
  std::remove((link + ".json").c_str());
  // Links in a loop: no file can be made there (ELOOP), and the link stays (a review: it was replaced).
  const std::string other = link + "_other";
  std::remove(other.c_str());
  ASSERT_EQ(::symlink(other.c_str(), link.c_str()), 0);
  ASSERT_EQ(::symlink(link.c_str(), other.c_str()), 0);
  try {
    trace_to(link);
    ADD_FAILURE() << "a link in a loop: no error";
  } catch (const roost::config_error& e) {
    EXPECT_NE(std::string(e.what()).find(std::strerror(ELOOP)), std::string::npos) << e.what();
  }
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the link in a loop was replaced";
  std::remove(link.c_str());
  std::remove(other.c_str());
  std::remove((link + ".json").c_str());
}

TEST(TraceDepth, TasksBelowTheDepthArePartOfTheirSpawnersSpan) {
  struct expect {
    const char* sched;
    const char* depth;
    std::size_t begins;
  };
  const std::size_t all = fib_tasks_within(14, ~0u);
  ASSERT_EQ(all, 609u);  // one task per call with n >= 2: fib(15) - 1
  for (const expect& e : {expect{"ws", "3", 1 + fib_tasks_within(14, 3)}, expect{"ws", "0", 1},
                          expect{"ws", "all", 1 + all}, expect{"ws-help", "all", 1 + all}, expect{"ws-help", "5", 1}}) {
    SCOPED_TRACE(std::string(e.sched) + " ROOST_TRACE_DEPTH=" + e.depth);
    const std::string file = roost_test::temp_path("roost_depth.trace");
    {
      roost::options o;
      o.scheduler = e.sched;
      o.workers = 1;
      o.trace = file;
      o.trace_depth = e.depth;
      roost::runtime rt(o);
      ASSERT_EQ(rt.run([] { return fib(14); }), 377);
    }
    const lane_counts c = count_kinds(tr::read(file));
    EXPECT_EQ(c.begins, e.begins);
    EXPECT_EQ(c.ends, e.begins);  // the root's end too (an outside-user campaign: its span was missing)
    EXPECT_EQ(c.spawns, 0u);
    EXPECT_EQ(c.resumes, 0u);
    EXPECT_EQ(c.touches, 610u);  // fib(14)'s leaves, folded or not
    remove_trace(file);
  }
  ASSERT_LT(fib_tasks_within(14, 3), all / 50);  // the depth does fold most of them
}

// ROOST_TRACE_DEPTH=all records every task, the halves and children of the inline paths too (parallel_invoke,
// ws-help's task_group), each with its spawner recorded, so that roost-analyze mapping can place a stolen one
// (it was left out: its spawner was an inline path's unnamed task). Two workers, so that halves may be stolen;
// at any interleaving every task must have a recorded spawner and the count of tasks is fixed.
TEST(TraceDepth, AllRecordsEveryTaskWithItsSpawner) {
  struct invoke_fib {
    static long f(int n) {
      if (n < 2) return n;
      long a = 0, b = 0;
      roost::parallel_invoke([&] { a = f(n - 1); }, [&] { b = f(n - 2); });
      return a + b;
    }
  };
  for (const char* sched : {"ws", "ws-help", "adws"}) {
    SCOPED_TRACE(sched);
    const std::string file = roost_test::temp_path("roost_depth_all.trace");
    constexpr int kRuns = 20;
    {
      roost::options o;
      o.scheduler = sched;
      o.workers = 2;
      o.trace = file;
      o.trace_depth = "all";
      o.platform = "native";
      roost::runtime rt(o);
      for (int i = 0; i < kRuns; ++i) {
        ASSERT_EQ(rt.run([] { return invoke_fib::f(14); }), 377);
        ASSERT_EQ(rt.run([] { return fib(12); }), 144);
      }
    }
    const tr::trace_file t = tr::read(file);
    std::set<std::uint64_t> opened;
    std::size_t begins = 0, roots = 0, unrecorded = 0, dangling = 0;
    for (const auto& r : t.records)
      if (r.kind == static_cast<std::uint16_t>(tr::kind::task_begin)) opened.insert(r.a);
    for (const auto& r : t.records) {
      if (r.kind != static_cast<std::uint16_t>(tr::kind::task_begin)) continue;
      ++begins;
      if (r.b == 0) ++roots;
      else if (r.b == tr::kUnrecorded) ++unrecorded;
      else if (!opened.count(r.b)) ++dangling;
    }
    EXPECT_EQ(roots, 2u * kRuns);
    EXPECT_EQ(unrecorded, 0u);
    EXPECT_EQ(dangling, 0u);
    // Every call with n >= 2 spawns: both halves of a parallel_invoke are tasks (1,218 in invoke_fib(14):
    // the second ran in its caller's span, and half the leaves were no tasks; an outside-user campaign), one
    // child of a task_group (232 in fib(12)), and the two roots.
    EXPECT_EQ(begins, kRuns * (2 + 2 * fib_tasks_within(14, ~0u) + fib_tasks_within(12, ~0u)));
    remove_trace(file);
  }
}

// A simulated trace says what the memory hierarchy made of each touch (seed 002 Fig. 8): a memory record right
// after it, in the same lane, with its lines, their modelled time, and the lines that came from another
// node's DRAM. Two nodes, one worker on node 0, 64 KiB in two coarse parts (one per node, whichever comes
// first): half the lines are remote; touched again, they are in the worker's caches and cost less.
namespace {
// One simulated ws worker on `topology`, tracing to `file`.
roost::options one_simulated_worker_tracing(const std::string& topology, const std::string& file) {
  roost::options o;
  o.scheduler = "ws";
  o.platform = "sim";
  o.workers = 1;
  o.topology = topology;
  o.trace = file;
  return o;
}
}  // namespace

TEST(TraceSim, EachTouchIsFollowedByItsModelledMemoryTime) {
  const std::string file = roost_test::temp_path("roost_sim_memory.trace");
  constexpr std::size_t kBytes = 64 * 1024;
  {
    roost::runtime rt(one_simulated_worker_tracing(
        "pack:2 [numa(memory=1GiB)] l3:1(size=1MiB) l2:1(size=256KiB) core:1 pu:1", file));
    void* data = roost::numa_alloc(kBytes, roost::distribution::coarse, 2);
    rt.run([&] {
      roost::touch(data, kBytes, roost::access::write);
      roost::touch(data, kBytes, roost::access::read);
    });
    roost::numa_free(data);
  }
  const tr::trace_file t = tr::read(file);
  std::vector<tr::record> memory;
  for (std::size_t i = 0; i < t.records.size(); ++i) {
    const tr::record& r = t.records[i];
    if (r.kind != static_cast<std::uint16_t>(tr::kind::memory)) continue;
    ASSERT_GT(i, 0u);
    EXPECT_EQ(t.records[i - 1].kind, static_cast<std::uint16_t>(tr::kind::touch));
    EXPECT_EQ(t.records[i - 1].worker, r.worker);
    memory.push_back(r);
  }
  ASSERT_EQ(memory.size(), 2u);
  for (const tr::record& m : memory) {
    EXPECT_EQ(m.worker, 0);
    EXPECT_EQ(m.a, kBytes / 64);
  }
  EXPECT_EQ(memory[0].index, kBytes / 64 / 2);  // one part on the other node
  EXPECT_EQ(memory[1].index, 0u);              // cached now: nothing from DRAM
  EXPECT_GT(memory[0].b, 0u);
  EXPECT_LT(memory[1].b, memory[0].b);
  remove_trace(file);
}

// touch_rows in a simulated trace is one record, as natively, and one memory record for all its rows: the
// simulation forwarded it to the tracer row by row, a touch and a memory record each (a 256-row tile wrote
// 512 records; heat2d's simulated trace was 36x the size it is now), while it charges each row as a stream.
TEST(TraceSim, TouchRowsIsOneRecordFollowedByOneMemoryRecord) {
  const std::string file = roost_test::temp_path("roost_sim_rows.trace");
  constexpr std::size_t kRowBytes = 1024, kRows = 64, kStride = 4096;
  alignas(64) static char data[kRows * kStride];
  {
    roost::runtime rt(one_simulated_worker_tracing("pack:1 l3:1(size=1MiB) l2:1(size=256KiB) core:1 pu:1", file));
    rt.run([&] { roost::touch_rows(data, kRowBytes, kRows, kStride, roost::access::read); });
  }
  const tr::trace_file t = tr::read(file);
  std::size_t rows_records = 0, touches = 0, memory = 0;
  for (std::size_t i = 0; i < t.records.size(); ++i) {
    const tr::record& r = t.records[i];
    rows_records += r.kind == static_cast<std::uint16_t>(tr::kind::touch_rows_read);
    touches += r.kind == static_cast<std::uint16_t>(tr::kind::touch);
    if (r.kind != static_cast<std::uint16_t>(tr::kind::memory)) continue;
    ++memory;
    ASSERT_GT(i, 0u);
    EXPECT_EQ(t.records[i - 1].kind, static_cast<std::uint16_t>(tr::kind::touch_rows_read));
    EXPECT_EQ(r.a, kRows * kRowBytes / 64);  // every row's lines
  }
  EXPECT_EQ(rows_records, 1u);
  EXPECT_EQ(touches, 0u);
  EXPECT_EQ(memory, 1u);
  remove_trace(file);
}

// With two workers the schedule is not fixed, but every recorded end belongs to a recorded begin or
// resumption (a stolen task is recorded whatever its depth; a folded task that suspends is recorded from its
// resumption on), and what the trace records is a subset of the tasks.
TEST(TraceDepth, EveryRecordedEndHasItsBeginOrResumption) {
  for (const char* sched : {"ws", "ws-help", "adws"}) {
    SCOPED_TRACE(sched);
    const std::string file = roost_test::temp_path("roost_depth2.trace");
    {
      roost::options o;
      o.scheduler = sched;
      o.workers = 2;
      o.trace = file;
      o.trace_depth = "2";
      roost::runtime rt(o);
      for (int i = 0; i < 20; ++i) ASSERT_EQ(rt.run([] { return fib(16); }), 987);
    }
    tr::trace_file t = tr::read(file);
    std::set<std::uint64_t> opened;
    std::size_t ends = 0;
    for (const auto& r : t.records)  // lane by lane: a task ends on its lane after it began or resumed anywhere
      if (r.kind == static_cast<std::uint16_t>(tr::kind::task_begin) ||
          r.kind == static_cast<std::uint16_t>(tr::kind::task_resume))
        opened.insert(r.a);
    for (const auto& r : t.records)
      if (r.kind == static_cast<std::uint16_t>(tr::kind::task_end)) {
        ++ends;
        EXPECT_TRUE(opened.count(r.a)) << "an end of serial " << r.a << " that never began or resumed";
      }
    EXPECT_LE(ends, 20 * fib_tasks_within(16, ~0u));
    remove_trace(file);
  }
}

// ROOST_TRACE_DEPTH=auto (the default): whatever depths the workers' budgets pick, the recorded tasks form
// a tree (a task recorded where it was spawned has a recorded spawner), every end has its begin or
// resumption, and every touch is recorded. Which tasks are recorded depends on what records cost on this
// machine; next_depth's rule itself is tested on fixed figures below.
TEST(TraceDepth, AutoRecordsATreeOfTasksAndEveryTouch) {
  for (const char* sched : {"ws", "ws-help", "adws", "cats"}) {
    for (unsigned workers : {1u, 2u}) {
      SCOPED_TRACE(std::string(sched) + " at " + std::to_string(workers) + " workers");
      const std::string file = roost_test::temp_path("roost_depth_auto.trace");
      constexpr int kRuns = 30;
      {
        roost::options o;
        o.scheduler = sched;
        o.workers = workers;
        o.trace = file;
        o.trace_depth = "auto";
        o.platform = "native";
        roost::runtime rt(o);
        EXPECT_NE(rt.describe().find("as deep as 1% of each worker's time allows"), std::string::npos) << rt.describe();
        for (int i = 0; i < kRuns; ++i) ASSERT_EQ(rt.run([] { return fib(16); }), 987);
      }
      const tr::trace_file t = tr::read(file);
      std::set<std::uint64_t> opened;
      for (const auto& r : t.records)
        if (r.kind == static_cast<std::uint16_t>(tr::kind::task_begin) ||
            r.kind == static_cast<std::uint16_t>(tr::kind::task_resume))
          opened.insert(r.a);
      std::size_t begins = 0, roots = 0;
      for (const auto& r : t.records) {
        if (r.kind == static_cast<std::uint16_t>(tr::kind::task_begin)) {
          ++begins;
          if (r.b == 0) ++roots;
          else if (r.b != tr::kUnrecorded) EXPECT_TRUE(opened.count(r.b)) << "a spawner " << r.b << " never recorded";
        }
        if (r.kind == static_cast<std::uint16_t>(tr::kind::task_end))
          EXPECT_TRUE(opened.count(r.a)) << "an end of serial " << r.a << " that never began or resumed";
      }
      EXPECT_EQ(roots, static_cast<std::size_t>(kRuns));  // a stolen task whose spawner was not: kUnrecorded
      EXPECT_LE(begins, kRuns * (1 + fib_tasks_within(16, ~0u)));
      EXPECT_EQ(count_kinds(t).touches, kRuns * 1597u);  // fib(16)'s leaves, recorded or not
      remove_trace(file);
    }
  }
}

// next_depth: the rule the workers' depths follow under auto, on fixed figures. 2560 records at 10 ticks:
// 25,600 ticks of recording, against a 1% budget of the worker's own time.
TEST(TraceDepth, AutoDepthFollowsWhatTheRecordsCost) {
  using t = tr::tracer;
  constexpr std::uint32_t all = t::kAllDepths;
  constexpr double budget = 0.01, tick = 10;
  constexpr std::uint32_t n = 2560;
  constexpr std::uint64_t cost = 25600;
  // The span of a chunk of n records, `own` ticks of it the worker's own work.
  auto span_with = [&](double own) { return cost + static_cast<std::uint64_t>(own); };
  // Every record a task's: they may have the whole budget. span_at(f): they take f times it.
  auto span_at = [&](double f) { return span_with(cost / (f * budget)); };
  // 6x over: three halvings (2^3 >= 6), from the deepest task recorded when the depth was all.
  EXPECT_EQ(t::next_depth(all, 14, n, n, span_at(6), tick, budget), 11u);
  EXPECT_EQ(t::next_depth(12, 12, n, n, span_at(6), tick, budget), 9u);
  EXPECT_EQ(t::next_depth(12, 12, n, n, span_at(1.5), tick, budget), 11u);  // over at all: at least one level
  EXPECT_EQ(t::next_depth(2, 14, n, n, span_at(50), tick, budget), 0u);      // not below 0
  EXPECT_EQ(t::next_depth(9, 20, n, n, cost / 2, tick, budget), 0u);         // nothing but recording: all the way
  // Within the budget: kept.
  EXPECT_EQ(t::next_depth(9, 9, n, n, span_at(0.5), tick, budget), 9u);
  EXPECT_EQ(t::next_depth(all, 14, n, n, span_at(0.5), tick, budget), all);
  // Under a quarter of it: one level deeper, if tasks at the depth were recorded (there may be deeper ones).
  EXPECT_EQ(t::next_depth(9, 9, n, n, span_at(0.1), tick, budget), 10u);
  EXPECT_EQ(t::next_depth(9, 7, n, n, span_at(0.1), tick, budget), 9u);
  EXPECT_EQ(t::next_depth(all, 14, n, n, span_at(0.1), tick, budget), all);
  // Too few records to price, or no task among them (a chunk of touches): the depth decides nothing there.
  EXPECT_EQ(t::next_depth(9, 9, 100, 100, 1000, tick, budget), 9u);
  EXPECT_EQ(t::next_depth(all, 0, n, 0, cost + 1000, tick, budget), all);
  EXPECT_EQ(t::next_depth(9, 0, n, 0, cost + 1000, tick, budget), 9u);
  // A tenth of the records are tasks' (2,560 ticks), the rest touches (23,040), over the budget alone:
  // the tasks may still have a quarter of it.
  EXPECT_EQ(t::next_depth(12, 12, n, n / 10, span_with(1.28e6), tick, budget), 12u);  // quarter 3,200: within
  EXPECT_EQ(t::next_depth(12, 12, n, n / 10, span_with(6.4e5), tick, budget), 11u);   // quarter 1,600: over
  // Half are tasks' (12,800 ticks): they may have the budget less the other half.
  EXPECT_EQ(t::next_depth(9, 9, n, n / 2, span_with(5.12e6), tick, budget), 9u);    // 38,400 left: within
  EXPECT_EQ(t::next_depth(9, 9, n, n / 2, span_with(1.024e7), tick, budget), 10u);  // 89,600 left: deeper
  EXPECT_EQ(t::next_depth(9, 9, n, n / 2, span_with(2e6), tick, budget), 8u);       // 7,200 left: over
}

TEST(TraceDepth, AutoIsTheDefaultAndNamesAreRead) {
  {
    roost_test::scoped_env unset("ROOST_TRACE_DEPTH", "");  // set empty, then removed: the default
    unsetenv("ROOST_TRACE_DEPTH");
    EXPECT_TRUE(roost::resolve({}).trace_depth_auto);
  }
  for (const char* v : {"auto", "AUTO"}) {
    roost::options o;
    o.trace_depth = v;
    EXPECT_TRUE(roost::resolve(o).trace_depth_auto) << v;
  }
  roost::options all;
  all.trace_depth = "all";
  EXPECT_FALSE(roost::resolve(all).trace_depth_auto);
  EXPECT_EQ(roost::resolve(all).trace_depth, ~std::uint32_t{0});
  roost::options five;
  five.trace_depth = "5";
  EXPECT_FALSE(roost::resolve(five).trace_depth_auto);
  EXPECT_EQ(roost::resolve(five).trace_depth, 5u);
}

// An observer installed while a task runs makes the engine report that task's end; a tracer that never
// recorded its begin writes no end for it (it wrote one with serial 0, which no reader can place).
TEST(TraceDepth, AnEndWhoseBeginWasNotRecordedIsNotWritten) {
  const std::string file = roost_test::temp_path("roost_depth_observer.trace");
  paths obs;
  {
    roost::options o;
    o.scheduler = "ws";
    o.workers = 1;
    o.trace = file;
    o.trace_depth = "0";  // the work-first child below is not recorded
    roost::runtime rt(o);
    rt.run([&] {
      roost::task_group tg;
      tg.run([&] { roost::set_task_observer(&obs); });
      tg.wait();
    });
    roost::set_task_observer(nullptr);
  }
  const lane_counts c = count_kinds(tr::read(file));
  EXPECT_EQ(c.begins, 1u);  // the root
  EXPECT_EQ(c.ends, 1u);    // the root's; the child's begin was never written, nor its end
  remove_trace(file);
}

// Failed steal attempts are counted, one steal_failures record a search: it ends the search, so in its lane
// the next record is the steal that succeeded, the worker leaving its loop (idle_end) or going to sleep, or
// nothing (the trace's end). Two workers, many runs: the second worker searches while the first spawns.
// Simulated (seeded, the same schedule every time), a search that fails is certain: the count is checked
// there too.
// Every victim a trace names is a worker, under every scheduler, on a machine with a socket no worker is on:
// cab searched such a socket too, and recorded its "head", the worker count, as the victim (an outside-user
// campaign: victims 0, 1 and 2 in a trace of two workers).
TEST(TraceSteals, EveryVictimIsAWorker) {
  for (const char* sched : {"ws", "ws-help", "hws", "cab", "cats", "adws", "adws-ml", "numa"}) {
    SCOPED_TRACE(sched);
    const std::string file = roost_test::temp_path("roost_victims.trace");
    constexpr unsigned kWorkers = 2;
    {
      // Both workers on the first socket: the second has none.
      roost::runtime rt(every_task_traced_on_two_sockets(sched, kWorkers, file));
      for (int i = 0; i < 10; ++i) ASSERT_EQ(rt.run([] { return fib(12); }), 144);
    }
    const tr::trace_file t = tr::read(file);
    std::size_t named = 0;
    for (const tr::record& r : t.records) {
      if (r.kind == static_cast<std::uint16_t>(tr::kind::steal)) {
        EXPECT_LT(r.a, kWorkers) << "a steal's victim";
        ++named;
      } else if (r.kind == static_cast<std::uint16_t>(tr::kind::steal_failures)) {
        EXPECT_LT(r.b, kWorkers) << "the last victim of a search";
        ++named;
      }
    }
    EXPECT_GT(named, 0u);
    remove_trace(file);
  }
}

TEST(TraceSteals, FailedAttemptsAreOneRecordASearch) {
  for (const char* platform : {"native", "sim"})
  for (const char* sched : {"ws", "ws-help", "adws"}) {
    SCOPED_TRACE(std::string(sched) + " " + platform);
    const std::string file = roost_test::temp_path("roost_steal_failures.trace");
    {
      roost::options o;
      o.scheduler = sched;
      o.workers = 2;
      o.platform = platform;
      // Simulated, a worker is one of the topology's PUs: two, whatever CPUs this machine lends the test.
      if (std::string(platform) == "sim") o.topology = "pack:1 l3:1(size=1MiB) core:2 pu:1";
      o.trace = file;
      roost::runtime rt(o);
      for (int i = 0; i < 50; ++i) ASSERT_EQ(rt.run([] { return fib(14); }), 377);
    }
    const tr::trace_file t = tr::read(file);
    std::size_t searches = 0;
    for (std::size_t i = 0; i < t.records.size(); ++i) {
      const tr::record& r = t.records[i];
      if (r.kind != static_cast<std::uint16_t>(tr::kind::steal_failures)) continue;
      ++searches;
      EXPECT_GE(r.a, 1u);
      if (i + 1 == t.records.size() || t.records[i + 1].worker != r.worker) continue;  // its lane's last
      const auto next = static_cast<tr::kind>(t.records[i + 1].kind);
      EXPECT_TRUE(next == tr::kind::steal || next == tr::kind::idle_end || next == tr::kind::sleep_begin)
          << "after a steal_failures record: kind " << t.records[i + 1].kind;
      if (next == tr::kind::steal) EXPECT_EQ(t.records[i + 1].b, 1u);
    }
    std::size_t idle_ends = 0, sleeps = 0, steals = 0;
    for (const auto& r : t.records) {
      idle_ends += r.kind == static_cast<std::uint16_t>(tr::kind::idle_end);
      sleeps += r.kind == static_cast<std::uint16_t>(tr::kind::sleep_begin);
      steals += r.kind == static_cast<std::uint16_t>(tr::kind::steal);
    }
    EXPECT_LE(searches, idle_ends + sleeps + steals + 2);  // at most one a search (+ each lane's last)
    if (std::string(platform) == "sim") EXPECT_GT(searches, 0u);
    remove_trace(file);
  }
}

TEST(TraceDepth, BadValuesAreConfigErrors) {
  for (const char* bad : {"-1", "1000001", "deep", "", "3.5"}) {
    roost::options o;
    o.trace = roost_test::temp_path("roost_depth_bad.trace");
    o.trace_depth = bad;
    roost_test::expect_mentions(roost_test::config_error_of([&] { roost::runtime rt(o); }),
                                {"options::trace_depth", "auto, an integer in [0, 1000000] or all"});
  }
}

TEST(TraceFile, DamagedFilesGiveTheByteOffset) {
  tr::trace_file t;
  t.workers = 1;
  t.topology = "test";
  t.llc_domain = {0};
  t.records.push_back({1, 2, 3, 4, static_cast<std::uint16_t>(tr::kind::task_begin), 0});
  const std::string file = roost_test::temp_path("roost_damaged.trace");
  tr::write_binary(file, t);
  EXPECT_EQ(tr::read(file).records.size(), 1u);

  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto rewrite = [&](const std::string& b) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(b.data(), static_cast<std::streamsize>(b.size()));
  };
  rewrite(bytes.substr(0, bytes.size() - 5));
  try {
    tr::read(file);
    FAIL();
  } catch (const tr::format_error& e) {
    EXPECT_NE(std::string(e.what()).find("truncated at byte"), std::string::npos) << e.what();
  }
  std::string other = bytes;
  other[8] = 7;  // version 7
  rewrite(other);
  try {
    tr::read(file);
    FAIL();
  } catch (const tr::format_error& e) {
    EXPECT_NE(std::string(e.what()).find("version 7"), std::string::npos) << e.what();
  }
  rewrite("not a trace at all");
  EXPECT_THROW(tr::read(file), tr::format_error);
  std::remove(file.c_str());
}

// What a trace file stores, read from its bytes (trace_format.hpp), not through a reader: its version, and
// the kinds each chunk of `lane` holds, in file order. For tests of what the writers leave out.
struct stored_kinds {
  std::uint32_t version = 0;
  std::vector<std::vector<tr::kind>> chunks;
  std::size_t count(bool (*is)(tr::kind)) const {
    std::size_t n = 0;
    for (const auto& c : chunks)
      for (tr::kind k : c) n += is(k);
    return n;
  }
};
stored_kinds kinds_on_disk(const std::string& path, std::uint32_t lane = 0) {
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto u32 = [&](std::size_t at) { std::uint32_t v; std::memcpy(&v, bytes.data() + at, 4); return v; };
  stored_kinds out;
  out.version = u32(8);
  std::size_t at = 8 + 4 + 4 + 8 + 8;
  at += 4 + u32(at);              // the topology summary
  at += 8 + 8 + 4ull * u32(12);  // cache sizes, domains
  while (at + sizeof(tr::chunk_header) <= bytes.size()) {
    tr::chunk_header c;
    std::memcpy(&c, bytes.data() + at, sizeof c);
    if (c.lane == lane) {
      const std::size_t kinds_at = at + sizeof c + 8ull * c.na + 8ull * c.nb + 4ull * c.count + 4ull * c.ni;
      auto& kinds = out.chunks.emplace_back();
      for (std::uint32_t i = 0; i < c.count; ++i)
        kinds.push_back(static_cast<tr::kind>(static_cast<std::uint8_t>(bytes[kinds_at + i])));
    }
    at += sizeof c + c.body_bytes();
  }
  return out;
}

// A trace of one worker for the tools' writer (write_binary), records to be added.
tr::trace_file one_worker_trace() {
  tr::trace_file t;
  t.workers = 1;
  t.topology = "test";
  t.llc_domain = {0};
  t.complete = true;
  return t;
}

// Version 5 stores a touch under 4 GiB short (the mode in its kind, the size in the index column: 17 bytes
// instead of 25) and readers give it back as the touch record it stands for; a larger touch stays whole. A
// short kind in a version 4 file is damage, not a touch.
TEST(TraceFile, TouchesUnder4GiBAreStoredShortAndReadAsTouches) {
  const std::string file = roost_test::temp_path("roost_short_touch.trace");
  const std::size_t huge = std::size_t{5} << 30;  // never read: only the tracer listens
  {
    roost::options o;
    o.workers = 1;
    o.trace = file;
    roost::runtime rt(o);
    rt.run([&] {
      roost::touch(g_buf.data(), 64, roost::access::read);
      roost::touch(g_buf.data() + 64, 100, roost::access::write);
      roost::touch(g_buf.data() + 128, 0xffffffffu, roost::access::read_write);
      roost::touch(g_buf.data(), huge, roost::access::read);
    });
  }
  std::vector<tr::record> touches;
  for (const auto& r : tr::read(file).records)
    if (tr::is_touch(static_cast<tr::kind>(r.kind))) touches.push_back(r);
  ASSERT_EQ(touches.size(), 4u);
  const std::uint64_t base = reinterpret_cast<std::uintptr_t>(g_buf.data());
  const std::uint64_t want[4][3] = {
      {base, 64, 0}, {base + 64, 100, 1}, {base + 128, 0xffffffffu, 2}, {base, huge, 0}};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(touches[i].kind, static_cast<std::uint16_t>(tr::kind::touch)) << i;
    EXPECT_EQ(touches[i].a, want[i][0]) << i;
    EXPECT_EQ(touches[i].b, want[i][1]) << i;
    EXPECT_EQ(touches[i].index, want[i][2]) << i;
  }
  // On disk: three short kinds and one whole touch in the worker's chunk.
  const stored_kinds stored = kinds_on_disk(file);
  EXPECT_EQ(stored.version, tr::kVersion);
  ASSERT_EQ(stored.chunks.size(), 1u);
  EXPECT_EQ(stored.count(tr::is_short_touch), 3u);
  EXPECT_EQ(stored.count([](tr::kind k) { return k == tr::kind::touch; }), 1u) << "a touch of 4 GiB or more stays whole";
  remove_trace(file);

  // The tools' writer stores short touches too, and reads back what it was given.
  tr::trace_file t = one_worker_trace();
  for (int i = 0; i < 4; ++i)
    t.records.push_back({static_cast<std::uint64_t>(i + 1), want[i][0], want[i][1],
                         static_cast<std::uint32_t>(want[i][2]), static_cast<std::uint16_t>(tr::kind::touch), 0});
  tr::write_binary(file, t);
  const tr::trace_file back = tr::read(file);
  ASSERT_EQ(back.records.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(back.records[i].b, want[i][1]) << i;
    EXPECT_EQ(back.records[i].index, want[i][2]) << i;
  }
  t.version = 4;  // a version 4 file cannot hold a short kind
  t.records = {{1, base, 0, 64, static_cast<std::uint16_t>(tr::kind::touch_write), 0}};
  tr::write_binary(file, t);
  try {
    tr::read(file);
    FAIL() << "a short touch in a version 4 file was read";
  } catch (const tr::format_error& e) {
    EXPECT_NE(std::string(e.what()).find("has kind 19"), std::string::npos) << e.what();
  }
  std::remove(file.c_str());
}

// An empty region names no byte: no record, whatever its form (an outside-user campaign: touch(nullptr, 0) of
// an empty vector was recorded, and KRD counted it as an access, a reuse at distance 0 of the last one's base;
// only an empty touch_rows too large to pack was dropped).
TEST(TraceFile, EmptyRegionsLeaveNoRecord) {
  const std::string file = roost_test::temp_path("roost_empty_touch.trace");
  {
    roost::options o;
    o.workers = 1;
    o.trace = file;
    roost::runtime rt(o);
    rt.run([&] {
      roost::touch(g_buf.data(), 64, roost::access::read);
      roost::touch(nullptr, 0, roost::access::read);
      roost::touch(g_buf.data() + 64, 0, roost::access::write);
      roost::touch_rows(g_buf.data(), 0, 4, 64, roost::access::read);  // rows of 0 bytes
      roost::touch_rows(g_buf.data(), 64, 0, 64, roost::access::read);  // no rows
      roost::touch_rows(g_buf.data(), 16, 2, 64, roost::access::write);
    });
  }
  std::vector<tr::record> touches;
  for (const auto& r : tr::read(file).records)
    if (tr::is_touch(static_cast<tr::kind>(r.kind))) touches.push_back(r);
  ASSERT_EQ(touches.size(), 2u);
  EXPECT_EQ(touches[0].b, 64u);
  EXPECT_EQ(touches[1].kind, static_cast<std::uint16_t>(tr::kind::touch_rows_write));
  remove_trace(file);
}

// A touch of 2^32 rows or more does not pack into one record: it goes out as records of fewer rows each,
// one after another, or, contiguous, as one touch. It went out row by row: a touch of 2^32 rows of 64 bytes
// wrote 3 GB in 8 s, and one of 2^24 empty rows 285 MB (an outside-user campaign, a review). Natively
// nothing reads the bytes, so a span nobody mapped is a valid region.
TEST(TraceFile, ATouchOfBillionsOfRowsIsAFewRecords) {
  const std::string file = roost_test::temp_path("roost_many_rows.trace");
  const auto* far = reinterpret_cast<const char*>(std::uintptr_t{1} << 44);
  const std::size_t rows = (std::size_t{1} << 32) + 5;
  {
    roost::options o;
    o.workers = 1;
    o.trace = file;
    roost::runtime rt(o);
    rt.run([&] {
      roost::touch_rows(far, 64, rows, 128, roost::access::write);        // two records of rows
      roost::touch_rows(far, 64, rows, 64, roost::access::read);          // contiguous: one touch
      roost::touch_rows(far, 0, std::size_t{1} << 40, 4096, roost::access::read);  // empty: nothing
      roost::touch_rows(far, 1, std::size_t{1} << 50, 2, roost::access::read);     // 2^18 records: its span
    });
  }
  const tr::trace_file t = tr::read(file);
  std::vector<tr::record> tiles, touches;
  for (const auto& r : t.records) {
    const auto k = static_cast<tr::kind>(r.kind);
    if (tr::is_whole_rows(k)) tiles.push_back(r);
    if (k == tr::kind::touch || k == tr::kind::touch_read || k == tr::kind::touch_write || k == tr::kind::touch_read_write)
      touches.push_back(r);
  }
  ASSERT_EQ(tiles.size(), 2u);
  const std::uint64_t first_rows = (std::uint64_t{1} << 32) - 1;
  const auto base = reinterpret_cast<std::uintptr_t>(far);
  EXPECT_EQ(tiles[0].a, base);
  EXPECT_EQ(tiles[0].b, 64ull << 32 | first_rows);
  EXPECT_EQ(tiles[1].a, base + first_rows * 128);
  EXPECT_EQ(tiles[1].b, 64ull << 32 | (rows - first_rows));
  for (const auto& r : tiles) {
    EXPECT_EQ(r.index, 128u);
    EXPECT_EQ(r.kind, static_cast<std::uint16_t>(tr::kind::touch_rows_write));
  }
  ASSERT_EQ(touches.size(), 2u);
  EXPECT_EQ(touches[0].a, base);
  EXPECT_EQ(touches[0].b, rows * 64);
  EXPECT_EQ(touches[1].a, base);
  EXPECT_EQ(touches[1].b, ((std::uint64_t{1} << 50) - 1) * 2 + 1);
  remove_trace(file);
}

// A traced task's annotations take a fast path to its runtime's tracer (api/touch.cpp); a region it does not
// pass goes through the full check, which still refuses what cannot exist and records what can.
TEST(TraceFile, ATracedTasksAnnotationsAreCheckedOnTheirFastPath) {
  const std::string file = roost_test::temp_path("roost_fast_path_checks.trace");
  std::vector<char> data(4096);
  {
    roost::options o;
    o.workers = 1;
    o.trace = file;
    roost::runtime rt(o);
    EXPECT_THROW(rt.run([] { roost::touch(nullptr, 64); }), roost::usage_error);
    EXPECT_THROW(rt.run([] { roost::touch_rows(nullptr, 64, 2, 64); }), roost::usage_error);
    EXPECT_THROW(rt.run([&] { roost::touch_rows(data.data(), 64, 2, 32); }), roost::usage_error);  // overlap
    EXPECT_THROW(rt.run([&] { roost::touch(data.data(), 64, static_cast<roost::access>(7)); }), roost::usage_error);
    rt.run([&] {
      roost::touch(data.data(), 64, roost::access::write);        // fast
      roost::touch_rows(data.data(), 16, 3, 1024);                 // fast
      roost::touch_rows(data.data(), 1, std::size_t{1} << 31, 1);  // 2^31 rows, past the fast test: checked in full
      roost::touch(nullptr, 0);                                    // empty: valid
    });
  }
  const tr::trace_file t = tr::read(file);
  int touches = 0, tiles = 0;
  for (const auto& r : t.records) {
    const auto k = static_cast<tr::kind>(r.kind);
    if (tr::is_whole_rows(k)) ++tiles;
    if (k == tr::kind::touch || k == tr::kind::touch_read || k == tr::kind::touch_write || k == tr::kind::touch_read_write)
      ++touches;
  }
  EXPECT_EQ(tiles, 2) << "the 3-row tile and the 2^31 rows of one byte";
  EXPECT_EQ(touches, 1) << "the write (the empty touch is valid and names no byte: no record)";
  remove_trace(file);
}

// Version 6 leaves out what a record repeats: the end of the lane's latest task_begin (a leaf's) has no
// serial (task_end_last), a touch_rows of its chunk's previous one's shape has no b and index (the `_same`
// kinds). Readers give back the whole records: the serials of the ends match their begins, every tile its
// shape. Both readers refuse what cannot be decoded, and a version 5 file cannot hold the new kinds.
TEST(TraceFile, LeafEndsAndRepeatedTileShapesAreStoredCompactAndReadWhole) {
  const std::string file = roost_test::temp_path("roost_compact.trace");
  const char* buf = g_buf.data();
  {
    roost::options o;
    o.workers = 1;
    o.trace = file;
    o.trace_depth = "all";
    roost::runtime rt(o);
    rt.run([&] {
      // More tiles of one shape than a chunk holds: each chunk's first is whole again (the reader refuses a
      // repeat without its model in the chunk), and the children's ends come in a later chunk than the
      // root's begin (the serials are counted across chunks).
      for (std::size_t i = 0; i < tr::tracer::kChunkRecords + 500; ++i)
        roost::touch_rows(buf + 128, 16, 2, 128, roost::access::read);
      roost::task_group g;
      for (int i = 0; i < 3; ++i)
        g.run([=] {
          roost::touch_rows(buf, 64, 4, 256, roost::access::read);        // whole: a new shape
          roost::touch_rows(buf + 64, 64, 4, 256, roost::access::write);  // the same shape
          roost::touch_rows(buf, 32, 4, 256, roost::access::read_write);  // whole again
        });
      g.wait();
    });
  }
  const tr::trace_file t = tr::read(file);
  std::map<std::uint64_t, int> begun, ended;  // serial -> count
  std::vector<tr::record> rows;
  std::size_t big = 0;  // the root's tiles
  for (const auto& r : t.records) {
    const auto k = static_cast<tr::kind>(r.kind);
    if (k == tr::kind::task_begin) ++begun[r.a];
    if (k == tr::kind::task_end) ++ended[r.a];
    EXPECT_FALSE(k == tr::kind::task_end_last || tr::is_rows_same(k)) << "readers give whole records: " << r.kind;
    if (tr::is_whole_rows(k) && r.b == (16ull << 32 | 2)) {
      EXPECT_EQ(r.a, reinterpret_cast<std::uintptr_t>(buf + 128));
      EXPECT_EQ(r.index, 128u);
      ++big;
    } else if (tr::is_whole_rows(k)) {
      rows.push_back(r);
    }
  }
  EXPECT_EQ(big, tr::tracer::kChunkRecords + 500);
  EXPECT_EQ(begun.size(), 4u);  // the root and its three children
  EXPECT_EQ(begun, ended);
  ASSERT_EQ(rows.size(), 9u);
  const std::uint64_t base = reinterpret_cast<std::uintptr_t>(buf);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::uint64_t bytes = i % 3 == 2 ? 32 : 64;
    EXPECT_EQ(rows[i].a, base + (i % 3 == 1 ? 64 : 0)) << i;
    EXPECT_EQ(rows[i].b, bytes << 32 | 4) << i;
    EXPECT_EQ(rows[i].index, 256u) << i;
    EXPECT_EQ(rows[i].kind, static_cast<std::uint16_t>(i % 3 == 0 ? tr::kind::touch_rows_read
                                                       : i % 3 == 1 ? tr::kind::touch_rows_write
                                                                    : tr::kind::touch_rows_read_write)) << i;
  }
  // On disk: the children's ends and all but the first of each run of one shape are compact.
  const stored_kinds d = kinds_on_disk(file);
  EXPECT_EQ(d.version, 6u);
  const std::size_t chunks = d.chunks.size();
  const std::size_t same = d.count(tr::is_rows_same), whole_rows = d.count(tr::is_whole_rows);
  EXPECT_GE(chunks, 2u);
  // each child ends right after its own touches, the root maybe not
  EXPECT_GE(d.count([](tr::kind k) { return k == tr::kind::task_end_last; }), 3u);
  // The tiles change shape 7 times (the first, the root's to a child's read, each read_write and the read
  // after it); every other tile repeats the one before, unless it starts a chunk (a full chunk, or a time
  // that did not fit 32 bits: a stall of seconds), which it does once at least within the root's run.
  EXPECT_EQ(same + whole_rows, big + 9);
  EXPECT_LE(same, big + 1);
  EXPECT_GE(same + chunks, big + 3);
  remove_trace(file);

  // The tools' writer stores them the same way, and reads back what it was given.
  tr::trace_file w = one_worker_trace();
  const std::uint64_t serial = std::uint64_t{0} << 48 | 1;
  w.records = {{1, serial, 0, 0, static_cast<std::uint16_t>(tr::kind::task_begin), 0},
               {2, base, 64ull << 32 | 4, 256, static_cast<std::uint16_t>(tr::kind::touch_rows_read), 0},
               {3, base + 64, 64ull << 32 | 4, 256, static_cast<std::uint16_t>(tr::kind::touch_rows_write), 0},
               {4, serial, 0, 0, static_cast<std::uint16_t>(tr::kind::task_end), 0}};
  tr::write_binary(file, w);
  const stored_kinds written = kinds_on_disk(file);
  EXPECT_EQ(written.count([](tr::kind k) { return k == tr::kind::task_end_last; }), 1u);
  EXPECT_EQ(written.count(tr::is_rows_same), 1u);
  const tr::trace_file back = tr::read(file);
  ASSERT_EQ(back.records.size(), w.records.size());
  for (std::size_t i = 0; i < w.records.size(); ++i) {
    EXPECT_EQ(back.records[i].kind, w.records[i].kind) << i;
    EXPECT_EQ(back.records[i].a, w.records[i].a) << i;
    EXPECT_EQ(back.records[i].b, w.records[i].b) << i;
    EXPECT_EQ(back.records[i].index, w.records[i].index) << i;
  }
  // What cannot be decoded is damage: a repeat with nothing before it in its chunk, an end before any begin,
  // and the new kinds in a version 5 file.
  auto refused = [&](tr::trace_file f, const char* why) {
    tr::write_binary(file, f);
    try {
      tr::read(file);
      ADD_FAILURE() << "read: " << why;
    } catch (const tr::format_error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  tr::trace_file bad = w;
  bad.records = {{1, base, 0, 0, static_cast<std::uint16_t>(tr::kind::touch_rows_write_same), 0}};
  refused(bad, "repeats a touch_rows the chunk has not had");
  bad.records = {{1, 0, 0, 0, static_cast<std::uint16_t>(tr::kind::task_end_last), 0}};
  refused(bad, "a task_end_last before any task_begin");
  bad = w;
  bad.version = 5;
  refused(bad, "has kind 23");  // the write's repeat of the read's shape comes first
  std::remove(file.c_str());
}

TEST(TraceFile, OneTracingRuntimeAtATime) {
  roost::options o;
  o.workers = 1;
  o.trace = roost_test::temp_path("roost_one.trace");
  {
    roost::runtime a(o);
    EXPECT_THROW(roost::runtime b(o), roost::config_error);
  }
  remove_trace(*o.trace);  // a's (each make test left two files in the temporary directory)
}

// A tracer records its own runtime's tasks and touches, never another runtime's, even while both run at
// once on two threads (each runtime's worker 0: the same lane, before, written from two threads), and the
// program's own touch consumer keeps receiving every runtime's annotations while a runtime traces, and is
// still installed after it. One worker each, so that the counts are exact.
TEST(TraceFile, AnotherRuntimesEventsAreNotInTheTrace) {
  const std::string file = roost_test::temp_path("roost_other.trace");
  struct counting : roost::touch_consumer {
    std::atomic<long> touches{0};
    void on_touch(int, const void*, std::size_t, roost::access) override { ++touches; }
  } program;
  roost::set_touch_consumer(&program);
  constexpr int kRuns = 20;
  {
    roost::options o;
    o.scheduler = "ws";
    o.workers = 1;
    roost::runtime other(o);
    o.trace = file;
    o.trace_depth = "all";
    roost::runtime traced(o);
    std::thread t([&] {
      for (int i = 0; i < kRuns; ++i) EXPECT_EQ(other.run([] { return fib(12); }), 144);
    });
    for (int i = 0; i < kRuns; ++i) EXPECT_EQ(traced.run([] { return fib(10); }), 55);
    t.join();
  }
  EXPECT_EQ(roost::set_touch_consumer(nullptr), &program);
  EXPECT_EQ(program.touches.load(), kRuns * (89L + 233L));  // fib(10)'s and fib(12)'s leaves
  const lane_counts c = count_kinds(tr::read(file));
  EXPECT_EQ(c.begins, kRuns * (1 + fib_tasks_within(10, ~0u)));
  EXPECT_EQ(c.touches, kRuns * 89u);
  remove_trace(file);
}

// The trace leaves memory as the run goes: while the runtime lives, its file already holds what the workers'
// full buffers held, and the process's memory does not grow with the events, however many runs write them.
// (Not read while the runtime lives: an idle worker may be writing a chunk at that moment.)
TEST(TraceStream, MemoryStaysFlatWhileTheFileGrows) {
  const std::string file = roost_test::temp_path("roost_stream.trace");
  roost::options o;
  o.workers = 2;
  o.trace = file;
  o.trace_depth = "all";  // every task, so that none can be missing from the file
  const std::uint64_t grow_by = roost_test::under_sanitizer() ? (8u << 20) : (48u << 20);
  std::size_t runs = 0;
  {
    roost::detail::runtime_core core(o);
    auto run_fib = [&core] {
      long r = 0;
      auto body = [&r] { r = fib(20); };
      core.run([](void* f) { (*static_cast<decltype(body)*>(f))(); }, &body);
      ASSERT_EQ(r, 6765);
    };
    const std::size_t buffers = core.tracer->buffer_bytes();
    EXPECT_LE(buffers, 3u * 64 * 1024) << "one buffer per worker and the runtime's";
    run_fib();  // the runtime's own memory (stacks, frames) reaches its size
    const std::uint64_t rss = resident_bytes(), bytes = file_bytes(file);
    while (file_bytes(file) < bytes + grow_by) {
      run_fib();
      ++runs;
    }
    const std::uint64_t growth = resident_bytes() > rss ? resident_bytes() - rss : 0;
    if (!roost_test::under_sanitizer())  // a sanitizer's shadow memory grows with what the program touches
      EXPECT_LT(growth, grow_by / 8) << runs << " runs wrote " << (file_bytes(file) - bytes) << " bytes of trace";
    EXPECT_EQ(core.tracer->buffer_bytes(), buffers);
    EXPECT_GT(core.tracer->chunks_written(), grow_by / buffers);
  }
  tr::trace_file t = tr::read(file);
  EXPECT_TRUE(t.complete);
  std::size_t begins = 0, iterations = 0;
  for (const auto& r : t.records) {
    begins += r.kind == static_cast<std::uint16_t>(tr::kind::task_begin);
    iterations += r.kind == static_cast<std::uint16_t>(tr::kind::iteration_begin);
  }
  EXPECT_EQ(iterations, runs + 1);
  EXPECT_EQ(begins, iterations * 10946) << "no event lost: every task of every run (fib(20) begins 10946)";
  remove_trace(file);
}

// Blocks a file holds, in bytes (st_blocks counts 512-byte units whatever the file system's block).
std::uint64_t bytes_held(const std::string& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return 0;
  return static_cast<std::uint64_t>(st.st_blocks) * 512;
}

// The tracer reserves the file's blocks ahead of its chunks (tracer::reserve_locked: fallocate, KEEP_SIZE,
// 4 MiB at a time) and gives back the rest at its end: the ended trace holds only the blocks of what it wrote. Where the temporary folder's file system cannot reserve, there is nothing to give back and the
// test says so (a skip), instead of passing on a file that never held more than its bytes.
TEST(TraceStream, TheFileKeepsNoBlocksPastWhatWasWritten) {
  const std::string file = roost_test::temp_path("roost_reserve.trace");
  {
    const roost_test::temp_file probe("roost_reserve_probe");
    const int fd = ::open(probe.path().c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    const bool reserves = ::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 1 << 20) == 0;
    const int why = errno;
    ::close(fd);
    if (!reserves) GTEST_SKIP() << "the temporary folder's file system cannot reserve blocks: " << std::strerror(why);
  }
  roost::options o;
  o.workers = 1;  // one lane: its records fill a chunk that goes out during the run
  o.trace = file;
  o.trace_depth = "all";
  {
    roost::detail::runtime_core core(o);
    long r = 0;
    auto body = [&r] { r = fib(16); };  // about 1,600 begins, as many ends: more than a chunk
    core.run([](void* f) { (*static_cast<decltype(body)*>(f))(); }, &body);
    ASSERT_EQ(r, 987);
    ASSERT_GT(core.tracer->chunks_written(), 0u);
    // While the trace is written, a chunk's blocks were reserved ahead of it: more held than written.
    struct stat during {};
    ASSERT_EQ(::stat(file.c_str(), &during), 0);
    EXPECT_GT(bytes_held(file), static_cast<std::uint64_t>(during.st_size) + (1u << 20))
        << during.st_size << " bytes written: no blocks were reserved ahead of the chunks";
  }
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  const std::uint64_t held = bytes_held(file);
  EXPECT_LT(held, static_cast<std::uint64_t>(st.st_size) + (1u << 20))
      << st.st_size << " bytes written, " << held << " bytes of blocks held";
  EXPECT_TRUE(tr::read(file).complete);
  remove_trace(file);
}

// Until the runtime ends, FILE.json is a timeline without events (a viewer opens it), not an empty file: what
// a program that never destroys its runtime (exit(), std::terminate) leaves behind.
TEST(TraceFile, TheTimelineIsAnEmptyOneUntilTheRuntimeEnds) {
  const std::string file = roost_test::temp_path("roost_timeline_early.trace");
  {
    roost::options o;
    o.workers = 1;
    o.trace = file;
    roost::runtime rt(o);
    EXPECT_EQ(rt.run([] { return fib(10); }), 55);
    std::ifstream js(file + ".json");
    const std::string json((std::istreambuf_iterator<char>(js)), {});
    EXPECT_EQ(json, "{\"traceEvents\":[]}\n");
  }
  std::ifstream js(file + ".json");
  const std::string json((std::istreambuf_iterator<char>(js)), {});
  EXPECT_NE(json.find("\"ph\":\"X\""), std::string::npos) << "the runtime's end writes the timeline";
  remove_trace(file);
}

// The timeline (FILE.json) has a piece of each task on every worker it began or resumed on: it showed only
// the piece of a task's last resumption (a 3.9 ms root as its last 60 us), and nothing of a task that moved
// (an outside-user campaign). Simulated, so that tasks are stolen and resumed elsewhere in every run.
TEST(TraceFile, TheTimelineHasAPieceOfATaskOnEachWorkerItRanOn) {
  for (const char* sched : {"ws", "ws-help"}) {
    SCOPED_TRACE(sched);
    const std::string file = roost_test::temp_path("roost_pieces.trace");
    {
      roost::runtime rt(every_task_traced_on_two_sockets(sched, 4, file));
      for (int i = 0; i < 3; ++i) ASSERT_EQ(rt.run([] { return fib(14); }), 377);
    }
    std::set<std::pair<std::uint64_t, unsigned>> ran;  // (serial, worker) of every begin and resumption
    std::set<std::uint64_t> moved;                      // serials that ran on two workers or more
    std::map<std::uint64_t, unsigned> first_worker;
    for (const tr::record& r : tr::read(file).records) {
      const auto k = static_cast<tr::kind>(r.kind);
      if (k != tr::kind::task_begin && k != tr::kind::task_resume) continue;
      ran.insert({r.a, r.worker});
      auto [it, fresh] = first_worker.try_emplace(r.a, r.worker);
      if (!fresh && it->second != r.worker) moved.insert(r.a);
    }
    ASSERT_FALSE(moved.empty()) << "no task ran on two workers: the test shows nothing";
    std::ifstream js(file + ".json");
    const std::string json((std::istreambuf_iterator<char>(js)), {});
    std::set<std::pair<std::uint64_t, unsigned>> drawn;  // (serial, tid) of every task span
    for (std::size_t at = json.find("\"name\":\"task "); at != std::string::npos;
         at = json.find("\"name\":\"task ", at + 1)) {
      unsigned long long n = 0, lane = 0, tid = 0;
      const std::size_t tid_at = json.find("\"tid\":", at);
      ASSERT_EQ(std::sscanf(json.c_str() + at, "\"name\":\"task %llu@%llu", &n, &lane), 2);
      ASSERT_EQ(std::sscanf(json.c_str() + tid_at, "\"tid\":%llu", &tid), 1);
      drawn.insert({(lane << 48) | n, static_cast<unsigned>(tid)});
    }
    for (const auto& [serial, worker] : ran)
      EXPECT_TRUE(drawn.count({serial, worker})) << "task " << (serial & 0xffffffffffffull) << "@" << (serial >> 48)
                                                  << " ran on worker " << worker << ": no piece there";
    remove_trace(file);
  }
}

TEST(TraceErrors, AFileThatCannotBeMadeIsAConfigErrorAtConstruction) {
  // name: the setting the error names: the field the program set (these cases), the variable otherwise.
  auto expect_config_error = [](const std::string& path, const std::string& reason,
                                const std::string& name = "options::trace='") {
    roost::options o;
    o.workers = 1;
    o.trace = path;
    try {
      roost::runtime rt(o);
      ADD_FAILURE() << path << ": no error";
    } catch (const roost::config_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(name), std::string::npos) << what;
      EXPECT_NE(what.find(path), std::string::npos) << what;
      EXPECT_NE(what.find(reason), std::string::npos) << what;
    }
  };
  // A directory that does not exist is caught with the options too (whatever the scheduler and platform).
  expect_config_error(roost_test::temp_path("roost_no_such_dir") + "/run.trace", "does not exist", "options::trace");
  expect_config_error(testing::TempDir() + ".", "a directory", "options::trace");  // a directory, not a file
  const std::string in_the_way = roost_test::temp_path("roost_json_in_the_way.trace");
  ASSERT_EQ(::mkdir((in_the_way + ".json").c_str(), 0755), 0);  // the timeline's path is taken by a directory
  expect_config_error(in_the_way, in_the_way + ".json");
  ::rmdir((in_the_way + ".json").c_str());
  std::remove(in_the_way.c_str());
  // Not a regular file: the trace is read back at the end to make FILE.json (/dev/null was refused only
  // then), and opening a named pipe blocked the constructor until a reader came (for ever).
  expect_config_error("/dev/null", "a character device");
  {
    roost_test::scoped_env env("ROOST_TRACE", "/dev/null");  // from the environment: the variable
    const std::string what = roost_test::config_error_of([] { roost::runtime rt(roost::options{}); });
    EXPECT_NE(what.find("ROOST_TRACE='/dev/null'"), std::string::npos) << what;
  }
  const std::string pipe = roost_test::temp_path("roost_trace_fifo");
  std::remove(pipe.c_str());
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
  expect_config_error(pipe, "a named pipe");
  std::remove(pipe.c_str());
  EXPECT_NE(::access("/dev/null.json", F_OK), 0) << "nothing made beside a device";
  // A file that exists in a directory where nothing can be made: the reason names the directory (it said
  // "No such file or directory" of /proc/version, which exists).
  if (::access("/proc/version", F_OK) == 0) expect_config_error("/proc/version", "its directory '/proc'");

  // The failed runtimes left no tracer installed: another may trace.
  const std::string file = roost_test::temp_path("roost_after_errors.trace");
  roost::options o;
  o.workers = 1;
  o.trace = file;
  { roost::runtime rt(o); }
  EXPECT_TRUE(tr::read(file).complete);
  remove_trace(file);
}

// A runtime that cannot make its timeline (FILE.json) is not made, and leaves an earlier trace at FILE as it
// was: both paths are checked before either is truncated (the trace was cut to a header).
TEST(TraceErrors, AFailedConstructionLeavesAnEarlierTraceAsItWas) {
  const std::string file = roost_test::temp_path("roost_earlier.trace");
  {
    std::ofstream earlier(file, std::ios::trunc);
    earlier << "an earlier trace";
  }
  ASSERT_EQ(::mkdir((file + ".json").c_str(), 0755), 0);
  roost::options o = roost_test::opts("ws", 1);
  o.trace = file;
  const std::string what = roost_test::config_error_of([&] { roost::runtime rt(o); });
  EXPECT_NE(what.find("a directory"), std::string::npos) << what;
  std::ifstream in(file);
  const std::string kept((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(kept, "an earlier trace");
  // A trace the failed runtime made itself is removed.
  std::remove(file.c_str());
  (void)roost_test::config_error_of([&] { roost::runtime rt(o); });
  EXPECT_NE(::access(file.c_str(), F_OK), 0) << "the failed runtime's own trace file is left";
  ::rmdir((file + ".json").c_str());
}

// A write that fails while the runtime is made (a file size limit at the header) leaves an earlier trace
// whole: both files are written beside their paths and renamed over them at the end (it was cut, then
// removed). Nothing of the attempt is left. In a child: the limit is the process's.
TEST(TraceErrors, AWriteThatFailsAtConstructionLeavesAnEarlierTraceWhole) {
  const std::string dir = roost_test::temp_path("roost_header_limit");
  ::mkdir(dir.c_str(), 0755);
  const std::string file = dir + "/run.trace";
  {
    std::ofstream earlier(file, std::ios::trunc);
    earlier << "an earlier trace";
  }
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit rl{64, 64};  // the header is longer (it names the topology); the earlier file is shorter
    if (::setrlimit(RLIMIT_FSIZE, &rl) != 0) ::_exit(2);
    roost::options o = roost_test::opts("ws", 1);
    o.trace = file;
    try {
      roost::runtime rt(o);
      ::_exit(3);
    } catch (const roost::config_error& e) {
      ::_exit(std::string(e.what()).find("cannot write the trace file") != std::string::npos ? 0 : 4);
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: no limit, 3: no error, 4: another error";
  std::ifstream in(file);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}), "an earlier trace");
  std::vector<std::string> left;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') left.push_back(e->d_name);
    ::closedir(d);
  }
  EXPECT_EQ(left, std::vector<std::string>{"run.trace"}) << "the attempt's files are left";
  std::remove(file.c_str());
  ::rmdir(dir.c_str());
}

// Every output a runtime writes is a regular file, checked without blocking: a named pipe as the simulated
// report or cats's profile blocked the constructor for ever (as the trace did), and /dev/null was taken.
TEST(Trace, OutputsThatAreNotRegularFilesAreConfigErrors) {
  const std::string pipe = roost_test::temp_path("roost_output_fifo");
  std::remove(pipe.c_str());
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
  for (const std::string& path : {pipe, std::string("/dev/null")}) {
    roost::options sim = roost_test::opts("ws", 2);
    sim.platform = "sim";
    sim.topology = "pack:2 l3:1(size=1MiB) core:1 pu:1";
    sim.sim_report = path;
    std::string what = roost_test::config_error_of([&] { roost::runtime rt(sim); });
    EXPECT_NE(what.find("options::sim_report='" + path + "'"), std::string::npos) << what;
    EXPECT_NE(what.find("not a regular file"), std::string::npos) << what;
    roost::options cats = roost_test::opts("cats", 2);
    cats.cats_profile = path;
    what = roost_test::config_error_of([&] { roost::runtime rt(cats); });
    EXPECT_NE(what.find("not a regular file"), std::string::npos) << what;
    // Checked whatever the platform and scheduler (configuration.md), as the directory is: natively and
    // under ws both were taken without a word.
    roost::options native = roost_test::opts("ws", 2);
    native.sim_report = path;
    what = roost_test::config_error_of([&] { roost::runtime rt(native); });
    EXPECT_NE(what.find("options::sim_report='" + path + "'"), std::string::npos) << what;
    EXPECT_NE(what.find("not a regular file"), std::string::npos) << what;
    roost::options ws = roost_test::opts("ws", 2);
    ws.cats_profile = path;
    what = roost_test::config_error_of([&] { roost::runtime rt(ws); });
    EXPECT_NE(what.find("options::cats_profile='" + path + "'"), std::string::npos) << what;
    EXPECT_NE(what.find("not a regular file"), std::string::npos) << what;
  }
  std::remove(pipe.c_str());
}

// Output files named relative to the working directory are the files there when the runtime is made: a
// program that changed directory before its runtime ended had its timeline made from another trace of the
// same name there (or a file of the same name there deleted after a write error), and its own left empty.
TEST(TraceFile, RelativePathsAreTheWorkingDirectorysWhenTheRuntimeIsMade) {
  char here[PATH_MAX];
  ASSERT_NE(::getcwd(here, sizeof here), nullptr);
  const std::string first = roost_test::temp_path("roost_cwd_first"), second = roost_test::temp_path("roost_cwd_second");
  for (const std::string& d : {first, second}) ::mkdir(d.c_str(), 0755);
  {
    std::ofstream other(second + "/rel.trace");
    other << "not this runtime's trace";
    std::ofstream bystander(second + "/rel.trace.json");
    bystander << "a bystander";
  }
  ASSERT_EQ(::chdir(first.c_str()), 0);
  {
    roost::options o = roost_test::opts("ws", 2);
    o.trace = "rel.trace";
    roost::runtime rt(o);
    EXPECT_EQ(rt.run([] { return fib(10); }), 55);
    ASSERT_EQ(::chdir(second.c_str()), 0);
    EXPECT_EQ(rt.run([] { return fib(10); }), 55);
  }
  ASSERT_EQ(::chdir(here), 0);
  const tr::trace_file t = tr::read(first + "/rel.trace");
  EXPECT_TRUE(t.complete);
  long iterations = 0;
  for (const auto& r : t.records) iterations += static_cast<tr::kind>(r.kind) == tr::kind::iteration_begin;
  EXPECT_EQ(iterations, 2);
  std::ifstream js(first + "/rel.trace.json");
  const std::string json((std::istreambuf_iterator<char>(js)), {});
  EXPECT_NE(json.find("\"ph\":\"X\""), std::string::npos) << "the timeline is this runtime's";
  std::ifstream by(second + "/rel.trace.json"), other(second + "/rel.trace");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(by)), {}), "a bystander");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(other)), {}), "not this runtime's trace");
  remove_trace(first + "/rel.trace");
  for (const std::string& f : {second + "/rel.trace", second + "/rel.trace.json"}) std::remove(f.c_str());
  for (const std::string& d : {first, second}) ::rmdir(d.c_str());
}

// ROOST_TRACE names one file for the process: runtimes made one after another each write a trace of their
// own (FILE, FILE.2, FILE.3), where each wrote over the one before without a word (an outside-user
// campaign). A path given in code is that runtime's own: the next runtime given it writes it again.
TEST(Trace, RuntimesInTurnUnderRoostTraceEachWriteTheirOwnFile) {
  const std::string file = roost_test::temp_path("roost_in_turn.trace");
  {
    roost_test::scoped_env env("ROOST_TRACE", file.c_str());
    for (int k = 1; k <= 3; ++k) {
      roost::runtime rt(roost_test::opts("ws", 1));
      for (int i = 0; i < k; ++i) rt.run([] { return fib(8); });
    }
  }
  const std::string paths[] = {file, file + ".2", file + ".3"};
  for (int k = 1; k <= 3; ++k) {
    const tr::trace_file t = tr::read(paths[k - 1]);
    EXPECT_TRUE(t.complete) << paths[k - 1];
    long iterations = 0;
    for (const auto& r : t.records) iterations += static_cast<tr::kind>(r.kind) == tr::kind::iteration_begin;
    EXPECT_EQ(iterations, k) << paths[k - 1];
    remove_trace(paths[k - 1]);
  }
  // Two at once is still an error, whichever file the second would take.
  {
    roost_test::scoped_env env("ROOST_TRACE", file.c_str());
    roost::runtime first(roost_test::opts("ws", 1));
    const std::string what = roost_test::config_error_of([] { roost::runtime second(roost_test::opts("ws", 1)); });
    EXPECT_NE(what.find("only one may at a time"), std::string::npos) << what;
    // Named by the variable's own path, then the numbered one it would have written (it named only that one).
    EXPECT_NE(what.find("ROOST_TRACE='" + file + "' (this runtime's file would be '" + file + ".5')"), std::string::npos)
        << what;
  }
  remove_trace(file + ".4");
}

// Two outputs of one runtime at one path wrote over each other: ROOST_SIM_REPORT=FILE.json beside
// ROOST_TRACE=FILE lost the report to the timeline; at FILE itself, the report was written over the trace's
// start. A config_error names both.
TEST(Trace, OutputsAtOnePathAreAConfigError) {
  const std::string file = roost_test::temp_path("roost_one_path.trace");
  const std::string name = file.substr(file.find_last_of('/') + 1);
  for (const std::string& report : {file + ".json", file, testing::TempDir() + "./" + name}) {
    roost::options o = roost_test::opts("ws", 2);
    o.platform = "sim";
    o.topology = "pack:2 l3:1(size=1MiB) core:1 pu:1";
    o.trace = file;
    o.sim_report = report;
    const std::string what = roost_test::config_error_of([&] { roost::runtime rt(o); });
    EXPECT_NE(what.find("options::trace='" + file + "'"), std::string::npos) << what;
    EXPECT_NE(what.find("options::sim_report='" + report + "'"), std::string::npos) << what;
    EXPECT_NE(what.find("one file"), std::string::npos) << what;
  }
  roost::options o = roost_test::opts("cats", 2);
  o.trace = file;
  o.cats_profile = file + ".json";
  const std::string what = roost_test::config_error_of([&] { roost::runtime rt(o); });
  EXPECT_NE(what.find("options::cats_profile"), std::string::npos) << what;
  o.cats_profile = file + ".profile";  // apart: fine
  { roost::runtime rt(o); }
  remove_trace(file);
  std::remove((file + ".profile").c_str());
  // Also where this platform or scheduler would not write one of them (natively, under ws): the same
  // settings collide under sim or cats, and every setting is checked whichever scheduler runs.
  for (const auto& [report, profile] : {std::pair<std::string, std::string>{file, ""}, {file + ".json", ""},
                                        {"", file}}) {
    roost::options n = roost_test::opts("ws", 1);
    n.trace = file;
    if (!report.empty()) n.sim_report = report;
    if (!profile.empty()) n.cats_profile = profile;
    const std::string why = roost_test::config_error_of([&] { roost::runtime rt(n); });
    EXPECT_NE(why.find("one file"), std::string::npos) << report << " " << profile << ": " << why;
  }
}

// A write that fails during the run stops the trace and is thrown once from run(); one that fails at the
// runtime's end is printed on stderr (a destructor must not throw). The disk fills up once the runtime has
// started: the trace file's descriptor is pointed at /dev/full, where every write fails with ENOSPC.
namespace {
bool fill_the_disk_under(const std::string& path) {
  char real[PATH_MAX];
  if (!::realpath(path.c_str(), real)) return false;
  for (int fd = 3; fd < 1024; ++fd) {
    char link[PATH_MAX] = {};
    if (::readlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), link, sizeof link - 1) <= 0) continue;
    if (std::string(link) != real) continue;
    int full = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
    const bool swapped = full >= 0 && ::dup2(full, fd) == fd;
    if (full >= 0) ::close(full);
    return swapped;
  }
  return false;
}
}  // namespace

TEST(TraceErrors, AWriteErrorDuringTheRunIsThrownFromRunOnce) {
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full here";
  const std::string file = roost_test::temp_path("roost_full_run.trace");
  roost::options o;
  o.workers = 2;
  o.trace = file;
  {
    roost::runtime rt(o);
    ASSERT_TRUE(fill_the_disk_under(file));
    try {
      rt.run([] { return fib(18); });  // more events than a worker's buffer holds: written during the run
      ADD_FAILURE() << "no error";
    } catch (const std::system_error& e) {
      const std::string what = e.what();
      EXPECT_EQ(e.code(), std::errc::no_space_on_device) << what;
      EXPECT_NE(what.find("options::trace='" + file + "'"), std::string::npos) << what;
      EXPECT_NE(what.find("writing the trace failed"), std::string::npos) << what;
      EXPECT_NE(what.find("'" + file + ".json' is not made"), std::string::npos) << what;
      // Gone when the error says so: a program that ends on it never destroys the runtime (the event-less
      // timeline stayed: an outside-user campaign).
      EXPECT_NE(::access((file + ".json").c_str(), F_OK), 0) << "the event-less timeline is left";
    }
    EXPECT_EQ(rt.run([] { return fib(18); }), 2584);  // reported already: not again
    testing::internal::CaptureStderr();
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "") << "~runtime does not report it a second time";
  EXPECT_NE(::access((file + ".json").c_str(), F_OK), 0) << "no timeline of a broken trace";
  remove_trace(file);
}

// Where FILE.json is a link, open() writes its target, and what a failed trace removes is that target, not the
// user's link (the removals went by the path: the link went and the event-less timeline stayed; a review).
TEST(TraceErrors, AWriteErrorRemovesTheTimelineALinkNamesNotTheLink) {
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full here";
  const std::string file = roost_test::temp_path("roost_full_linked.trace");
  const std::string target = roost_test::temp_path("roost_full_linked_target.json");
  ::unlink((file + ".json").c_str());
  ::unlink(target.c_str());
  ASSERT_EQ(::symlink(target.c_str(), (file + ".json").c_str()), 0);
  roost::options o;
  o.workers = 2;
  o.trace = file;
  {
    roost::runtime rt(o);
    EXPECT_EQ(::access(target.c_str(), F_OK), 0) << "open() makes the link's target";
    ASSERT_TRUE(fill_the_disk_under(file));
    EXPECT_THROW(rt.run([] { return fib(18); }), std::system_error);
  }
  struct stat st {};
  EXPECT_EQ(::lstat((file + ".json").c_str(), &st), 0) << "the user's link is gone";
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_NE(::access(target.c_str(), F_OK), 0) << "the event-less timeline is left at the link's target";
  ::unlink((file + ".json").c_str());
  ::unlink(target.c_str());
  remove_trace(file);
}

// A child of fork() traces on files of its own: it inherited its parent's tracing slot, so no runtime of
// the child could trace while the parent's did ("another roost::runtime of this process is tracing"), and
// its parent's numbers, so that both wrote FILE.2, one over the other (an outside-user campaign). The
// child's runtimes write FILE.pidPID, FILE.pidPID.2, ...
TEST(TraceFile, AChildOfForkTracesOnFilesOfItsOwn) {
  const std::string file = roost_test::temp_path("roost_fork_numbering.trace");
  roost_test::scoped_env env("ROOST_TRACE", file.c_str()), depth("ROOST_TRACE_DEPTH", "all");
  testing::internal::CaptureStderr();
  pid_t pid = -1;
  {
    roost::runtime parent(roost_test::opts("ws", 1));  // tracing while the child is made
    ASSERT_EQ(parent.run([] { return fib(10); }), 55);
    pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int code = 0;
      try {
        for (int k = 0; k < 2; ++k) {  // two, so that the child numbers its own: FILE.pidPID.2
          roost::runtime child(roost_test::opts("ws", 1));
          if (child.run([] { return fib(12); }) != 144) code = 2;
        }
      } catch (...) {
        code = 1;
      }
      ::_exit(code);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << status;
    ASSERT_EQ(WEXITSTATUS(status), 0);
  }
  {
    roost::runtime second(roost_test::opts("ws", 1));  // the parent's second: FILE.2, as if nobody forked
    ASSERT_EQ(second.run([] { return fib(11); }), 89);
  }
  const std::string err = testing::internal::GetCapturedStderr();
  const std::string child_file = file + ".pid" + std::to_string(pid);
  // Task begins per file: fib(n) under ws at a depth of every task is its call tree, the root included.
  const auto begins = [](const std::string& f) {
    std::size_t n = 0;
    for (const auto& r : tr::read(f).records) n += r.kind == static_cast<std::uint16_t>(tr::kind::task_begin);
    return n;
  };
  EXPECT_TRUE(tr::read(file).complete);
  EXPECT_TRUE(tr::read(file + ".2").complete);
  EXPECT_TRUE(tr::read(child_file).complete) << err;
  EXPECT_TRUE(tr::read(child_file + ".2").complete) << err;
  // Every task recorded: fib(10) < fib(11) < fib(12), each file its own runtime's.
  EXPECT_LT(begins(file), begins(file + ".2"));
  EXPECT_LT(begins(file + ".2"), begins(child_file)) << "the parent's second runtime wrote over the child's file";
  EXPECT_EQ(begins(child_file), begins(child_file + ".2"));
  EXPECT_NE(err.find("a child of fork() numbers apart from its parent"), std::string::npos) << err;
  remove_trace(file);
  remove_trace(file + ".2");
  remove_trace(child_file);
  remove_trace(child_file + ".2");
}

// The same with paths given in code, which are not numbered: the child may trace while its parent's
// runtime does.
TEST(TraceFile, AChildOfForkTracesWhileItsParentDoesWithPathsInCode) {
  const std::string parent_file = roost_test::temp_path("roost_fork_parent.trace"),
                    child_file = roost_test::temp_path("roost_fork_child.trace");
  {
    roost::options po = roost_test::opts("ws", 1);
    po.trace = parent_file;
    roost::runtime parent(po);
    ASSERT_EQ(parent.run([] { return fib(10); }), 55);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int code = 0;
      try {
        roost::options co = roost_test::opts("ws", 1);
        co.trace = child_file;
        roost::runtime child(co);
        if (child.run([] { return fib(12); }) != 144) code = 2;
      } catch (...) {
        code = 1;  // "another roost::runtime of this process is tracing"
      }
      // The parent's live trace, given in code: refused, as a second live runtime's would be in one process
      // (the child forgot the parent's claims and wrote over the parent's trace: an outside-user campaign).
      try {
        roost::options same = roost_test::opts("ws", 1);
        same.trace = parent_file;
        roost::runtime child(same);
        code = code ? code : 3;
      } catch (const roost::config_error& e) {
        if (std::string(e.what()).find("the parent process's") == std::string::npos) code = code ? code : 4;
      }
      ::_exit(code);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << status;
    EXPECT_EQ(WEXITSTATUS(status), 0) << "1: the child could not trace, 2: wrong result, 3: the parent's file was "
                                         "taken, 4: another message";
    EXPECT_TRUE(tr::read(child_file).complete);
    remove_trace(child_file);
  }
  EXPECT_TRUE(tr::read(parent_file).complete);
  remove_trace(parent_file);
}

// A timeline that could not be written whole (the file size limit, a full disk) is removed, not left as
// JSON a viewer cannot read, and the error names the setting; the trace itself is complete. In a child:
// the limit is the process's.
TEST(TraceErrors, ATimelineThatCannotBeWrittenWholeIsRemoved) {
  const std::string file = roost_test::temp_path("roost_json_limit.trace"), err_file = roost_test::temp_path("roost_json_limit.err");
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG instead of ending the process
    const int err = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err < 0 || ::dup2(err, 2) != 2) ::_exit(2);
    {
      roost::options o = roost_test::opts("ws", 1);
      o.trace = file;
      o.trace_depth = "all";  // a timeline several times the size of what is left to write of the trace
      roost::runtime rt(o);
      if (rt.run([] { return fib(18); }) != 2584) ::_exit(3);
      struct stat st;
      if (::stat(file.c_str(), &st) != 0) ::_exit(4);
      // Room for the lane's last chunk and the end chunk, not for the timeline.
      const rlim_t limit = static_cast<rlim_t>(st.st_size) + (96u << 10);
      const rlimit rl{limit, limit};
      if (::setrlimit(RLIMIT_FSIZE, &rl) != 0) ::_exit(5);
    }
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  ASSERT_EQ(WEXITSTATUS(status), 0);
  std::ifstream in(err_file);
  const std::string err((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(err.find("options::trace='" + file + "': writing its timeline"), std::string::npos) << err;
  EXPECT_NE(err.find("it is removed"), std::string::npos) << err;
  EXPECT_NE(::access((file + ".json").c_str(), F_OK), 0) << "a timeline cut short is left";
  EXPECT_TRUE(tr::read(file).complete);
  remove_trace(file);
  std::remove(err_file.c_str());
}

TEST(TraceErrors, AWriteErrorAtTheEndIsPrintedByTheDestructor) {
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full here";
  const std::string file = roost_test::temp_path("roost_full_end.trace");
  roost::options o;
  o.workers = 1;  // no idle worker fills its buffer with steal attempts during the run
  o.trace = file;
  {
    roost::runtime rt(o);
    ASSERT_TRUE(fill_the_disk_under(file));
    EXPECT_EQ(rt.run([] { return fib(5); }), 5);  // its events stay in the buffer until the end
    testing::internal::CaptureStderr();
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("roost: options::trace='" + file + "': writing the trace failed"), std::string::npos) << err;
  EXPECT_NE(err.find(std::strerror(ENOSPC)), std::string::npos) << err;
  EXPECT_NE(::access((file + ".json").c_str(), F_OK), 0) << "no timeline of a broken trace";
  remove_trace(file);
}

// What describe() says a simulated runtime's trace records: every task spawned through the engine whatever the
// depth, and all with `all`. It said "all (simulated)" for both, whose traces held different tasks (a
// parallel_for of 8 pieces: 8 tasks against 15; an outside-user campaign).
TEST(TraceFile, ASimulatedRuntimeSaysWhichTasksItsTraceRecords) {
  const std::string file = roost_test::temp_path("roost_sim_depth_said.trace");
  roost::options o;
  o.platform = "sim";
  o.topology = "pack:1 l3:1(size=1MiB) core:2 pu:1";
  o.workers = 2;
  o.trace = file;
  for (const char* depth : {"0", "auto", "all"}) {
    o.trace_depth = depth;
    {
      roost::runtime rt(o);
      const std::string said = rt.describe();
      if (std::string(depth) == "all") {
        EXPECT_NE(said.find("tasks run where spawned recorded all (simulated)"), std::string::npos) << said;
      } else {
        EXPECT_NE(said.find("recorded every one spawned through the engine, whatever the depth (simulated"),
                  std::string::npos) << depth << ": " << said;
      }
    }
    remove_trace(file);
  }
}
