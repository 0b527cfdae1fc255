// A fiber: a task's stack and suspended context, and the unit a worker resumes. The record lives at the
// top of its own stack, so a fiber is one mmap.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <new>

#include "roost/detail/abi.hpp"
#include "ult/context.hpp"
#include "ult/stack.hpp"

namespace roost::engine {

struct klt;

// fiber_abi (worker now running it, epoch) comes first: user code reads it inline (roost/detail/abi.hpp).
// The record starts on a cache line (fiber_pool::create) and every field a switch touches lies in that
// first line: the abi part, the task, the pool link and the saved context (ctx.fctx). The stack's bounds
// follow, read only by the sanitizers and at destruction.
struct fiber : detail::fiber_abi {
  detail::task_id* task = nullptr;  // the task running on this fiber, restored when it resumes
  fiber* next_free = nullptr;       // fiber_pool link
  ult::context ctx;
  ult::stack stk;
  fiber* next_preempted = nullptr;  // preempted_fifo link
  // KLT-switching: the kernel thread asleep with this preempted task inside the tick's handler, which
  // the worker wakes instead of switching to the fiber (engine/klt.hpp); nullptr otherwise.
  klt* klt_holder = nullptr;
  // The runtime whose pools made it, for its life: a task of another runtime that spawns into a group this
  // fiber's task owns is told apart by it (engine_base::spawn_foreign). Written once, before any task runs.
  const void* home = nullptr;
  // The epoch at which fiber_pool::release_deep_pages last looked at this fiber's stack while it lay idle or on
  // the free-stack list: a use moves the epoch (engine.hpp: every switch away from it, and
  // resume_parent_after_call), so the next look stops at the fibers nobody used since. Read and written by the
  // thread of the pool that holds the fiber.
  std::uint64_t pages_seen_at_epoch = ~std::uint64_t{0};
};
static_assert(sizeof(detail::fiber_abi) + 2 * sizeof(void*) + sizeof(ult::bctx::fcontext_t) <= 64,
              "a switch's fields of a fiber fit its first cache line");

// Fibers shared by all workers of a runtime. Fibers drift: a task that suspends on worker A takes a fiber
// from A's pool, and the worker B that resumes it parks its own fiber in B's pool. When that flow is
// one-way (a head core that always waits, a core that always resumes), A would create fibers without end
// while B hoards them, until the kernel's limit on mappings. Pools therefore spill above a cap into this
// one, and draw from it before creating.
// A list through the fibers' own pool links, never an allocation: a put finishes a switch (engine.hpp,
// resumed), where nothing may fail. (A vector here threw std::bad_alloc there once a chain of nested waits
// had taken every mapping the kernel allows, and left the switch half done: the next run crashed.)
class fiber_overflow {
 public:
  fiber_overflow() = default;
  fiber_overflow(const fiber_overflow&) = delete;
  ~fiber_overflow();
  void put(fiber* f) noexcept {
    std::lock_guard<std::mutex> lk(m_);
    push_locked(f);
  }
  fiber* take() noexcept {
    std::lock_guard<std::mutex> lk(m_);
    fiber* f = head_;
    if (f) {
      head_ = f->next_free;
      count_.store(count_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    }
    return f;
  }
  // Unmaps the spares beyond the bound the engine set at start (keep: stacks_to_keep, at least kKeepAtLeast):
  // called at the end of a run (engine_base::run_root), so that a run that nested tens of thousands of waits
  // does not leave the program at the kernel's limit on mappings (vm.max_map_count: two a fiber) for its
  // other allocations and threads. Returns how many it unmapped. A nest deeper than the fibers
  // kept maps the fibers beyond them again at every run: the fibers of its waits come here once a worker's
  // own pool holds kLocalMax (a nest of 1,000 task groups at two workers under ws, where thieves take the
  // continuations: 22-28 us a level with 256 kept, 0.2-0.7 with 2,047), and under ThreadSanitizer, where a
  // child-first child switches to an idle fiber, every child's fiber comes back this way.
  static constexpr std::size_t kKeepAtLeast = 256;
  void keep(std::size_t n) noexcept { keep_ = n; }
  std::size_t trim() noexcept;
  // Takes f where the spares are below their bound, else leaves it to the caller (false): a worker's free
  // stacks beyond its share come here as fresh fibers (fiber_pool::trim_free_stacks), so that at one worker a
  // nest as deep as both halves of stacks_to_keep maps no stack when it runs again.
  // has_room: without the lock, a hint for a caller that would prepare f first; offer decides under it.
  bool has_room() const noexcept { return count_.load(std::memory_order_relaxed) < keep_; }
  bool offer(fiber* f) noexcept {
    std::lock_guard<std::mutex> lk(m_);
    if (!has_room()) return false;
    push_locked(f);
    return true;
  }

 private:
  void push_locked(fiber* f) noexcept {
    f->next_free = head_;
    head_ = f;
    count_.store(count_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  std::mutex m_;
  std::size_t keep_ = kKeepAtLeast;
  fiber* head_ = nullptr;
  std::atomic<std::size_t> count_{0};  // written under m_; read without it by trim's first look
};

// Per-worker LIFO pool of idle fibers: the most recently parked fiber (cache-hot stack) is reused first.
// Idle fibers sit at the top of their entry loop, ready to receive a message.
class fiber_pool {
 public:
  static constexpr std::size_t kLocalMax = 32;

  fiber_pool() = default;
  fiber_pool(const fiber_pool&) = delete;
  ~fiber_pool() { release_all(); }

  void attach(fiber_overflow* o) { overflow_ = o; }
  // What a fiber this pool creates looks like: its usable stack and the function it enters (set by
  // engine_base::start). Only creation reads them; a spawn used to pass the stack size from the engine's
  // configuration, two pointers away, and paid those loads (misses, after a leaf that streamed through
  // L1) on the fast path too.
  // keep_idle (preemption on): a spawn that takes an idle fiber for its child makes another one, so that a
  // tick in the child finds one (has_idle below). running: the worker's current fiber, the one running on
  // the thread that uses this pool, whose count the slow paths raise (get_free_stack_slow).
  // home: the runtime (fiber::home).
  void configure(std::size_t stack_bytes, ult::entry_fn entry, bool keep_idle, fiber* const* running,
                 const void* home) {
    stack_bytes_ = stack_bytes;
    entry_ = entry;
    home_ = home;
    keep_idle_ = keep_idle;
    running_ = running;
  }

  // The fast paths are on every work-first spawn: inline; the overflow (a lock) and creation are not.
  __attribute__((always_inline)) fiber* get() {
    if (fiber* f = head_) [[likely]] {
      head_ = f->next_free;
      --count_;
      return f;
    }
    detail::no_preempt_scope np(running());  // see get_free_stack_slow
    return get_slow();
  }
  // A fiber for a child-first child that is switched to (the sanitizer builds' spawn, engine.hpp
  // switch_to_child): from the idle ones, so while preemption is on the next idle one is made if that was
  // the last (has_idle), as get_free_stack_slow does.
  __attribute__((always_inline)) fiber* get_for_child() {
    fiber* f = get();
    keep_one_idle();
    return f;
  }
  // Fibers whose stacks are free from the top, for a child-first child called on them (ult/call_on_stack.hpp,
  // engine.hpp's spawn_child_first): a fiber taken from the idle ones loses its parked context there, so it
  // comes back here after its child ended locally, never among the idle ones, and is taken first. One that
  // ends otherwise (its parent was taken) goes on as a pooled fiber of the scheduling loop, and parks among
  // the idle ones with a context of its own.
  __attribute__((always_inline)) fiber* get_free_stack() {
    if (fiber* f = free_stacks_) [[likely]] {
      free_stacks_ = f->next_free;
      return f;
    }
    detail::no_preempt_scope np(running());  // see get_free_stack_slow
    return get_free_stack_slow();
  }
  // The fiber get_free_stack would take from the list, or null (then it would call), and its take: engine.hpp's
  // spawn_plain looks before it changes anything, and takes the one it saw after code the compiler cannot
  // prove leaves the list alone (so that no call of the slow path, and no register kept for it, is left).
  __attribute__((always_inline)) fiber* peek_free_stack() const { return free_stacks_; }
  __attribute__((always_inline)) void take_free_stack(fiber* head) { free_stacks_ = head->next_free; }
  // A stack another worker's pool counted comes onto this one's list (engine.hpp, resume_parent_after_call).
  void came_from_elsewhere() { ++free_stacks_entered_; }
  __attribute__((always_inline)) void put_free_stack(fiber* f) {
    f->next_free = free_stacks_;
    free_stacks_ = f;
  }
  // Whether get() can return a fiber without creating one (no allocation, no lock): what a preemption,
  // inside a signal handler, asks before it switches (engine/preemption.cpp). While preemption is on, one
  // is kept wherever a task's body may run: run_root and the scheduling loop reserve one before they start
  // a task, and the only other taker while a body runs, a child-first spawn (deeper than any before on this
  // worker, or any in the sanitizer builds, which switch to the child), makes the next (get_free_stack_slow,
  // get_for_child). The handler's own take is made good by the loop it switches to, and every resumption
  // parks the resumer's fiber among the idle ones.
  bool has_idle() const { return head_ != nullptr; }
  // Makes sure `n` idle fibers are here (creating them if need be), so that a preemption finds one. Says
  // whether it could: a failure only defers ticks until a later call succeeds.
  bool reserve_idle(std::size_t n) noexcept {
    try {
      while (count_ < n) {
        fiber* f = get_slow();
        f->next_free = head_;
        head_ = f;
        ++count_;
      }
      return true;
    } catch (...) {  // the scheduling loop says so once (engine.hpp, find_work: note_no_idle_fiber)
      return false;
    }
  }
  __attribute__((always_inline)) void put(fiber* f) {
    if (count_ >= kLocalMax && overflow_) [[unlikely]] {
      detail::no_preempt_scope np(running());  // see get_free_stack_slow
      spill(f);
      return;
    }
    put_in_handler(f);
  }
  // put() in a preemption tick's handler, which may neither lock nor allocate: the fiber stays here even
  // above kLocalMax (a preempted task takes a fiber when it suspends and gives one back when it resumes, so
  // the excess is a few fibers at most, and later puts spill as usual).
  __attribute__((always_inline)) void put_in_handler(fiber* f) {
    f->next_free = head_;
    head_ = f;
    ++count_;
  }
  // Gives back the stack pages that the tasks of idle fibers and free stacks touched deeper than kKeepBytes
  // (ult/stack.hpp). Called where a worker has nothing to do (before it sleeps, at the end of a root), not per
  // switch: the look at each fiber's mark line is a cache miss. Returns how many fibers gave pages back.
  // It looks at every fiber used since its last look, and at no other. Both lists are stacks: a take pops the
  // head and a put pushes there, and a fiber's epoch moves before every put (it moves whenever the fiber is
  // switched away from, and after a child's call on a free stack: engine.hpp), so the fibers used since the
  // last look lie above every fiber unused since, and the first one seen ends the walk. The free-stack walk
  // went down the whole list (up to free_stacks_kept_ cache and TLB misses) at every sleep after a deep nest;
  // the idle walk looked at a fixed count of the most recent (4 at worker 0's end of a run), and a deep task
  // that a preemption tick had moved onto an idle fiber further down kept its pages (ROOST_PREEMPT=signal).
  static constexpr std::size_t kKeepBytes = 256 * 1024;
  std::size_t release_deep_pages() {
    return release_deep_pages_of(head_) + release_deep_pages_of(free_stacks_);
  }
  // How many free stacks a worker keeps when it trims (below), at most: the engine sets its share
  // (stacks_to_keep). A nest of child-first children deeper than what is kept maps the
  // stacks beyond it again at every run: 12-20 us a level against 0.06 (mmap, mprotect, the first touches,
  // munmap; the 2-vCPU Zen 4 VM), which it paid beyond 32 when 32 were kept. Each kept stack costs its two
  // mappings and the pages its last child touched above kKeepBytes (a page or two for most tasks;
  // release_deep_pages gives back the rest).
  static constexpr std::size_t kFreeStacksKept = 1024;
  void keep_free_stacks(std::size_t n) { free_stacks_kept_ = n; }
  // Cuts the free stacks back to the free_stacks_kept_ most recently used: a chain of nested child-first
  // children leaves as many here as it nested (tens of thousands, at the kernel's limit on mappings, after a
  // deep one). Those beyond go to the shared spares while they have room, made fresh fibers again (renew: a
  // free stack holds no parked context), and are unmapped beyond it: at one worker the spares' half of
  // stacks_to_keep was unused, and every run of a nest deeper than the worker's share (uts: 1,599 levels)
  // mapped a stack for each level beyond it. Called where the worker has nothing to do, with
  // release_deep_pages. Walks the list only where it may have grown past the bound since the last trim
  // (free_stacks_entered_): the walk down a kept nest of 1,000 at every run's end was 5% of a run of that
  // nest (a TLB miss a stack). Returns how many it unmapped.
  std::size_t trim_free_stacks() {
    if (free_stacks_entered_ <= free_stacks_kept_) return 0;
    fiber** link = &free_stacks_;
    std::size_t kept = 0;
    for (; kept < free_stacks_kept_ && *link; ++kept) link = &(*link)->next_free;
    free_stacks_entered_ = kept;  // exact now: the list's length after the cut
    fiber* excess = *link;
    *link = nullptr;
    std::size_t n = 0;
    while (fiber* f = excess) {
      excess = f->next_free;
      if (overflow_ && overflow_->has_room()) {  // else no renew, whose look at the stack's pages costs a read
        f = renew(f);
        if (overflow_->offer(f)) continue;
      }
      destroy(f);
      ++n;
    }
    return n;
  }
  void release_all() {
    while (fiber* f = head_) {
      head_ = f->next_free;
      destroy(f);
    }
    count_ = 0;
    while (fiber* f = free_stacks_) {
      free_stacks_ = f->next_free;
      destroy(f);
    }
    free_stacks_entered_ = 0;
  }
  static void destroy(fiber* f) {
    ult::stack s = f->stk;
    ult::release_context(f->ctx);
    f->~fiber();
    ult::free_stack(s);
  }

 private:
  // The slow paths take the shared pool's lock or map memory: a tick in them must not switch this thread to
  // another task. A spawn in the runtime text calls them with the spawner's count at 0 (engine.hpp,
  // spawn_in_runtime_text), so the inline fast paths raise the running fiber's count around each call, in
  // the caller's code: a raise inside the callee would leave its first instructions uncounted. The fiber is
  // the worker's current one, not read from the thread's slot (t_running_fiber): a sanitizer build computes
  // that slot's address and may keep it across a switch to another thread (TSan saw it), and its
  // out-of-line read would be a call out of the runtime text before the raise.
  __attribute__((always_inline)) detail::fiber_abi* running() const { return running_ ? *running_ : nullptr; }
  static std::size_t release_deep_pages_of(fiber* list) {
    std::size_t n = 0;
    for (fiber* f = list; f && f->pages_seen_at_epoch != f->epoch; f = f->next_free) {
      f->pages_seen_at_epoch = f->epoch;
      n += ult::release_deep_pages(f->stk, f, kKeepBytes);
    }
    return n;
  }
  __attribute__((noinline)) fiber* get_free_stack_slow() {
    fiber* f = get();
    ++free_stacks_entered_;  // it goes on a list after its child's local end (trim_free_stacks)
#ifdef ROOST_ASAN
    ult::forget_frames(f->stk);  // its parked context's frames: the call starts at the top, over them
#endif
    keep_one_idle();  // f may have been the last idle one, and a child is about to run
    return f;
  }
  // While preemption is on, makes an idle fiber if the last was just taken (has_idle).
  __attribute__((always_inline)) void keep_one_idle() {
    if (keep_idle_ && head_ == nullptr) [[unlikely]] {
      detail::no_preempt_scope np(running());  // see get_free_stack_slow
      reserve_idle(1);
    }
  }
  __attribute__((noinline)) fiber* get_slow() {
    if (overflow_)
      if (fiber* f = overflow_->take()) return f;
    return create(stack_bytes_, entry_, home_);
  }
  __attribute__((noinline)) void spill(fiber* f) {
    ult::release_deep_pages(f->stk, f, kKeepBytes);  // the shared spares hold no task's deep pages
    overflow_->put(f);
  }
  static fiber* create(std::size_t stack_bytes, ult::entry_fn entry, const void* home) {
    return make_fiber(ult::allocate_stack(stack_bytes + sizeof(fiber) + 64), entry, home);
  }
  // A free stack (trim_free_stacks) made the fiber create() makes, on the mapping it has: the spares and the
  // idle pools hold fibers whose context enters `entry`, and every field a fresh fiber starts with (its
  // preempt_off at 1, its kind, no task) is made anew. Only the epoch goes on from where it was, so that no
  // (fiber, epoch) pair a queue or a group compared before comes back. The pages its tasks touched deeper than
  // kKeepBytes go back as a spill's do; under AddressSanitizer, the frames of the calls it held are forgotten.
  fiber* renew(fiber* f) const {
    if (f->pages_seen_at_epoch != f->epoch) ult::release_deep_pages(f->stk, f, kKeepBytes);
    const ult::stack s = f->stk;
    const std::uint64_t epoch = f->epoch;
    ult::release_context(f->ctx);
    f->~fiber();
    ult::forget_frames(s);
    fiber* fresh = make_fiber(s, entry_, home_);
    fresh->epoch = epoch + 1;
    return fresh;
  }
  // The fiber record at the top of stack s, 64-byte aligned, and its context at `entry`: the usable stack is
  // everything between the guard and the record.
  static fiber* make_fiber(const ult::stack& s, ult::entry_fn entry, const void* home) {
    auto top = reinterpret_cast<std::uintptr_t>(s.top());
    auto rec = (top - sizeof(fiber)) & ~std::uintptr_t{63};
    auto* f = ::new (reinterpret_cast<void*>(rec)) fiber();
    f->set_kind(detail::job::kind::resume);
    f->stk = s;
    f->home = home;
    ult::make_context(f->ctx, static_cast<char*>(s.base) + s.guard, reinterpret_cast<void*>(rec), entry);
    return f;
  }
  fiber* head_ = nullptr;
  std::size_t count_ = 0;
  fiber* free_stacks_ = nullptr;  // as many as child-first children were nested at once on this worker
  std::size_t free_stacks_kept_ = kFreeStacksKept;  // trim_free_stacks()'s bound (keep_free_stacks)
  // The free-stack list's length at the last trim that walked it, plus the stacks that entered it since: each
  // made for it (get_free_stack_slow), and each whose child ended on this worker after a spawn on another
  // (came_from_elsewhere). One counted that parks among the idle ones instead (its parent was taken) stays
  // counted; one that was out, under a suspended child, at a walk comes back uncounted: the list exceeds the
  // bound by at most the stacks out at the last walk, until the next walk.
  std::size_t free_stacks_entered_ = 0;
  fiber_overflow* overflow_ = nullptr;
  std::size_t stack_bytes_ = 0;
  ult::entry_fn entry_ = nullptr;
  const void* home_ = nullptr;
  bool keep_idle_ = false;
  fiber* const* running_ = nullptr;
};

// The tasks preempted on one worker, oldest first: they resume behind the worker's own and stolen work
// (engine.hpp, find_work), on this worker, never on another: user code that a tick interrupted after it read
// its worker finds it unchanged when it resumes (engine.hpp, spawn_in_runtime_text relies on it). Touched by
// the worker's thread only, except holds_any(), which another worker's policy may read (cab: a socket whose
// subtree was preempted may start another).
class preempted_fifo {
 public:
  void push(fiber* f) {
    f->next_preempted = nullptr;
    if (tail_) tail_->next_preempted = f;
    else head_ = f;
    tail_ = f;
    count_.store(count_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // one writer
  }
  fiber* pop() {
    fiber* f = head_;
    if (!f) return nullptr;
    head_ = f->next_preempted;
    if (!head_) tail_ = nullptr;
    count_.store(count_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    return f;
  }
  bool empty() const { return head_ == nullptr; }
  // From any thread: whether a preempted task waits here, as of a recent moment (a hint, nothing ordered).
  bool holds_any() const { return count_.load(std::memory_order_relaxed) != 0; }

 private:
  fiber* head_ = nullptr;
  fiber* tail_ = nullptr;
  std::atomic<std::uint32_t> count_{0};
};

// The fibers a runtime keeps when its pools trim (engine_base.cpp, keep_stacks_within), so that a nest up to
// that deep maps no stack when it runs again: about an eighth of the kernel's limit on mappings (two a stack),
// at most 2 x kHalfAtMost stacks, half of it for the shared spares (at least 256), half for the workers' free
// stacks (each at most 1,024, at least 32), whose excess the spares take while they have room
// (fiber_pool::trim_free_stacks): at one worker a nest of about 3,000 by default. Where the floors apply
// (hundreds of workers), or in a process with several runtimes, each taking its share, they hold more; a
// program is left most of the limit all the same.
// The cap: some systems set the limit near INT_MAX (2,147,483,642), where an eighth would keep every spare
// fiber a run ever made, each with up to kKeepBytes of its pages.
inline constexpr std::size_t kHalfAtMost = 4096;
struct stacks_kept {
  std::size_t spares;
  std::size_t free_stacks_each;
};
inline stacks_kept stacks_to_keep(std::size_t mapping_limit, std::size_t workers) {
  const std::size_t half = std::min(mapping_limit / 16 / 2, kHalfAtMost);
  const std::size_t share = half / std::max<std::size_t>(workers, 1);
  return {std::max(half, fiber_overflow::kKeepAtLeast),
          std::clamp(share, fiber_pool::kLocalMax, fiber_pool::kFreeStacksKept)};
}

inline std::size_t fiber_overflow::trim() noexcept {
  if (count_.load(std::memory_order_relaxed) <= keep_) return 0;
  fiber* excess = nullptr;
  {
    std::lock_guard<std::mutex> lk(m_);
    while (count_.load(std::memory_order_relaxed) > keep_) {
      fiber* f = head_;
      head_ = f->next_free;
      count_.store(count_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
      f->next_free = excess;
      excess = f;
    }
  }
  std::size_t n = 0;
  while (fiber* f = excess) {  // the unmaps outside the lock
    excess = f->next_free;
    fiber_pool::destroy(f);
    ++n;
  }
  return n;
}

inline fiber_overflow::~fiber_overflow() {
  while (fiber* f = head_) {
    head_ = f->next_free;
    fiber_pool::destroy(f);
  }
}

}  // namespace roost::engine
