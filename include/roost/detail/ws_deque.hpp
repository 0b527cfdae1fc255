// The work-stealing deque: a split deque (the design of Lace, van Dijk & van de Pol, Euro-Par 2014) built
// on the Chase–Lev deque (Chase & Lev, SPAA 2005) with the C11 orderings proved correct by Lê, Pop, Cohen
// and Zappa Nardelli, "Correct and Efficient Work-Stealing for Weak Memory Models", PPoPP 2013 (Fig. 1).
//
// It lives among the public detail headers because spawn and join are inlined into user code for the
// policies that allow it (detail/abi.hpp), as OpenCilk's compiler-generated code pushes onto cheetah's deque.
//
//        top_                 split_                 bottom_
//   ... | shared: thieves take here ... | private: owner only ... |
//
// Thieves see only [top_, split_): that part *is* a Chase–Lev deque whose "bottom" is split_. Above split_
// the owner pushes and pops with plain stores and no fence: no thief ever reads those slots. This is what
// makes the common join cheap. Chase–Lev's pop needs a store-load fence (its bottom store must be visible
// before it reads top); here only a pop that reaches into the shared part pays it.
//
// Sharing (Lace's rules): the owner moves split_ up, sharing half of its private part, when a thief has
// asked (request_, set by a steal that found nothing shared, or by a worker about to sleep) or when the
// owner itself emptied the shared part. The latter makes the first push after an empty shared part shared
// at once, so a lone task is stealable without anyone asking. A request is served at the owner's next push
// or pop; until then the thief sees nothing (a task pushed just before a long leaf stays private for that
// leaf: the price of the fence-free pop). The push tests for a request and for room in one compare: an
// asker lowers the push limit (push_limit_), and the slow push, or the share, raises it again. The inline
// pop of the worker's own deque (abi.hpp) tests, in one compare too, that the slot it takes is private, that
// no request waits and that the worker's inline pops are open (pop_floor_).
//
// A policy that names its join's queue (abi.hpp, name_join_queue: adws, adws-ml, cab, cats) uses the same two
// values to shut the inline windows while its state is not the one they serve (join_shut_): the limit stays
// at kAsked and the floor at kFloorClosed until it opens them, and the floor stays closed while its run-first
// slot holds a job (run_first_). Every re-arm reads those beside the request.
//
// Waking sleepers: only sharing makes work stealable, so only share() notifies (the hook the engine
// installs: the notifier's half of the Dekker pair of engine/idle.hpp, split_ being the published word). A
// private push costs no barrier and no look at the sleepers. A worker going to sleep asks every owner to
// share (ask_to_share) after announcing itself, and sleeps only if nothing is shared: the owner that later
// serves the request sees it asleep and wakes it (engine_base::any_work_visible).
//
// Growable: when full, the owner copies the live range into an array twice the size. Old arrays stay alive
// until the deque dies, because a thief may still be reading one (the paper leaves reclamation open; the
// memory is bounded by 2x the peak).
//
// The inline windows address a slot as slots_[b & kWindowMask], the mask an immediate (issue #25): the mask's
// load from the owner's line took 4-6% of a two-way join's time (fib-invoke at one worker, ws-help and ws),
// though it is one instruction of 55 a spawn. So the windows open only while the owner's array is the one of
// kWindowCapacity slots the deque starts with (windows_fit): a deque that grew keeps its push limit at kAsked
// and its pop floor closed, and its pushes and pops take the slow paths, which read the mask, until it is empty
// again; then it goes back to the first array (pop_shared), and, when it fills that again, to the larger one
// it grew to before (make_room), so that the arrays kept are bounded as before. The owner's C++ push and its
// pops through the floor (the engine's) address that first array the same way (window_slot): ws's task_group
// spawn, whose continuation goes through them, took 0.99x the time, adws 0.98x and cab 0.94x.
#pragma once
#include "roost/detail/min_max_aside.hpp"  // C headers' min/max macros kept out, given back at the end
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "roost/detail/job.hpp"
#include "roost/detail/sanitizers.hpp"

