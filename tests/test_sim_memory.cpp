// The simulator's memory-hierarchy model (src/sim): LRU arrays, write-invalidate coherence with its misses
// counted apart, NUMA pages by first touch with latencies from the distance matrix, the bandwidth charge of a
// region, the presets of DESIGN §4's machines, and the errors for bad parameters and topologies. The exact
// agreement with pycachesim is tools/tests/test_cachesim.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "roost/errors.hpp"
#include "sim/cache_array.hpp"
#include "sim/coherence_directory.hpp"
#include "sim/memory_model.hpp"
#include "sim/shared_bandwidth.hpp"
#include "sim/sim_params.hpp"
#include "sim_compare.hpp"
#include "test_util.hpp"
#include "topology/topology.hpp"

using namespace roost::sim;
using roost::topo::topology;

namespace {

template <class F>
std::string error_of(F&& f) {
  return roost_test::config_error_of(std::forward<F>(f));
}

using roost_test::expect_mentions;

memory_model model_of(const std::string& description, const std::string& params = "") {
  return memory_model::from_topology(topology::load(description), param_overrides::parse(params, "test"));
}

// Two cores of one socket: private L1d and L2 each, a shared L3.
const char* kTwoCores = "pack:1 l3:1(size=1MiB) l2:2(size=256KiB) l1d:1(size=32KiB) core:1 pu:1";
// Two sockets, one core each, each socket its own NUMA node and L3.
const char* kTwoNodes = "pack:2 [numa(memory=1GiB)] l3:1(size=1MiB) l2:1(size=256KiB) core:1 pu:1";

}  // namespace

// ---- cache_array -------------------------------------------------------------------------------------------

TEST(SimCacheArray, ReplacesTheLeastRecentlyUsedLine) {
  cache_array c(1, 4);
  for (line_addr l : {1, 2, 3, 4}) EXPECT_FALSE(c.insert(l, false).valid);
  EXPECT_GE(c.lookup(1, false, true), 0);  // 1 becomes most recent: 2 is now the oldest
  cache_array::victim v = c.insert(5, false);
  EXPECT_TRUE(v.valid);
  EXPECT_EQ(v.line, 2u);
  EXPECT_EQ(c.find(2), cache_array::miss);
  v = c.insert(6, false);  // then 3
  EXPECT_EQ(v.line, 3u);
  EXPECT_EQ(c.counts.evictions, 2u);
}

TEST(SimCacheArray, WithoutReorderingAHitLeavesTheLineOldest) {
  cache_array c(1, 2);
  c.insert(1, false);
  c.insert(2, false);
  EXPECT_GE(c.lookup(1, true, false), 0);  // pycachesim's write hit: no reordering
  EXPECT_EQ(c.insert(3, false).line, 1u);
}

TEST(SimCacheArray, DirtyVictimsAreWrittenBackAndSetsIndexByModulo) {
  cache_array c(3, 1);  // 3 sets, direct-mapped: line % 3
  c.insert(4, true);    // set 1
  cache_array::victim v = c.insert(7, false);  // set 1 again
  EXPECT_TRUE(v.valid && v.dirty);
  EXPECT_EQ(v.line, 4u);
  EXPECT_EQ(c.counts.writebacks, 1u);
  EXPECT_FALSE(c.insert(5, false).valid);  // set 2, empty
}

TEST(SimCacheArray, AnInvalidatedLineMissesAsACoherenceMissAndIsReplacedFirst) {
  cache_array c(1, 3);
  c.insert(1, false);
  c.insert(2, false);
  c.insert(3, false);
  EXPECT_TRUE(c.invalidate(2));
  EXPECT_FALSE(c.invalidate(9));
  EXPECT_EQ(c.lookup(2, false, true), cache_array::coherence_miss);
  EXPECT_EQ(c.lookup(8, false, true), cache_array::miss);
  EXPECT_EQ(c.counts.coherence_misses, 1u);
  EXPECT_EQ(c.counts.misses, 2u);
  EXPECT_FALSE(c.insert(2, false).valid);  // takes its own invalidated way: no valid line leaves
  EXPECT_GE(c.find(1), 0);
  EXPECT_GE(c.find(3), 0);
}

// The arrays against an independent model of the same semantics: each set a list in LRU order, most recent
// first (pycachesim's), a hit moved to the front, a fill at the front replacing the line's own invalidation
// mark or the last entry, an invalidated line's mark moved to just after the valid entries. Random
// lookups, fills, dirtying and invalidations, for associativities on every side of the array's layouts
// (no signatures up to 4 ways, one 16-wide signature pass up to 64, several above; byte ranks up to 127
// ways, 16-bit above) and set counts that are and are not powers of two.
namespace {
struct list_cache {
  struct entry {
    line_addr line = ~line_addr{0};
    bool valid = false, dirty = false;
  };
  std::uint64_t sets;
  unsigned ways;
  std::vector<std::vector<entry>> s;
  list_cache(std::uint64_t n, unsigned w) : sets(n), ways(w), s(n, std::vector<entry>(w)) {}
  std::vector<entry>& set(line_addr l) { return s[l % sets]; }
  int index(line_addr l) {  // valid or marked
    auto& v = set(l);
    for (unsigned i = 0; i < ways; ++i)
      if (v[i].line == l) return static_cast<int>(i);
    return -1;
  }
};
}  // namespace

