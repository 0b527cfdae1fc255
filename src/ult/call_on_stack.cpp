// ult/call_on_stack.hpp's primitive. The saved context is the one Boost.Context's jump_fcontext makes for
// x86-64 System V (boost/context/asm/jump_x86_64_sysv_elf_gas.S, Boost 1.74 and later): 0x38 bytes below
// the return address, holding MXCSR and the x87 control word, then r12, r13, r14, r15, rbx and rbp; the
// return address above them is where jump_fcontext continues, with the transfer in rax:rdx. So a thief
// resumes it with the engine's usual switch, and lands after this call as if it had returned.
#include "ult/call_on_stack.hpp"

#ifdef ROOST_CALL_ON_STACK
// rdi: arg, rsi: fn, rdx: top, rcx: publish.
asm(R"(
    .text
    .globl roost_call_on_stack
    .type roost_call_on_stack, @function
    .p2align 4
roost_call_on_stack:
    .cfi_startproc
    leaq -0x38(%rsp), %rsp
    .cfi_adjust_cfa_offset 0x38
    stmxcsr (%rsp)
    fnstcw 0x4(%rsp)
    movq %r12, 0x8(%rsp)
    movq %r13, 0x10(%rsp)
    movq %r14, 0x18(%rsp)
    movq %r15, 0x20(%rsp)
    movq %rbx, 0x28(%rsp)
    movq %rbp, 0x30(%rsp)
    .cfi_rel_offset %rbx, 0x28
    movq %rsp, (%rcx)
    movq %rsp, %rbx
    .cfi_def_cfa_register %rbx
    movq %rdx, %rsp
    callq *%rsi
    movq %rbx, %rsp
    .cfi_def_cfa_register %rsp
    movq 0x28(%rsp), %rbx
    .cfi_restore %rbx
    leaq 0x38(%rsp), %rsp
    .cfi_adjust_cfa_offset -0x38
    xorl %eax, %eax
    xorl %edx, %edx
    ret
    .cfi_endproc
    .size roost_call_on_stack, .-roost_call_on_stack
)");
#endif
