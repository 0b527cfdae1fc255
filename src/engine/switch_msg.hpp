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
};

struct switch_msg {
  worker* w = nullptr;    // the worker (OS thread) the switch happens on: the same on both sides
  fiber* from = nullptr;  // nullptr: the worker's thread context
  after action = after::nothing;
  bool child_done_locally = false;  // to a parent resumed by its own child (join.hpp)
  std::uint32_t remote = 0;
  detail::task_frame* frame = nullptr;
  detail::group_state* group = nullptr;
  worker* target = nullptr;
};

// Switches from the current context of `m.w` to `to`; on return, the message that brought us back.
__attribute__((always_inline)) inline const switch_msg& switch_with(ult::context& to, switch_msg& m, ult::transfer& t) {
  t = ult::switch_to(to, &m, m.w->eh, [](ult::transfer tr) { return static_cast<switch_msg*>(tr.data)->w->eh; });
  return *static_cast<switch_msg*>(t.data);
}

}  // namespace roost::engine