// The fused kernels (a fill's promote of the last way, an invalidation's demote behind the valid ways) give
// what the plain loops give, on padded rows as cache_array keeps them.
TEST(SimSetKernels, TheFusedPassesAgreeWithThePlainLoops) {
  std::mt19937_64 rng(7);
  for (unsigned ways : {5u, 8u, 16u, 17u, 48u, 64u, 65u, 100u, 127u}) {
    SCOPED_TRACE("ways " + std::to_string(ways));
    const std::size_t row = set_kernels::round_up(ways, set_kernels::kByteStep);
    for (int round = 0; round < 500; ++round) {
      std::vector<std::uint8_t> flags(row, 4), order(ways);
      for (unsigned w = 0; w < ways; ++w) order[w] = static_cast<std::uint8_t>(w);
      std::shuffle(order.begin(), order.end(), rng);
      // The valid ways hold the first ranks, as in a set: ranks 0..valid-1 go to valid ways.
      const unsigned valid = 1 + static_cast<unsigned>(rng() % ways);
      std::vector<std::uint8_t> ranks(row, set_kernels::kRankPadOf<std::uint8_t>);
      for (unsigned w = 0; w < ways; ++w) {
        ranks[w] = order[w];
        if (order[w] < valid) flags[w] = static_cast<std::uint8_t>(rng() % 2);  // valid, maybe dirty
      }
      std::vector<std::uint8_t> a = ranks, b = ranks;
      EXPECT_EQ(set_kernels::promote_last(a.data(), ways), set_kernels::plain::promote_last(b.data(), ways));
      EXPECT_EQ(a, b);
      unsigned way = static_cast<unsigned>(rng() % ways);
      while (flags[way] & 4) way = static_cast<unsigned>(rng() % ways);
      a = ranks;
      b = ranks;
      set_kernels::demote_to_last_valid(a.data(), flags.data(), ways, way, 4);
      set_kernels::plain::demote_to_last_valid(b.data(), flags.data(), ways, way, 4);
      EXPECT_EQ(a, b);
      EXPECT_EQ(a[way], valid - 1);
      // The unrolled forms cache_array takes for a set of up to 64 ways (cache_array::with_row_vectors).
      const auto unrolled = [&](auto v) {
        constexpr unsigned V = decltype(v)::value;
        std::vector<std::uint8_t> c = ranks, d = ranks;
        EXPECT_EQ(set_kernels::promote_last<V>(c.data(), ways), set_kernels::plain::promote_last(d.data(), ways));
        EXPECT_EQ(c, d);
        c = ranks;
        d = ranks;
        set_kernels::demote_to_last_valid<V>(c.data(), flags.data(), ways, way, 4);
        set_kernels::plain::demote_to_last_valid(d.data(), flags.data(), ways, way, 4);
        EXPECT_EQ(c, d);
        c = ranks;
        d = ranks;
        set_kernels::promote<V>(c.data(), ways, way);
        set_kernels::plain::promote(d.data(), ways, way);
        EXPECT_EQ(c, d);
        std::vector<std::uint8_t> sigs(row);
        for (auto& x : sigs) x = static_cast<std::uint8_t>(rng() % 4);
        const std::uint64_t live = ways >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << ways) - 1;
        EXPECT_EQ(set_kernels::match_signature<V>(sigs.data(), V, 2) & live,
                  set_kernels::match_signature(sigs.data(), (ways + 15) / 16, 2) & live);
      };
      switch ((ways + 15) / 16) {
        case 1: unrolled(std::integral_constant<unsigned, 1>{}); break;
        case 2: unrolled(std::integral_constant<unsigned, 2>{}); break;
        case 3: unrolled(std::integral_constant<unsigned, 3>{}); break;
        case 4: unrolled(std::integral_constant<unsigned, 4>{}); break;
        default: break;
      }
    }
  }
}

TEST(SimCacheArray, AgreesWithAnLruListOnRandomOperations) {
  for (unsigned ways : {1u, 2u, 3u, 4u, 5u, 8u, 11u, 16u, 17u, 48u, 64u, 65u, 96u, 127u, 128u, 200u}) {
    for (std::uint64_t sets : {1ull, 3ull, 4ull}) {
      SCOPED_TRACE("ways " + std::to_string(ways) + ", sets " + std::to_string(sets));
      cache_array c(sets, ways);
      list_cache ref(sets, ways);
      std::mt19937_64 rng(ways * 1000 + sets);
      const line_addr pool = 2 * ways * sets + 3;
      for (int op = 0; op < 20000; ++op) {
        const line_addr l = rng() % pool;
        auto& set = ref.set(l);
        const int at = ref.index(l);
        const unsigned kind = static_cast<unsigned>(rng() % 10);
        if (kind < 7) {  // a lookup, and the fill of a miss
          const bool write = rng() % 3 == 0, reorder = rng() % 4 != 0;
          const int way = c.lookup(l, write, reorder);
          if (at >= 0 && set[at].valid) {
            ASSERT_GE(way, 0) << "op " << op;
            if (write) {
              c.set_dirty(l, way);
              set[at].dirty = true;
            }
            if (reorder) std::rotate(set.begin(), set.begin() + at, set.begin() + at + 1);
            continue;
          }
          ASSERT_EQ(way, at >= 0 ? cache_array::coherence_miss : cache_array::miss) << "op " << op;
          const cache_array::victim v = c.insert(l, write);
          const int out = at >= 0 ? at : static_cast<int>(ways) - 1;
          const list_cache::entry gone = set[out];
          ASSERT_EQ(v.valid, gone.valid) << "op " << op;
          if (gone.valid) {
            ASSERT_EQ(v.line, gone.line) << "op " << op;
            ASSERT_EQ(v.dirty, gone.dirty) << "op " << op;
          }
          set.erase(set.begin() + out);
          set.insert(set.begin(), list_cache::entry{l, true, write});
        } else if (kind < 9) {  // another core's write
          const bool present = at >= 0 && set[at].valid;
          ASSERT_EQ(c.invalidate(l), present) << "op " << op;
          if (!present) continue;
          const auto valid = static_cast<int>(std::count_if(set.begin(), set.end(), [](const auto& e) { return e.valid; }));
          set.erase(set.begin() + at);
          set.insert(set.begin() + (valid - 1), list_cache::entry{l, false, false});
        } else {  // a look that neither counts nor reorders
          ASSERT_EQ(c.find(l) >= 0, at >= 0 && set[at].valid) << "op " << op;
        }
      }
    }
  }
}