namespace roost::detail {

// ThreadSanitizer does not model stand-alone fences, so in TSan builds the fence-based publication below is
// also expressed as release/acquire on the slots: stronger, equivalent in meaning.
// The same for the two seq-cst fences (the pop's store-load order and the steal's load-load order): in TSan
// builds the accesses on either side are seq-cst themselves and the fence goes, which orders them the same
// way (seq-cst accesses are in one total order: the SC Chase-Lev deque) where TSan can see it, and GCC's
// -Wtsan warned of every fence in every user's TSan build of this header.
#ifdef ROOST_TSAN
inline constexpr std::memory_order kSlotStore = std::memory_order_release;
inline constexpr std::memory_order kSlotLoad = std::memory_order_acquire;
inline constexpr std::memory_order kFencedAccess = std::memory_order_seq_cst;  // the pop's split_ and top_
inline constexpr std::memory_order kStealLoad = std::memory_order_seq_cst;     // the steal's top_ and split_
inline void store_load_fence() {}
#else
inline constexpr std::memory_order kSlotStore = std::memory_order_relaxed;
inline constexpr std::memory_order kSlotLoad = std::memory_order_relaxed;
inline constexpr std::memory_order kFencedAccess = std::memory_order_relaxed;  // the fence orders them
inline constexpr std::memory_order kStealLoad = std::memory_order_acquire;
inline void store_load_fence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
#endif

template <class T>
class ws_deque {
  static_assert(sizeof(T*) == sizeof(void*));

  struct ring {
    std::int64_t mask;
    std::atomic<T*>* slots;
    std::unique_ptr<std::atomic<T*>[]> owned;  // null for the deque's first array, which lies inside it
    // The ring this one replaced, kept while the deque lives: a thief may still read a slot of it.
    std::unique_ptr<ring> older;
    // Indexes as size_t: the headers compile clean under a program's -Wsign-conversion (-Werror builds
    // failed; an outside-user campaign). i & mask is never negative.
    explicit ring(std::int64_t capacity)
        : mask(capacity - 1), slots(nullptr), owned(new std::atomic<T*>[static_cast<std::size_t>(capacity)]) {
      slots = owned.get();
    }
    ring(std::int64_t capacity, std::atomic<T*>* inside) : mask(capacity - 1), slots(inside) {}
    std::int64_t capacity() const { return mask + 1; }
    T* get(std::int64_t i) const { return slots[static_cast<std::size_t>(i & mask)].load(kSlotLoad); }
    void put(std::int64_t i, T* x) { slots[static_cast<std::size_t>(i & mask)].store(x, kSlotStore); }
  };

 public:
  // The inline windows' array size (abi.hpp: their mask is kWindowMask, an immediate): the default capacity.
  static constexpr std::int64_t kWindowCapacity = 256;
  static constexpr std::int64_t kWindowMask = kWindowCapacity - 1;
  explicit ws_deque(std::int64_t capacity = kWindowCapacity) {
    std::int64_t c = 2;
    while (c < capacity) c <<= 1;
    if (c == kWindowCapacity) {
      newest_.reset(new ring(c, window_slots_));
      window_ring_ = newest_.get();
    } else {
      newest_.reset(new ring(c));
    }
    array_.store(newest_.get(), std::memory_order_relaxed);
    use_ring(newest_.get(), 0);
  }
  ws_deque(const ws_deque&) = delete;
  ws_deque& operator=(const ws_deque&) = delete;

  // Owner only. Inlined into user code on the help-first path; growing and sharing are the cold parts.
  __attribute__((always_inline)) void push(T* x) { push_at(bottom_.load(std::memory_order_relaxed), x); }
  // push() for an owner that has just read bottom_index() (b): one load fewer on the inline spawn path.
  // One test: push_limit_ stands for both the room left and a waiting request (see its declaration).
  __attribute__((always_inline)) void push_at(std::int64_t b, T* x) {
    if (b >= push_limit_.load(std::memory_order_relaxed)) [[unlikely]] return push_slow(b, x);
    window_slot(b).store(x, kSlotStore);  // private: published, when shared, by the release store of split_
    // bottom_ is read only by size estimates (idle checks), never to take a slot: relaxed.
    bottom_.store(b + 1, std::memory_order_relaxed);
  }

