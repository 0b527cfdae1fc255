#include "engine/klt.hpp"
#include "platform/say_once.hpp"

#include <pthread.h>

#include <cstdio>

#include "engine/worker.hpp"

namespace roost::engine {

// The word holds the command while it waits to be taken. A post before the wait (a spare woken before it
// got to sleep) is found by the wait's first load; a wake before the futex wait makes the wait return at
// once (the word is no longer `none`).
void klt::post(command c) {
  word_.store(static_cast<std::uint32_t>(c), std::memory_order_release);
  platform::native_platform::wake_one(word_);
}

klt::command klt::wait() {
  for (;;) {
    const std::uint32_t c = word_.load(std::memory_order_acquire);
    if (c != static_cast<std::uint32_t>(command::none)) {
      word_.store(static_cast<std::uint32_t>(command::none), std::memory_order_relaxed);
      return static_cast<command>(c);
    }
    platform::native_platform::wait_on(word_, static_cast<std::uint32_t>(command::none));
  }
}

klt* klt_pool::take() {
  if (!spares_) spares_ = incoming_.exchange(nullptr, std::memory_order_acquire);
  klt* k = spares_;
  if (k) spares_ = k->next;
  return k;
}

bool klt_pool::remove(klt* k) {
  for (int pass = 0; pass < 2; ++pass) {
    for (klt** p = &spares_; *p; p = &(*p)->next)
      if (*p == k) {
        *p = k->next;
        return true;
      }
    // Not among the known ones: move the new ones over (at the end, they are younger) and look again.
    klt* fresh = incoming_.exchange(nullptr, std::memory_order_acquire);
    if (!fresh) return false;
    klt** tail = &spares_;
    while (*tail) tail = &(*tail)->next;
    *tail = fresh;
  }
  return false;
}

void klt_pool::add_new(klt* k) {
  klt* head = incoming_.load(std::memory_order_relaxed);
  do {
    k->next = head;
  } while (!incoming_.compare_exchange_weak(head, k, std::memory_order_release, std::memory_order_relaxed));
}

klt_creator::klt_creator(void* engine, spare_fn spare_main, std::vector<worker*> workers)
    : engine_(engine), spare_main_(spare_main), workers_(std::move(workers)) {
  // Native threads, whatever thread makes or destroys the creator: only a native runtime preempts, and one
  // made inside a simulated task (t_sim set there) got a simulated thread's index as this handle, which the
  // name below then took for a pthread_t (a review: a segfault).
  self_ = platform::native_platform::start_thread([this] { main(); });
  // Named for top -H, gdb and the tests, as the spares it makes are; a name is only a help, so a refusal is
  // ignored. (It runs with either preemption type: a task may choose KLT-switching itself, roost::preempt_as.)
  (void)pthread_setname_np(static_cast<pthread_t>(self_), "roost-spares");
}

klt_creator::~klt_creator() {
  stopping_.store(true, std::memory_order_release);
  requests_.fetch_add(1, std::memory_order_release);
  platform::native_platform::wake_one(requests_);
  platform::native_platform::join_thread(self_);
  // Every spare sleeps in its pool (or has yet to get there): the workers have left for good.
  for (auto& s : spares_) s.k->post(klt::command::exit);
  for (auto& s : spares_) platform::native_platform::join_thread(s.h);
}

void klt_creator::request(worker& w) {
  if (w.klts.wanted.exchange(true, std::memory_order_relaxed)) return;  // asked already
  requests_.fetch_add(1, std::memory_order_release);
  platform::native_platform::wake_one(requests_);
}

void klt_creator::main() {
  for (;;) {
    const std::uint32_t seen = requests_.load(std::memory_order_acquire);
    if (stopping_.load(std::memory_order_acquire)) return;
    for (worker* w : workers_) {
      if (!w->klts.wanted.exchange(false, std::memory_order_acquire)) continue;
      auto k = std::make_unique<klt>();
      klt* kp = k.get();
      worker* wp = w;
      try {
        // Room for its record first: once the thread runs on *kp, a push_back that threw bad_alloc would free
        // the record under it, its handle never joined (a review).
        {
          std::lock_guard<std::mutex> lk(mu_);
          spares_.reserve(spares_.size() + 1);
        }
        // Named by itself, first: so before it serves a worker.
        const auto h = platform::native_platform::start_thread(
            [this, wp, kp] {
              (void)pthread_setname_np(pthread_self(), "roost-spare");
              spare_main_(engine_, *wp, *kp);
            },
            w->os_cpu);
        std::lock_guard<std::mutex> lk(mu_);
        spares_.push_back(spare{std::move(k), h});
      } catch (const std::exception& e) {
        // No thread now (the kernel's limit): the worker's ticks go on deferring and asking again. Said once:
        // a task that spins until another runs then spins for ever, and an outside-user campaign saw that
        // hang under ulimit -u without a word.
        ROOST_SAY_ONCE("roost: KLT-switching: no spare kernel thread could be made (%s): a task is preempted by "
                       "KLT-switching only once one can, and one that waits for another by spinning may wait for "
                       "ever; raise the process's thread limit (ulimit -u, a container's pids limit) or use "
                       "ROOST_PREEMPT=signal\n",
                       e.what());
      }
    }
    platform::native_platform::wait_on(requests_, seen);
  }
}

}  // namespace roost::engine