// ---- coherence ---------------------------------------------------------------------------------------------

// The directory indexes blocks of lines directly below 2^32 lines and hashes them above (raw addresses of a
// roost-cachesim trace): each line keeps its own mask either way, and a line of a block never made has none.
TEST(SimDirectory, EveryLineKeepsItsMaskNearAndFar) {
  coherence_directory d(70);  // two words a mask
  ASSERT_EQ(d.words(), 2u);
  std::vector<line_addr> lines = {0, 1, 4095, 4096, (line_addr{1} << 32) - 1, line_addr{1} << 32, line_addr{1} << 40,
                                  (line_addr{1} << 57) + 5};
  for (line_addr k = 0; k < 200; ++k) lines.push_back((line_addr{1} << 33) + k * 4096 * 3);  // grow the hash table
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::uint64_t* m = d.find_or_insert(lines[i]);
    EXPECT_EQ(m[0], 0u);
    EXPECT_EQ(m[1], 0u);
    m[0] = i + 1;
    m[1] = ~i;
  }
  for (std::size_t i = 0; i < lines.size(); ++i) {
    SCOPED_TRACE("line " + std::to_string(lines[i]));
    const std::uint64_t* m = d.find(lines[i]);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m[0], i + 1);
    EXPECT_EQ(m[1], ~i);
    EXPECT_EQ(d.find_or_insert(lines[i]), m);
  }
  EXPECT_EQ(d.find(line_addr{1} << 20), nullptr);  // block 256, below the direct limit, never made
  EXPECT_EQ(d.find(line_addr{1} << 50), nullptr);  // a hashed block never made
  EXPECT_EQ(d.find(2)[0], 0u);  // a line of a made block that no unit ever held
}

TEST(SimMemory, AWriteInvalidatesTheOtherCoresCopiesAndTheirNextMissIsCountedApart) {
  memory_model m = model_of(kTwoCores);
  ASSERT_TRUE(m.coherent());
  const line_addr x = 1000;
  EXPECT_EQ(m.access(0, x, false).instance, -1);  // cold: memory
  const access_result shared = m.access(1, x, false);
  EXPECT_EQ(m.instance(static_cast<std::size_t>(shared.instance)).name, "L3");  // the other core's fill left it in L3
  EXPECT_FALSE(shared.coherence_miss);
  m.access(0, x, true);  // core 0 writes: core 1's L1d and L2 copies go
  const access_result again = m.access(1, x, false);
  EXPECT_TRUE(again.coherence_miss);
  EXPECT_EQ(m.instance(static_cast<std::size_t>(again.instance)).name, "L3");
  const std::vector<unsigned> chain1 = m.chain(1);
  ASSERT_EQ(chain1.size(), 3u);
  EXPECT_EQ(m.counters(chain1[0]).coherence_misses, 1u);  // L1d
  EXPECT_EQ(m.counters(chain1[1]).coherence_misses, 1u);  // L2
  EXPECT_EQ(m.counters(chain1[0]).invalidations, 1u);
  EXPECT_EQ(m.counters(chain1[0]).misses, 2u);  // the cold one and the coherence one
  for (unsigned i : m.chain(0)) EXPECT_EQ(m.counters(i).coherence_misses, 0u);
  // Core 0 writes again: core 1 read it since, so its copies go again; then writes by core 0 alone need nothing.
  m.access(0, x, true);
  EXPECT_EQ(m.counters(chain1[0]).invalidations, 2u);
  m.access(0, x, true);
  m.access(0, x + 1, true);
  m.access(0, x + 1, true);
  EXPECT_EQ(m.counters(chain1[0]).invalidations, 2u);
}

TEST(SimMemory, CapacityMissesAreNotCoherenceMisses) {
  memory_model m = model_of(kTwoCores);
  const std::size_t lines = (32 << 10) / 64;  // sweep 4 x L1d through core 0, twice
  for (int round = 0; round < 2; ++round)
    for (line_addr l = 0; l < 4 * lines; ++l) m.access(0, l, round == 1);
  for (std::size_t i = 0; i < m.num_instances(); ++i) EXPECT_EQ(m.counters(i).coherence_misses, 0u);
  EXPECT_GT(m.counters(m.chain(0)[0]).misses, 4 * lines);
}

TEST(SimMemory, AWriteInOneSocketInvalidatesTheOtherSocketsSharedCache) {
  memory_model m = model_of(kTwoNodes);
  const line_addr x = 77;
  m.access(1, x, false);  // socket 1's L2 and L3 hold it
  m.access(0, x, true);
  const access_result r = m.access(1, x, false);
  EXPECT_TRUE(r.coherence_miss);
  EXPECT_EQ(r.instance, -1);  // both of socket 1's caches lost it: memory
  for (unsigned i : m.chain(1)) EXPECT_EQ(m.counters(i).coherence_misses, 1u);
}

