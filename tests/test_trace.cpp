// ROOST_TRACE: a traced run's events match what the observation hook saw; spawn paths rebuilt from the
// trace's (parent serial, index) equal the observer's; touches and iterations are recorded; the JSON is a
// Chrome trace; damaged files give errors with the byte offset.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "roost/roost.hpp"
#include "test_util.hpp"
#include "trace/trace_format.hpp"

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

// Unique per process: ctest runs the parameterised cases in parallel.
std::string temp(const std::string& name) {
  return testing::TempDir() + name + "." + std::to_string(::getpid());
}

}  // namespace

class Trace : public ::testing::TestWithParam<const char*> {};

TEST_P(Trace, EventsMatchTheObserver) {
  const std::string file = temp(std::string("roost_test_") + GetParam() + ".trace");
  paths obs;
  {
    roost::options o;
    o.scheduler = GetParam();
    o.workers = 2;
    o.trace = file;
    roost::runtime rt(o);
    roost::set_task_observer(&obs);
    EXPECT_EQ(rt.run([] { return fib(12); }), 144);
    EXPECT_EQ(rt.run([] { return fib(10); }), 55);
    roost::set_task_observer(nullptr);
  }  // the trace is written here
  tr::trace_file t = tr::read(file);
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
        EXPECT_LE(r.b, 1u);
        break;
      case tr::kind::idle_begin: ++idle_open; break;
      case tr::kind::idle_end: EXPECT_GT(idle_open, 0u); --idle_open; break;
      default: break;
    }
  }
  EXPECT_EQ(begins.size(), obs.starts.size());
  EXPECT_EQ(ends, begins.size() - 2);  // roots end when run() returns, not with an event
  EXPECT_EQ(touches, 233u + 89u);      // fib(n) has fib(n+1) leaves: fib(12) and fib(10)
  EXPECT_EQ(iterations, 2u);
  EXPECT_EQ(spawns, begins.size() - 2);  // every task but the roots was spawned
  std::multiset<std::string> rebuilt;
  for (const auto& [serial, pi] : begins) {
    std::vector<std::uint32_t> rev{pi.second};
    for (std::uint64_t p = pi.first; p != 0; p = begins.at(p).first) rev.push_back(begins.at(p).second);
    std::string s;
    for (auto it = rev.rbegin(); it != rev.rend(); ++it) s += (s.empty() ? "" : ".") + std::to_string(*it);
    rebuilt.insert(s);
  }
  EXPECT_EQ(rebuilt, obs.starts);
  std::ifstream js(file + ".json");
  std::string json((std::istreambuf_iterator<char>(js)), {});
  EXPECT_EQ(json.rfind("{\"traceEvents\":[", 0), 0u);
  EXPECT_NE(json.find("\"ph\":\"X\""), std::string::npos);
  EXPECT_EQ(json.substr(json.size() - 3), "]}\n");
  std::remove(file.c_str());
  std::remove((file + ".json").c_str());
}

INSTANTIATE_TEST_SUITE_P(Schedulers, Trace, ::testing::Values("ws", "ws-help", "adws"),
                         [](const auto& info) { return std::string(info.index == 1 ? "ws_help" : info.param); });

TEST(TraceFile, DamagedFilesGiveTheByteOffset) {
  tr::trace_file t;
  t.workers = 1;
  t.topology = "test";
  t.llc_domain = {0};
  t.records.push_back({1, 2, 3, 4, static_cast<std::uint16_t>(tr::kind::task_begin), 0});
  const std::string file = temp("roost_damaged.trace");
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

TEST(TraceFile, OneTracingRuntimeAtATime) {
  roost::options o;
  o.workers = 1;
  o.trace = temp("roost_one.trace");
  roost::runtime a(o);
  EXPECT_THROW(roost::runtime b(o), roost::config_error);
}
