// cab (seed 000 §3.3): on virtual multi-socket topologies the observation hook shows that every
// intra-socket subtree ran inside one socket, that only head cores started inter-socket tasks, and that a
// socket never ran two intra-socket subtrees at once. Plus configuration errors.
#include <gtest/gtest.h>

#include "cab_checker.hpp"
#include "test_util.hpp"
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "roost/roost.hpp"

namespace {

using roost_test::scoped_env;

using namespace roost_test::cab;

struct topo_case {
  const char* topology;
  unsigned cores_per_socket;
  const char* level;
};

class CabTiers : public ::testing::TestWithParam<topo_case> {};

}  // namespace

TEST_P(CabTiers, SubtreesStayInOneSocketAndHeadsRunTheInterTier) {
  const topo_case& c = GetParam();
  scoped_env lv("ROOST_CAB_LEVEL", c.level);
  roost::options o;
  o.scheduler = "cab";
  o.topology = c.topology;
  roost::runtime rt(o);
  const unsigned level = static_cast<unsigned>(std::atoi(c.level));
  for (int it = 0; it < 3; ++it) {
    checker chk(level, c.cores_per_socket);
    roost::set_task_observer(&chk);
    long r = rt.run([] { return tree(8, 1); });
    roost::set_task_observer(nullptr);
    EXPECT_EQ(r, tree_serial(8, 1));
    for (const auto& e : chk.errors) ADD_FAILURE() << e;
    ASSERT_TRUE(chk.errors.empty());
    EXPECT_EQ(chk.leaf_inter_starts, 1L << level);  // every leaf inter-socket task ran once
    EXPECT_LE(chk.max_active, 1) << "a socket ran two intra-socket subtrees at once";
  }
}

INSTANTIATE_TEST_SUITE_P(VirtualSockets, CabTiers,
                         ::testing::Values(topo_case{"pack:2 core:2 pu:1", 2, "2"}, topo_case{"pack:4 core:4 pu:1", 4, "3"},
                                           topo_case{"pack:2 core:2 pu:1", 2, "0"}),
                         [](const auto& info) { return "case" + std::to_string(info.index); });

// With no level given, cab takes the least depth at which a binary tree has a leaf inter-socket task for
// every socket; a given level wins. The tier rules hold at the derived level as at a given one.
TEST(Cab, DefaultLevelFollowsTheSockets) {
  if (getenv("ROOST_CAB_LEVEL")) GTEST_SKIP() << "ROOST_CAB_LEVEL is set in the environment";
  const std::vector<std::tuple<const char*, unsigned, unsigned>> cases = {
      {"pack:1 core:2 pu:1", 2, 0}, {"pack:2 core:1 pu:1", 1, 1}, {"pack:3 core:1 pu:1", 1, 2},
      {"pack:4 core:1 pu:1", 1, 2}, {"pack:2 core:2 pu:1", 2, 1}, {"pack:8 core:1 pu:1", 1, 3}};
  for (const auto& [topology, cores_per_socket, level] : cases) {
    roost::options o;
    o.scheduler = "cab";
    o.topology = topology;
    roost::runtime rt(o);
    const std::string d = rt.describe();
    EXPECT_NE(d.find("boundary level " + std::to_string(level) + " (from the topology)"), std::string::npos)
        << topology << ": " << d;
    checker chk(level, cores_per_socket);
    roost::set_task_observer(&chk);
    EXPECT_EQ(rt.run([] { return tree(6, 1); }), tree_serial(6, 1)) << topology;
    roost::set_task_observer(nullptr);
    EXPECT_TRUE(chk.errors.empty()) << topology << ": " << (chk.errors.empty() ? "" : chk.errors[0]);
    EXPECT_EQ(chk.leaf_inter_starts, 1L << level) << topology;
  }
  roost::options o;
  o.scheduler = "cab";
  o.topology = "pack:4 core:1 pu:1";
  o.cab_level = 3;
  roost::runtime rt(o);
  const std::string d = rt.describe();
  EXPECT_NE(d.find("boundary level 3, "), std::string::npos) << d;
}