TEST(SimMemory, AfterAnyWriteNoCacheOutsideTheWritersChainHoldsTheLine) {
  // Random reads and writes of 4 cores on 2 sockets with small caches (evictions everywhere), checked after
  // every write against the arrays themselves: the directory must never lose a holder.
  memory_model m = model_of("pack:2 l3:1(size=8KiB) l2:2(size=2KiB) l1d:1(size=1KiB) core:1 pu:1");
  std::mt19937_64 rng(11);
  std::uint64_t writes = 0;
  for (int i = 0; i < 200000; ++i) {
    const unsigned pu = static_cast<unsigned>(rng() % 4);
    const line_addr line = rng() % 512;  // 4x the L3 lines: hits, misses and sharing
    const bool write = rng() % 3 == 0;
    m.access(pu, line, write);
    ASSERT_TRUE(m.holds(m.chain(pu)[0], line));
    if (!write) continue;
    ++writes;
    const std::vector<unsigned> mine = m.chain(pu);
    for (std::size_t k = 0; k < m.num_instances(); ++k)
      if (std::find(mine.begin(), mine.end(), k) == mine.end()) ASSERT_FALSE(m.holds(k, line)) << "instance " << k;
  }
  std::uint64_t coherence = 0, invalidations = 0;
  for (std::size_t k = 0; k < m.num_instances(); ++k) {
    coherence += m.counters(k).coherence_misses;
    invalidations += m.counters(k).invalidations;
  }
  EXPECT_GT(writes, 0u);
  EXPECT_GT(invalidations, 0u);
  EXPECT_GT(coherence, 0u);
}

// The walk compiled for a geometry (memory_model::access_fixed) against the general one, access by access:
// every result, every counter and every array's contents the same. Caches a few times smaller than the
// footprint, runs of lines and single ones, a third of them writes: hits at each level, evictions of dirty
// lines down the chain, invalidations and coherence misses, first touches on each node.
TEST(SimMemory, TheWalkCompiledForAGeometryGivesTheGeneralWalksResultsToTheBit) {
  struct geometry {
    const char* topology;
    const char* params;
  };
  const geometry geometries[] = {
      // The Opteron 8380's L2 and L3 (16 and 48 ways), smaller: chains of two, each cache its own unit.
      {"pack:4 [numa(memory=1GiB)] l3:1(size=96KiB) l2:4(size=16KiB) core:1 pu:1", "preset=opteron-8380"},
      // L1d and L2 of a core as one unit, two PUs on each core, the Xeon Gold 6130's 8, 16 and 11 ways.
      {"pack:2 [numa(memory=1GiB)] l3:1(size=44KiB) l2:2(size=8KiB) l1d:1(size=2KiB) core:1 pu:2",
       "preset=xeon-gold-6130"},
      // An L2 shared by two cores and 64-way L3s: every last-level layout (1 to 4 vectors) appears across these.
      {"pack:2 [numa(memory=1GiB)] l3:1(size=64KiB) l2:2(size=16KiB) core:2 pu:1", "l2.ways=16 l3.ways=64"},
      {"pack:2 l3:1(size=64KiB) l2:2(size=8KiB) l1d:1(size=2KiB) core:1 pu:1", "l3.ways=32"},
      // pycachesim's replacement (a write hit keeps its place; a write-back that misses fetches the line).
      {"pack:2 [numa(memory=1GiB)] l3:1(size=24KiB) l2:2(size=16KiB) core:1 pu:1", "preset=opteron-8380 mode=pycachesim"},
      // One cache for everything.
      {"pack:1 l3:1(size=64KiB) core:4 pu:1", "l3.ways=16"},
      // The Opteron 6172's 2-way L1d (a set without signatures), 16-way L2 and 40-way L3.
      {"pack:2 [numa(memory=1GiB)] l3:1(size=80KiB) l2:2(size=8KiB) l1d:1(size=1KiB) core:1 pu:1", "preset=opteron-6172"},
      // A 4-way L1d before a 16-way L3, in pycachesim's mode.
      {"pack:2 l3:1(size=32KiB) l1d:2(size=1KiB) core:1 pu:1", "l1.ways=4 l3.ways=16 mode=pycachesim"},
  };
  for (const geometry& g : geometries) {
    SCOPED_TRACE(g.topology);
    memory_model fixed = model_of(g.topology, g.params), general = model_of(g.topology, g.params);
    ASSERT_TRUE(fixed.fixed_walk());
    general.use_fixed_walk(false);
    ASSERT_FALSE(general.fixed_walk());
    const unsigned pus = fixed.num_pus();
    std::mt19937_64 rng(5);
    line_addr next = 0;
    for (int i = 0; i < 120000; ++i) {
      const unsigned pu = static_cast<unsigned>(rng() % pus);
      // Half the time the next line of a run, else anywhere in 8x the last level's lines.
      const line_addr line = rng() % 2 ? next : rng() % 8192;
      next = line + 1;
      const bool write = rng() % 3 == 0;
      ASSERT_TRUE(roost_test::same_access(fixed.access(pu, line, write), general.access(pu, line, write))) << "access " << i;
    }
    std::uint64_t invalidations = 0, coherence = 0, writebacks = 0;
    for (std::size_t k = 0; k < fixed.num_instances(); ++k) {
      const cache_counters& a = fixed.counters(k);
      roost_test::expect_same_counters(a, general.counters(k), k);
      invalidations += a.invalidations;
      coherence += a.coherence_misses;
      writebacks += a.writebacks;
      for (line_addr l = 0; l < 8192; ++l) ASSERT_EQ(fixed.holds(k, l), general.holds(k, l)) << "instance " << k << ", line " << l;
    }
    for (unsigned p = 0; p < pus; ++p) {
      EXPECT_EQ(fixed.memory(p).local, general.memory(p).local) << "PU " << p;
      EXPECT_EQ(fixed.memory(p).remote, general.memory(p).remote) << "PU " << p;
      EXPECT_EQ(fixed.memory(p).writebacks, general.memory(p).writebacks) << "PU " << p;
    }
    // What the trace was made to reach (one cache for all has nothing to keep coherent).
    EXPECT_EQ(invalidations > 0, fixed.coherent());
    EXPECT_EQ(coherence > 0, fixed.coherent());
    EXPECT_GT(writebacks, 0u);
  }
}

