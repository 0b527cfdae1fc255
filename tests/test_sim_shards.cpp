// The memory model walked as two shards by line by two host threads (src/sim/sharded_model.hpp): every result
// is the one model's, to the bit, on coherent, NUMA (first touch, interleave, explicit placement), multi-level
// and pycachesim-mode hierarchies, whether the helper thread or the caller walks a region's odd half; one host
// thread, or a geometry that does not split, is the one model.
#include <gtest/gtest.h>
#include <atomic>
#include <cstdlib>
#include <new>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "roost/errors.hpp"
#include "roost/roost.hpp"
#include "sim/memory_model.hpp"
#include "sim/sharded_model.hpp"
#include "sim/sim_params.hpp"
#include "sim_compare.hpp"
#include "test_util.hpp"
#include "topology/topology.hpp"

using namespace roost::sim;
using roost::topo::topology;

// Every operator new of this binary, counted (SimShards.TwoShardsAllocateOnTheHeapAsOneDoes). Not under a
// sanitizer, whose own operator new and delete this would split (ASan: alloc-dealloc-mismatch).
#if defined(ROOST_ASAN) || defined(ROOST_TSAN)
#define ROOST_TEST_COUNTS_NEW 0
#else
#define ROOST_TEST_COUNTS_NEW 1
#endif
static std::atomic<long> g_news{0};
#if ROOST_TEST_COUNTS_NEW
void* operator new(std::size_t n) {
  g_news.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#endif

namespace {

struct geometry {
  const char* topology;
  const char* params;
};

const geometry kGeometries[] = {
    // Two cores of one socket: private L1d and L2 each, a shared L3 (coherence between the private caches).
    {"pack:1 l3:1(size=64KiB) l2:2(size=16KiB) l1d:1(size=4KiB) core:1 pu:1", ""},
    // Two sockets and NUMA nodes, first touch, small caches so that lines go to memory and come back.
    {"pack:2 [numa(memory=1GiB)] l3:1(size=32KiB) l2:2(size=8KiB) core:1 pu:1", "page_size=4KiB"},
    {"pack:2 [numa(memory=1GiB)] l3:1(size=32KiB) l2:2(size=8KiB) core:1 pu:1", "numa_policy=interleave"},
    // Four nodes, the three-level Opteron-like shape, pycachesim's replacement semantics.
    {"pack:4 [numa(memory=1GiB)] l3:1(size=48KiB) l2:2(size=8KiB) l1d:1(size=2KiB) core:1 pu:1",
     "mode=pycachesim page_size=1KiB"},
};

bool same(const region_result& a, const region_result& b) {
  return a.pu == b.pu && a.lines == b.lines && a.coherence_misses == b.coherence_misses &&
         a.remote_lines == b.remote_lines && a.served == b.served &&
         std::memcmp(&a.latency_sum_ns, &b.latency_sum_ns, sizeof(double)) == 0 &&
         std::memcmp(&a.lead_latency_ns, &b.lead_latency_ns, sizeof(double)) == 0;
}

// A seeded mix of regions: long ones (the helper walks their odd lines), short ones and single lines, lists of
// regions walked together (empty ones among them), reads, writes and read-writes, from every PU, over a
// footprint a few times the caches, with explicit placements.
void replay_both(const geometry& g, const std::string& threads, unsigned seed) {
  SCOPED_TRACE(std::string(g.topology) + " " + g.params + " host_threads=" + threads + " seed " + std::to_string(seed));
  const unsigned shards_expected = threads == "2" ? 2 : 1;
  const topology tp = topology::load(g.topology);
  const param_overrides one = param_overrides::parse(g.params, "test");
  const param_overrides two = param_overrides::parse(std::string(g.params) + " host_threads=" + threads, "test");
  memory_model whole = memory_model::from_topology(tp, one);
  sharded_model shards = sharded_model::from_topology(tp, two);
  ASSERT_EQ(shards.shards(), shards_expected);
  std::mt19937_64 rng(seed);
  const std::uint64_t footprint = 256 * 1024;
  for (int i = 0; i < 3000; ++i) {
    const unsigned pu = static_cast<unsigned>(rng() % whole.num_pus());
    const std::uint64_t addr = rng() % footprint;
    const int shape = static_cast<int>(rng() % 8);
    const std::size_t bytes = shape < 3 ? 64 * (64 + rng() % 400) : shape < 6 ? 1 + rng() % 700 : 1;
    const access_kind kind = static_cast<access_kind>(rng() % 3);
    if (rng() % 200 == 0 && whole.num_numa() > 1) {
      const unsigned node = static_cast<unsigned>(rng() % whole.num_numa());
      whole.place(addr, 8192, node);
      shards.place(addr, 8192, node);
    }
    if (i % 5 == 4) {  // several regions at once (a touch's page runs), some of them short or empty
      std::vector<sharded_model::byte_range> several;
      for (int k = 0, count = 1 + static_cast<int>(rng() % 4); k < count; ++k)
        several.push_back({rng() % footprint, rng() % 3 == 0 ? std::size_t(rng() % 2) : std::size_t(64 * (rng() % 40))});
      std::vector<region_result> b(several.size());
      shards.access_regions(pu, several.data(), several.size(), kind, b.data());
      for (std::size_t k = 0; k < several.size(); ++k) {
        const region_result a = whole.access_region(pu, several[k].addr, several[k].bytes, kind);
        ASSERT_TRUE(same(a, b[k])) << "region " << k << " of a list, at " << several[k].addr << " of " << several[k].bytes
                                   << " bytes from PU " << pu;
      }
      continue;
    }
    const region_result a = whole.access_region(pu, addr, bytes, kind);
    const region_result b = shards.access_region(pu, addr, bytes, kind);
    ASSERT_TRUE(same(a, b)) << "region " << i << " at " << addr << " of " << bytes << " bytes from PU " << pu;
    if (i % 97 == 0) {
      const line_addr l = (rng() % footprint) / 64;
      const bool w = rng() % 2;
      ASSERT_TRUE(roost_test::same_access(whole.access(pu, l, w), shards.access(pu, l, w)));
    }
  }
  for (std::size_t c = 0; c < whole.num_instances(); ++c) {
    roost_test::expect_same_counters(whole.counters(c), shards.counters(c), c);
    for (line_addr l = 0; l < footprint / 64; l += 7) ASSERT_EQ(whole.holds(c, l), shards.holds(c, l));
    EXPECT_EQ(whole.instance(c).bytes, shards.instance(c).bytes);
    EXPECT_EQ(whole.instance(c).sets, shards.instance(c).sets);
  }
  for (unsigned pu = 0; pu < whole.num_pus(); ++pu) {
    EXPECT_EQ(whole.memory(pu).local, shards.memory(pu).local);
    EXPECT_EQ(whole.memory(pu).remote, shards.memory(pu).remote);
    EXPECT_EQ(whole.memory(pu).writebacks, shards.memory(pu).writebacks);
  }
  for (std::uint64_t a = 0; a < footprint; a += 1024) EXPECT_EQ(whole.home_of(a), shards.home_of(a));
  EXPECT_EQ(whole.summary(), shards.summary());
}

}  // namespace

// The helper thread walks the odd half of every region of 32 lines or more (or the caller takes it back; a
// busy host makes that happen): TSan checks the hand-over in its build. Shorter regions and single lines go
// to their shards on the caller's thread.
// Under TSan one seed a geometry: each replay hands the same kinds of region over, and three took 28 s there.
TEST(SimShards, TwoHostThreadsGiveTheOneModelsResultsExactly) {
  for (const geometry& g : kGeometries)
    for (unsigned seed = 1; seed <= (roost_test::under_tsan() ? 1u : 3u); ++seed) replay_both(g, "2", seed);
}

// Walks posted and collected later (the simulated platform's lazy settlement, sharded_model::post): up to
// a dozen in flight, collected in a random order, while single-line accesses, placements and counter reads
// (which finish every posted walk first) come between them. Each result is what the one model gave when the
// walk was posted, and the model's state at the end is the one model's.
TEST(SimShards, PostedWalksCollectedLaterGiveTheOneModelsResultsExactly) {
  for (const geometry& g : kGeometries) {
    SCOPED_TRACE(std::string(g.topology) + " " + g.params);
    const topology tp = topology::load(g.topology);
    memory_model whole = memory_model::from_topology(tp, param_overrides::parse(g.params, "test"));
    sharded_model shards = sharded_model::from_topology(tp, param_overrides::parse(std::string(g.params) + " host_threads=2", "test"));
    ASSERT_EQ(shards.shards(), 2u);
    std::mt19937_64 rng(11);
    const std::uint64_t footprint = 256 * 1024;
    struct in_flight {
      sharded_model::walk_ticket ticket;
      std::vector<region_result> expected;
    };
    std::vector<in_flight> pending;
    std::uint64_t posted = 0;
    auto collect_one = [&](std::size_t k) {
      std::vector<region_result> got(shards.regions_of(pending[k].ticket));
      ASSERT_EQ(got.size(), pending[k].expected.size());
      shards.collect(pending[k].ticket, got.data());
      for (std::size_t r = 0; r < got.size(); ++r)
        ASSERT_TRUE(same(pending[k].expected[r], got[r])) << "walk " << pending[k].ticket.seq << ", region " << r;
      pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(k));
    };
    for (int i = 0; i < (roost_test::under_sanitizer() ? 600 : 3000); ++i) {
      const unsigned pu = static_cast<unsigned>(rng() % whole.num_pus());
      const access_kind kind = static_cast<access_kind>(rng() % 3);
      std::vector<sharded_model::byte_range> regions;
      for (int k = 0, count = 1 + static_cast<int>(rng() % 3); k < count; ++k)
        regions.push_back({rng() % footprint, rng() % 5 == 0 ? std::size_t(rng() % 100) : std::size_t(64 * (32 + rng() % 300))});
      std::uint64_t lines = 0;
      for (const auto& r : regions)
        if (r.bytes) lines += (r.addr + r.bytes - 1) / 64 - r.addr / 64 + 1;
      if (!shards.can_post(lines)) {  // the helper is made at the first walk of 32 lines or more
        ASSERT_LT(lines, sharded_model::kMinSharedLines);
        continue;
      }
      in_flight f;
      for (const auto& r : regions) f.expected.push_back(whole.access_region(pu, r.addr, r.bytes, kind));
      f.ticket = shards.post(pu, regions.data(), regions.size(), kind);
      ASSERT_EQ(f.ticket.seq, ++posted);
      ASSERT_EQ(f.ticket.lines, lines);
      pending.push_back(std::move(f));
      if (pending.size() > 12 || rng() % 3 == 0) collect_one(static_cast<std::size_t>(rng() % pending.size()));
      if (HasFatalFailure()) return;
      const int other = static_cast<int>(rng() % 40);
      if (other == 0 && whole.num_numa() > 1) {  // a placement: every walk posted so far first
        const std::uint64_t addr = rng() % footprint;
        const unsigned node = static_cast<unsigned>(rng() % whole.num_numa());
        whole.place(addr, 8192, node);
        shards.place(addr, 8192, node);
      } else if (other == 1) {  // one line, on the caller's thread, after the posted walks
        const line_addr l = (rng() % footprint) / 64;
        const access_result x = whole.access(pu, l, true), y = shards.access(pu, l, true);
        ASSERT_EQ(x.instance, y.instance);
        ASSERT_EQ(x.latency_ns, y.latency_ns);
      } else if (other == 2) {
        const std::size_t c = static_cast<std::size_t>(rng() % whole.num_instances());
        ASSERT_EQ(whole.counters(c).misses, shards.counters(c).misses) << "instance " << c;
      }
    }
    while (!pending.empty()) {
      collect_one(pending.size() - 1);
      if (HasFatalFailure()) return;
    }
    for (std::size_t c = 0; c < whole.num_instances(); ++c) {
      EXPECT_EQ(whole.counters(c).accesses, shards.counters(c).accesses) << "instance " << c;
      EXPECT_EQ(whole.counters(c).misses, shards.counters(c).misses) << "instance " << c;
      EXPECT_EQ(whole.counters(c).coherence_misses, shards.counters(c).coherence_misses) << "instance " << c;
      EXPECT_EQ(whole.counters(c).writebacks, shards.counters(c).writebacks) << "instance " << c;
    }
    for (std::uint64_t a = 0; a < footprint; a += 1024) EXPECT_EQ(whole.home_of(a), shards.home_of(a));
  }
}