// Sockets without a worker do not count: 4 workers on a machine of four 4-core packages all sit on the
// first package, and the level of four sockets (2) kept the top of every tree on its head core: 2-2.8x ws's
// virtual time (an outside-user campaign).
TEST(Cab, DefaultLevelCountsOnlySocketsWithWorkers) {
  if (getenv("ROOST_CAB_LEVEL")) GTEST_SKIP() << "ROOST_CAB_LEVEL is set in the environment";
  for (const auto& [workers, sockets, level] : std::vector<std::tuple<unsigned, unsigned, unsigned>>{{4, 1, 0}, {8, 2, 1}, {16, 4, 2}}) {
    roost::options o;
    o.scheduler = "cab";
    o.topology = "pack:4 core:4 pu:1";
    o.workers = workers;
    roost::runtime rt(o);
    const std::string d = rt.describe();
    EXPECT_NE(d.find("boundary level " + std::to_string(level) + " (from the topology)"), std::string::npos)
        << workers << " workers: " << d;
    EXPECT_NE(d.find(std::to_string(sockets) + (sockets == 1 ? " socket" : " sockets") + " with workers"), std::string::npos)
        << workers << " workers: " << d;
    checker chk(level, 4);
    roost::set_task_observer(&chk);
    EXPECT_EQ(rt.run([] { return tree(6, 1); }), tree_serial(6, 1)) << workers;
    roost::set_task_observer(nullptr);
    EXPECT_TRUE(chk.errors.empty()) << workers << ": " << (chk.errors.empty() ? "" : chk.errors[0]);
  }
}

TEST(Cab, SeveralSubtreesPerSocketIsAnOption) {
  scoped_env many("ROOST_CAB_SUBTREES", "many");
  roost::options o;
  o.scheduler = "cab";
  o.topology = "pack:2 core:2 pu:1";
  roost::runtime rt(o);
  EXPECT_EQ(rt.run([] { return tree(8, 1); }), tree_serial(8, 1));
  EXPECT_NE(rt.describe().find("several subtrees"), std::string::npos) << rt.describe();
}

TEST(Cab, BadSettingsAreClearErrors) {
  for (const char* bad : {"-1", "x", "65", ""}) {
    scoped_env lv("ROOST_CAB_LEVEL", bad);
    roost::options o;
    o.scheduler = "cab";
    try {
      roost::runtime rt(o);
      ADD_FAILURE() << "ROOST_CAB_LEVEL=" << bad << " accepted";
    } catch (const roost::config_error& e) {
      EXPECT_NE(std::string(e.what()).find("ROOST_CAB_LEVEL"), std::string::npos) << e.what();
    }
  }
  scoped_env st("ROOST_CAB_SUBTREES", "some");
  roost::options o;
  o.scheduler = "cab";
  EXPECT_THROW(roost::runtime rt(o), roost::config_error);
}

// The checks above can fail: under plain random stealing the same program breaks the tier rules as soon as
// work spreads. A short run may stay on one worker (the others still asleep), so run until it spreads.
TEST(Cab, CheckerCatchesRandomStealing) {
  roost::options o;
  o.scheduler = "ws";
  o.topology = "pack:4 core:4 pu:1";
  roost::runtime rt(o);
  bool caught = false;
  for (int attempt = 0; attempt < 50 && !caught; ++attempt) {
    checker chk(3, 4);
    roost::set_task_observer(&chk);
    rt.run([] { return tree(10, 1); });
    roost::set_task_observer(nullptr);
    caught = !chk.errors.empty();
  }
  EXPECT_TRUE(caught);
}

// Inside an intra-socket task a two-way join runs inline (roost/detail/fork_join2.hpp). The half it pushes
// has no name, and the engine names a stolen one at depth 1: at ROOST_CAB_LEVEL 2 an inter-socket depth,
// whose children would go parent-first into the socket's pool, which only the head core takes. Here the
// head waits for them: they would run only when its wait gives up. cab adopts the half as an intra-socket
// task, so its thief runs the children work-first. One socket of two cores: the depth-2 task (the level: a
// subtree's root) runs on the head, worker 1 steals the half. Several subtrees per socket are allowed, or
// a broken adoption would hang instead of failing (the head, at the join after its wait, could not take
// the children while the socket runs a subtree). The head's wait spawns an empty task every millisecond: a
// split deque shares only at its owner's pushes and pops (ws_deque.hpp).
TEST(Cab, AStolenHalfOfAnInlineJoinStaysIntraSocket) {
  roost::options o;
  o.scheduler = "cab";
  o.topology = "pack:1 core:2 pu:1";
  o.workers = 2;
  o.cab_level = 2;
  o.cab_one_subtree = false;
  roost::runtime rt(o);
  auto wait_up_to_5s = [](const std::atomic<bool>& flag) {
    return roost_test::wait_in_task_until([&] { return flag.load(); });
  };
  for (int round = 0; round < 3; ++round) {
    std::atomic<bool> children_ran{false};
    std::atomic<int> head{-1}, thief{-1}, ran{0};
    bool waited_in_vain = false;
    rt.run([&] {
      roost::task_group depth1;
      depth1.run([&] {
        roost::task_group depth2;
        depth2.run([&] {
          head = roost::this_worker_id();
          roost::parallel_invoke([&] { waited_in_vain = !wait_up_to_5s(children_ran); },
                                 [&] {
                                   thief = roost::this_worker_id();
                                   roost::task_group g;
                                   g.run([&] { ran.fetch_add(1); });
                                   g.run([&] { ran.fetch_add(1); });
                                   g.wait();
                                   children_ran = true;
                                 });
        });
        depth2.wait();
      });
      depth1.wait();
    });
    EXPECT_EQ(head.load(), 0) << "round " << round;
    EXPECT_EQ(thief.load(), 1) << "round " << round << ": the pushed half was not stolen";
    EXPECT_EQ(ran.load(), 2) << "round " << round;
    EXPECT_FALSE(waited_in_vain) << "round " << round << ": the stolen half's children did not run within 5 s";
  }
}