  // Owner only: the private slot below bottom b, which the caller found above split_seen_.
  __attribute__((always_inline)) T* take_private_top(std::int64_t b) {
    --b;
    T* x = slots_[b & mask_].load(kSlotLoad);
    bottom_.store(b, std::memory_order_relaxed);
    return x;
  }
  // The same where the caller found b above the pop floor, which is open only while the windows fit.
  __attribute__((always_inline)) T* take_window_top(std::int64_t b) {
    --b;
    T* x = window_slot(b).load(kSlotLoad);
    bottom_.store(b, std::memory_order_relaxed);
    return x;
  }

  // Owner only. Returns nullptr when empty.
  __attribute__((always_inline)) T* pop() {
    std::int64_t b = bottom_.load(std::memory_order_relaxed);
    if (b > split_seen_) [[likely]] {  // the top slot is private: no thief can take it, no fence
      T* x = take_private_top(b--);
      if (request_.load(std::memory_order_acquire) && b > split_seen_) [[unlikely]] share(b);
      return x;
    }
    return pop_shared(b);
  }

  // Owner only: the private part's top job through the inline pop's window (pop_floor_: one compare for the
  // private part, a waiting request, closed inline pops, a policy's shut joins and its run-first slot), or
  // nullptr where the window is shut or the private part empty, for the caller's full pop. pop() without its
  // test for a request, which the shut window stands for (issue #25: ws's fib spawn 282 -> 280 instructions).
  __attribute__((always_inline)) T* pop_in_window() {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    if (b <= pop_floor_.load(std::memory_order_relaxed)) [[unlikely]] return nullptr;
    return take_window_top(b);
  }
  // pop() through the window: the same job, where the window is open without pop()'s request test, and
  // without a test of the job that pop_in_window's caller makes (policy_base::pop_own).
  __attribute__((always_inline)) T* pop_window_first() {
    return pop_window_or([this]() __attribute__((always_inline)) { return pop(); });
  }
  // The same with the caller's own way where the window is shut or the private part empty (adws's and
  // adws-ml's pop_own, whose shut window stands for a mailbox, a migration queue and a new iteration too).
  template <class Otherwise>
  __attribute__((always_inline)) T* pop_window_or(Otherwise&& otherwise) {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    if (b > pop_floor_.load(std::memory_order_relaxed)) [[likely]] return take_window_top(b);
    return otherwise();
  }

  // Owner only: when 1 to at_most private tasks lie at index >= from, removes and returns the oldest of
  // them, the tasks above it moving down one slot, in order; otherwise nullptr. Thieves never read private
  // slots, so no fence. For a join that runs its last few children in spawn order (engine.hpp); the bound
  // keeps the moves few.
  T* take_oldest_private(std::int64_t from, std::int64_t at_most) {
    std::int64_t b = bottom_.load(std::memory_order_relaxed);
    if (request_.load(std::memory_order_acquire) && b > split_seen_ + 1) [[unlikely]] share(b - 1);
    const std::int64_t i = from > split_seen_ ? from : split_seen_;
    if (i >= b || b - i > at_most) return nullptr;
    T* x = slots_[i & mask_].load(kSlotLoad);
    for (std::int64_t k = i; k + 1 < b; ++k) slots_[k & mask_].store(slots_[(k + 1) & mask_].load(kSlotLoad), kSlotStore);
    bottom_.store(b - 1, std::memory_order_relaxed);
    return x;
  }

  // Owner only: gives the fresh frames of the private part that have no floating-point state yet `state`,
  // the one they were pushed under, before the owner's thread takes another's (engine.hpp: a task from
  // elsewhere that a policy runs before the worker's own, as ADWS's mailbox). No thief reads these slots.
  void stamp_private(std::uint64_t state) {
    if constexpr (std::is_base_of_v<job, T>) stamp_range(split_seen_, bottom_.load(std::memory_order_relaxed), state);
  }

