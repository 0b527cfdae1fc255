// Randomized fork-join stress test (issue #2 §9): random fan-out, depth, leaf work, hints, thrown exceptions,
// task groups and parallel_invoke (the two-way join); exact results checked against a serial evaluation of the same tree, for every available
// scheduler, at 1, 2, 3, 8 and 64 workers and on virtual topologies 2x4, 4x4 and 8x8, and two with small
// caches (2x4 with a 2 KiB L3; 2 packages x 2 L2 x 2 cores).
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "random_tree.hpp"
#include "roost/roost.hpp"

namespace {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr int kTrees = 3;
#else
constexpr int kTrees = 40;
#endif

using namespace roost_test::tree;

struct config {
  std::string sched;
  unsigned workers;  // 0: one per PU of the topology
  std::string topology;
  std::string label;  // names the topology in the test name
};

void PrintTo(const config& c, std::ostream* os) {
  *os << c.sched << " workers=" << c.workers << (c.topology.empty() ? "" : " topology='" + c.topology + "'");
}

std::string name_of(const config& c) {
  std::string n = c.sched + "_w" + std::to_string(c.workers);
  if (!c.label.empty()) n += "_" + c.label;
  for (char& ch : n)
    if (ch == '-' || ch == ':' || ch == ' ') ch = '_';
  return n;
}

std::vector<config> configs() {
  std::vector<config> v;
  for (const auto& s : roost::schedulers()) {
    if (!s.available) continue;
    for (unsigned w : {1u, 2u, 3u, 8u, 64u}) v.push_back({s.name, w, "", ""});
    v.push_back({s.name, 0, "pack:2 core:4 pu:1", "2x4"});
    v.push_back({s.name, 0, "pack:4 core:4 pu:1", "4x4"});
    v.push_back({s.name, 0, "pack:8 core:8 pu:1", "8x8"});
    // Caches small enough that the random data-size hints (0..4 KiB) fit some and not others: every
    // multi-level path (descent, aggregation, a 4-level tree) is taken.
    v.push_back({s.name, 0, "pack:2 l3:1(size=2KiB) core:4 pu:1", "2x4_l3"});
    v.push_back({s.name, 0, "pack:2 l3:1(size=4KiB) l2:2(size=1KiB) core:2 pu:1", "2x2x2_l3_l2"});
  }
  return v;
}

class Stress : public ::testing::TestWithParam<config> {};

}  // namespace

TEST_P(Stress, RandomTreesMatchSerial) {
  const config& c = GetParam();
  roost::options o;
  o.scheduler = c.sched;
  if (c.workers) o.workers = c.workers;
  if (!c.topology.empty()) o.topology = c.topology;
  roost::runtime rt(o);
  int threw = 0;
  for (int t = 0; t < kTrees; ++t) {
    std::uint64_t seed = 1000 + static_cast<std::uint64_t>(t) * 7919;
    outcome expect = serial_outcome(seed);
    std::set<std::uint64_t> escaping;
    bool escapes = false;
    collect_escaping(seed, 0, 0, escaping, escapes);
    ASSERT_EQ(escapes, expect.threw);
    for (int rep = 0; rep < 2; ++rep) {
      try {
        std::uint64_t got = rt.run([&] { return parallel(seed, 0, 0); });
        ASSERT_FALSE(expect.threw) << "tree " << seed << " should have thrown";
        ASSERT_EQ(got, expect.value) << "tree " << seed;
      } catch (const tree_error& e) {
        ASSERT_TRUE(expect.threw) << "tree " << seed << " threw from node " << e.node;
        ASSERT_TRUE(escaping.count(e.node)) << "node " << e.node << " cannot reach the root";
        ++threw;
      }
    }
  }
  RecordProperty("trees_that_threw", threw);
}

INSTANTIATE_TEST_SUITE_P(AllSchedulers, Stress, ::testing::ValuesIn(configs()),
                         [](const auto& info) { return name_of(info.param); });
