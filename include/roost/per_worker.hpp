// roost::per_worker<T> — one T per worker, for values a task updates where it runs (oneTBB's
// enumerable_thread_specific; BOTS's threadprivate counters):
//
//   roost::per_worker<long> solutions;               // each element starts as long{}; or per_worker<T>(x)
//   ... in any task:   ++solutions.local();          // the element of the worker running the task now
//   ... after the join: long n = solutions.combine(std::plus<>());
//
// local() is keyed by the worker running the caller *now*. A task may move to another worker (another OS
// thread) at a scheduling point: task_group::wait(), tg.run() under a child-first scheduler, and any
// parallel_invoke / parallel_for / parallel_reduce. So call local() again after one instead of keeping the
// reference across it (two workers could then update the same element at once). Between two scheduling
// points the reference is the worker's alone, unless the runtime preempts (ROOST_PREEMPT=signal: a tick is a
// scheduling point anywhere, and another task of the worker may update the element between a read and its
// write back): there, update it with update(f), or inside roost::non_preemptible (docs/user-guide.md,
// "Preemption"). Any runtime's workers may use the same per_worker (each worker
// of each runtime gets its own element); outside any task, the calling thread gets an element of its own.
//
// combine, for_each, size and clear read or change every element: call them when no task uses local()
// (after the join, or outside runtime::run). Elements are never moved, and each lies in cache lines of its
// own (no false sharing between workers). They are kept until clear() or the per_worker's end, those of
// destroyed runtimes' workers and of ended threads too (their values count in combine): one that outlives
// many runtimes or short-lived threads grows by an element each; clear() it between them.
#pragma once
#include "roost/detail/min_max_aside.hpp"  // C headers' min/max macros kept out, given back at the end
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>

#include "roost/detail/abi.hpp"

namespace roost {

template <class T>
class per_worker {
 public:
  // Elements start as T{}.
  per_worker() : make_([] { return T{}; }) {}
  // Elements start as copies of `initial`.
  explicit per_worker(const T& initial) : make_([initial] { return initial; }) {}
  // Elements start as factory(), called on the worker that first calls local() (once per element, unless the
  // factory itself spawns or waits: see local()). Any callable that returns a T, even one that converts to
  // a T: per_worker<bool>([] { return false; }) took the lambda, through its function pointer, for the
  // initial value `true` (an outside-user campaign). A T itself is the initial value.
  template <class Factory, class = std::enable_if_t<std::is_invocable_r_v<T, Factory&> &&
                                                    !std::is_same_v<std::decay_t<Factory>, T>>>
  explicit per_worker(Factory factory) : make_(std::move(factory)) {}

  per_worker(const per_worker&) = delete;
  per_worker& operator=(const per_worker&) = delete;
  ~per_worker() { clear(); }

  // The element of the worker that runs the caller now, made on its first use there.
  T& local() {
    // Preemption (roost/preempt.hpp) may run another task on this worker: not inside the look-up and insert.
    detail::no_preempt_scope np(detail::running_fiber());
    if (T* found = find(current_key())) return *found;
    // A factory that spawns or waits passes a scheduling point: the caller may go on on another worker, and
    // this worker may meanwhile run another task that makes its element. So the key is the worker's after
    // the call, looked up again, and an element made meanwhile wins over this one (two elements for one
    // worker, or one handed to a task on another worker, with a data race on it: an outside-user campaign).
    // Made in its node, where it stays: T need not be movable (a histogram of std::atomic counters did not
    // compile; an outside-user campaign). The node is this task's until it is inserted.
    std::unique_ptr<node> made(new node(make_));
    const std::uint64_t key = current_key();
    if (T* found = find(key)) return *found;
    // Not there: only this worker inserts this key, and nothing from here on lets another task run on it.
    std::atomic<node*>& head = buckets_[bucket_of(key)];
    node* n = made.release();
    n->key = key;
    n->next = head.load(std::memory_order_acquire);
    while (!head.compare_exchange_weak(n->next, n, std::memory_order_release, std::memory_order_acquire)) {
    }
    count_.fetch_add(1, std::memory_order_relaxed);
    return n->value;
  }