  // Any thread. Returns nullptr when nothing is shared or when it lost a race (the caller may retry
  // elsewhere). Finding nothing shared asks the owner to share.
  T* steal() {
    std::int64_t t = top_.load(kStealLoad);
    // Seq-cst fence pairs with the one in pop_shared(): top is read before split (paper, steal line 3).
    store_load_fence();
    std::int64_t s = split_.load(kStealLoad);
    if (t < s) {
      // The paper uses consume; acquire is what compilers implement for it.
      ring* a = array_.load(std::memory_order_acquire);
      T* x = a->get(t);
      if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
        return nullptr;
      return x;
    }
    ask_to_share();
    return nullptr;
  }

  // Any thread: asks the owner to share at its next push or pop. Read before writing: the owner reads the
  // line at every pop, keep it shared while the request is already set. The request, then the push limit
  // lowered to kAsked and the pop floor raised to kFloorClosed, so that the owner's next push or inline pop
  // leaves for the slow path; all seq-cst, against the owner's re-arming stores and load (rearm): if the
  // owner read no request, its stores came before ours and ours stay. Release (in seq-cst): an owner that
  // sees the request also sees what the asker did before (its sleep announcement).
  void ask_to_share() {
    if (request_.load(std::memory_order_relaxed)) return;
    request_.store(true, std::memory_order_seq_cst);
    push_limit_.store(kAsked, std::memory_order_seq_cst);
    pop_floor_.store(kFloorClosed, std::memory_order_seq_cst);
  }

  // Any thread: whether the owner's inline pops must leave for the slow path until further notice (the
  // worker's spawn path is not one whose pops use the inline window: `engine`, where hooks came or a final
  // region and the engine must join, or a policy's named queue; abi.hpp's sync_inline_pops, and the slow
  // path tests the path itself). Closing is seen by the next inline pop; opening, by the next rearm, which
  // the slow inline pop makes (rearm_pop_floor). Seq-cst, against rearm's store and load.
  void set_inline_pops_closed(bool closed) {
    inline_closed_.store(closed, std::memory_order_seq_cst);
    if (closed) pop_floor_.store(kFloorClosed, std::memory_order_seq_cst);
  }

  bool inline_pops_closed() const { return inline_closed_.load(std::memory_order_seq_cst); }

  // Owner only: whether the inline pop's window is shut now (pop_in_window would say nullptr for that).
  bool pop_window_shut() const { return pop_floor_.load(std::memory_order_relaxed) == kFloorClosed; }

  // Owner only: the inline pop's floor back to the private part's, unless a request waits, inline pops
  // are closed, the policy shuts its join's pops or a job waits to run first. For the slow inline pop
  // (abi.hpp), after the floor was closed and the reason went.
  void rearm_pop_floor() {
    if (!windows_fit()) return;  // shut while the array is not the windows' (make_room shut it)
    pop_floor_.store(split_seen_, std::memory_order_seq_cst);
    if (request_.load(std::memory_order_seq_cst) || pop_floor_must_close()) pop_floor_.store(kFloorClosed, std::memory_order_relaxed);
  }

