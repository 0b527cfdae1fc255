// Sleep and wake for idle workers. An idle worker spins briefly (its caller), then sleeps on a futex word;
// whoever makes work visible calls notify_new_work().
//
// No lost wake-up (a Dekker pair): the notifier does  [publish work] ; FENCE ; load sleepers_,
// the sleeper does  sleepers_ RMW (seq_cst) ; HEAVY ; read epoch ; [look for work] ; futex_wait(epoch).
// Either the notifier sees the sleeper and bumps epoch — then the futex wait returns at once, or the sleeper
// read the bumped epoch (acquire, pairing with the release bump) and so sees the work — or the sleeper's
// look for work happens after the publication and finds it.
//
// Notifiers: a deque that shares tasks (ws_deque.hpp: a private push notifies no one; adws's migration
// queues hold such a deque too), and the policies' other queues (mailboxes, inboxes, pools) at every push.
// Where the kernel has membarrier, FENCE is only a compiler barrier and HEAVY is a membarrier: it makes
// every running notifier execute a full barrier, so its publish and its load of sleepers_ are ordered as
// if it had fenced (the asymmetric Dekker of liburcu and folly). Without membarrier, FENCE is a seq_cst
// fence and HEAVY is nothing. In a ThreadSanitizer build, which models neither, FENCE and the load are one
// seq-cst read-modify-write of sleepers_.
#pragma once
#include <atomic>
#include <cstdint>

#include "platform/platform.hpp"
#include "roost/detail/sanitizers.hpp"

namespace roost::engine {

class idle_state {
 public:
  idle_state() : asymmetric_(platform::os::enable_heavy_barrier()) {}

  // Hot path: a barrier and one load when nobody sleeps.
  __attribute__((always_inline)) void notify_new_work() {
    if (anyone_asleep_after_publish()) [[unlikely]] wake_one();
  }
  // The same when the work is for one particular worker (or the sleeper to wake is unknown): wake them all.
  void notify_all_new_work() {
    if (anyone_asleep_after_publish()) [[unlikely]] wake_all();
  }
  void wake_one() {
    epoch_.fetch_add(1, std::memory_order_release);
    platform::os::wake_one(epoch_);
  }
  void wake_all() {
    epoch_.fetch_add(1, std::memory_order_release);
    platform::os::wake_all(epoch_);
  }
  // For a deque's share hook (ws_deque::on_share, with this idle_state as its argument): sharing tasks is
  // what makes them stealable, so that is where sleepers are woken — one for one task, all of them for
  // more. Waking one per share left a flat loop of help-first spawns (seed 002's map: 48 tasks pushed by
  // one task, whose other workers slept by then) to the spawner and one thief: a successful steal
  // makes no request, so nothing woke the third worker (ws-help 6x ws at 16 simulated workers).
  static void notify_on_share(void* idle, std::int64_t shared) {
    auto* st = static_cast<idle_state*>(idle);
    if (shared > 1) st->notify_all_new_work();
    else st->notify_new_work();
  }
  // Sleeps unless has_work() finds something after this worker has announced itself.
  template <class HasWork>
  void sleep_unless(HasWork&& has_work) {
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    naps_begun_.fetch_add(1, std::memory_order_relaxed);
    if (asymmetric_) platform::os::heavy_barrier();
    std::uint32_t e = epoch_.load(std::memory_order_acquire);
    count_nap(e, +1);
    if (!has_work()) {
      platform::os::wait_on(epoch_, e);
      naps_ended_.fetch_add(1, std::memory_order_relaxed);
    }
    count_nap(e, -1);
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
  }

  // For tests (test_runtime.cpp, IdleRuntimeSleeps): how many workers are inside sleep_unless now, the
  // epoch now, how many of the sleepers wait on the current epoch (a sleeper of an older epoch has been
  // woken already, though on a busy machine it may not have run since, and will look and may nap again),
  // how many futex waits have returned so far, and how many times a worker set out to sleep.
  // A runtime with no work ends with every worker asleep on the current epoch, and then no nap ends.
  std::uint32_t sleepers_now() const { return sleepers_.load(std::memory_order_relaxed); }
  std::uint32_t epoch_now() const { return epoch_.load(std::memory_order_relaxed); }
  std::uint32_t sleepers_on_current_epoch() const {
    const std::uint64_t n = naps_on_epoch_.load(std::memory_order_relaxed);
    return static_cast<std::uint32_t>(n >> 32) == epoch_now() ? static_cast<std::uint32_t>(n) : 0;
  }
  std::uint64_t naps_ended() const { return naps_ended_.load(std::memory_order_relaxed); }
  std::uint64_t naps_begun() const { return naps_begun_.load(std::memory_order_relaxed); }  // sleep_unless calls

 private:
  // The notifier's half of the Dekker pair: FENCE between the caller's publication and the look at sleepers_.
  __attribute__((always_inline)) bool anyone_asleep_after_publish() {
#ifdef ROOST_TSAN
    // ThreadSanitizer models neither a fence nor membarrier (GCC warned of this fence in every TSan build):
    // there the look is a seq-cst read-modify-write of sleepers_, which orders the pair the same way where
    // TSan sees it. RMWs of one word are totally ordered: one that reads 0 comes before the sleeper's
    // increment, which then reads from it (a release sequence) and sees the publication; one that comes
    // after it reads the sleeper.
    return sleepers_.fetch_add(0, std::memory_order_seq_cst) != 0;
#else
    if (asymmetric_) std::atomic_signal_fence(std::memory_order_seq_cst);
    else std::atomic_thread_fence(std::memory_order_seq_cst);
    return sleepers_.load(std::memory_order_relaxed) != 0;
#endif
  }

  // The newest epoch a sleeper waits on (high half) and how many sleepers wait on it (low half): a sleeper
  // of a newer epoch starts the count anew (those of older ones have been woken), and one of an older epoch
  // leaves it alone. Only on the way into and out of a sleep, beside a futex call: for tests (above).
  void count_nap(std::uint32_t e, int d) {
    std::uint64_t n = naps_on_epoch_.load(std::memory_order_relaxed), to;
    do {
      const auto newest = static_cast<std::uint32_t>(n >> 32);
      if (newest == e) to = n + static_cast<std::uint64_t>(static_cast<std::int64_t>(d));
      else if (d > 0 && static_cast<std::int32_t>(e - newest) > 0) to = std::uint64_t{e} << 32 | 1;
      else return;  // an older epoch's sleeper: already woken, not counted
    } while (!naps_on_epoch_.compare_exchange_weak(n, to, std::memory_order_relaxed));
  }

  const bool asymmetric_;
  alignas(64) std::atomic<std::uint32_t> sleepers_{0};
  // On the sleepers' line, written only on the way into and out of a sleep: for tests (above).
  std::atomic<std::uint64_t> naps_ended_{0}, naps_begun_{0};
  std::atomic<std::uint64_t> naps_on_epoch_{0};
  alignas(64) std::atomic<std::uint32_t> epoch_{0};
};

}  // namespace roost::engine