// A geometry no walk is compiled for takes the general one: a set of a few ways after the first cache, a
// count of sets that is not a power of two, more than 64 ways, a chain of four caches.
TEST(SimMemory, OtherGeometriesTakeTheGeneralWalk) {
  EXPECT_FALSE(model_of("pack:1 l3:1(size=96KiB) l2:2(size=16KiB) l1d:1(size=2KiB) core:1 pu:1", "l2.ways=4").fixed_walk());
  EXPECT_FALSE(model_of("pack:1 l3:1(size=96KiB) core:1 pu:1", "l3.ways=8").fixed_walk());  // 192 sets
  EXPECT_FALSE(model_of("pack:1 l3:1(size=64KiB) core:1 pu:1", "l3.ways=128").fixed_walk());
  EXPECT_FALSE(model_of("pack:1 l4:1(size=1MiB) l3:1(size=64KiB) l2:1(size=16KiB) l1d:1(size=2KiB) core:1 pu:1").fixed_walk());
  EXPECT_TRUE(model_of("pack:2 l3:1(size=64KiB) l2:2(size=16KiB) core:1 pu:1").fixed_walk());
}

// ---- NUMA --------------------------------------------------------------------------------------------------

TEST(SimMemory, PagesLiveWhereTheyAreFirstTouchedAndRemoteOnesCostTheRemoteLatency) {
  memory_model m = model_of(kTwoNodes, "dram.local_ns=90 dram.remote_ns=140");
  ASSERT_EQ(m.numa_of(0), 0u);
  ASSERT_EQ(m.numa_of(1), 1u);
  const std::uint64_t page0 = 1 << 20, page1 = 2 << 20;  // byte addresses of two pages
  access_result r = m.access(0, page0 / 64, false);
  EXPECT_FALSE(r.remote);
  EXPECT_DOUBLE_EQ(r.latency_ns, 90);
  EXPECT_EQ(m.home_of(page0), 0u);
  r = m.access(1, page0 / 64 + 1, false);  // another line of the same page, from the other node
  EXPECT_TRUE(r.remote);
  EXPECT_DOUBLE_EQ(r.latency_ns, 140);  // 10 local / 20 remote: the largest distance
  r = m.access(1, page1 / 64, true);    // first touched by PU 1: its node
  EXPECT_FALSE(r.remote);
  EXPECT_EQ(m.home_of(page1), 1u);
  EXPECT_EQ(m.memory(0).local, 1u);
  EXPECT_EQ(m.memory(1).remote, 1u);
  EXPECT_EQ(m.memory(1).local, 1u);
  EXPECT_EQ(m.home_of(3 << 20), roost::sim::page_map::none);
}

TEST(SimMemory, MemoryLatencyFollowsTheDistanceMatrix) {
  hierarchy_spec s;
  s.source = "test";
  s.num_pus = 3;
  s.core_of_pu = {0, 1, 2};
  s.numa_of_pu = {0, 1, 2};
  s.num_numa = 3;
  s.distances = {10, 16, 22, 16, 10, 16, 22, 16, 10};  // seed 002's SLIT values: 1 hop 16, 2 hops 22
  for (unsigned p = 0; p < 3; ++p) s.caches.push_back({"L2", 2, 64 << 10, 0, {p}});
  sim_params params = preset_params("opteron-6172");
  params.dram_local_ns = 100;
  params.dram_remote_ns = 160;
  memory_model m(s, params);
  EXPECT_DOUBLE_EQ(m.memory_latency_ns(0, 0), 100);
  EXPECT_DOUBLE_EQ(m.memory_latency_ns(0, 1), 130);  // halfway from 10 to 22
  EXPECT_DOUBLE_EQ(m.memory_latency_ns(0, 2), 160);
  m.place(0, 4096, 2);
  const access_result r = m.access(0, 0, false);
  EXPECT_TRUE(r.remote);
  EXPECT_DOUBLE_EQ(r.latency_ns, 160);
}

TEST(SimMemory, InterleavedPagesAlternateBetweenNodes) {
  memory_model m = model_of(kTwoNodes, "numa_policy=interleave page_size=4KiB");
  EXPECT_EQ(m.home_of(0), 0u);
  EXPECT_EQ(m.home_of(4096), 1u);
  EXPECT_EQ(m.home_of(8192), 0u);
  EXPECT_TRUE(m.access(0, 4096 / 64, false).remote);
  EXPECT_FALSE(m.access(0, 8192 / 64, false).remote);
}

// ---- regions and bandwidth ---------------------------------------------------------------------------------