TEST(SimShards, OneHostThreadWalksTheModelAsItIs) {
  replay_both(kGeometries[1], "1", 4);
}

TEST(SimShards, TheHelperWalksHalfOfLongRegionsOrTheCallerTakesThemBack) {
  const topology tp = topology::load(kGeometries[0].topology);
  sharded_model m = sharded_model::from_topology(tp, param_overrides::parse("host_threads=2", "test"));
  ASSERT_EQ(m.host_threads(), 2u);
  for (int i = 0; i < 200; ++i) m.access_region(static_cast<unsigned>(i % 2), std::uint64_t(i) * 4096, 4096, access_kind::read);
  EXPECT_EQ(m.regions_shared() + m.regions_taken_back(), 200u);
  m.access_region(0, 0, 64 * (sharded_model::kMinSharedLines - 1), access_kind::write);  // too short to share
  EXPECT_EQ(m.regions_shared() + m.regions_taken_back(), 200u);
}

TEST(SimShards, AGeometryThatDoesNotSplitRunsAsOneShard) {
  // 3 sets of 4 ways in the L2: no even split of its sets.
  const topology tp = topology::load("pack:1 l3:1(size=64KiB) l2:2(size=768) core:1 pu:1");
  sharded_model m = sharded_model::from_topology(tp, param_overrides::parse("l2.ways=4 host_threads=2", "test"));
  EXPECT_EQ(m.shards(), 1u);
  EXPECT_EQ(m.host_threads(), 1u);
  memory_model whole = memory_model::from_topology(tp, param_overrides::parse("l2.ways=4", "test"));
  for (int i = 0; i < 100; ++i) {
    const region_result a = whole.access_region(static_cast<unsigned>(i % 2), std::uint64_t(i) * 640, 4096, access_kind::read_write);
    const region_result b = m.access_region(static_cast<unsigned>(i % 2), std::uint64_t(i) * 640, 4096, access_kind::read_write);
    ASSERT_TRUE(same(a, b));
  }
  // A page of one line cannot be split either.
  EXPECT_FALSE(memory_model::shardable(hierarchy_spec::from_topology(tp), param_overrides::parse("page_size=64", "t").resolve(&tp), 2));
}

