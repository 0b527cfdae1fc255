// The binary tree cats's tests profile (seed 000 §3.2): its leaves declare their bytes with roost::touch, so
// a node at height h has SOID 2^h * leaf_bytes (eq. 1). Shared by test_cats (native threads) and test_sim
// (seeded simulated interleavings); both check the tiers cats finds with cab's checker (cab_checker.hpp):
// once profiled, cats schedules as cab does (seed 000 §3.3).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "roost/roost.hpp"

namespace roost_test::cats {

inline std::vector<char> g_data(1 << 20);

// What the leaves declare as misses for an injected counter source (test_cats): leaf_bytes / 64 a leaf.
inline thread_local std::uint64_t t_fake_misses = 0;

// Leaves touch `leaf_bytes` each, `touches` times over the same bytes.
inline long tree(int depth, long id, std::size_t leaf_bytes, int touches = 1) {
  if (depth == 0) {
    for (int k = 0; k < touches; ++k)
      roost::touch(g_data.data() + (static_cast<std::size_t>(id) * leaf_bytes) % (g_data.size() - leaf_bytes), leaf_bytes);
    t_fake_misses += leaf_bytes / 64;
    return id % 5;
  }
  long a = 0, b = 0;
  roost::task_group tg;
  tg.run([&] { a = tree(depth - 1, 2 * id, leaf_bytes, touches); });
  tg.run([&] { b = tree(depth - 1, 2 * id + 1, leaf_bytes, touches); });
  tg.wait();
  return a + b;
}

inline long tree_serial(int depth, long id) {
  return depth == 0 ? id % 5 : tree_serial(depth - 1, 2 * id) + tree_serial(depth - 1, 2 * id + 1);
}

}  // namespace roost_test::cats