  // A policy whose two-way join goes onto its deque by the inline windows only in some states (abi.hpp,
  // worker_abi::names_join_queue: adws, adws-ml, cab, cats) shuts them while it is in another: kJoinPushShut
  // keeps the push limit at kAsked, so the inline push leaves for its slow path, which pushes where the
  // policy says (another queue, or none: the engine joins); kJoinPopShut keeps the pop floor at kFloorClosed,
  // so the inline pops (the two-way join's and a task group's) leave for theirs. Both hold the deque's own
  // slow paths to the same: a push while the push is shut goes to push_slow, which leaves the limit low.
  static constexpr std::uint8_t kJoinPushShut = 1, kJoinPopShut = 2;
  // The owner's thread: shuts or opens; what opens takes effect at once (rearm). Unchanged: one compare.
  void shut_joins_here(std::uint8_t shut) {
    if (shut == join_shut_.load(std::memory_order_relaxed)) [[likely]] return;
    join_shut_.store(shut, std::memory_order_seq_cst);
    rearm();  // which closes what the bits shut
  }
  // Another thread, while the owner runs no task (cats names every worker's deque between iterations): what
  // it shuts is shut at once, against the owner's rearm (the bits, then the limit and floor, all seq-cst: the
  // asker's order, ask_to_share); what it opens, at the owner's next slow push or pop.
  void shut_joins_elsewhere(std::uint8_t shut) {
    join_shut_.store(shut, std::memory_order_seq_cst);
    if (shut & kJoinPushShut) push_limit_.store(kAsked, std::memory_order_seq_cst);
    if (shut & kJoinPopShut) pop_floor_.store(kFloorClosed, std::memory_order_seq_cst);
  }
  std::uint8_t joins_shut() const { return join_shut_.load(std::memory_order_relaxed); }
  // Any thread: the pops shut (kJoinPopShut added to the bits, the floor closed) until the owner's next
  // shut_joins_here with other bits opens them; no re-arm does (pop_floor_must_close). Against the owner's
  // rearm as shut_joins_elsewhere is (rearm stores the floor, then reads the bits), and an atomic or: the
  // owner's own bits, stored meanwhile, are kept. For a policy whose owner must take its slow path before
  // its next own pop (adws's and adws-ml's new iteration, whose slow path names the join queue again).
  void shut_pops_until_named() {
    join_shut_.fetch_or(kJoinPopShut, std::memory_order_seq_cst);
    pop_floor_.store(kFloorClosed, std::memory_order_seq_cst);
  }
  // The slot of a job that must run before the owner's own (worker_abi::run_first), or nullptr: while it is
  // full the pop floor stays closed (rearm). Set before any push.
  void watch_run_first(const std::atomic<T*>* slot) { run_first_ = slot; }
  // Any thread, after filling the run-first slot (a seq-cst write): the owner's next inline pop leaves for the
  // slow path, which lets the engine run that job first. Seq-cst, against rearm's store of the floor and
  // load of the slot: either the owner's load sees the job or this store comes after the owner's.
  void close_pop_floor() { pop_floor_.store(kFloorClosed, std::memory_order_seq_cst); }

  // Racy: is anything shared (stealable) now?
  bool shared_estimate() const {
    return split_.load(std::memory_order_relaxed) > top_.load(std::memory_order_relaxed);
  }

  // Called by share() after it published tasks (the engine wakes a sleeper there). Set before any push.
  // Told how many tasks the share made stealable, so that it can wake as many sleepers.
  using share_hook = void (*)(void*, std::int64_t shared);
  void on_share(share_hook fn, void* arg) {
    hook_ = fn;
    hook_arg_ = arg;
  }

  // A racy size estimate (shared and private tasks) for idle checks and victim selection.
  std::int64_t size_estimate() const {
    std::int64_t b = bottom_.load(std::memory_order_relaxed);
    std::int64_t t = top_.load(std::memory_order_relaxed);
    return b > t ? b - t : 0;
  }
  bool empty_estimate() const { return size_estimate() == 0; }

  // Owner only: whether the owner's array is the windows' (the first one, of kWindowCapacity slots, inside the
  // deque: the windows address it with an immediate mask and no load), without which they stay shut.
  bool windows_fit() const { return slots_ == window_slots_; }
  // Owner only: the slot of index i in the windows' array, where a push found its index below the push limit or
  // a pop its bottom above the pop floor: neither opens unless the windows fit (rearm, rearm_pop_floor), so the
  // array is slots_ then, reached with no load (issue #25: the C++ push and pop, the engine's spawns and joins,
  // loaded slots_ and mask_ on the way to the slot's address). The sanitizer builds check it.
  __attribute__((always_inline)) std::atomic<T*>& window_slot(std::int64_t i) {
#if defined(ROOST_TSAN) || defined(ROOST_ASAN)
    if (!windows_fit()) __builtin_trap();
#endif
    return window_slots_[i & kWindowMask];
  }
  // How many arrays the deque holds (the current one and those a thief may still read). For tests.
  std::size_t arrays_held() const {
    std::size_t n = 0;
    for (const ring* r = newest_.get(); r; r = r->older.get()) ++n;
    return n;
  }

  // Owner only: the index the next push will use; lets a task group pop only what it pushed itself.
  std::int64_t bottom_index() const { return bottom_.load(std::memory_order_relaxed); }

