// What a worker can take from a queue: a fresh task (task_frame.hpp) or a suspended task (a fiber) to resume.
// Its one word holds the kind and, for a fresh frame that other workers may run, the floating-point state
// it starts with (fp_control.hpp).
#pragma once
#include "roost/detail/min_max_aside.hpp"  // C headers' min/max macros kept out, given back at the end
#include <atomic>
#include <cstdint>

#include "roost/detail/fp_control.hpp"

namespace roost::detail {

struct job {
  // fresh_unnamed: a fresh task whose id, work hint and group were not written (the inline help-first
  // spawn of abi.hpp, and the inline two-way join's once its group's balance and error slot are written);
  // whoever runs one other than that spawn's join names it first.
  // fresh_foreign: a fresh task spawned into a group by another task than the group's owner (engine.hpp,
  // spawn_foreign): counted on the group's balance, never in its owner's counters (engine/join.hpp).
  // fresh_join: the inline two-way join's pushed half (fork_join2.hpp, join_values.hpp), unnamed as
  // fresh_unnamed, and its group's balance and error slot not written either: a join whose half comes back
  // unstolen, nearly every one, never reads them (issue #25: two stores a spawn). Whoever takes the frame
  // from its queue claims it (join_taken), writes them and names it; the owner, when its pop fails, claims
  // it first where nobody has (join_settling), writes them and leaves it fresh_unnamed. Each waits out the
  // other's claim, a few stores long (task_frame.hpp, "The join's slot").
  enum class kind : std::uint8_t { fresh, resume, fresh_unnamed, fresh_foreign, fresh_join, join_taken, join_settling };

  // Read with an atomic load (a plain `mov` on x86-64): a thief may read a join's frame while its owner
  // claims it (fresh_join above).
  kind k() const noexcept { return static_cast<kind>(load_word(std::memory_order_relaxed) & 0xff); }
  bool is_fresh() const noexcept { return k() != kind::resume; }
  // A fresh task nobody named yet: its group is the one whose inline slot it lies in (task_frame.hpp).
  static constexpr bool unnamed(kind x) noexcept { return x == kind::fresh_unnamed || x >= kind::fresh_join; }
  bool is_unnamed() const noexcept { return unnamed(k()); }
  // A new frame's (or fiber's) kind, with no floating-point state: one store of the whole word. A frame is
  // built with word-sized stores and copied with word-sized loads, so the store buffer can forward them (a
  // byte-sized store of the kind stalled every help-first spawn).
  void set_kind(kind x) noexcept { word_ = static_cast<std::uint64_t>(x); }
  // Another kind for a frame the engine names before it runs it, its floating-point state kept. A release
  // store: it ends a taker's claim of a join's frame, whose owner then reads the group's fields the taker
  // wrote (fresh_join above).
  void rename_kind(kind x) noexcept {
    const std::uint64_t w = load_word(std::memory_order_relaxed);
    std::atomic_ref<std::uint64_t>(word_).store((w & ~std::uint64_t{0xff}) | static_cast<std::uint64_t>(x),
                                                std::memory_order_release);
  }
  // Claims a frame of kind `from` as kind `to` (its floating-point state kept), where nobody else did: true
  // if this call did. Else `seen` is the kind found. The join's frame's claims (fresh_join above).
  bool claim_kind(kind from, kind to, kind& seen) noexcept {
    std::uint64_t w = load_word(std::memory_order_relaxed);
    const std::uint64_t state = w & ~std::uint64_t{0xff};
    std::uint64_t expected = state | static_cast<std::uint64_t>(from);
    if (std::atomic_ref<std::uint64_t>(word_).compare_exchange_strong(
            expected, state | static_cast<std::uint64_t>(to), std::memory_order_acquire, std::memory_order_acquire))
      return true;
    seen = static_cast<kind>(expected & 0xff);
    return false;
  }
  // The kind, read with acquire: what a claimer wrote before its rename_kind is seen.
  kind k_acquire() const noexcept { return static_cast<kind>(load_word(std::memory_order_acquire) & 0xff); }

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
  std::uint64_t fp_state() const noexcept { return load_word(std::memory_order_relaxed) & fp_control::kStateBits; }

 private:
  bool takes_fp_state() const noexcept { return is_fresh() && !(word_ & fp_control::kStamped); }
  // The word's reads that may meet a claim (fresh_join above) are atomic; its writes before the frame is
  // published (set_kind, the stamps) need not be, since no other thread can reach it then.
  std::uint64_t load_word(std::memory_order o) const noexcept {
    return std::atomic_ref<std::uint64_t>(const_cast<std::uint64_t&>(word_)).load(o);
  }
  // Zero (fresh, no state) until a kind is set: a frame built by default and pushed as it is (the tests')
  // is still one a share may read. Every constructor that sets a kind overwrites it in the same place.
  alignas(std::atomic_ref<std::uint64_t>::required_alignment) std::uint64_t word_ = 0;
};

}  // namespace roost::detail

#include "roost/detail/min_max_back.hpp"
