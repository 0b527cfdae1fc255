// A call on another stack that leaves a resumable context behind: the work-first spawn's half-switch
// (issue #25; the design of OpenCilk's cheetah and Fibril, where the parent's frame stays in place and
// stacks switch for good only when a thief takes the continuation).
//
// call_on_stack(arg, fn, top, publish) saves the caller's callee-saved registers, its stack pointer and its
// resume address in Boost.Context's fcontext layout on the caller's stack, stores that context's address in
// *publish, and calls fn(arg) on the stack ending at `top`. Then either
//  * fn returns: the stack switches back and call_on_stack returns a transfer whose fctx is null. Calls and
//    returns pair up, so the CPU predicts every return, which two full switches per spawn (jump_fcontext
//    there and back, each returning on the other stack) did not: their returns were mispredicted, and a
//    work-first spawn's time did not follow its instructions;
//  * or someone resumes the published context with jump_fcontext (a thief that took the continuation):
//    call_on_stack returns there, on the resumer's thread, the transfer jump_fcontext delivers (fctx: the
//    context the resumer left, data: its message), exactly as a jump_fcontext of the caller's would have
//    returned. fn then never returns: its stack belongs to whoever runs on it from then on.
// fn must not throw (nothing unwinds through the switch) and must keep the ABI's callee-saved registers.
//
// x86-64 System V only. Under AddressSanitizer the caller announces the switch to the callee's stack and
// back (engine.hpp's call_child_on_stack and child_on_stack, as context.hpp's switch_to does for a switch).
// Not under ThreadSanitizer, whose fiber of a parked context taken for a call would keep that context's
// frames in its shadow stack: there, and on other targets, the engine switches twice.
#pragma once
#include "ult/context.hpp"

#if defined(__x86_64__) && defined(__ELF__) && (defined(__GNUC__) || defined(__clang__)) && !defined(ROOST_TSAN) && \
    !defined(ROOST_NO_CALL_ON_STACK)
#define ROOST_CALL_ON_STACK 1

// noexcept: it returns, or is resumed, and fn throws nothing; so the caller keeps nothing for a handler
// across it (a spawn's callee-saved registers, issue #25).
extern "C" roost::ult::transfer roost_call_on_stack(void* arg, void (*fn)(void*) noexcept, void* top,
                                                    roost::ult::bctx::fcontext_t* publish) noexcept;

namespace roost::ult {
// `top`: 16-byte aligned, the highest address of the stack fn runs on.
inline transfer call_on_stack(void* arg, void (*fn)(void*) noexcept, void* top, bctx::fcontext_t* publish) noexcept {
  return roost_call_on_stack(arg, fn, top, publish);
}
}  // namespace roost::ult
#endif
