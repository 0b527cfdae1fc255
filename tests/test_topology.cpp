// Topology model from hwloc: synthetic descriptions (DESIGN §4's table), XML files, and worker placement.
#include <gtest/gtest.h>
#include <hwloc.h>
#include <pthread.h>
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "platform/platform.hpp"
#include "roost/errors.hpp"
#include "roost/runtime.hpp"
#include "topology/synthetic.hpp"
#include "test_util.hpp"
#include "topology/placement.hpp"
#include "topology/topology.hpp"

using roost::topo::topology;

namespace {

// The config_error load() throws for `description`, or "" when it loads.
std::string load_error(const std::string& description) {
  return roost_test::config_error_of([&] { topology::load(description); });
}

using roost_test::expect_mentions;

// hwloc's own XML export of a synthetic machine, written to a temporary file; `edit` rewrites its text.
std::string export_xml(const char* synthetic, const std::string& name, std::string (*edit)(std::string) = nullptr) {
  hwloc_topology_t h;
  EXPECT_EQ(hwloc_topology_init(&h), 0);
  EXPECT_EQ(hwloc_topology_set_synthetic(h, synthetic), 0);
  EXPECT_EQ(hwloc_topology_load(h), 0);
  char* buf = nullptr;
  int len = 0;
  EXPECT_EQ(hwloc_topology_export_xmlbuffer(h, &buf, &len, 0), 0);
  std::string xml(buf, static_cast<std::size_t>(len > 0 ? len - 1 : 0));
  hwloc_free_xmlbuffer(h, buf);
  hwloc_topology_destroy(h);
  if (edit) xml = edit(xml);
  std::string path = roost_test::temp_path(name);
  std::ofstream(path) << xml;
  return path;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

}  // namespace

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
  std::string path = roost_test::temp_path("roost_topology_test.xml");
  ASSERT_EQ(hwloc_topology_export_xml(h, path.c_str(), 0), 0);
  hwloc_topology_destroy(h);
  topology t = topology::load(path);
  EXPECT_EQ(t.num_packages(), 3u);
  EXPECT_EQ(t.num_pus(), 6u);
  EXPECT_EQ(t.package_cache_bytes(0), 2u << 20);
  std::remove(path.c_str());
}

// A machine whose memory-only nodes are numbered after the nodes with cores (KNL's MCDRAM, CXL memory): each
// package holds a node with cores (system numbers 0 and 1) and one without (2 and 3), so the logical order
// (0, 2, 1, 3 by system number) is not the system order, and the XML's distances are listed by system number.
// The topology gives each logical node its system number, and the matrix by logical node: it was read in
// the XML's order, and every distance went to another pair of nodes.
std::string memory_nodes_numbered_last(std::string xml) {
  const std::string second = R"(<object type="NUMANode" os_index="1" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000002" complete_nodeset="0x00000002")";
  const std::string third = R"(<object type="NUMANode" os_index="2" cpuset="0x0000000c" complete_cpuset="0x0000000c" nodeset="0x00000004" complete_nodeset="0x00000004")";
  EXPECT_NE(xml.find(second), std::string::npos);
  EXPECT_NE(xml.find(third), std::string::npos);
  xml = replace_all(xml, second, "@SECOND@");
  xml = replace_all(xml, third, "@THIRD@");
  xml = replace_all(xml, R"(nodeset="0x00000003")", R"(nodeset="0x00000005")");  // package 0: nodes 0 and 2
  xml = replace_all(xml, R"(nodeset="0x0000000c")", R"(nodeset="0x0000000a")");  // package 1: nodes 1 and 3
  xml = replace_all(xml, "@SECOND@", replace_all(replace_all(second, R"(os_index="1")", R"(os_index="2")"), "0x00000002", "0x00000004"));
  xml = replace_all(xml, "@THIRD@", replace_all(replace_all(third, R"(os_index="2")", R"(os_index="1")"), "0x00000004", "0x00000002"));
  // By system number: d(0,1) = 21, d(0,2) = 31, d(0,3) = 41, d(1,2) = 41, d(1,3) = 31, d(2,3) = 41.
  const std::string distances = R"(<distances2 type="NUMANode" nbobjs="4" kind="5" name="NUMALatency" indexing="os">
  <indexes length="8">0 1 2 3 </indexes>
  <u64values length="48">10 21 31 41 21 10 41 31 31 41 10 41 41 31 41 10 </u64values>