  // Where the owner's fields lie, for the inline push and pop that abi.hpp writes as one assembly sequence
  // each (a critical window a tick cannot land in). Read in a complete-class context: the deque is
  // standard-layout (one access level, no bases), so offsetof is defined.
  struct owner_layout {
    std::size_t bottom, pop_floor, push_limit, window_slots, split_seen;
  };
  static constexpr owner_layout layout() {
    static_assert(std::is_standard_layout_v<ws_deque>);
    static_assert(sizeof(std::atomic<std::int64_t>) == 8);
    return {offsetof(ws_deque, bottom_), offsetof(ws_deque, pop_floor_), offsetof(ws_deque, push_limit_),
            offsetof(ws_deque, window_slots_), offsetof(ws_deque, split_seen_)};
  }

 private:
  // Moves split_ up to share the older half (rounded up) of the private part [split_seen_, b).
  // A deque of jobs first gives the fresh frames it shares the owner's floating-point state, which a thief
  // that takes one starts it with (fp_control.hpp): read here, once a share, not at each push.
  __attribute__((noinline)) void share(std::int64_t b) {
    const std::int64_t before = split_seen_;
    std::int64_t s = split_seen_ + (b - split_seen_ + 1) / 2;
    if constexpr (std::is_base_of_v<job, T>) stamp_range(before, s, fp_control::capture());
    split_seen_ = s;
    request_.store(false, std::memory_order_relaxed);
    // Release: a thief that reads the new split must see the slots below it (the Chase–Lev push's release).
    split_.store(s, std::memory_order_release);
    if (hook_) hook_(hook_arg_, s - before);  // after the publication: the notifier's order of the Dekker pair
    rearm();  // served: the inline push and pop go the fast way again
  }

  // Owner only: the fresh frames in [from, to) that have no floating-point state get `state` (job.hpp).
  void stamp_range(std::int64_t from, std::int64_t to, std::uint64_t state) {
    for (std::int64_t i = from; i < to; ++i) slots_[i & mask_].load(std::memory_order_relaxed)->stamp_fp_state(state);
  }

  // The push limit back to the room's, unless a request waits. Seq-cst store, then seq-cst load
  // (ask_to_share's pair): an asker whose request this load misses stores kAsked after this store, so a
  // request never waits unseen by the inline push (which tests the limit) and pop (the floor, below).
  // The same for the inline pop's floor (pop_floor_): the private part's bottom, or kFloorClosed while a
  // request waits or inline pops are closed (set_inline_pops_closed, whose stores pair with these).
  // The same for a policy's shut joins (join_shut_, whose writers store the bits and then the low values) and
  // its run-first slot (close_pop_floor).
  // Neither opens while the array is not the windows' (windows_fit).
  void rearm() {
    if (!windows_fit()) return;  // both stay shut: only the owner, here, opens them
    push_limit_.store(room_limit_, std::memory_order_seq_cst);
    pop_floor_.store(split_seen_, std::memory_order_seq_cst);
    const bool asked = request_.load(std::memory_order_seq_cst);
    if (asked || (join_shut_.load(std::memory_order_seq_cst) & kJoinPushShut)) push_limit_.store(kAsked, std::memory_order_relaxed);
    if (asked || pop_floor_must_close()) pop_floor_.store(kFloorClosed, std::memory_order_relaxed);
  }
  // Whether the pop floor must stay closed for a reason other than a request (read seq-cst, after the
  // floor's store: the closers' pairs). Its callers, rearm and rearm_pop_floor, return first where the
  // windows do not fit.
  bool pop_floor_must_close() const {
    return inline_closed_.load(std::memory_order_seq_cst) ||
           (join_shut_.load(std::memory_order_seq_cst) & kJoinPopShut) ||
           (run_first_ && run_first_->load(std::memory_order_seq_cst) != nullptr);
  }