// The queue a cab worker names for its joins (roost/detail/abi.hpp, name_join_queue) is the running task's:
// its own deque in a task at or below the level, none above it, and the deque's inline windows shut exactly
// when none is named. The engine keeps it by the policy's start and resume hooks, and skips both around a
// child-first child (policy.hpp, child_first_hooks_idle): such a child and its parent are below the level,
// so the worker must still name its deque when either of them looks, after every spawn, join and local
// end. Looked at from user code, in every task of a recursion with two-way joins between the spawns, at one
// worker and two, with the level at 2 (the tiers above and below it both hold tasks).
namespace {
struct tier_check {
  unsigned level;
  std::atomic<long> looked{0}, wrong{0}, below{0};
  void look() {
    roost::detail::worker_abi& w = roost::detail::running_worker();
    const roost::detail::task_id* t = w.current_task;
    looked.fetch_add(1, std::memory_order_relaxed);
    if (!t) {
      wrong.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    const bool intra = t->depth >= level;
    if (intra) below.fetch_add(1, std::memory_order_relaxed);
    roost::detail::ws_deque<roost::detail::job>* const queue = w.join_queue.load(std::memory_order_relaxed);
    roost::detail::ws_deque<roost::detail::job>* const window = w.join_window.load(std::memory_order_relaxed);
    const bool named_deque = queue == &w.deque;
    const bool shut = w.deque.joins_shut() != 0;
    if (named_deque != intra || (queue == nullptr) != shut) wrong.fetch_add(1, std::memory_order_relaxed);
    // The two-way join's windows address the queue named, or the never-open queue while none is.
    if (window != (queue ? queue : &roost::detail::shut_join_window()))
      wrong.fetch_add(1, std::memory_order_relaxed);
    // And the thread's copy of it, which the windows read (abi.hpp, t_join_window), is the same, or the
    // never-open window until a join's slow path copies it: never another queue.
    if (roost::detail::t_join_window != window && roost::detail::t_join_window != &roost::detail::shut_join_window())
      wrong.fetch_add(1, std::memory_order_relaxed);
  }
  void tree(int n) {
    look();
    if (n < 2) return;
    roost::task_group g;
    g.run([this, n] { tree(n - 1); });
    look();
    roost::parallel_invoke([this, n] { tree(n - 2); }, [this] { look(); });
    look();
    g.run([this, n] { tree(n - 2); });
    g.wait();
    look();
  }
};
}  // namespace

TEST(Cab, EveryTaskFindsItsTiersJoinQueueNamed) {
  for (unsigned workers : {1u, 2u}) {
    roost::options o;
    o.scheduler = "cab";
    o.topology = "pack:2 core:1 pu:1";
    o.workers = workers;
    o.cab_level = 2;
    o.cab_one_subtree = false;
    roost::runtime rt(o);
    tier_check c{2};
    for (int round = 0; round < 3; ++round) rt.run([&] { c.tree(12); });
    EXPECT_GT(c.looked.load(), 1000) << workers << " workers";
    EXPECT_GT(c.below.load(), c.looked.load() / 2) << workers << " workers: few tasks below the level";
    EXPECT_EQ(c.wrong.load(), 0) << workers << " workers: a task found another tier's join queue named";
  }
}