</distances2>
)";
  const std::size_t end = xml.rfind("</topology>");
  EXPECT_NE(end, std::string::npos);
  xml.insert(end, distances);
  return xml;
}

TEST(Topology, NumaNodesKeepTheirSystemNumbersAndDistancesFollowTheLogicalOrder) {
  const std::string path = export_xml("pack:2 [numa(memory=1GiB)] [numa(memory=2GiB)] l3:1(size=4MiB) core:2 pu:1",
                                      "roost_topology_memory_nodes.xml", memory_nodes_numbered_last);
  topology t = topology::load(path);
  std::remove(path.c_str());
  ASSERT_EQ(t.num_numa_nodes(), 4u);
  EXPECT_EQ(t.numa_os_indexes(), (std::vector<int>{0, 2, 1, 3}));
  EXPECT_EQ(t.pu(0).numa, 0u);
  EXPECT_EQ(t.pu(2).numa, 2u);  // package 1's node with cores: logical 2, system number 1
  // Row by logical node: L0 = #0, L1 = #2, L2 = #1, L3 = #3.
  EXPECT_EQ(t.numa_distances(), (std::vector<unsigned>{10, 31, 21, 41,  //
                                                       31, 10, 41, 41,  //
                                                       21, 41, 10, 31,  //
                                                       41, 41, 31, 10}));
  // A synthetic machine's nodes are numbered in logical order.
  EXPECT_EQ(topology::load("pack:2 [numa(memory=1GiB)] [numa(memory=2GiB)] l3:1(size=4MiB) core:2 pu:1").numa_os_indexes(),
            (std::vector<int>{0, 1, 2, 3}));
}

// Issue #23 (10): the PU count of a synthetic description is the product of its arities, counted before
// hwloc builds it: pack:99999 pu:99999 (10^10 PUs) kept hwloc busy for minutes; it now fails at once.
TEST(Topology, SyntheticSizeIsBoundedBeforeHwlocBuildsIt) {
  expect_mentions(load_error("pack:99999 pu:99999"),
                  {"ROOST_TOPOLOGY='pack:99999 pu:99999'", "9999800001 PUs", "at most 4096"});
  expect_mentions(load_error("pack:3000 core:2 pu:1"), {"6000 PUs", "at most 4096", "worker limit"});
  expect_mentions(load_error("pack:2 [numa] core:65 pu:32"), {"4160 PUs"});     // attached NUMA nodes add none
  expect_mentions(load_error("pack:0x1000 pu:2"), {"8192 PUs"});                 // hwloc reads 0x.. as hex
  expect_mentions(load_error("pack:65536 core:65536 l2:65536 pu:65536"), {"more than"});  // past 64 bits
  EXPECT_EQ(topology::load("pack:64 core:64 pu:1").num_pus(), 4096u);            // the limit itself is fine
}

// hwloc builds what it can of a description whose indexes= repeat a PU, a different machine: one package,
// one PU and a 64-byte cache for "pack:2 ... pu:1(indexes=0,0)", without a word (an outside-user campaign).
TEST(Topology, ADescriptionHwlocBuildsWithFewerPUsIsRefused) {
  expect_mentions(load_error("pack:2 l3:1(size=1MiB) core:1 pu:1(indexes=0,0)"),
                  {"describes 2 PUs", "hwloc built 1", "indexes="});
  EXPECT_EQ(topology::load("pack:2 core:1 pu:1(indexes=1,0)").num_pus(), 2u);  // a permutation is fine
  EXPECT_EQ(topology::load("pack:2 [numa] l3:1(size=1MiB) core:2 pu:1").num_pus(), 4u);
}

