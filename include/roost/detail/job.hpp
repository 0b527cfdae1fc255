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
  // store: it ends a taker's claim of a join's frame (fresh_join above), whose fields the taker wrote. The
  // frame lies in no queue by then, so nobody stamps it meanwhile (the stamps below).
  void rename_kind(kind x) noexcept {
    const std::uint64_t w = load_word(std::memory_order_relaxed);
    std::atomic_ref<std::uint64_t>(word_).store(with_kind(w, x), std::memory_order_release);
  }
  // rename_kind for the owner's release of its claim of a join's frame, which may still lie in the private
  // part of a deque whose owner stamps it meanwhile: a compare-exchange, since a load and a store lost such
  // a stamp or undid the release (a review).
  void release_claim_kind(kind x) noexcept {
    std::atomic_ref<std::uint64_t> word(word_);
    std::uint64_t w = word.load(std::memory_order_relaxed);
    while (!word.compare_exchange_weak(w, with_kind(w, x), std::memory_order_release, std::memory_order_relaxed)) {
    }
  }
  // Claims a frame of kind `from` as kind `to` (its floating-point state kept), where nobody else did: true
  // if this call did, else false with `seen` the kind found. A compare-exchange that failed on the stamp's
  // bits alone (a stamp landed since the load) is tried again: it found no claim. The join's frame's claims
  // (fresh_join above).
  // The first load is an acquire too: a claim that fails on it (the other side released already) reads the
  // fields the other side wrote.
  bool claim_kind(kind from, kind to, kind& seen) noexcept {
    std::atomic_ref<std::uint64_t> word(word_);
    std::uint64_t expected = word.load(std::memory_order_acquire);
    while ((expected & 0xff) == static_cast<std::uint64_t>(from)) {
      if (word.compare_exchange_weak(expected, with_kind(expected, to), std::memory_order_acquire,
                                     std::memory_order_acquire))
        return true;
    }
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
  // An atomic or: a join's frame may lie in the private part of a deque whose owner shares it while the
  // join's owner, moved to another worker, claims it (fresh_join above). Only at a share or a push onto
  // another worker's queue, never at a spawn.
  // Where the architecture has no state to capture (capture() is 0) nothing is written: an or of 0 would be a
  // locked instruction at every share for nothing.
  void stamp_fp_state() noexcept {
    if (takes_fp_state()) or_word(fp_control::capture());
  }
  void stamp_fp_state(std::uint64_t state) noexcept {
    if (takes_fp_state()) or_word(state);
  }
  // Its stamp (fp_control::capture's form), or 0 where it has none.
  std::uint64_t fp_state() const noexcept { return load_word(std::memory_order_relaxed) & fp_control::kStateBits; }

 private:
  // The word `w` with kind x in its low byte, its floating-point state kept.
  static constexpr std::uint64_t with_kind(std::uint64_t w, kind x) noexcept {
    return (w & ~std::uint64_t{0xff}) | static_cast<std::uint64_t>(x);
  }
  bool takes_fp_state() const noexcept {
    const std::uint64_t w = load_word(std::memory_order_relaxed);
    return static_cast<kind>(w & 0xff) != kind::resume && !(w & fp_control::kStamped);
  }
  // Every access that may meet another thread's is atomic: a join's frame is reachable by its owner (its
  // claim) and by the deque's owner (a stamp) and a thief at once (fresh_join above). set_kind's plain store
  // is made before the frame is published, where nobody else reaches it.
  void or_word(std::uint64_t bits) noexcept {
    if (bits != 0) std::atomic_ref<std::uint64_t>(word_).fetch_or(bits, std::memory_order_relaxed);
  }
  std::uint64_t load_word(std::memory_order o) const noexcept {
    return std::atomic_ref<std::uint64_t>(const_cast<std::uint64_t&>(word_)).load(o);
  }
  // Zero (fresh, no state) until a kind is set: a frame built by default and pushed as it is (the tests')
  // is still one a share may read. Every constructor that sets a kind overwrites it in the same place.
  alignas(std::atomic_ref<std::uint64_t>::required_alignment) std::uint64_t word_ = 0;
};

}  // namespace roost::detail

#include "roost/detail/min_max_back.hpp"
