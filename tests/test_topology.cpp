// Topology model from hwloc: synthetic descriptions (DESIGN §4's table), XML files, and worker placement.
#include <gtest/gtest.h>
#include <hwloc.h>

#include <cstdio>
#include <string>

#include "roost/errors.hpp"
#include "topology/placement.hpp"
#include "topology/topology.hpp"

using roost::topo::topology;

TEST(Topology, RealMachineHasPUsAndALevel) {
  topology t = topology::load("");
  EXPECT_FALSE(t.is_virtual());
  EXPECT_GE(t.num_pus(), 1u);
  EXPECT_GE(t.sharing_levels().size(), 1u);
  EXPECT_GE(t.line_size(), 32u);
}

TEST(Topology, Seed000MachineFromSyntheticDescription) {
  topology t = topology::load("pack:4 [numa(memory=4GiB)] l3:1(size=6MiB) l2:4(size=512KiB) core:1 pu:1");
  EXPECT_TRUE(t.is_virtual());
  EXPECT_EQ(t.num_packages(), 4u);
  EXPECT_EQ(t.num_numa_nodes(), 4u);
  EXPECT_EQ(t.num_cores(), 16u);
  EXPECT_EQ(t.num_pus(), 16u);
  EXPECT_EQ(t.package_cache_bytes(0), 6u << 20);
  EXPECT_EQ(t.pu(5).package, 1u);
  EXPECT_EQ(t.pu(5).numa, 1u);
  // One sharing level per package (L3 and package coincide), then the machine.
  ASSERT_EQ(t.sharing_levels().size(), 2u);
  EXPECT_EQ(t.sharing_levels()[0].domains.size(), 4u);
  EXPECT_EQ(t.sharing_levels()[0].cache_bytes, 6u << 20);
  EXPECT_EQ(t.sharing_levels()[1].domains.size(), 1u);
  // Distances default to the SLIT convention.
  ASSERT_EQ(t.numa_distances().size(), 16u);
  EXPECT_EQ(t.numa_distances()[0], 10u);
  EXPECT_EQ(t.numa_distances()[1], 20u);
}

TEST(Topology, OneCorePerPackageCacheDeclaredAsL3) {
  topology t = topology::load("pack:2 l3:1(size=1MiB) core:1 pu:1");
  EXPECT_EQ(t.num_pus(), 2u);
  EXPECT_EQ(t.num_packages(), 2u);
  EXPECT_EQ(t.package_cache_bytes(1), 1u << 20);
}

TEST(Topology, NestedSharingLevels) {
  topology t = topology::load("pack:2 l3:2(size=4MiB) core:2 pu:2");
  EXPECT_EQ(t.num_pus(), 16u);
  const auto& lv = t.sharing_levels();
  ASSERT_GE(lv.size(), 3u);
  EXPECT_EQ(lv[0].name, "core");  // two PUs per core share it
  EXPECT_EQ(lv[0].domains.size(), 8u);
  EXPECT_EQ(lv[1].domains.size(), 4u);  // L3
  EXPECT_EQ(lv.back().domains.size(), 1u);
}

TEST(Topology, RejectedDescriptionNamesTheVariable) {
  try {
    topology::load("pack:4 nonsense:3");
    FAIL();
  } catch (const roost::config_error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("ROOST_TOPOLOGY='pack:4 nonsense:3'"), std::string::npos) << m;
  }
}

TEST(Topology, ReadsAnHwlocXmlFile) {
  hwloc_topology_t h;
  ASSERT_EQ(hwloc_topology_init(&h), 0);
  ASSERT_EQ(hwloc_topology_set_synthetic(h, "pack:3 l3:1(size=2MiB) core:2 pu:1"), 0);
  ASSERT_EQ(hwloc_topology_load(h), 0);
  std::string path = testing::TempDir() + "roost_topology_test.xml";
  ASSERT_EQ(hwloc_topology_export_xml(h, path.c_str(), 0), 0);
  hwloc_topology_destroy(h);
  topology t = topology::load(path);
  EXPECT_EQ(t.num_packages(), 3u);
  EXPECT_EQ(t.num_pus(), 6u);
  EXPECT_EQ(t.package_cache_bytes(0), 2u << 20);
  std::remove(path.c_str());
}

TEST(Placement, FitsAndPinsInOrder) {
  topology t = topology::load("pack:2 core:1 pu:1");
  auto pl = roost::topo::place_workers(t, 2, true, {4, 7});
  EXPECT_FALSE(pl.oversubscribed);
  EXPECT_EQ(pl.cpu_of_worker[0], 4);
  EXPECT_EQ(pl.cpu_of_worker[1], 7);
  EXPECT_TRUE(pl.note.empty());
}

TEST(Placement, LargerThanTheMachineRunsUnpinnedAndSaysSo) {
  topology t = topology::load("pack:4 core:4 pu:1");
  auto pl = roost::topo::place_workers(t, 16, true, {0, 1});
  EXPECT_TRUE(pl.oversubscribed);
  for (int c : pl.cpu_of_worker) EXPECT_EQ(c, -1);
  EXPECT_NE(pl.note.find("oversubscribed"), std::string::npos);
  EXPECT_EQ(pl.pu_of_worker[15], 15u);
}

TEST(Placement, NoBindingLeavesWorkersUnpinned) {
  topology t = topology::load("pack:1 core:2 pu:1");
  auto pl = roost::topo::place_workers(t, 2, false, {0, 1});
  EXPECT_FALSE(pl.oversubscribed);
  EXPECT_EQ(pl.cpu_of_worker[0], -1);
}

TEST(Placement, RespectsTheAffinityMask) {
  topology t = topology::load("pack:1 core:2 pu:1");
  auto pl = roost::topo::place_workers(t, 2, true, {1});
  EXPECT_TRUE(pl.oversubscribed);
}
