// The compiler-free interface between user code (task_group, parallel_for) and the engine: a task frame
// that carries one closure, and a group's join state. Kept apart from the engine the way cheetah keeps
// its compiler ABI apart from the scheduler: user code only builds frames and calls spawn/wait.
#pragma once
#include "roost/detail/min_max_aside.hpp"  // C headers' min/max macros kept out, given back at the end
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <type_traits>
#include <utility>

#include "roost/detail/job.hpp"
#include "roost/detail/spawn_inline.hpp"

namespace roost::detail {

// Identity of a task across runs: its spawn path. The root is "0"; the k-th child spawned by task P is
// P.k (k counts from 0 over all of P's groups). Stored as a chain to the parent's id, which stays alive
// while the child runs (a parent waits for its children), so a spawn costs two stores, not a copy.
struct task_id {
  const task_id* parent;
  std::uint32_t index;       // position among the parent's children
  std::uint32_t depth;       // root is 0
  std::uint32_t next_child;  // owner-only counter
  // Tracing (ROOST_TRACE_DEPTH): the spawner's split depth + 1 + this task's index, so that the k-th child
  // counts as k + 1 levels of binary splitting, as it is in a recursion whose spawner keeps the rest (fib,
  // quicksort). Written by the engine while hooks are installed only (engine/observe.hpp); the root's is 0.
  std::uint32_t split_depth;
  // --- scheduling and tracing state: written by the engine's spawn (clear_sched) before any reader ---
  // Distribution range on the worker line (ADWS, seed 003 §4.2.2): the workers that should run this
  // task's continuation until its next join. Unused by other policies.
  double range_lo, range_hi;
  // The policy's node for this task: ADWS's distribution-tree node, cats's profile node.
  void* sched_node;
  // cats keeps its footprint profile (seed 000 §3.2) in nodes of its own (profile/soid_tree.hpp), named by
  // sched_node; the task keeps only its tier.
  std::uint8_t tier;  // cats: the task's tier; adws-ml: the memory level range_lo/hi count groups of
  // adws-ml: 1 where the spawn knew the range to lie in one group of the leaf level (a plain child there),
  // which stays so for the task's life; 0: not known. Spares the range's floor at every join (#25).
  std::uint8_t one_leaf_group;
  std::uint64_t serial;  // trace serial, set when the task begins while tracing (0: none)

  task_id() : parent(nullptr), index(0), depth(0), next_child(0), split_depth(0) { clear_sched(); }  // a root
  // A frame's id before the engine sees it: the naming part is a valid root, the rest is left unwritten
  // (the engine's spawn writes it): seven stores fewer per spawn.
  struct unwritten_t {};
  explicit task_id(unwritten_t) : parent(nullptr), index(0), depth(0), next_child(0), split_depth(0) {}
  // Nothing written: the id of a frame pushed by an inline spawn or join (job::unnamed: fresh_unnamed, or a
  // join's fresh_join), which the engine names before it runs one (name_unnamed, engine.hpp).
  struct blank_t {};
  explicit task_id(blank_t) {}
  // What the engine names such a frame: a child of a task it never saw, not a root (a root starts ADWS's
  // search over the whole worker line), with scheduling and tracing state cleared.
  struct child_of_unrecorded_t {};
  explicit task_id(child_of_unrecorded_t);
  void clear_sched() {
    range_lo = range_hi = 0;
    sched_node = nullptr;
    tier = 0;
    one_leaf_group = 0;
    serial = 0;
  }
};

// The parent of every task the engine named after an inline spawn or join left it unnamed: nobody
// recorded who spawned it (no hook was installed). Never written: no policy writes a parent's fields (cats
// credits footprints to its own profile nodes, profile/soid_tree.hpp). A root whose index no root has, so
// that its children's spawn paths ("4294967295.k") are told apart from the root's children's ("0.k").
inline constexpr std::uint32_t kUnrecordedParentIndex = 0xffffffffu;
inline task_id g_unrecorded_parent = [] {
  task_id t;
  t.index = kUnrecordedParentIndex;
  return t;
}();
inline task_id::task_id(child_of_unrecorded_t)
    : parent(&g_unrecorded_parent), index(0), depth(1), next_child(0), split_depth(1) {
  clear_sched();
}

struct task_frame;

// Per-closure-type operations, one static table per closure type.
struct frame_ops {
  // Moves the closure onto the caller's stack, calls secured(arg) once the frame may die, then runs it.
  // Work-first spawns use it: the parent's frame holding the closure may be stolen and unwound.
  void (*run_moved)(task_frame*, void (*secured)(void*), void* arg);
  // Runs the closure where it lies (a frame the engine copied to its pool), then destroys it.
  void (*run_in_place)(task_frame*);
  // Moves the closure of `src` into a new frame at `mem` (`size` bytes) and returns it. Only the closure
  // moves: the engine writes the new frame's header itself, from values it already holds in registers.
  task_frame* (*relocate)(task_frame* src, void* mem);
  // Destroys the closure without running it: a frame a failed spawn built where its spawner cannot reach
  // it (the group's inline slot, abi.hpp's push_first_child_slow).
  void (*destroy)(task_frame*);
  std::size_t size;
  // The frame's alignment: a closure may capture an over-aligned object (alignas(32), an __m256d), and a
  // frame the engine moves into its pool must keep it (frame_pool.hpp).
  std::size_t align;
};

struct group_state;
struct fiber_abi;
struct worker_abi;

struct task_frame : job {
  const frame_ops* ops;
  group_state* group;
  task_id id{task_id::unwritten_t{}};
  double work_hint;  // < 0: none given