  // push_at's other path: a push with no room without growing (make_room), or with a request waiting (or one
  // served since, whose kAsked is still in the limit). Pushes, serves the request, re-arms the limit.
  __attribute__((noinline)) void push_slow(std::int64_t b, T* x) {
    if (b >= room_limit_) make_room(b);  // may throw std::bad_alloc: nothing pushed, the limit as it was
    slots_[b & mask_].store(x, kSlotStore);
    bottom_.store(b + 1, std::memory_order_relaxed);
    // Acquire: a request made by a worker going to sleep comes after its announcement (see share()).
    if (request_.load(std::memory_order_acquire)) share(b + 1);  // which re-arms
    // While the policy shuts its join's push the limit stays at kAsked (whoever set the bit lowered it after),
    // so every push comes here: no re-arming, whose seq-cst stores would change nothing. (While the array is
    // not the windows', rearm itself returns at once: windows_fit.)
    else if (!(join_shut_.load(std::memory_order_relaxed) & kJoinPushShut)) rearm();
  }

  // The private part is empty (b == split_seen_): Chase–Lev's pop, with split_ as its bottom.
  __attribute__((noinline)) T* pop_shared(std::int64_t b) {
    std::int64_t s = b - 1;
    split_.store(s, kFencedAccess);
    // Seq-cst fence: the store to split_ and the load of top must not be reordered, or the owner and a thief
    // could both take the last shared element (store-load ordering; the one fence x86 needs here).
    store_load_fence();
    std::int64_t t = top_.load(kFencedAccess);
    room_limit_ = t + mask_ + 1;  // push_limit_ keeps the lower, still safe, bound until push_slow re-arms it
    T* x = nullptr;
    if (t < s) {  // more shared elements remain below: this one is ours
      x = slots_[s & mask_].load(kSlotLoad);
      split_seen_ = s;
      bottom_.store(s, std::memory_order_relaxed);
      rearm_pop_floor();  // the private part starts lower now
      return x;
    }
    if (t == s) {
      // Last shared element: race thieves for it through top, as they do.
      x = slots_[s & mask_].load(kSlotLoad);
      if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
        x = nullptr;
      // Either way top is now b (= s + 1; a failed exchange loaded that into t, so t + 1 would be one
      // too many, and a full deque could then overwrite its oldest task).
      room_limit_ = b + mask_ + 1;
    }
    // Empty now (bottom_ == top_ == b): restore split_, and share the next push at once (Lace's rule).
    // A deque that grew goes back to the windows' array (windows_fit), whose slots no thief can take now:
    // a thief takes index i only by moving top_ from i, and top_ is b, past every index written so far;
    // one that reads the array later reads it after the split_ store that publishes its next slot.
    if (!windows_fit() && window_ring_) {
      array_.store(window_ring_, std::memory_order_release);
      use_ring(window_ring_, b);
    }
    split_.store(b, std::memory_order_relaxed);
    request_.store(true, std::memory_order_relaxed);
    push_limit_.store(kAsked, std::memory_order_relaxed);  // the next push goes to push_slow, which shares
    pop_floor_.store(kFloorClosed, std::memory_order_relaxed);  // as it is while a request waits
    return x;
  }

  // The owner's copy of the current array: its slots and mask in the owner's line, so that push and pop
  // read neither array_ (on the thieves' line) nor the ring object.
  void use_ring(ring* a, std::int64_t t) {
    slots_ = a->slots;
    mask_ = a->mask;
    room_limit_ = t + a->capacity();
  }

  __attribute__((noinline)) void make_room(std::int64_t b) {
    std::int64_t t = top_.load(std::memory_order_acquire);
    ring* a = array_.load(std::memory_order_relaxed);
    if (b - t <= a->mask) {  // top moved on since room_limit_ was set: room enough
      use_ring(a, t);
      return;
    }
    ring* bigger = newest_.get();
    // Full in the windows' array, after the deque went back to it (pop_shared): the larger array it grew to
    // before takes the live range again (at most the windows' capacity: it is larger), no new one. A thief
    // that read it before may read it again: it takes a slot only by moving top_ from that slot's index,
    // which it does only after reading a split_ above the index, so after the release below.
    if (bigger == a || bigger->mask < b - t) {
      // Either allocation may throw std::bad_alloc: the deque is then as it was, and nothing is lost.
      std::unique_ptr<ring> grown(new ring(a->capacity() * 2));
      grown->older = std::move(newest_);
      newest_ = std::move(grown);
      bigger = newest_.get();
    }
    for (std::int64_t i = t; i < b; ++i) bigger->put(i, a->get(i));
    // Release: a thief that loads the new array must see the copied slots.
    array_.store(bigger, std::memory_order_release);
    use_ring(bigger, t);
    // The windows shut while the array is not theirs (windows_fit): only rearm and rearm_pop_floor open
    // them, and neither does now.
    push_limit_.store(kAsked, std::memory_order_relaxed);
    pop_floor_.store(kFloorClosed, std::memory_order_relaxed);
  }

