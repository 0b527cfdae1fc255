#!/usr/bin/env bash
# The audit of the runtime text (src/engine/critical_windows.hpp): every call that leaves the section
# roost_runtime_text of a binary must be one engine.hpp argues for (engine<P>::spawn_in_runtime_text): a
# tick is deferred there only by the count, so a call out of the text while the spawner's count is 0 lets a
# tick preempt the spawner half way. A new call in the spawn path fails here until it is argued and listed.
# Usage: check.sh BINARY
set -euo pipefail
bin=$1
command -v objdump >/dev/null || { echo "objdump (binutils) is needed" >&2; exit 1; }
headers=$(objdump -h "$bin")  # whole, not piped into grep -q: its early exit fails the pipe (pipefail)
if ! grep -q ' roost_runtime_text ' <<<"$headers"; then
  echo "FAIL: $bin has no section roost_runtime_text (ws and hws define their spawn there)" >&2
  exit 1
fi
# The section's functions one by one. Clang's -fsanitize=function (the ASan+UBSan build) puts 8 bytes at a
# function's start: a 2-byte jump over 6 bytes of data (a signature and its type's hash), which a linear
# disassembly decodes as instructions, a call among them where the bytes happen to read so (the hash moves
# with the layout: a call to "_end+0x480b4293" failed this check after an unrelated change). Such a
# function is disassembled from after its data.
disassemble() {
  objdump -t -j roost_runtime_text "$bin" | awk -F'\t' '/ F roost_runtime_text/ { split($1, a, " "); split($2, b, " "); print a[1], b[1] }' |
    while read -r addr size; do
      local start=$((16#$addr)) end=$((16#$addr + 16#$size)) first jump_over='jmp +([0-9a-f]+) <'
      first=$(objdump -d --no-show-raw-insn -j roost_runtime_text --start-address=$start --stop-address=$((start + 2)) "$bin")
      if [[ $first =~ $jump_over ]] && ((16#${BASH_REMATCH[1]} == start + 8)); then start=$((start + 8)); fi
      objdump -d -C --no-show-raw-insn -j roost_runtime_text --start-address=$start --stop-address=$end "$bin"
    done
}
disassemble | awk '
  # Called out of the text, each for its reason (engine.hpp, spawn_in_runtime_text):
  #   roost_call_on_stack, ult::announce_call, ult::call_came_back, jump_fcontext: the child runs, whose
  #     count is 1 outside its body (or a thief resumed the parent and raised its count);
  #   fiber_pool::get_slow, get_free_stack_slow, spill: called under a raise of the running fiber count,
  #     inline in the caller (fiber.hpp, get_free_stack_slow);
  #   throw_not_owner, spawn_foreign: before the spawn changed anything (the second, a child spawning into the
  #     group its owner joins, raises the count itself: engine.hpp); native_platform::fatal, os::fatal: end the
  #     process (the sanitizer builds check that the worker of the caller is the one of the task);
  #     __clang_call_terminate: std::terminate, called by clang where an exception leaves a noexcept function;
  #   hook_spawn: under a raise (observe.hpp, name_child); hook_task_resume: in resumed(), before its lowering;
  #   hook_task_moved: under a raise of the count of the parent fiber (observe.hpp, observe_moved);
  #   the C++ runtime (exceptions) and the sanitizer runtimes: system libraries, where ticks are deferred.
  function allowed(t) {
    return t ~ /^(roost_call_on_stack|roost::ult::announce_call\(|roost::ult::call_came_back\(|jump_fcontext)/ ||
           t ~ /^roost::engine::fiber_pool::(get_slow|get_free_stack_slow|spill)\(/ ||
           t ~ /^roost::detail::(throw_not_owner|spawn_foreign|hook_spawn)\(/ || t ~ /^roost::engine::hook_task_(resume|moved)\(/ ||
           t ~ /^roost::platform::(native_platform|os)::fatal\(/ ||
           t ~ /^(__cxa_|_Unwind_|__clang_call_terminate|__tsan_|__asan_|__ubsan_|__sanitizer_)/
  }
  /^[0-9a-f]+ <.*>:$/ { fn = substr($0, index($0, "<") + 1); sub(/>:$/, "", fn); sub(/\+0x[0-9a-f]+$/, "", fn); nfn++; next }
  /\t(call|jmp|notrack jmp|bnd jmp|addr32 call)/ {
    line = $0
    if (line !~ /</) {  # an indirect call or jump with no symbol: nothing says where it goes
      print "FAIL: " fn ": " line; bad++; next
    }
    t = line; sub(/^[^<]*</, "", t); sub(/>[^>]*$/, "", t)  # the symbol between the first < and the last >
    if (index(t, fn "+") == 1 || t == fn) next  # within the function
    sub(/@.*$/, "", t)                            # a GOT entry: foo@GLIBC_2.2.5
    if (!allowed(t)) { print "FAIL: " fn " calls " t; bad++ }
    calls++
  }
  END {
    if (nfn < 2) { print "FAIL: expected the spawns of ws and hws in the runtime text, found " nfn " functions"; exit 1 }
    if (bad) exit 1
    print "ok: " nfn " functions, " calls " calls out of the runtime text, each argued"
  }'