  task_frame() = default;
 protected:
  struct unnamed_header {};
  explicit task_frame(unnamed_header) : id(task_id::blank_t{}) {}
};

// A frame for one closure type. The engine consumes a frame exactly once — it runs it in place, moves the
// closure out and runs it, or moves it into another frame — and each of those destroys the closure; the
// frame itself never does (hence the union). Whoever builds a frame and does not hand it to the engine calls
// discard(), as does a spawner whose spawn threw: the engine then either left the closure where it was or
// consumed it (ops null), never half.
template <class F>
struct closure_frame final : task_frame {
  union {
    F fn;
  };

  static void run_moved(task_frame* f, void (*secured)(void*), void* arg) {
    auto* self = static_cast<closure_frame*>(f);
    F local = take(self->fn);
    secured(arg);
    local();
  }
  // The closure moved out, and the frame's destroyed also when the move throws (the exception leaves as
  // the child's; the frame's copy leaked). Guaranteed elision: the result is built in the caller's variable.
  static F take(F& source) {
    struct destroy_at_exit {
      F& s;
      ~destroy_at_exit() { s.~F(); }
    } guard{source};
    return F(std::move(source));
  }
  static void run_in_place(task_frame* f) {
    auto* self = static_cast<closure_frame*>(f);
    struct destroy_at_exit {
      closure_frame* s;
      ~destroy_at_exit() { s->fn.~F(); }
    } guard{self};
    self->fn();
  }
  // ops is null when the engine consumed the closure before its spawn failed (engine.hpp, spawn_parent_first).
  void discard() {
    if (ops) fn.~F();
  }
  ~closure_frame() {}
  static task_frame* relocate(task_frame* src, void* mem) {
    auto* s = static_cast<closure_frame*>(src);
    auto* d = ::new (mem) closure_frame(std::move(s->fn), relocated_tag{});
    s->fn.~F();
    return d;
  }
  static void destroy(task_frame* f) { static_cast<closure_frame*>(f)->fn.~F(); }
  static constexpr frame_ops ops_table{&run_moved, &run_in_place, &relocate, &destroy, sizeof(closure_frame),
                                       alignof(closure_frame)};

  template <class G>
  closure_frame(G&& g, group_state* grp, double hint) : fn(std::forward<G>(g)) {
    set_ops();
    group = grp;
    work_hint = hint;
  }
  // For the inline spawn of a task_group (task_group.hpp), built in its group's inline slot: neither the id
  // nor the hint is written (kind fresh_unnamed), nor the group, which is the slot's (group_of).
  struct unnamed_t {};
  template <class G>
  closure_frame(G&& g, unnamed_t) : task_frame(unnamed_header{}), fn(std::forward<G>(g)) {
    set_ops();
    set_kind(kind::fresh_unnamed);
  }
  // The inline two-way join's pushed half: its group's balance and error slot are unwritten too
  // (job::kind::fresh_join, "The join's slot" below).
  struct join_unnamed_t {};
  template <class G>
  closure_frame(G&& g, join_unnamed_t) : task_frame(unnamed_header{}), fn(std::forward<G>(g)) {
    set_ops();
    set_kind(kind::fresh_join);
  }

