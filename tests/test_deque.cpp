// The split work-stealing deque: sequential semantics, the private part and its sharing on request, growth,
// and a concurrent stress test in which every pushed item must be taken exactly once by the owner or by one
// of the thieves.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "queues/migration_queue.hpp"
#include "roost/detail/ws_deque.hpp"

using roost::detail::ws_deque;

namespace {
struct item {
  int value;
};

// The concurrent tests: items numbered 0..n-1 (fewer under TSan) and how often each was taken.
#if defined(__SANITIZE_THREAD__)
constexpr int kItems = 20000;
#else
constexpr int kItems = 200000;
#endif
struct stress_items {
  std::vector<item> items;
  std::vector<std::atomic<int>> taken;
  stress_items() : items(kItems), taken(kItems) {
    for (int i = 0; i < kItems; ++i) items[i].value = i;
  }
  void take(item* x) { taken[x->value].fetch_add(1, std::memory_order_relaxed); }
  // Runs `owner` while `thieves` threads take what steal() gives them, until it returns.
  template <class Steal, class Owner>
  void with_thieves(int thieves, Steal steal, Owner owner) {
    std::atomic<bool> done{false};
    std::vector<std::thread> ts;
    for (int t = 0; t < thieves; ++t)
      ts.emplace_back([&] {
        while (!done.load(std::memory_order_acquire))
          if (item* x = steal()) take(x);
      });
    owner();
    done.store(true, std::memory_order_release);
    for (auto& t : ts) t.join();
  }
  void expect_each_taken_once() const {
    for (int i = 0; i < kItems; ++i) ASSERT_EQ(taken[i].load(), 1) << "item " << i;
  }
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

TEST(Deque, PrivateTasksAreSharedWhenAThiefAsks) {
  ws_deque<item> d(8);
  item it[6] = {{0}, {1}, {2}, {3}, {4}, {5}};
  for (auto& x : it) d.push(&x);  // the first push is shared at once, the rest stay private
  EXPECT_EQ(d.size_estimate(), 6);  // private tasks count: an idle worker must not sleep past them
  EXPECT_EQ(d.steal(), &it[0]);
  EXPECT_EQ(d.steal(), nullptr);  // nothing shared: this asks the owner to share
  EXPECT_EQ(d.pop(), &it[5]);     // served here: the older half of [1, 5) becomes shared
  EXPECT_EQ(d.steal(), &it[1]);
  EXPECT_EQ(d.steal(), &it[2]);
  EXPECT_EQ(d.steal(), nullptr);
  EXPECT_EQ(d.pop(), &it[4]);     // shares it[3]; it[4] was private
  EXPECT_EQ(d.pop(), &it[3]);     // taken back from the shared part (the fenced pop)
  EXPECT_EQ(d.pop(), nullptr);
  EXPECT_TRUE(d.empty_estimate());
}

// A request is served at the owner's next push too (the push's one limit test covers it: ws_deque.hpp,
// push_slow), and every later request again: the limit is raised after a request and lowered at the next.
TEST(Deque, EachRequestIsServedAtTheNextPush) {
  ws_deque<item> d(8);
  std::vector<item> it(40);
  for (int i = 0; i < 40; ++i) it[i].value = i;
  d.push(&it[0]);  // shared at once (a request is pending from the start)
  for (int i = 1; i < 5; ++i) d.push(&it[i]);  // private
  EXPECT_EQ(d.steal(), &it[0]);
  int next_push = 5, next_steal = 1;
  for (int round = 0; round < 5; ++round) {
    EXPECT_EQ(d.steal(), nullptr) << "round " << round;  // nothing shared: asks
    d.push(&it[next_push++]);  // serves it: the older half of the private part is shared
    item* x = d.steal();
    ASSERT_NE(x, nullptr) << "round " << round << ": the request was not served at the push";
    EXPECT_EQ(x->value, next_steal) << "round " << round;
    ++next_steal;
    while (d.shared_estimate()) EXPECT_EQ(d.steal()->value, next_steal++);
    // Pushes with no request waiting stay private (the limit was raised again after the one served).
    for (int k = 0; k < 3; ++k) d.push(&it[next_push++]);
    EXPECT_FALSE(d.shared_estimate()) << "round " << round;
  }
  int left = 0;
  while (d.pop()) ++left;
  EXPECT_EQ(left + next_steal, next_push);
}

// A request made while the deque must grow is served by the same push.
TEST(Deque, ARequestAtAGrowingPushIsServed) {
  ws_deque<item> d(2);
  std::vector<item> it(3);
  d.push(&it[0]);  // shared
  d.push(&it[1]);  // private; the ring of 2 is full
  EXPECT_EQ(d.steal(), &it[0]);
  EXPECT_EQ(d.steal(), nullptr);  // asks
  d.push(&it[2]);                 // grows (top moved: room without growing, in fact) and shares
  EXPECT_EQ(d.steal(), &it[1]);
  EXPECT_EQ(d.pop(), &it[2]);
  EXPECT_EQ(d.pop(), nullptr);
}

TEST(Deque, FirstPushAfterTheSharedPartEmptiesIsShared) {
  ws_deque<item> d;
  item a{0}, b{1}, c{2};
  d.push(&a);
  d.push(&b);
  EXPECT_EQ(d.pop(), &b);
  EXPECT_EQ(d.pop(), &a);  // the owner empties the shared part itself
  d.push(&c);              // so the next task is stealable without anyone asking
  EXPECT_EQ(d.steal(), &c);
  EXPECT_EQ(d.pop(), nullptr);
}

TEST(Deque, TakeOldestPrivateKeepsTheRestInOrder) {
  ws_deque<item> d(8);
  item it[5] = {{0}, {1}, {2}, {3}, {4}};
  for (auto& x : it) d.push(&x);  // it[0] shared, it[1..4] private
  EXPECT_EQ(d.take_oldest_private(0, 3), nullptr);  // four private: more than asked for
  EXPECT_EQ(d.take_oldest_private(0, 4), &it[1]);   // the oldest private one, not the shared it[0]
  EXPECT_EQ(d.take_oldest_private(3, 8), &it[4]);   // from index 3: it[4] had moved down to slot 3
  EXPECT_EQ(d.pop(), &it[3]);
  EXPECT_EQ(d.pop(), &it[2]);
  EXPECT_EQ(d.take_oldest_private(0, 8), nullptr);  // only the shared one is left
  EXPECT_EQ(d.steal(), &it[0]);
  EXPECT_TRUE(d.empty_estimate());
}

TEST(Deque, GrowsPastItsInitialCapacity) {
  ws_deque<item> d(2);
  std::vector<item> items(1000);
  for (int i = 0; i < 1000; ++i) {
    items[i].value = i;
    d.push(&items[i]);
  }
  EXPECT_EQ(d.size_estimate(), 1000);
  EXPECT_EQ(d.steal()->value, 0);
  EXPECT_EQ(d.steal(), nullptr);  // asks
  EXPECT_EQ(d.pop()->value, 999);  // shares the older half of the private part
  for (int i = 1; i < 10; ++i) EXPECT_EQ(d.steal()->value, i);
  for (int i = 998; i >= 10; --i) EXPECT_EQ(d.pop()->value, i);
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
  constexpr int kThieves = 3;
  stress_items st;
  auto& items = st.items;
  ws_deque<item> d(8);  // small: forces growth under contention
  std::atomic<bool> done{false};
  std::atomic<long> stolen{0};

  std::vector<std::thread> thieves;
  for (int t = 0; t < kThieves; ++t)
    thieves.emplace_back([&] {
      while (!done.load(std::memory_order_acquire)) {
        if (item* x = d.steal()) {
          st.take(x);
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
      if (item* x = d.pop()) st.take(x);
  }
  while (item* x = d.pop()) st.take(x);
  done.store(true, std::memory_order_release);
  for (auto& t : thieves) t.join();
  while (item* x = d.steal()) st.take(x);

  st.expect_each_taken_once();
  RecordProperty("stolen", static_cast<int>(stolen.load()));
}

// The inline windows address the deque's first array with an immediate mask (ws_deque.hpp, windows_fit): a
// deque that grew keeps them shut, goes back to that array once empty, and reuses the array it grew to when
// it fills up again, so that repeated bursts hold no more arrays than one.
TEST(Deque, GoesBackToItsFirstArrayWhenEmptyAndReusesTheGrownOne) {
  ws_deque<item> d;  // the windows' capacity
  std::vector<item> it(600);
  for (int i = 0; i < 600; ++i) it[i].value = i;
  EXPECT_TRUE(d.windows_fit());
  for (int round = 0; round < 5; ++round) {
    for (auto& x : it) d.push(&x);
    EXPECT_FALSE(d.windows_fit()) << "round " << round;
    EXPECT_TRUE(d.pop_window_shut()) << "round " << round;
    for (int i = 599; i >= 0; --i) ASSERT_EQ(d.pop()->value, i) << "round " << round;
    EXPECT_EQ(d.pop(), nullptr);
    EXPECT_TRUE(d.windows_fit()) << "round " << round;
    d.push(&it[0]);  // shared at once (the deque was empty), and the windows open again
    EXPECT_FALSE(d.pop_window_shut()) << "round " << round;
    EXPECT_EQ(d.pop(), &it[0]);
    EXPECT_EQ(d.arrays_held(), 3u) << "round " << round;  // 256, 512, 1024 slots: the first round's
  }
}

// The same under thieves: bursts larger than the first array, each drained, so that the deque grows, goes
// back and grows again while thieves steal from whichever array they read.
TEST(Deque, ThievesTakeEachItemOnceWhileTheDequeGrowsAndGoesBack) {
  stress_items st;
  ws_deque<item> d;
  st.with_thieves(3, [&] { return d.steal(); }, [&] {
    int next = 0;
    while (next < kItems) {
      const int burst = 200 + next % 400;  // about half the bursts outgrow the first array
      for (int i = 0; i < burst && next < kItems; ++i) d.push(&st.items[next++]);
      while (item* x = d.pop()) st.take(x);
    }
  });
  while (item* x = d.steal()) st.take(x);
  st.expect_each_taken_once();
  EXPECT_LE(d.arrays_held(), 4u);  // bounded by the largest burst, not by the number of bursts
}

// ADWS's migration queue (src/queues/migration_queue.hpp): one deque in meaning, received tasks on the
// steal side of the owner's pushes.
using roost::queues::migration_queue;

TEST(MigrationQueue, OwnerTakesItsPushesThenWhatItReceivedInArrivalOrder) {
  migration_queue<item> q;
  item r1{1}, r2{2}, p1{3}, p2{4};
  EXPECT_TRUE(q.empty_hint());
  q.push_top(&r1);     // received
  q.push_bottom(&p1);  // the owner's continuation
  q.push_top(&r2);     // received while the owner has a push of its own: above it
  q.push_bottom(&p2);
  EXPECT_FALSE(q.empty_hint());
  EXPECT_EQ(q.pop_bottom(), &p2);
  EXPECT_EQ(q.pop_bottom(), &p1);
  EXPECT_EQ(q.pop_bottom(), &r1);  // first come, first run
  EXPECT_EQ(q.pop_bottom(), &r2);
  EXPECT_EQ(q.pop_bottom(), nullptr);
  EXPECT_TRUE(q.empty_hint());
}

TEST(MigrationQueue, ThiefTakesTheNewestReceivedFirstThenTheOldestPush) {
  migration_queue<item> q;
  item r1{1}, r2{2}, p1{3}, p2{4};
  q.push_bottom(&p1);  // the first push is shared at once (ws_deque)
  q.push_bottom(&p2);
  q.push_top(&r1);
  q.push_top(&r2);
  EXPECT_TRUE(q.stealable_hint());
  EXPECT_EQ(q.steal_top(), &r2);
  EXPECT_EQ(q.steal_top(), &r1);
  EXPECT_EQ(q.steal_top(), &p1);
  EXPECT_EQ(q.steal_top(), nullptr);  // p2 is private: the thief asked the owner to share
  EXPECT_EQ(q.pop_bottom(), &p2);
  EXPECT_FALSE(q.stealable_hint());
}

TEST(MigrationQueue, ConcurrentSenderOwnerAndThievesTakeEachItemOnce) {
  constexpr int kThieves = 2;
  stress_items st;
  auto& items = st.items;
  migration_queue<item> q;
  std::atomic<bool> done{false};
  auto take = [&](item* x) { st.take(x); };

  std::vector<std::thread> thieves;
  for (int t = 0; t < kThieves; ++t)
    thieves.emplace_back([&] {
      while (!done.load(std::memory_order_acquire))
        if (item* x = q.steal_top()) take(x);
    });
  // One sender hands over every fourth item; the owner pushes the rest in bursts and pops some back.
  std::thread sender([&] {
    for (int i = 0; i < kItems; i += 4) q.push_top(&items[i]);
  });
  int next = 1;
  while (next < kItems) {
    int burst = 1 + next % 5;
    for (int i = 0; i < burst && next < kItems; ++i, ++next) {
      if (next % 4 == 0) ++next;
      if (next < kItems) q.push_bottom(&items[next]);
    }
    for (int i = 0; i < burst / 2; ++i)
      if (item* x = q.pop_bottom()) take(x);
  }
  sender.join();
  while (item* x = q.pop_bottom()) take(x);
  done.store(true, std::memory_order_release);
  for (auto& t : thieves) t.join();
  st.expect_each_taken_once();
}