// Issue #23 (10): hwloc reads sizes with strtoull, so size=-5 wrapped to 2^64-5, size=0 silently became the
// default size, and a large size with a unit wrapped past 64 bits.
TEST(Topology, SyntheticSizesAreValidated) {
  for (const char* bad : {"l3:1(size=-5) pu:1", "l3:1(size=0) pu:1", "l3:1(size=99999999999TiB) pu:1",
                          "l3:1(size=2TiB) pu:1", "pack:2 l2:1(size= 5) pu:1"}) {
    expect_mentions(load_error(bad), {"ROOST_TOPOLOGY='" + std::string(bad) + "'", "size=",
                                      "a cache size from 1 byte to 1 TiB"});
  }
  for (const char* bad : {"pack:2 [numa(memory=-1)] pu:1", "(memory=0) pack:2 pu:1",
                          "pack:2 [numa(memory=20000000000TB)] pu:1"}) {
    expect_mentions(load_error(bad), {"ROOST_TOPOLOGY='" + std::string(bad) + "'", "memory=", "at least 1 byte"});
  }
  EXPECT_EQ(topology::load("pack:1 l3:1(size=1TiB) pu:1").package_cache_bytes(0), std::size_t{1} << 40);
  EXPECT_EQ(topology::load("pack:1 l3:1(size=0x100000 indexes=0) pu:1").package_cache_bytes(0), 1u << 20);
  EXPECT_EQ(topology::load("(memory=5GB) pack:2 [numa(memory=1GiB)] pu:1").num_pus(), 2u);
}

// Issue #23 (10): a file that is not an hwloc XML topology got "hwloc failed to load it".
TEST(Topology, MalformedXmlFileSaysWhatAValidOneIs) {
  std::string path = roost_test::temp_path("roost_malformed.xml");
  std::ofstream(path) << "<?xml version=\"1.0\"?>\n<topology><object type=\"Mach";
  expect_mentions(load_error(path),
                  {"ROOST_TOPOLOGY='" + path + "'", "not an hwloc XML topology", "lstopo-no-graphics --of xml"});
  std::remove(path.c_str());
}

// A path that exists but is no file was called "no such file".
TEST(Topology, ADirectoryIsNamedAsOne) {
  const std::string dir = testing::TempDir();
  expect_mentions(load_error(dir), {"ROOST_TOPOLOGY='" + dir + "'", "names a directory", "hwloc XML export"});
}

// An XML file is held to the same rules as a synthetic description, checked once hwloc has read it.
TEST(Topology, XmlFileIsBoundedAndValidatedToo) {
  std::string big = export_xml("pack:65 core:64 pu:1", "roost_big.xml");
  expect_mentions(load_error(big), {"ROOST_TOPOLOGY='" + big + "'", "4160 PUs", "at most 4096"});
  std::remove(big.c_str());
  auto odd_line = [](std::string x) { return replace_all(x, "cache_linesize=\"64\"", "cache_linesize=\"48\""); };
  std::string odd = export_xml("pack:2 l3:1(size=2MiB) core:2 pu:1", "roost_odd_line.xml", odd_line);
  expect_mentions(load_error(odd), {"ROOST_TOPOLOGY='" + odd + "'", "line size 48", "a power of two"});
  std::remove(odd.c_str());
  auto negative = [](std::string x) { return replace_all(x, "cache_size=\"2097152\"", "cache_size=\"-5\""); };
  std::string neg = export_xml("pack:2 l3:1(size=2MiB) core:2 pu:1", "roost_negative_cache.xml", negative);
  expect_mentions(load_error(neg), {"ROOST_TOPOLOGY='" + neg + "'", "a cache size from 1 byte to 1 TiB"});
  std::remove(neg.c_str());
}