 private:
  struct relocated_tag {};
  // Header fields other than k and ops are left for the engine to fill in.
  closure_frame(F&& f, relocated_tag) : fn(std::move(f)) { set_ops(); }
  void set_ops() {
    set_kind(kind::fresh);
    ops = &ops_table;
  }
};

// Join state of one task_group. The owner's counters are plain: only the task that owns the group touches
// them. Children that complete somewhere the owner cannot see (stolen, or run after the owner moved) meet the
// owner through `remote_balance` (see engine/join.hpp for the protocol).
struct group_state {
  // Set in `spawned` while the owner joins the group (engine::wait, try_join_first_child in abi.hpp): a child
  // that runs on the owner's fiber meanwhile (popped back and run inline) and calls the group's run() or
  // wait() is then told apart from the owner, and gets a usage_error instead of waiting for itself.
  static constexpr std::uint32_t kJoining = 1u << 31;
  std::uint32_t spawned;     // owner-only
  std::uint32_t local_done;  // owner-only: children whose completion the owner saw directly
  // Remote children done, less the children other tasks spawned into the group and still owe it
  // (engine/join.hpp); nonzero at the owner's wait only if such a foreign child was spawned.
  // In an anonymous union, as `error`: written by group_state(), and for the inline two-way join's group by
  // whoever claims its frame ("The join's slot" below). C++20's std::atomic default constructor writes a
  // zero, which a member initializer left out would still cost.
  union {
    std::atomic<std::int64_t> remote_balance;
  };
  // The first exception a child threw, owned by the group until the join rethrows it (one pointer, so that
  // a group costs no std::exception_ptr construction and destruction; see record_exception in abi.hpp).
  union {
    std::atomic<std::exception_ptr*> error;
  };

  // The fields up to `dist` are written at the first spawn after each join (task_group.hpp for the inline
  // path, engine::spawn otherwise), not here: a group that is constructed per call pays for no store
  // that its first spawn would overwrite.
  // The fiber the owner runs on (a group never changes owner, see abi.hpp): written when the group is made
  // (task_group's constructor; nullptr outside a task), compared at every spawn and wait.
  fiber_abi* owner_fiber;
  // The owner's id, written with owner_fiber: the parent its children are named under, whichever task on the
  // owner's fiber spawns them (engine/observe.hpp, name_child). The owner waits for them; the spawner may be
  // a child the owner's join ran there, which ends before them (its id dangled: an outside-user campaign).
  const task_id* owner_task;
  // Where the owner's own pushes start (help-first): valid while the owner's fiber has not been switched
  // away since (its epoch is still base_epoch; a fiber cannot change worker without switching away).
  static constexpr std::uint64_t kNoBase = ~std::uint64_t{0};  // no fiber epoch ever reaches it
  std::uint64_t base_epoch;  // kNoBase from the first spawn until the owner pushes
  // Meaningful to the engine only while base_epoch is valid. The inline pops read it as the index their
  // push took (abi.hpp, ROOST_CRITICAL_POP_PUSHED), which they test against the deque before they trust it.
  std::int64_t queue_base;

  // The first child after each join is built here, in the owner's frame, instead of on the stack: a
  // help-first spawn then pushes it as it is (no copy, no pool allocation). Free again after wait(), and,
  // where the policy's join hooks will do nothing (ws, hws, cab; cats, adws and adws-ml at times), once a
  // child ended locally (the count is back at zero: engine.hpp, spawn_child_first).
  static constexpr std::size_t kInlineFrameBytes = 192;  // a 96-byte header + a closure of 96 bytes (x86-64)
  alignas(16) unsigned char inline_frame[kInlineFrameBytes];

  double total_work;        // ADWS W_all; < 0: none given
  double data_bytes;        // multi-level ADWS group data size; < 0: none given
  void* waiter;             // the suspended owner's fiber, written before it is published (join.hpp)

  // Distribution state of the group (ADWS, seed 003 Algorithm 4.2): the owner's range and node when the
  // group opened (restored bit-exactly at wait) and the work not yet handed out. Owner-only. Nothing is
  // initialised: a policy opens the group at its first spawn after each join (spawned == 1), writes `mode`
  // then and the rest when it needs it, so the groups of every other scheduler do not pay for it.
  struct distribution {
    double saved_lo, saved_hi, remaining;
    void* saved_node;
    std::uint8_t mode;  // the policy's own values, written when it opens the group; never kNotOpened
    // Multi-level ADWS: the memory level of the saved range, the opener's own level before the open, and
    // the groups (first, last, level) whose heads the open pulled down to its level (aggregation).
    std::uint8_t saved_level, saved_worker_level, pulled_level;
    std::uint32_t pulled_first, pulled_last;
    std::uint32_t opener_worker;  // multi-level ADWS: the worker that opened it (in the struct's padding)
  } dist;
  // dist.mode of a group that no policy opened: the inline join's (fork_join2.hpp: for_engine_join), which
  // the policy's join must treat as plain (undealt) if the engine joins it.
  static constexpr std::uint8_t kNotOpened = 0;

