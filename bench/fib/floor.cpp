// The floors of spawn overhead on this machine: fib(n) on one thread with spawns that do only the least a
// work-stealing library must do, and nothing else (no thread safety beyond the split deque's request flag,
// no task group, no exceptions, no identities, no hooks, no second worker). They are not runtimes; they
// tell what part of a roost variant's time on fib is roost's and what part no library can avoid here.
//
//  * floor-help: a help-first spawn. The child's frame lies in the parent's stack frame; a pointer to it
//    goes onto an array deque whose bottom index lives in memory (a library cannot keep it in a register
//    across user code, as Lace's macros do); the join pops it, compares it with its own frame and calls it
//    through its function pointer. The pop commits the index its push took, kept in the frame, after testing
//    that the bottom is one above it, as roost's inline pops do (issue #25, src/engine/README.md, "The pop's
//    chain through the bottom"): the commit does not wait for the bottom's load.
//  * floor-switch: a work-first spawn. The parent pushes its continuation (a pointer), switches with
//    Boost.Context (the primitive src/ult/ wraps) to a pooled, cache-hot stack that runs the child, and
//    the child pops the continuation and switches back: two switches per spawn, each of which returns on
//    the other stack, so the CPU mispredicts those returns.
//  * floor-help of fib-invoke: the two-way join, in the shape of fib-invoke's user code (two closures, the
//    same template as the roost variant), with Lace's task slots: the pushed closure's address and the
//    function that runs it are written into the deque's slot itself, no frame; the deque's head is a pointer
//    in memory, found through a thread-local pointer as roost finds its fiber, and re-read after the other
//    closure ran; one test per push (room), two compares at the pop (the head is one above the slot the push
//    took, which it commits; the slot holds the closure), a direct call of the closure. What a join of
//    roost's API could cost with a deque of such slots (issue #25).
//  * floor-linked: the same two spawns (fib's help-first task-group shape, fib-invoke's two-way join) with
//    the deque's private part a list linked through the frames in the stacks, Lace's split with no index
//    (issue #25): a push stores the frame's link to the newest frame and then the frame's address as the
//    newest, a pop compares the newest with its own frame and stores the link back. No store depends on a
//    load of the deque, so the pushes and pops of a recursion do not form one chain of store-to-load
//    forwarding through a counter, which any index (a bottom, a head, a count) makes, and which on an
//    Intel Xeon (Sapphire Rapids) binds the time of the other floors (src/engine/README.md, "The chain
//    through the deque's index"). A thief's request is looked at once a push, as in the others.
//  * floor-erased (fib-invoke): floor-linked's join, but the pushed closure is called through the function
//    pointer its frame holds for a thief, as a join that does not know the child's type must (a task_group's
//    wait): the child's body then runs in a function of its own, not inlined into the join (issue #25).
//  * floor-value (fib-invoke): a two-way join that returns both closures' results (Rayon's `join`) and
//    copies the pushed closure into the deque's slot, Lace's task slots, the head in memory reached through
//    thread-local storage as in floor-help. fib is then written `auto [a, b] = join([n] { return fib(n - 1); },
//    [n] { return fib(n - 2); }); return a + b;`: no local's address escapes (the closures are copies, the
//    slot is the deque's), so the pushed half's call, made last, returns straight into `a + b`, and GCC turns
//    that recursion into a loop with an accumulator, as it does Lace's fib, whose SYNC calls the task function
//    directly in the same place (src/engine/README.md, "The loop GCC makes of Lace's fib"). A join whose closures
//    write through references to the caller's locals (parallel_invoke's shape, every other floor here) keeps
//    those locals in memory, which the recursive call may write: no such loop (issue #25).
//  * floor-bare (fib-invoke): parallel_invoke's shape (closures that write through references to the
//    caller's locals) with a join that does nothing a runtime must: the pushed closure copied into a slot
//    of a global array whose head is a plain global (no thread-local storage, no room or request test), one
//    compare at the pop, and a direct call of the closure's copy. The caller's locals escape into the
//    closures, so GCC makes no loop of the recursion; but the function holds no exception handling, so GCC
//    splits it (ipa-split): each caller tests the leaf case `n < 2` itself and calls only for the rest.
//    That alone brings it near Lace's time, which Lace's fib gets from its loop or from the same split
//    (issue #25, src/engine/README.md, "The leaf test in the caller").
//  * floor-call: a work-first spawn as roost's engine makes it (src/ult/call_on_stack.hpp): the parent's
//    registers, stack pointer and resume address are saved where a thief would resume them, the child is
//    called on a pooled stack, pushes the continuation, runs, pops it and returns. Calls and returns pair
//    up. The saved context holds MXCSR and the x87 control word, as the engine's must (a stolen continuation
//    keeps its task's rounding mode): reading MXCSR is about a fifth of this floor's time here
//    (src/engine/README.md, "What the continuation's MXCSR costs"). Where the engine has no such call
//    (not x86-64, a sanitizer build), it is floor-switch.
#include <boost/context/detail/fcontext.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "fib/fib.hpp"
#include "ult/call_on_stack.hpp"