TEST(SimShards, HostThreadsTakeAutoOneOrTwo) {
  EXPECT_EQ(param_overrides::parse("host_threads=auto", "X").resolve(nullptr).host_threads, 0u);
  EXPECT_EQ(param_overrides::parse("host_threads=1", "X").resolve(nullptr).host_threads, 1u);
  roost_test::expect_mentions(roost_test::config_error_of([] { param_overrides::parse("host_threads=3", "ROOST_SIM_PARAMS"); }),
                              {"ROOST_SIM_PARAMS", "host_threads=3", "auto, 1 or 2"});
}

// What building the model allocates on the program's heap is the same with one shard and two. Each shard
// copied the parameters' names (strings on the heap) while everything else it keeps is host memory, so a
// second shard's copy moved the program's later buffers: the forked test below failed only now and then,
// when the moved buffers happened to straddle other lines. Counted here in one process, exactly: the
// allocations the construction makes through operator new (this binary replaces it; the malloc heap's own
// figures count chunks cached per thread as in use, and depend on what ran before).
TEST(SimShards, TwoShardsAllocateOnTheHeapAsOneDoes) {
  if (!ROOST_TEST_COUNTS_NEW) GTEST_SKIP() << "operator new is the sanitizer's here";
  const topology tp = topology::load(kGeometries[0].topology);
  auto allocations_while_built = [&](const char* host_threads) {
    const param_overrides over = param_overrides::parse(std::string("host_threads=") + host_threads, "options::sim_params");
    const long before = g_news.load();
    sharded_model m = sharded_model::from_topology(tp, over);
    return std::make_pair(m.shards(), g_news.load() - before);
  };
  allocations_while_built("1");  // whatever the first model of each kind makes once
  allocations_while_built("2");
  const auto one = allocations_while_built("1"), two = allocations_while_built("2");
  ASSERT_EQ(one.first, 1u);
  ASSERT_EQ(two.first, 2u);
  EXPECT_GT(one.second, 0);  // the count sees the model's allocations (the hierarchy, the parameters)
  EXPECT_EQ(one.second, two.second);
}