TEST(SimMemory, AStreamIsChargedAtBandwidthAndNeverAboveItsLatency) {
  memory_model m = model_of(kTwoNodes, "dram.local_ns=100 dram.core_bw=10 dram.node_bw=16 l2.latency_ns=5 l2.bw=50");
  const region_result cold = m.access_region(0, 0, 64 * 64, access_kind::read);  // 64 lines from memory
  EXPECT_EQ(cold.lines, 64u);
  const unsigned len = static_cast<unsigned>(m.chain(0).size());
  EXPECT_EQ(cold.served[len], 64u);
  EXPECT_DOUBLE_EQ(cold.latency_sum_ns, 6400);
  EXPECT_DOUBLE_EQ(m.region_cost_ns(cold), 100 + 64 * 64 / 10.0);  // the slowest line's latency, then 10 B/ns
  EXPECT_DOUBLE_EQ(m.region_cost_ns(cold, 4), 100 + 64 * 64 / 4.0);  // 4 streams share 16 B/ns
  const region_result warm = m.access_region(0, 0, 64 * 64, access_kind::read);
  EXPECT_EQ(warm.served[0], 64u);  // all in L2
  EXPECT_DOUBLE_EQ(m.region_cost_ns(warm), 5 + 64 * 64 / 50.0);
  const region_result one = m.access_region(0, 1 << 20, 8, access_kind::read);
  EXPECT_DOUBLE_EQ(m.region_cost_ns(one), 100);  // one line: its latency
}

// A region waits for its slowest line, not its first: with the first line's latency, a touch whose first
// line hit the L2 hid the memory latency of the rest, and touching a cached line more made it cheaper
// (lines 1-8 cold: 100 + 8 x 6.4; lines 0-8, line 0 in the L2: 5 + ... ; an outside-user campaign).
TEST(SimMemory, ATouchCostsAtLeastWhatATouchOfASubsetOfItsLinesCosts) {
  const char* params = "dram.local_ns=100 dram.core_bw=10 l2.latency_ns=5 l2.bw=50";
  memory_model a = model_of(kTwoNodes, params), b = model_of(kTwoNodes, params);
  for (memory_model* m : {&a, &b}) (void)m->access_region(0, 0, 64, access_kind::read);  // line 0 in the L2
  const region_result cold = a.access_region(0, 64, 8 * 64, access_kind::read);        // lines 1-8
  const region_result with_hot = b.access_region(0, 0, 9 * 64, access_kind::read);     // lines 0-8
  ASSERT_EQ(cold.served[a.chain(0).size()], 8u);
  ASSERT_EQ(with_hot.served[0], 1u);
  EXPECT_DOUBLE_EQ(a.region_cost_ns(cold), 100 + 8 * 64 / 10.0);
  EXPECT_DOUBLE_EQ(b.region_cost_ns(with_hot), 100 + 64 / 50.0 + 8 * 64 / 10.0);
  EXPECT_GE(b.region_cost_ns(with_hot), a.region_cost_ns(cold));
}

// dram.sharing=nodes (shared_bandwidth.hpp): a stream's rate is the least, over the controllers and
// interconnect ports its lines pass, of the port's bandwidth over its load, the fractions of the lines of
// every stream running at its start that pass there (its own included).
TEST(SimSharedBandwidth, StreamsShareTheControllersAndPortsTheirLinesPass) {
  constexpr double kNodeBw = 16, kLinkBw = 4;
  shared_bandwidth s(/*workers=*/8, /*nodes=*/2, kNodeBw, kLinkBw);
  const double local0[2] = {100, 0}, local1[2] = {0, 100}, half[2] = {50, 50}, none[2] = {0, 0};
  EXPECT_DOUBLE_EQ(s.rate_cap(0, 0, local0, 0), kNodeBw);  // alone, local: the whole controller
  EXPECT_EQ(s.rate_cap(0, 0, none, 0), std::numeric_limits<double>::infinity());  // no memory line
  // Three more streams of node 0 from its own memory, each started while the earlier ones run.
  for (unsigned w = 0; w < 3; ++w) s.record(w, 0, local0, 1000);
  EXPECT_DOUBLE_EQ(s.rate_cap(3, 0, local0, 10), kNodeBw / 4);
  // Node 1's own memory shares nothing with them.
  EXPECT_DOUBLE_EQ(s.rate_cap(4, 1, local1, 10), kNodeBw);
  // Node 1 reading node 0's memory: node 0's controller (4 streams) and its port out, node 1's port in.
  EXPECT_DOUBLE_EQ(s.rate_cap(4, 1, local0, 10), std::min(kNodeBw / 4, kLinkBw / 1));
  s.record(4, 1, local0, 1000);
  s.record(5, 1, local0, 1000);
  // A third remote stream: node 0's port out carries three, node 1's port in three: 4 / 3.
  EXPECT_DOUBLE_EQ(s.rate_cap(6, 1, local0, 10), std::min(kNodeBw / 6, kLinkBw / 3));
  // Half and half from node 1: node 0's controller has 5 + 0.5, its port out 2 + 0.5, node 1's in 2 + 0.5.
  EXPECT_DOUBLE_EQ(s.rate_cap(6, 1, half, 10), std::min({kNodeBw / 5.5, kNodeBw / 0.5, kLinkBw / 2.5}));
  // Streams that ended by then no longer count; the worker's own earlier stream never does.
  EXPECT_DOUBLE_EQ(s.rate_cap(6, 0, local0, 1000), kNodeBw);
  EXPECT_DOUBLE_EQ(s.rate_cap(0, 0, local0, 10), kNodeBw / 5);  // workers 1, 2, 4 and 5 draw on node 0
  // A stream of local lines passes no port, however loaded its node's port in is.
  shared_bandwidth ports(4, 2, kNodeBw, kLinkBw);
  ports.record(0, 0, local1, 1000);  // node 0 reading node 1: node 0's port in
  EXPECT_DOUBLE_EQ(ports.rate_cap(1, 0, local0, 10), kNodeBw);
  // No link limit: only the controllers.
  shared_bandwidth free_links(2, 2, kNodeBw, 0);
  free_links.record(0, 1, local0, 1000);
  EXPECT_DOUBLE_EQ(free_links.rate_cap(1, 1, local0, 10), kNodeBw / 2);
}