// A cache level named twice on one path: hwloc merges the two into one cache of no size, and the error named a
// size nobody wrote (an outside-user campaign). Data and unified caches of one level are one level; an
// instruction cache beside the data one is not a repeat.
TEST(Topology, ACacheLevelNamedTwiceIsRefused) {
  for (const std::string d : {"pack:1 l3:1(size=1MiB) l3:1(size=512KiB) core:1 pu:1",
                              "pack:1 L3Cache:1(size=1MiB) l3:2(size=512KiB) core:1 pu:1",
                              "pack:1 l1:1(size=32KiB) l1d:1(size=32KiB) core:1 pu:1"})
    expect_mentions(load_error(d), {"ROOST_TOPOLOGY='" + d + "'", "twice", "each cache level appears once"});
  const topology t = topology::load("pack:1 l3:1(size=1MiB) l2:1(size=512KiB) l1d:1(size=32KiB) l1i:1(size=32KiB) core:1 pu:1");
  EXPECT_EQ(t.num_pus(), 1u);
  // Upside down: an l3 under an l2 (the simulator walked the l2 first; an outside-user campaign).
  for (const std::string d : {"pack:1 l2:1(size=1MiB) l3:2(size=256KiB) core:1 pu:1",
                              "pack:1 l1:1(size=32KiB) l2:2(size=256KiB) core:1 pu:1"})
    expect_mentions(load_error(d), {"ROOST_TOPOLOGY='" + d + "'", "under", "l3 above l2 above l1"});
  EXPECT_EQ(topology::load("pack:1 l3:1(size=1MiB) l1i:1(size=32KiB) l1d:1(size=32KiB) core:1 pu:1").num_pus(), 1u);
}

// hwloc gives a synthetic cache level without size= a size of its own (16 MiB for an L3), which the
// schedulers and KRD used without a word natively (an audit): such levels are found, as written, to be
// named. size= inside linesize= does not count; instruction caches and attached NUMA nodes are no data caches.
TEST(Topology, CacheLevelsWithoutASizeAreFound) {
  using roost::topo::caches_without_size;
  EXPECT_TRUE(caches_without_size("pack:2 l3:1(size=1MiB) l2:2(size=256KiB) core:1 pu:1").empty());
  EXPECT_TRUE(caches_without_size("pack:2 [numa(memory=1GiB)] core:1 pu:1").empty());
  EXPECT_EQ(caches_without_size("pack:2 l3:1 l2:2(size=256KiB) l1i:1 core:1 pu:1"), std::vector<std::string>{"l3:1"});
  EXPECT_EQ(caches_without_size("pack:2 L3Cache:1(linesize=64) l2:2 core:1 pu:1"),
            (std::vector<std::string>{"L3Cache:1(linesize=64)", "l2:2"}));
  EXPECT_TRUE(caches_without_size("pack:1 l2:1(linesize=64 size=1MiB) core:1 pu:1").empty());
}