// A program's heap objects are simulated at their offsets inside their pages, so what the simulator itself
// allocates on the program's heap moves them: one shard and two, and the helper thread, left the heap in
// different states, and a program of small heap vectors made after its runtime got different reports with
// host_threads=1 and 2 (an outside-user campaign: 63,876.763 against 59,118.531 ns of virtual time). The
// model is kept in host memory and built on a thread of its own, and the helper is made for the same region
// whatever host_threads says. Each configuration runs in a child forked from this process, so that both
// start from one heap.
TEST(SimShards, HostThreadsDoNotMoveTheProgramsHeapData) {
  struct child {
    pid_t pid;
    int fd;
  };
  // Both children are forked before anything is read: the parent's heap is the same for both.
  auto start = [](const char* host_threads) -> child {
    int fds[2];
    if (::pipe(fds) != 0) return {-1, -1};
    const pid_t pid = ::fork();
    if (pid < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      return {-1, -1};
    }
    if (pid != 0) {
      ::close(fds[1]);
      return {pid, fds[0]};
    }
    ::close(fds[0]);
    char line[160] = "";
    {
      roost::options o;
      o.scheduler = "ws";
      o.platform = "sim";
      o.topology = std::string(ROOST_SOURCE_DIR) + "/topologies/seed002-opteron-6172.xml";
      o.workers = 24;
      o.sim_params = std::string("host_threads=") + host_threads;
      roost::runtime rt(o);
      std::vector<std::vector<double>> bufs;
      for (int i = 0; i < 64; ++i) bufs.emplace_back(1000 + 37 * i, 1.0);  // on the heap, at odd offsets
      for (int step = 0; step < 3; ++step)
        rt.run([&] {
          roost::parallel_for(std::size_t{0}, bufs.size(), std::size_t{1}, [&](std::size_t lo, std::size_t hi) {
            for (std::size_t k = lo; k < hi; ++k)
              roost::touch(bufs[k].data(), bufs[k].size() * sizeof(double), k % 2 ? roost::access::write : roost::access::read);
          });
        });
      std::snprintf(line, sizeof line, "%lx %.3f %lld %lld %lld",
                    static_cast<unsigned long>(reinterpret_cast<std::uintptr_t>(bufs[0].data()) & 0xfff),
                    rt.virtual_time_ns(), rt.simulated_misses(2), rt.simulated_misses(3), rt.simulated_remote_dram());
    }
    const ssize_t n = static_cast<ssize_t>(std::strlen(line));
    ::_exit(::write(fds[1], line, static_cast<std::size_t>(n)) == n ? 0 : 1);
  };
  auto result = [](child c) {
    if (c.pid < 0) return std::string("child failed: no fork");
    std::string got;
    char buf[256];
    for (ssize_t n; (n = ::read(c.fd, buf, sizeof buf)) > 0;) got.append(buf, static_cast<std::size_t>(n));
    ::close(c.fd);
    int status = 0;
    ::waitpid(c.pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? got : "child failed: " + got;
  };
  const child one = start("1"), two = start("2");
  const std::string a = result(one), b = result(two);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.find("child failed"), std::string::npos) << a;
  EXPECT_FALSE(a.empty());
}