  // A task_group's: no child, no hints.
  group_state() noexcept
      : spawned(0), local_done(0), remote_balance(0), error(nullptr), total_work(-1), data_bytes(-1) {}
  // The inline two-way join's (fork_join2.hpp, join_values.hpp): nothing. The counter a thief of its one
  // child meets the owner through and the error slot are written by whoever claims the child's frame (the
  // join's slot, below); the rest by for_engine_join() if the engine must join the child after all. A join
  // whose child comes back unstolen, nearly every one, stores nothing it would not read (11 instructions per
  // fib-invoke spawn).
  //
  // The join's slot. The frame in inline_frame is built as job::kind::fresh_join, and the two fields a
  // remote child's end and its exception write (remote_balance, error) start unwritten. Two parties may
  // want them written, and each must know they are before it goes on: a taker (a thief, or a worker's own
  // loop: engine.hpp, name_unnamed), before the child runs, whose end adds to the balance; the owner, when
  // its pop fails (settle_join_slot, abi.hpp), before its engine join reads them. Both claim the frame's
  // kind with one compare-exchange from fresh_join (job::claim_kind): the taker to join_taken, the owner to
  // join_settling. The winner writes the two fields and releases the kind (the taker as fresh, having
  // named the frame; the owner as fresh_unnamed, which a later taker, reading it with acquire, names as
  // any other); the loser waits while it reads the winner's claim, then finds the fields written. The
  // deque's owner may meanwhile stamp the frame's word with its floating-point state (a share, while the
  // join's owner runs on another worker): the stamp is an atomic or, and a claim whose compare-exchange
  // failed on the stamp's bits alone tries again. Neither claim holds a call, a charge
  // of the simulated platform or a preemption point between its compare-exchange and its release: a few
  // stores, so the loser's wait is short, and on the simulated platform, which switches threads only at a
  // charge, never seen at all. Written otherwise (each side writing first, or the owner alone), a remote
  // child's end could add to the balance before the other side's zero reached it, and its owner would
  // never be resumed.
  struct inline_join_t {};
  explicit group_state(inline_join_t) noexcept {}
  // One child spawned, none seen done, no base on the deque (the child is not on top of it any more: the
  // join's pop failed), no hints, opened by no policy (a policy's join treats it as plain). `owner`: the
  // joining task's fiber. Before the engine's join, which alone reads dist.mode (the owner's join hooks, and a
  // last child's end once the owner waits: engine.hpp, resume_waiter).
  // Always inline: called out of line (GCC inlines it only where it is called once in the translation unit),
  // the worker the join read before it stayed in a callee-saved register across the call, which every join
  // of the caller then saved and restored, unstolen ones included: a program with two parallel_invoke
  // recursions, or one and a roost::join, paid 2 instructions a spawn more than one with a single recursion
  // (callgrind, fib-invoke in roost-bench beside fib-join: 58.4 against 56.4 under ws-help).
  ROOST_DETAIL_SPAWN_INLINE void for_engine_join(fiber_abi* owner) noexcept {
    spawned = 1;
    local_done = 0;
    owner_fiber = owner;
    base_epoch = kNoBase;
    total_work = -1;
    data_bytes = -1;
    dist.mode = kNotOpened;
  }
};

// The group a frame belongs to. An unnamed frame (job::unnamed: fresh_unnamed, or a two-way join's) does not
// store it: it lies in its group's inline slot, where only the inline spawns and joins build one (issue #25:
// a store and, with the operations table beside it, a vector pair GCC built through the stack, 4
// instructions a spawn). The engine stores it when it names the frame (engine.hpp, name_unnamed).
inline group_state* group_of_unnamed(task_frame& f) {
  static_assert(std::is_standard_layout_v<group_state>);
  return reinterpret_cast<group_state*>(reinterpret_cast<unsigned char*>(&f) - offsetof(group_state, inline_frame));
}
inline group_state* group_of(task_frame& f) { return f.is_unnamed() ? group_of_unnamed(f) : f.group; }

// A group whose children since its last join were all spawned by other tasks (engine/join.hpp: its own count
// is 0) comes to the engine's join as one no policy opened, with no base on a deque: what the engine's
// spawn writes at a group's first spawn (the inline join's kNotOpened, task_frame.hpp).
inline void open_for_foreign_join(group_state& g) noexcept {
  g.base_epoch = group_state::kNoBase;
  g.dist.mode = group_state::kNotOpened;
}

[[noreturn]] void throw_bad_hint(const char* what, double value);

}  // namespace roost::detail

#include "roost/detail/min_max_back.hpp"
