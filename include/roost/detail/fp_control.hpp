// The floating-point control state a task computes with, and how it follows the task to other workers.
//
// What it is: x86-64's MXCSR control bits (rounding mode, flush-to-zero, denormals-are-zero, the exception
// masks) and the x87 control word (precision, rounding, masks): what fesetround, fesetenv and _mm_setcsr
// change, per thread. The sticky exception flags are the thread's own and are never moved.
//
// Why: a task that another worker runs computes on that worker's thread, with that thread's state, unless
// the runtime gives it its spawner's. Without it, a program that set a rounding mode or flush-to-zero before
// runtime::run, or in a task before its parallel work, got another result under ws-help, cats and numa
// than serially (a stolen child ran with the thief's default state: an audit, 2% to 42% of the tasks of a
// probe saw another rounding mode). Reading the state costs: `stmxcsr` is about 3 ns on a Zen 5 core, as
// much as a whole help-first spawn, and read at every inline spawn it made parallel_invoke 2.2x slower
// (src/engine/README.md, "The floating-point state of a task"). So it is read where a task becomes visible
// to other workers, which is rare, not where it is pushed:
//  * the deque's share (ws_deque.hpp) stamps the frames it makes stealable with the owner's state then;
//  * a push onto a queue that others see at once (locked_deque.hpp), and an ADWS delivery, with the pusher's;
//  * a work-first continuation carries its task's state in its saved context (ult/call_on_stack.cpp and
//    Boost.Context's switch), and a child run at its spawn inherits the thread's;
//  * a worker that switches to an idle fiber keeps the state of the fiber it left (engine.hpp, on_arrival),
//    where Boost.Context would restore the state the idle fiber last parked with;
//  * a tick's handler, which the kernel starts with the default state, takes the preempted task's from the
//    signal frame (engine/preemption.cpp), and a KLT spare takes it from the worker (fp_at_handover).
// A worker that starts a stamped frame from its scheduling loop gives it the stamp's state (apply), having
// stamped its own frames still private with the thread's state first (ws_deque::stamp_private: ADWS runs a
// dealt task before them). So every task computes with its spawner's state wherever it runs, provided the
// state on a thread changes only around whole parallel regions (docs/user-guide.md, "The floating-point
// environment").
#pragma once
#include "roost/detail/min_max_aside.hpp"  // C headers' min/max macros kept out, given back at the end
#include <cstdint>

namespace roost::detail::fp_control {

// A state as a job's word carries it (job.hpp): bit 8 set where there is one, the x87 control word in bits
// 16-31, MXCSR's control bits (6-15) in bits 32-47. Zero: none (the kind alone).
inline constexpr std::uint64_t kStamped = std::uint64_t{1} << 8;
inline constexpr std::uint64_t kStateBits = 0x0000ffffffff0100ull;
inline constexpr std::uint32_t kMxcsrControl = 0xffc0;  // DAZ, the six masks, the rounding mode, FZ

// A state in that form, from MXCSR and the x87 control word as the CPU stores them (stmxcsr and fnstcw, a
// saved context, a signal frame).
constexpr std::uint64_t pack(std::uint32_t mxcsr, std::uint16_t x87) noexcept {
  return kStamped | (std::uint64_t{x87} << 16) | (std::uint64_t{mxcsr & kMxcsrControl} << 32);
}

#if defined(__x86_64__)
inline constexpr bool kSupported = true;
// The calling thread's state, stamped.
inline std::uint64_t capture() noexcept {
  std::uint32_t mxcsr;
  std::uint16_t x87;
  asm volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(mxcsr), "=m"(x87));
  return pack(mxcsr, x87);
}
// Gives the calling thread the state of `stamp` (from capture), its exception flags kept; nothing where
// `stamp` holds none (0). Loads only what differs: ldmxcsr and fldcw wait for the floating-point work in
// flight.
inline void apply(std::uint64_t stamp) noexcept {
  if (!(stamp & kStamped)) return;  // not a state: all exceptions unmasked would be its MXCSR
  std::uint32_t mxcsr;
  std::uint16_t x87;
  asm volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(mxcsr), "=m"(x87));
  const std::uint32_t want_mxcsr = (mxcsr & ~kMxcsrControl) | (static_cast<std::uint32_t>(stamp >> 32) & kMxcsrControl);
  const auto want_x87 = static_cast<std::uint16_t>(stamp >> 16);
  if (want_mxcsr != mxcsr) asm volatile("ldmxcsr %0" : : "m"(want_mxcsr));
  // The x87 flags cleared first: a word that unmasks an exception whose flag is set would raise it at the
  // next x87 instruction. (An SSE flag raises nothing when its mask is cleared.)
  if (want_x87 != x87) asm volatile("fnclex\n\tfldcw %0" : : "m"(want_x87));
}
// The state saved in a context that Boost.Context's jump_fcontext (x86-64 System V, 1.74 and later) or
// roost_call_on_stack left at `fctx`: MXCSR at its first 4 bytes, the x87 control word at the next 2.
inline std::uint64_t saved_in_context(const void* fctx) noexcept {
  const auto* p = static_cast<const unsigned char*>(fctx);
  std::uint32_t mxcsr;
  std::uint16_t x87;
  __builtin_memcpy(&mxcsr, p, sizeof mxcsr);
  __builtin_memcpy(&x87, p + 4, sizeof x87);
  return pack(mxcsr, x87);
}
#else
// Elsewhere no state is moved: a task computes with its thread's (the limit is documented).
inline constexpr bool kSupported = false;
inline std::uint64_t capture() noexcept { return 0; }
inline void apply(std::uint64_t) noexcept {}
inline std::uint64_t saved_in_context(const void*) noexcept { return 0; }
#endif

}  // namespace roost::detail::fp_control

#include "roost/detail/min_max_back.hpp"
