// Comparing two walks of one trace through the simulator's memory model (tests of src/sim): the same result
// for an access, the same counters for a cache.
#pragma once
#include <gtest/gtest.h>

#include <cstddef>

#include "sim/cache_array.hpp"
#include "sim/memory_model.hpp"

namespace roost_test {

// Every field of one access's results; `what` says which access failed.
inline ::testing::AssertionResult same_access(const roost::sim::access_result& a, const roost::sim::access_result& b) {
  if (a.depth == b.depth && a.instance == b.instance && a.coherence_miss == b.coherence_miss && a.remote == b.remote &&
      a.latency_ns == b.latency_ns)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "depth " << int(a.depth) << " / " << int(b.depth) << ", instance " << a.instance
                                       << " / " << b.instance << ", coherence miss " << a.coherence_miss << " / "
                                       << b.coherence_miss << ", remote " << a.remote << " / " << b.remote
                                       << ", latency " << a.latency_ns << " / " << b.latency_ns << " ns";
}

// Every counter of one cache instance.
inline void expect_same_counters(const roost::sim::cache_counters& a, const roost::sim::cache_counters& b,
                                 std::size_t instance) {
  EXPECT_EQ(a.accesses, b.accesses) << "instance " << instance;
  EXPECT_EQ(a.hits, b.hits) << "instance " << instance;
  EXPECT_EQ(a.write_hits, b.write_hits) << "instance " << instance;
  EXPECT_EQ(a.misses, b.misses) << "instance " << instance;
  EXPECT_EQ(a.coherence_misses, b.coherence_misses) << "instance " << instance;
  EXPECT_EQ(a.evictions, b.evictions) << "instance " << instance;
  EXPECT_EQ(a.writebacks, b.writebacks) << "instance " << instance;
  EXPECT_EQ(a.invalidations, b.invalidations) << "instance " << instance;
}

}  // namespace roost_test
