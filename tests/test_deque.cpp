// Chase–Lev deque: sequential semantics, growth, and a concurrent stress test in which every pushed item
// must be taken exactly once by the owner or by one of the thieves.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "roost/detail/ws_deque.hpp"

using roost::detail::ws_deque;

namespace {
struct item {
  int value;
};
}  // namespace

TEST(Deque, OwnerPopsLifoThiefStealsFifo) {
  ws_deque<item> d(4);
  item a{1}, b{2}, c{3};
  d.push(&a);
  d.push(&b);
  d.push(&c);
  EXPECT_EQ(d.size_estimate(), 3);
  EXPECT_EQ(d.steal(), &a);
  EXPECT_EQ(d.pop(), &c);
  EXPECT_EQ(d.pop(), &b);
  EXPECT_EQ(d.pop(), nullptr);
  EXPECT_EQ(d.steal(), nullptr);
  EXPECT_TRUE(d.empty_estimate());
}

TEST(Deque, GrowsPastItsInitialCapacity) {
  ws_deque<item> d(2);
  std::vector<item> items(1000);
  for (int i = 0; i < 1000; ++i) {
    items[i].value = i;
    d.push(&items[i]);
  }
  for (int i = 0; i < 10; ++i) EXPECT_EQ(d.steal()->value, i);
  for (int i = 999; i >= 10; --i) EXPECT_EQ(d.pop()->value, i);
  EXPECT_EQ(d.pop(), nullptr);
}

TEST(Deque, BottomIndexTracksOwnerPushes) {
  ws_deque<item> d;
  item a{0}, b{1};
  auto b0 = d.bottom_index();
  d.push(&a);
  d.push(&b);
  EXPECT_EQ(d.bottom_index(), b0 + 2);
  d.pop();  // not the last element: bottom moves back
  EXPECT_EQ(d.bottom_index(), b0 + 1);
  d.pop();  // the last one is raced for through top; bottom stays (Chase-Lev)
  EXPECT_EQ(d.pop(), nullptr);
}

TEST(Deque, ConcurrentOwnerAndThievesTakeEachItemOnce) {
#if defined(__SANITIZE_THREAD__)
  constexpr int kItems = 20000;
#else
  constexpr int kItems = 200000;
#endif
  constexpr int kThieves = 3;
  std::vector<item> items(kItems);
  std::vector<std::atomic<int>> taken(kItems);
  for (int i = 0; i < kItems; ++i) items[i].value = i;
  ws_deque<item> d(8);  // small: forces growth under contention
  std::atomic<bool> done{false};
  std::atomic<long> stolen{0};

  std::vector<std::thread> thieves;
  for (int t = 0; t < kThieves; ++t)
    thieves.emplace_back([&] {
      while (!done.load(std::memory_order_acquire)) {
        if (item* x = d.steal()) {
          taken[x->value].fetch_add(1, std::memory_order_relaxed);
          stolen.fetch_add(1, std::memory_order_relaxed);
        }
      }
    });
  // Owner: bursts of pushes followed by some pops, like a fork-join program.
  int next = 0;
  while (next < kItems) {
    int burst = 1 + next % 7;
    for (int i = 0; i < burst && next < kItems; ++i) d.push(&items[next++]);
    for (int i = 0; i < burst / 2; ++i)
      if (item* x = d.pop()) taken[x->value].fetch_add(1, std::memory_order_relaxed);
  }
  while (item* x = d.pop()) taken[x->value].fetch_add(1, std::memory_order_relaxed);
  done.store(true, std::memory_order_release);
  for (auto& t : thieves) t.join();
  while (item* x = d.steal()) taken[x->value].fetch_add(1, std::memory_order_relaxed);

  for (int i = 0; i < kItems; ++i) ASSERT_EQ(taken[i].load(), 1) << "item " << i;
  RecordProperty("stolen", static_cast<int>(stolen.load()));
}