TEST(SimMemory, ARateCapSlowsOnlyTheMemoryPartOfAStream) {
  memory_model m = model_of(kTwoNodes, "dram.local_ns=100 dram.core_bw=10 dram.node_bw=16 l2.latency_ns=5 l2.bw=50");
  const region_result cold = m.access_region(0, 0, 64 * 64, access_kind::read);
  EXPECT_DOUBLE_EQ(m.region_cost_ns(cold, 1, 2.0), 100 + 64 * 64 / 2.0);
  EXPECT_DOUBLE_EQ(m.region_cost_ns(cold, 1, 20.0), 100 + 64 * 64 / 10.0);  // the core's own limit binds
  const region_result warm = m.access_region(0, 0, 64 * 64, access_kind::read);
  EXPECT_DOUBLE_EQ(m.region_cost_ns(warm, 1, 2.0), 5 + 64 * 64 / 50.0);
}

TEST(SimMemory, ARegionCountsTheCoherenceMissesOfItsLines) {
  memory_model m = model_of(kTwoCores);
  m.access_region(1, 0, 4096, access_kind::read);
  m.access_region(0, 0, 4096, access_kind::read_write);
  const region_result r = m.access_region(1, 0, 4096, access_kind::read);
  EXPECT_EQ(r.coherence_misses, 64u);
  EXPECT_EQ(r.served[2], 64u);  // from the shared L3
}

TEST(SimMemory, DirtyLinesGoDownOnEvictionAndLeaveTheLastCacheAsWritebacks) {
  hierarchy_spec s;
  s.source = "test";
  s.caches = {{"L1", 1, 2 * 64, 2, {0}}, {"L2", 2, 4 * 64, 4, {0}}};
  memory_model m(s, preset_params("generic"));
  for (line_addr l = 0; l < 16; ++l) m.access(0, l, true);
  EXPECT_EQ(m.counters(0).writebacks, 14u);  // all but the 2 lines L1 still holds
  EXPECT_EQ(m.memory(0).writebacks, m.counters(1).writebacks);
  EXPECT_GT(m.memory(0).writebacks, 0u);
}

// ---- presets and parameters --------------------------------------------------------------------------------

TEST(SimParams, TheMachinesOfTheDesignGetTheirOwnPresetAndBuild) {
  struct machine {
    const char* topology;
    const char* preset;
  };
  const machine machines[] = {
      {"pack:4 [numa(memory=4GiB)] l3:1(size=6MiB) l2:4(size=512KiB) core:1 pu:1", "opteron-8380"},
      {"pack:4 [numa(memory=24GiB)] l3:1(size=22MiB) l2:16(size=1MiB) core:1 pu:1", "xeon-gold-6130"},
      {"pack:4 group:2 [numa(memory=8GiB)] l3:1(size=5MiB) l2:6(size=512KiB) core:1 pu:1", "opteron-6172"},
      {"pack:2 l3:1(size=1MiB) core:1 pu:1", "generic"},
  };
  for (const machine& mc : machines) {
    const topology tp = topology::load(mc.topology);
    EXPECT_EQ(detect_preset(tp), mc.preset) << mc.topology;
    memory_model m = memory_model::from_topology(tp);
    EXPECT_EQ(m.params().preset, mc.preset);
    EXPECT_NE(m.summary().find(mc.preset), std::string::npos);
    m.access_region(0, 0, 1 << 16, access_kind::read_write);
  }
  memory_model xeon = model_of(machines[1].topology);
  EXPECT_EQ(xeon.instance(xeon.chain(0).back()).ways, 11u);  // 22 MiB = 32768 sets x 11 ways x 64 B
  EXPECT_EQ(xeon.instance(xeon.chain(0).back()).sets, 32768u);
}

// Caches of one level that differ (an XML topology gives the first core a 128 KiB L2, the others 256 KiB) are
// modelled each with its own size, and the summary lists each kind (it gave all four the last one's size).
TEST(SimParams, TheSummaryListsEachKindOfCacheOfALevel) {
  const topology tp = topology::load(std::string(ROOST_SOURCE_DIR) + "/tests/topologies/one-smaller-l2.xml");
  memory_model m = memory_model::from_topology(tp);
  const std::string s = m.summary();
  EXPECT_NE(s.find("1 x L2 128 KiB"), std::string::npos) << s;
  EXPECT_NE(s.find("3 x L2 256 KiB"), std::string::npos) << s;
  EXPECT_NE(s.find("2 x L3 1 MiB"), std::string::npos) << s;
  EXPECT_EQ(m.instance(m.chain(0).front()).bytes, 128u << 10);
  EXPECT_EQ(m.instance(m.chain(1).front()).bytes, 256u << 10);
}

TEST(SimParams, OverridesApplyOnTopOfThePreset) {
  param_overrides o = param_overrides::parse("preset=opteron-8380, l2.ways=8\nL3.latency_ns=30 mode=pycachesim", "X");
  sim_params p = o.resolve(nullptr);
  EXPECT_EQ(p.preset, "opteron-8380");
  EXPECT_EQ(p.level[2].ways, 8u);
  EXPECT_DOUBLE_EQ(p.level[3].latency_ns, 30);
  EXPECT_EQ(p.level[3].ways, 48u);
  EXPECT_EQ(p.mode, replacement_mode::pycachesim);
  EXPECT_FALSE(p.dram_sharing);  // off unless asked
  sim_params shared = param_overrides::parse("preset=opteron-6172 dram.sharing=nodes link.bw=7", "X").resolve(nullptr);
  EXPECT_TRUE(shared.dram_sharing);
  EXPECT_DOUBLE_EQ(shared.link_bw, 7);
  EXPECT_EQ(param_overrides::parse("", "X").resolve(nullptr).preset, "generic");
  EXPECT_TRUE(is_param_name("L2.ways"));
  EXPECT_TRUE(is_param_name("dram.remote_ns"));
  EXPECT_FALSE(is_param_name("spawn_ns"));  // the platform's cost table
}

