// What a worker can take from a queue: a fresh task (task_frame.hpp) or a suspended task (a fiber) to resume.
// Its one word holds the kind and, for a fresh frame that other workers may run, the floating-point state
// it starts with (fp_control.hpp).
#pragma once
#include "roost/detail/min_max_aside.hpp"  // C headers' min/max macros kept out, given back at the end
#include <cstdint>

#include "roost/detail/fp_control.hpp"

namespace roost::detail {

struct job {
  // fresh_unnamed: a fresh task whose id, work hint and group were not written (the inline help-first
  // spawn of abi.hpp and the inline two-way join of fork_join2.hpp, whose pushed frame nobody names while no
  // hook is installed); whoever runs one other than that spawn's join names it first.
  // fresh_foreign: a fresh task spawned into a group by another task than the group's owner (engine.hpp,
  // spawn_foreign): counted on the group's balance, never in its owner's counters (engine/join.hpp).
  enum class kind : std::uint8_t { fresh, resume, fresh_unnamed, fresh_foreign };

  kind k() const noexcept { return static_cast<kind>(word_ & 0xff); }
  bool is_fresh() const noexcept { return k() != kind::resume; }
  // A new frame's (or fiber's) kind, with no floating-point state: one store of the whole word. A frame is
  // built with word-sized stores and copied with word-sized loads, so the store buffer can forward them (a
  // byte-sized store of the kind stalled every help-first spawn).
  void set_kind(kind x) noexcept { word_ = static_cast<std::uint64_t>(x); }
  // Another kind for a frame the engine names before it runs it, its floating-point state kept.
  void rename_kind(kind x) noexcept { word_ = (word_ & ~std::uint64_t{0xff}) | static_cast<std::uint64_t>(x); }

  // The floating-point state a fresh frame starts with where a worker other than its spawner's thread may
  // run it (fp_control.hpp): written before it becomes visible to other workers, by the thread that makes
  // it so, which is its spawner's; kept where it has one already (a frame shared again after a queue gave it
  // back, or pushed on by a policy, was stamped closer to its spawn). A fiber carries its state in its
  // context and is never stamped.
  void stamp_fp_state() noexcept {
    if (takes_fp_state()) word_ |= fp_control::capture();
  }
  void stamp_fp_state(std::uint64_t state) noexcept {
    if (takes_fp_state()) word_ |= state;
  }
  // Its stamp (fp_control::capture's form), or 0 where it has none.
  std::uint64_t fp_state() const noexcept { return word_ & fp_control::kStateBits; }

 private:
  bool takes_fp_state() const noexcept { return is_fresh() && !(word_ & fp_control::kStamped); }
  // Zero (fresh, no state) until a kind is set: a frame built by default and pushed as it is (the tests')
  // is still one a share may read. Every constructor that sets a kind overwrites it in the same place.
  std::uint64_t word_ = 0;
};

}  // namespace roost::detail

#include "roost/detail/min_max_back.hpp"
