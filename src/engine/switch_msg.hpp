// The message carried by every fiber switch. The side that resumes reads it first and finishes the
// switch on behalf of the side that left: it stores the left context, then does what `action` says.
// Doing this after the switch (not before) is what makes it safe to publish the left fiber: nobody can
// resume it before its context is saved.
#pragma once
#include <cstdint>

#include "engine/fiber.hpp"
#include "engine/worker.hpp"
#include "roost/detail/task_frame.hpp"

namespace roost::engine {

enum class after : std::uint8_t {
  nothing,    // the left context needs no care (a worker's thread context at start-up)
  park,       // the left fiber is idle: return it to this worker's pool
  publish,    // work-first spawn: the left fiber is the parent's continuation, push it; run `frame`
  wait_join,  // the left fiber waits for `remote` children of `group`: register it as the waiter
  hand_over,  // the left fiber is a task moving to worker `target`: the policy delivers it there
  run_root,   // the left context is a caller's own stack (engine_base::run_root): run `frame` first
  preempted,  // the left fiber is a task a timer tick suspended: queue it on this worker (preemption.cpp)
  klt_resume,  // to a thread's own stack (KLT-switching): park the left fiber, wake `resume`'s thread
};

// Every receiver reads w, from and action. The other fields are read only for the action (or the kind of
// switch) that names them, and the sender sets them then: a message is built on every spawn and resume,
// and zeroing fields nobody reads cost a store each. The receiver reads the fields it needs before it lets
// `from` be resumed (publish, register, hand over), since the message lives on from's stack.
struct switch_msg {
  worker* w = nullptr;    // the worker (OS thread) the switch happens on: the same on both sides
  fiber* from = nullptr;  // nullptr: the worker's thread context
  after action = after::nothing;
  bool child_done_locally;  // every switch to a suspended task (resume_fiber): resumed by its own child
  std::uint32_t remote;             // wait_join
  detail::task_frame* frame;        // publish, run_root
  detail::group_state* group;       // wait_join
  worker* target;                   // hand_over
  fiber* resume;                    // klt_resume: a task asleep with its kernel thread (engine/klt.hpp)
};

// Switches from the current context of `m.w` to `to`; on return, the message that brought us back.
__attribute__((always_inline)) inline const switch_msg& switch_with(ult::context& to, switch_msg& m, ult::transfer& t) {
  t = ult::switch_to(to, &m, m.w->eh, [](ult::transfer tr) { return static_cast<switch_msg*>(tr.data)->w->eh; });
  return *static_cast<switch_msg*>(t.data);
}

}  // namespace roost::engine