  static constexpr std::int64_t kAsked = INT64_MIN;  // below every index: push_limit_'s "go to push_slow"
  static constexpr std::int64_t kFloorClosed = INT64_MAX;  // above every index: pop_floor_'s "go to the slow pop"
  alignas(64) std::atomic<std::int64_t> top_{0};  // thieves' end: CAS by thieves and the last-element pop
  // Read by thieves at every steal; written by the owner when it shares or takes back, and by thieves
  // (request_) when they find nothing shared. A request is pending from the start: the first push is shared.
  alignas(64) std::atomic<std::int64_t> split_{0};
  std::atomic<bool> request_{true};
  std::atomic<ring*> array_{nullptr};
  std::atomic<bool> inline_closed_{false};  // set_inline_pops_closed: written by any thread, rarely
  const std::atomic<T*>* run_first_ = nullptr;  // watch_run_first
  // The owner's line.
  alignas(64) std::atomic<std::int64_t> bottom_{0};
  std::int64_t split_seen_ = 0;  // owner-only copy of split_ (the owner is its only writer)
  // A push at an index below push_limit_ has room and no request to serve: the push's one test (issue #25:
  // the request's own test cost every push a load of the thieves' line and a branch). It is room_limit_,
  // or kAsked while a request waits (set by ask_to_share, and by pop_shared's share-the-next-push rule),
  // until share() or a push with none waiting raises it again (rearm). The policy-queue pop window (abi.hpp)
  // tests its sign for a request. Written by the owner and by askers, read by the owner.
  std::atomic<std::int64_t> push_limit_{kAsked};  // a request is pending from the start (request_)
  // The inline pop (abi.hpp) takes the slot below bottom b only when b > pop_floor_: split_seen_ while no
  // request waits and inline pops are open, else kFloorClosed (issue #25: one compare for the split, request
  // and path tests, 4 instructions a join). Never below split_seen_ when an inline pop reads it, so an inline
  // pop never takes a shared slot: share() publishes split_ and then raises the floor (rearm), both on the
  // owner's thread, where the inline pop runs too, and in runtime code, where no tick switches tasks; only
  // the owner lowers it. Written by the owner and by askers and closers (to kFloorClosed only), read by the
  // owner.
  std::atomic<std::int64_t> pop_floor_{kFloorClosed};
  std::int64_t room_limit_ = 0;  // owner-only: a lower bound of top_ + capacity
  std::atomic<T*>* slots_ = nullptr;  // owner-only: the current array's (use_ring)
  std::int64_t mask_ = 0;
  // kJoinPushShut | kJoinPopShut: the policy's (shut_joins_*). In the owner's line: the owner reads it at
  // every change of its running task (shut_joins_here); others write it only between iterations.
  std::atomic<std::uint8_t> join_shut_{0};
  // Owner-only: the current array, which holds every array used before it (ring::older). A chain, not a
  // std::vector: the deque lies in worker_abi, whose layout user code compiles in, and libstdc++'s debug
  // mode (_GLIBCXX_DEBUG) gives std::vector another size and no standard layout (detail/build_mode.hpp).
  std::unique_ptr<ring> newest_;
  ring* window_ring_ = nullptr;  // the first array, where it has kWindowCapacity slots (owned by the chain)
  share_hook hook_ = nullptr;
  void* hook_arg_ = nullptr;
  // The first array's slots, where it has kWindowCapacity (the default): inside the deque, at a fixed offset
  // from it, so that the windows find a slot's address from the deque's own with no load (abi.hpp).
  alignas(64) std::atomic<T*> window_slots_[kWindowCapacity];
};

}  // namespace roost::detail

#include "roost/detail/min_max_back.hpp"