TEST(SimParams, BadParametersNameTheValueAndWhatIsValid) {
  auto parse = [](const char* text) { return error_of([&] { param_overrides::parse(text, "ROOST_SIM_PARAMS"); }); };
  expect_mentions(parse("l1.wayz=4"), {"ROOST_SIM_PARAMS", "unknown parameter 'l1.wayz'", "l1.ways", "dram.remote_ns",
                                       "page_size", "preset"});
  expect_mentions(parse("l2.ways=0"), {"l2.ways=0", "an integer in [1, 1024]"});
  expect_mentions(parse("l3.latency_ns=-5"), {"l3.latency_ns=-5", "a number in (0, 1e6]"});
  expect_mentions(parse("dram.core_bw=fast"), {"dram.core_bw=fast", "a number"});
  expect_mentions(parse("page_size=3000"), {"page_size=3000", "a power of two"});
  expect_mentions(parse("preset=cray"), {"preset=cray", "opteron-8380", "xeon-gold-6130", "opteron-6172", "generic"});
  expect_mentions(parse("mode=fifo"), {"mode=fifo", "roost or pycachesim"});
  expect_mentions(parse("numa_policy=local"), {"numa_policy=local", "first_touch or interleave"});
  expect_mentions(parse("dram.sharing=yes"), {"dram.sharing=yes", "off", "nodes"});
  expect_mentions(parse("link.bw=-1"), {"link.bw=-1", "a number in [0, 1e6]"});
  expect_mentions(parse("l2.ways"), {"'l2.ways'", "must be name=value"});
  expect_mentions(error_of([] { param_overrides::parse("dram.remote_ns=50", "X").resolve(nullptr); }),
                  {"dram.remote_ns=50", "dram.local_ns=89"});
}

// ---- bad topologies ----------------------------------------------------------------------------------------

TEST(SimMemory, ATopologyWithoutCacheSizesIsRefusedByName) {
  expect_mentions(error_of([] { model_of("pack:2 l3:1 core:1 pu:1"); }),
                  {"ROOST_TOPOLOGY='pack:2 l3:1 core:1 pu:1'", "'l3:1' has no size", "l3:1(size=1MiB)"});
  expect_mentions(error_of([] { model_of("pack:2 l3:1(size=1MiB) l2:1 core:1 pu:1"); }), {"'l2:1' has no size"});
  expect_mentions(error_of([] { model_of("pack:2 core:1 pu:1"); }), {"describes no data cache"});
}

TEST(SimMemory, ImpossibleCacheGeometriesAreRefusedByName) {
  // Sizes hwloc would wrap or invent are refused when the topology loads, naming the value.
  expect_mentions(error_of([] { model_of("pack:2 l3:1(size=0) core:1 pu:1"); }), {"size=0", "1 byte to 1 TiB"});
  expect_mentions(error_of([] { model_of("pack:2 l3:1(size=-5) core:1 pu:1"); }), {"size=-5"});
  // A size that is no whole number of lines (no number of ways mends it), and one that is no whole number of
  // sets of the preset's ways x line size.
  expect_mentions(error_of([] { model_of("pack:2 l3:1(size=1000) core:1 pu:1"); }),
                  {"L3 cache #0", "1000 B", "not a whole number of 64 B lines", "multiple of the line size"});
  expect_mentions(error_of([] { model_of("pack:2 l3:1(size=1536) core:1 pu:1"); }),
                  {"L3 cache #0", "l3.ways=16", "multiple of ways x line size", "divisor of 24"});
  expect_mentions(error_of([] { model_of("pack:2 l3:1(size=1MiB) core:1 pu:1", "l3.ways=3"); }), {"l3.ways=3"});
  hierarchy_spec s;
  s.source = "test";
  s.line_bytes = 48;
  s.caches = {{"L1", 1, 48 * 64, 1, {0}}};
  expect_mentions(error_of([&] { memory_model(s, preset_params("generic")); }),
                  {"line size 48", "power of two"});
  s.line_bytes = 64;
  s.caches = {{"L5", 5, 64 * 64, 1, {0}}};
  expect_mentions(error_of([&] { memory_model(s, preset_params("generic")); }), {"level 5", "levels 1 to 4"});
  s.caches = {{"L1", 1, 64 * 64, 1, {0}}};
  EXPECT_EQ(error_of([&] { memory_model(s, param_overrides::parse("page_size=64", "X").resolve(nullptr)); }), "");
  sim_params small_page = preset_params("generic");
  small_page.page_bytes = 64;
  s.line_bytes = 128;
  s.caches = {{"L1", 1, 128 * 64, 1, {0}}};
  expect_mentions(error_of([&] { memory_model(s, small_page); }), {"page_size=64", "smaller than the line size"});
  // Named as the other parameters' errors are: the setting, and the topology (it said "sim parameters").
  s.source = "ROOST_TOPOLOGY='t.xml'";
  expect_mentions(error_of([&] { memory_model(s, param_overrides::parse("page_size=64", "ROOST_SIM_PARAMS").resolve(nullptr)); }),
                  {"ROOST_SIM_PARAMS", "page_size=64", "smaller than the line size of ROOST_TOPOLOGY='t.xml' (128 bytes)"});
}