namespace bench::fib {
namespace {

// The private end of a split deque (roost's ws_deque.hpp): plain stores, and at each push the look at the
// thieves' request flag, which is an atomic in any real deque.
struct floor_deque {
  static constexpr std::int64_t kMask = 255;  // fib(60) needs 60 slots
  void* slot[kMask + 1];
  std::int64_t bottom = 0;
  std::atomic<bool> request{false};
  void push(void* p) {
    slot[bottom & kMask] = p;
    ++bottom;
    if (request.load(std::memory_order_acquire)) [[unlikely]] std::abort();  // no thieves here
  }
  void* pop() { return slot[--bottom & kMask]; }
  // The pop of the slot a push took (index i): the bottom is tested against it and i committed, so that the
  // store does not wait for the bottom's load, forwarded from the last push's or pop's store (roost's inline
  // pops, abi.hpp ROOST_CRITICAL_POP_PUSHED).
  void* pop_pushed(std::int64_t i) {
    if (bottom != i + 1) [[unlikely]] std::abort();  // not the top: a real deque takes its slow path
    bottom = i;
    return slot[i & kMask];
  }
};
// Global, as a library's per-worker deque is reached through memory: its bottom is reloaded after every
// call into user code.
floor_deque g_deque;

// ---- help-first
struct hf_frame {
  void (*run)(hf_frame*);
  int n;
  long result;
  std::int64_t at;  // the slot its push took, kept in the frame as roost's group keeps it (queue_base)
};
long hf_fib(int n);
void hf_run(hf_frame* f) { f->result = hf_fib(f->n); }
__attribute__((noinline)) long hf_fib(int n) {
  if (n < 2) return n;
  hf_frame child{&hf_run, n - 1, 0, g_deque.bottom};
  g_deque.push(&child);
  long b = hf_fib(n - 2);
  auto* f = static_cast<hf_frame*>(g_deque.pop_pushed(child.at));
  if (f != &child) std::abort();  // stolen: cannot happen on one thread
  f->run(f);
  return child.result + b;
}

// ---- the two-way join with task slots in the deque
struct join_slot {
  void (*run)(void*);
  void* closure;
};
struct slot_deque {
  static constexpr std::size_t kSlots = 256;  // fib(60) needs 60
  join_slot* head;
  join_slot* limit;
  join_slot slot[kSlots];
};
// What roost's t_running_fiber is to a task: the thread's way to its deque (one %fs-relative load).
struct slot_fiber {
  slot_deque* deque;
};
slot_deque g_slot_deque;
slot_fiber g_slot_fiber{&g_slot_deque};
__thread slot_fiber* t_slot_fiber __attribute__((tls_model("initial-exec")));
[[noreturn]] __attribute__((noinline, cold)) void slot_floor_broken() { std::abort(); }  // full, or stolen
template <class F>
void run_closure(void* c) {
  (*static_cast<F*>(c))();
}
template <class F, class G>
__attribute__((always_inline)) inline void slot_join(F& f, G& g) {
  slot_fiber* fb = t_slot_fiber;
  if (!fb) slot_floor_broken();  // outside a task: roost throws here
  slot_deque* d = fb->deque;
  join_slot* h = d->head;
  if (h >= d->limit) [[unlikely]] slot_floor_broken();
  h->run = &run_closure<std::remove_reference_t<F>>;
  h->closure = &f;
  d->head = h + 1;
  g();
  // The task may run on another worker now: its deque is read again, through the fiber.
  asm volatile("" ::: "memory");
  d = fb->deque;
  // The slot the push took, tested against the head and committed: no wait for the head's load (floor_deque's
  // pop_pushed).
  if (d->head != h + 1 || h->closure != &f) [[unlikely]] slot_floor_broken();  // stolen: cannot happen here
  d->head = h;
  f();  // direct: the slot's function is for a thief
}
// As fib-invoke's roost variant calls roost::parallel_invoke (bench/fib/roost.cpp): the join and this call
// operator always inline.
struct slot_invoke_fn {
  template <class F, class G>
  __attribute__((always_inline)) void operator()(F&& f, G&& g) const { slot_join(f, g); }
};

// ---- floor-bare: the two-way join of parallel_invoke's shape, nothing but a push and a pop
struct bare_slot {
  void (*run)(bare_slot*);  // what a thief would call; the pop compares it
  alignas(16) unsigned char closure[48];
};
bare_slot g_bare_slots[256];  // fib(60) needs 60
bare_slot* g_bare_head = g_bare_slots;
[[noreturn]] __attribute__((noinline, cold)) void bare_floor_broken() { std::abort(); }  // cannot happen
template <class F>
void run_bare_closure(bare_slot* s) {
  (*std::launder(reinterpret_cast<F*>(s->closure)))();
}
// Pushes f (help-first, as floor-help and roost's ws-help join do) and runs g, then pops f and calls it in its
// slot, which stays taken until the call returns: the call's own pushes go above it, not over the closure
// that runs. (Popped first, the slot was reused under the running closure; GCC happened to read the
// captures before the call. A copy taken out of the slot instead made the time 2.2x: GCC copied the
// closure's padding with its `int`, an 8-byte load over a 4-byte store that the store buffer cannot forward.)
struct bare_invoke_fn {
  template <class F, class G>
  __attribute__((always_inline)) void operator()(F&& f, G&& g) const {
    using pushed = std::remove_cvref_t<F>;
    static_assert(std::is_trivially_copyable_v<pushed> && sizeof(pushed) <= sizeof(bare_slot::closure));
    bare_slot* h = g_bare_head;
    h->run = &run_bare_closure<pushed>;
    ::new (static_cast<void*>(h->closure)) pushed(f);
    g_bare_head = h + 1;
    g();
    h = g_bare_head - 1;
    if (h->run != &run_bare_closure<pushed>) [[unlikely]] bare_floor_broken();
    (*std::launder(reinterpret_cast<pushed*>(h->closure)))();
    g_bare_head = h;
  }
};

// ---- the two-way join that returns both results, the pushed closure in the deque's slot
struct value_slot {
  void (*run)(value_slot*);  // what a thief would call; the owner's pop compares it
  alignas(16) unsigned char closure[48];
};
struct value_deque {
  value_slot* head;
  value_slot* limit;
  std::atomic<bool> request{false};  // a thief's request to share
  value_slot slot[256];              // fib(60) needs 60
};
struct value_fiber {
  value_deque* deque;
};
value_deque g_value_deque;
value_fiber g_value_fiber{&g_value_deque};
__thread value_fiber* t_value_fiber __attribute__((tls_model("initial-exec")));
[[noreturn]] __attribute__((noinline, cold)) void value_floor_broken() { std::abort(); }  // full, a request, stolen
template <class F>
void run_slot_closure(value_slot* s) {
  (*std::launder(reinterpret_cast<F*>(s->closure)))();
}
template <class F, class G>
__attribute__((always_inline)) inline auto value_join(F f, G g) {
  static_assert(std::is_trivially_copyable_v<F> && sizeof(F) <= sizeof(value_slot::closure));
  value_fiber* fb = t_value_fiber;
  if (!fb) value_floor_broken();  // outside a task: roost throws here
  value_deque* d = fb->deque;
  value_slot* h = d->head;
  if (h >= d->limit) [[unlikely]] value_floor_broken();
  h->run = &run_slot_closure<F>;
  ::new (static_cast<void*>(h->closure)) F(f);  // the thief's copy
  d->head = h + 1;
  if (d->request.load(std::memory_order_relaxed)) [[unlikely]] value_floor_broken();
  auto second = g();
  asm volatile("" ::: "memory");  // the task may run on another worker now: its deque is read again
  d = fb->deque;
  // The slot the push took, kept, tested against the head and committed, as roost's pops do ("The pop's
  // chain through the bottom"): the commit does not wait for the head's load, which the callee's pop stored.
  if (d->head != h + 1 || h->run != &run_slot_closure<F>) [[unlikely]] value_floor_broken();  // stolen
  d->head = h;
  auto first = f();  // the caller's own copy, called directly
  return std::pair{first, second};
}
long value_fib(int n) {
  if (n < 2) return n;
  auto [a, b] = value_join([n] { return value_fib(n - 1); }, [n] { return value_fib(n - 2); });
  return a + b;
}

// ---- the private part linked through the frames
struct linked_frame {
  linked_frame* below;  // the next older private frame, nullptr at the split
  void (*run)(void*);   // for a thief, which the share would hand the frame to
  void* closure;
};
struct linked_deque {
  linked_frame* newest = nullptr;
  std::atomic<bool> request{false};  // a thief's request to share: a real deque shares the oldest here
};
struct linked_fiber {
  linked_deque* deque;
};
linked_deque g_linked_deque;
linked_fiber g_linked_fiber{&g_linked_deque};
__thread linked_fiber* t_linked_fiber __attribute__((tls_model("initial-exec")));
[[noreturn]] __attribute__((noinline, cold)) void linked_floor_broken() { std::abort(); }  // a request, or stolen
// kErased: the pushed closure is called through the function its frame holds for a thief, as a join that does
// not know the child's type must (a task_group's wait: the frame's operations table): floor-erased.
template <bool kErased, class F, class G>
__attribute__((always_inline)) inline void linked_join(F& f, G& g) {
  linked_fiber* fb = t_linked_fiber;
  if (!fb) linked_floor_broken();  // outside a task: roost throws here
  linked_deque* d = fb->deque;
  linked_frame me{d->newest, &run_closure<std::remove_reference_t<F>>, &f};
  d->newest = &me;  // the stored value is the frame's address: nothing loaded
  if (d->request.load(std::memory_order_relaxed)) [[unlikely]] linked_floor_broken();
  g();
  asm volatile("" ::: "memory");  // the task may run on another worker now: its deque is read again
  d = fb->deque;
  if (d->newest != &me) [[unlikely]] linked_floor_broken();  // shared or stolen: cannot happen on one thread
  d->newest = me.below;
  if constexpr (kErased) me.run(me.closure);
  else f();
}
template <bool kErased>
struct linked_invoke_fn {
  template <class F, class G>
  __attribute__((always_inline)) void operator()(F&& f, G&& g) const { linked_join<kErased>(f, g); }
};
// fib's task-group shape: the child's frame (its closure's arguments and result) pushed, the other call
// made, the frame popped, compared and called.
struct lf_frame : linked_frame {
  int n;
  long result;
};
long lf_fib(int n);
void lf_run(void* f) {
  auto* c = static_cast<lf_frame*>(f);
  c->result = lf_fib(c->n);
}
__attribute__((noinline)) long lf_fib(int n) {
  if (n < 2) return n;
  linked_deque* d = t_linked_fiber->deque;
  lf_frame child;
  child.below = d->newest;
  child.run = &lf_run;
  child.closure = &child;
  child.n = n - 1;
  child.result = 0;
  d->newest = &child;
  if (d->request.load(std::memory_order_relaxed)) [[unlikely]] linked_floor_broken();
  long b = lf_fib(n - 2);
  asm volatile("" ::: "memory");
  d = t_linked_fiber->deque;
  if (d->newest != &child) [[unlikely]] linked_floor_broken();
  d->newest = child.below;
  child.run(child.closure);
  return child.result + b;
}

// ---- work-first
namespace bctx = boost::context::detail;
struct wf_job {
  int n;
  int level;
  long result;
};
void wf_fiber(bctx::transfer_t t);
// Pooled stacks, made by the first run (normally the warm-up) and kept for the process, so that the timed
// runs neither allocate nor fault them in: level L's fiber runs the children spawned on stack level L, and
// waits in its loop between runs.
struct wf_stacks {
  static constexpr std::size_t kBytes = 64 * 1024;
  std::vector<std::unique_ptr<char[]>> memory;
  std::vector<bctx::fcontext_t> ctx;
  void reserve_levels(std::size_t levels) {
    while (ctx.size() < levels) {
      memory.emplace_back(new char[kBytes]);
      ctx.push_back(bctx::make_fcontext(memory.back().get() + kBytes, kBytes, &wf_fiber));
    }
  }
};
wf_stacks g_stacks;
long wf_fib(int n, int level);
void wf_fiber(bctx::transfer_t t) {
  for (;;) {
    auto* j = static_cast<wf_job*>(t.data);
    j->result = wf_fib(j->n, j->level);
    if (g_deque.pop() != j) std::abort();  // the parent's continuation, still ours: the local completion
    t = bctx::jump_fcontext(t.fctx, nullptr);
  }
}
__attribute__((noinline)) long wf_fib(int n, int level) {
  if (n < 2) return n;
  wf_job child{n - 1, level + 1, 0};
  g_deque.push(&child);  // stands for the parent's continuation
  bctx::transfer_t back = bctx::jump_fcontext(g_stacks.ctx[level], &child);
  g_stacks.ctx[level] = back.fctx;
  long b = wf_fib(n - 2, level);
  return child.result + b;
}

// ---- work-first, called on another stack
#ifdef ROOST_CALL_ON_STACK
struct call_job {
  int n;
  int level;
  long result;
};
std::vector<std::unique_ptr<char[]>> g_call_stacks;  // the children of a call at level L run on stack L
long call_fib(int n, int level);
void call_child(void* p) noexcept {
  auto* j = static_cast<call_job*>(p);
  g_deque.push(j);  // stands for the parent's continuation, published once its context is saved
  j->result = call_fib(j->n, j->level);
  if (g_deque.pop() != j) std::abort();  // still ours: the local completion
}
__attribute__((noinline)) long call_fib(int n, int level) {
  if (n < 2) return n;
  call_job child{n - 1, level + 1, 0};
  bctx::fcontext_t published;  // where a thief would find the parent (none comes here)
  char* top = g_call_stacks[static_cast<std::size_t>(level)].get() + wf_stacks::kBytes;
  if (roost::ult::call_on_stack(&child, &call_child, top, &published).fctx) std::abort();
  long b = call_fib(n - 2, level);
  return child.result + b;
}
#endif

}  // namespace

void floor_call(problem& pb) {
#ifdef ROOST_CALL_ON_STACK
  auto& p = static_cast<problem_t&>(pb);
  while (g_call_stacks.size() < static_cast<std::size_t>(p.n) + 1) g_call_stacks.emplace_back(new char[wf_stacks::kBytes]);
  p.result = call_fib(p.n, 0);
#else
  floor_work_first(pb);
#endif
}

void floor_invoke(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  g_slot_deque.head = g_slot_deque.slot;
  g_slot_deque.limit = g_slot_deque.slot + slot_deque::kSlots;
  t_slot_fiber = &g_slot_fiber;
  p.result = fib_invoke<slot_invoke_fn>(p.n);
  t_slot_fiber = nullptr;
}

void floor_value_invoke(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  g_value_deque.head = g_value_deque.slot;
  g_value_deque.limit = g_value_deque.slot + 256;
  t_value_fiber = &g_value_fiber;
  p.result = value_fib(p.n);
  t_value_fiber = nullptr;
}

void floor_bare_invoke(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  g_bare_head = g_bare_slots;
  p.result = fib_invoke<bare_invoke_fn>(p.n);
}

// The three shapes on the linked deque: fib's task-group shape, fib-invoke's two-way join, and that join
// calling its child through the frame (floor-erased).
enum class linked_shape { task_group, invoke, erased };
void floor_linked_of(problem& pb, linked_shape shape) {
  auto& p = static_cast<problem_t&>(pb);
  g_linked_deque.newest = nullptr;
  t_linked_fiber = &g_linked_fiber;
  p.result = shape == linked_shape::task_group ? lf_fib(p.n)
             : shape == linked_shape::invoke   ? fib_invoke<linked_invoke_fn<false>>(p.n)
                                               : fib_invoke<linked_invoke_fn<true>>(p.n);
  t_linked_fiber = nullptr;
}
void floor_linked(problem& pb) { floor_linked_of(pb, linked_shape::task_group); }
void floor_linked_invoke(problem& pb) { floor_linked_of(pb, linked_shape::invoke); }
void floor_erased_invoke(problem& pb) { floor_linked_of(pb, linked_shape::erased); }

void floor_help_first(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  p.result = hf_fib(p.n);
}

void floor_work_first(problem& pb) {
  auto& p = static_cast<problem_t&>(pb);
  g_stacks.reserve_levels(static_cast<std::size_t>(p.n) + 1);
  p.result = wf_fib(p.n, 0);
}

}  // namespace bench::fib