// A description longer than a file name may be (255 bytes): asked again whether it named a file, it threw a
// std::filesystem error (ENAMETOOLONG) from the runtime's constructor, natively and simulated (a review).
TEST(Topology, ALongSyntheticDescriptionMakesARuntime) {
  std::string d = "pack:1";
  for (int i = 0; i < 30; ++i) d += " group:1";
  d += " l3:1(size=1MiB) l2:2(size=256KiB) l1d:1(size=32KiB) core:1 pu:1";
  ASSERT_GT(d.size(), 255u);
  for (const char* platform : {"native", "sim"}) {
    roost::options o;
    o.topology = d;
    o.platform = platform;
    roost::runtime rt(o);
    EXPECT_EQ(rt.run([] { return 7; }), 7) << platform;
  }
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

// A virtual topology larger than the machine: the workers that fit are pinned, its first PUs onto the
// allowed CPUs (the note said "1 workers ... running oversubscribed" for one worker on two CPUs).
TEST(Placement, FewerWorkersThanCpusArePinnedOnALargerVirtualTopology) {
  topology t = topology::load("pack:4 core:1 pu:1");
  for (unsigned workers : {1u, 2u}) {
    auto pl = roost::topo::place_workers(t, workers, true, {3, 5});
    EXPECT_FALSE(pl.oversubscribed) << workers;
    EXPECT_TRUE(pl.note.empty()) << pl.note;
    EXPECT_EQ(pl.cpu_of_worker[0], 3);
    if (workers == 2) EXPECT_EQ(pl.cpu_of_worker[1], 5);
  }
  auto pl = roost::topo::place_workers(t, 3, true, {3, 5});
  EXPECT_TRUE(pl.oversubscribed);
  EXPECT_NE(pl.note.find("3 workers on a virtual topology of 4 PUs"), std::string::npos) << pl.note;
  pl = roost::topo::place_workers(t, 1, true, {});
  EXPECT_NE(pl.note.find("roost: 1 worker on"), std::string::npos) << pl.note;
  // More workers than PUs share them, so their CPUs: oversubscribed however many CPUs there are, and the
  // note says so (it said "but this process may use 2 CPUs", which was not the reason).
  pl = roost::topo::place_workers(topology::load("pack:1 core:1 pu:1"), 2, true, {0, 1});
  EXPECT_TRUE(pl.oversubscribed);
  EXPECT_NE(pl.note.find("2 workers on a virtual topology of 1 PU, more than its PUs"), std::string::npos) << pl.note;
  EXPECT_EQ(pl.note.find("CPU"), std::string::npos) << pl.note;
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

// The real machine is the part the calling thread may run on (taskset): a default runtime there has one
// worker per allowed PU, each pinned. Run on one of two or more allowed CPUs (no machine to check with one).
TEST(Topology, RealMachineIsRestrictedToTheAffinityMask) {
  const std::vector<int> allowed = roost::platform::native_platform::allowed_cpus();
  const topology whole = topology::load("");
  if (allowed.size() < 2) GTEST_SKIP() << "one allowed CPU: nothing to restrict";
  EXPECT_EQ(whole.num_pus(), allowed.size());
  {
    // The thread's own mask is given back however the block ends: later tests load the machine too.
    struct restore {
      roost::platform::native_platform::saved_affinity saved = roost::platform::native_platform::save_affinity();
      ~restore() { roost::platform::native_platform::restore_affinity(saved); }
    } guard;
    // As taskset would (roost's own pin_this_thread is a worker's pin, behind which the process's CPUs stay
    // the ones a runtime sees).
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(allowed.back(), &set);
    ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof set, &set), 0);
    const topology one = topology::load("");
    EXPECT_EQ(one.num_pus(), 1u);
    EXPECT_EQ(one.pu(0).os_index, allowed.back());
    roost::options o;  // the defaults, whatever the environment says
    o.scheduler = "ws";
    roost::runtime rt(o);
    if (std::getenv("ROOST_WORKERS") == nullptr && std::getenv("ROOST_TOPOLOGY") == nullptr) {
      EXPECT_EQ(rt.config().workers, 1u);
      EXPECT_NE(rt.describe().find("pinned to CPUs " + std::to_string(allowed.back()) + ";"), std::string::npos)
          << rt.describe();
    }
  }
  EXPECT_EQ(topology::load("").num_pus(), allowed.size());
}

// An XML whose last-level caches have no size (cache_size="0": unknown, what hwloc writes where the system
// reports none) is said so on stderr, natively, with the size the schedulers and KRD then use (the largest
// cache below with a size): it was taken without a word, the L2's size standing for the L3's (an outside-user
// campaign). The same machine with its sizes says nothing of the kind.
TEST(Topology, AnXmlWhoseLastLevelCachesHaveNoSizeIsToldNatively) {
  const char* machine = "pack:2 l3:1(size=4MiB) l2:3(size=512KiB) core:1 pu:1";
  const std::string sized = export_xml(machine, "roost_topo_l3_sized.xml");
  const std::string unsized = export_xml(machine, "roost_topo_l3_unsized.xml", [](std::string x) {
    return replace_all(x, "cache_size=\"4194304\"", "cache_size=\"0\"");
  });
  for (const std::string* path : {&sized, &unsized}) {
    testing::internal::CaptureStderr();
    {
      roost::options o;
      o.topology = *path;
      o.workers = 2;
      roost::runtime rt(o);
      EXPECT_EQ(rt.run([] { return 7; }), 7);
    }
    const std::string said = testing::internal::GetCapturedStderr();
    const bool told = said.find("have no size (0: unknown)") != std::string::npos;
    if (path == &unsized) {
      EXPECT_TRUE(told) << said;
      EXPECT_NE(said.find("2 last-level caches (L3)"), std::string::npos) << said;
      EXPECT_NE(said.find("512 KiB"), std::string::npos) << said;
    } else {
      EXPECT_FALSE(told) << said;
    }
  }
  std::remove(sized.c_str());
  std::remove(unsized.c_str());
}