  // f(local()), with no preemption from before local() until f returns: the read, change and write back
  // of the element that a tick would split under ROOST_PREEMPT (another task of the same worker may update
  // the element in between, and one of the two updates is lost: an outside-user campaign lost additions in
  // 7-9 runs of 20). What `roost::non_preemptible np; f(local());` does; with preemption off, just that call.
  // f must not spawn or wait: the task would leave the element's worker, and a wait for tasks that spin
  // would never end (roost/preempt.hpp). Returns what f returns.
  //   solutions.update([](long& n) { ++n; });
  template <class F>
  decltype(auto) update(F&& f) {
    detail::no_preempt_scope np(detail::running_fiber());
    return std::forward<F>(f)(local());
  }

  // op(op(e0, e1), e2)... over the elements (in no particular order: op should be associative and
  // commutative); what a fresh element holds (T{}, the initial value or factory()) when there is none,
  // the only case in which combine calls the factory. T must be copy-constructible (the first element is
  // copied into the result).
  template <class Op>
  T combine(Op op) const {
    std::optional<T> acc;
    for_each([&](const T& v) {
      if (!acc) {
        acc.emplace(v);
      } else {  // made anew, not assigned: T need not be assignable (a T with a const member did not compile)
        T next = op(*acc, v);
        acc.reset();
        acc.emplace(std::move(next));
      }
    });
    if (!acc) return make_();
    return std::move(*acc);
  }

  template <class F>
  void for_each(F f) {
    for (auto& b : buckets_)
      for (node* n = b.load(std::memory_order_acquire); n; n = n->next) f(n->value);
  }
  template <class F>
  void for_each(F f) const {
    for (auto& b : buckets_)
      for (const node* n = b.load(std::memory_order_acquire); n; n = n->next) f(std::as_const(n->value));
  }

  // How many elements exist (workers that called local() since the last clear()).
  std::size_t size() const { return count_.load(std::memory_order_relaxed); }

  // Destroys every element; the next local() on a worker makes a fresh one.
  void clear() {
    for (auto& b : buckets_) {
      node* n = b.exchange(nullptr, std::memory_order_acq_rel);
      while (n) {
        node* next = n->next;
        delete n;
        n = next;
      }
    }
    count_.store(0, std::memory_order_relaxed);
  }

 private:
  T* find(std::uint64_t key) {
    for (node* n = buckets_[bucket_of(key)].load(std::memory_order_acquire); n; n = n->next)
      if (n->key == key) return &n->value;
    return nullptr;
  }
  // Padded to whole cache lines: two workers' elements never share one. 128 bytes, not 64: the adjacent
  // line prefetcher of x86 cores moves lines in pairs.
  struct alignas(128) node {
    explicit node(const std::function<T()>& make) : value(make()) {}  // guaranteed elision: no move of T
    std::uint64_t key = 0;
    node* next = nullptr;
    T value;
  };
  static constexpr std::size_t kBuckets = 64;
  static std::size_t bucket_of(std::uint64_t key) { return key % kBuckets; }  // numbers given in turn
  // The worker running the caller, or outside any task the calling thread: a number for the process's life
  // (detail::new_worker_uid), never an address, which a later worker or thread may have.
  static std::uint64_t current_key() {
    if (detail::fiber_abi* fb = detail::running_fiber()) return fb->worker->uid;
    static thread_local const std::uint64_t outside = detail::new_worker_uid();
    return outside;
  }

  std::function<T()> make_;
  std::atomic<node*> buckets_[kBuckets] = {};
  std::atomic<std::size_t> count_{0};
};

}  // namespace roost

#include "roost/detail/min_max_back.hpp"
