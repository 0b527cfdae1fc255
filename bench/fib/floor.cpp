// The floors of spawn overhead on this machine: fib(n) on one thread with spawns that do only the least a
// work-stealing library must do, and nothing else (no thread safety beyond the split deque's request flag,
// no task group, no exceptions, no identities, no hooks, no second worker). They are not runtimes; they
// tell what part of a roost variant's time on fib is roost's and what part no library can avoid here.
//
//  * floor-help: a help-first spawn. The child's frame lies in the parent's stack frame; a pointer to it
//    goes onto an array deque whose bottom index lives in memory (a library cannot keep it in a register
//    across user code, as Lace's macros do); the join pops it, compares it with its own frame and calls it
//    through its function pointer.
//  * floor-switch: a work-first spawn. The parent pushes its continuation (a pointer), switches with
//    Boost.Context (the primitive src/ult/ wraps) to a pooled, cache-hot stack that runs the child, and
//    the child pops the continuation and switches back: two switches per spawn.
#include <boost/context/detail/fcontext.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "fib/fib.hpp"

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
};
// Global, as a library's per-worker deque is reached through memory: its bottom is reloaded after every
// call into user code.
floor_deque g_deque;

// ---- help-first
struct hf_frame {
  void (*run)(hf_frame*);
  int n;
  long result;
};
long hf_fib(int n);
void hf_run(hf_frame* f) { f->result = hf_fib(f->n); }
__attribute__((noinline)) long hf_fib(int n) {
  if (n < 2) return n;
  hf_frame child{&hf_run, n - 1, 0};
  g_deque.push(&child);
  long b = hf_fib(n - 2);
  auto* f = static_cast<hf_frame*>(g_deque.pop());
  if (f != &child) std::abort();  // stolen: cannot happen on one thread
  f->run(f);
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

}  // namespace

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
