// Task stacks: mmap'ed, with a PROT_NONE guard page at the low end so that an overflow faults instead of
// corrupting the neighbour. Every guard is registered so that the SIGSEGV handler (overflow_guard.cpp) can
// tell a task stack overflow from any other crash and say which knob to turn.
#pragma once
#include <cstddef>

namespace roost::ult {

struct stack {
  void* base = nullptr;      // lowest address: the guard page starts here
  std::size_t total = 0;     // guard + usable
  std::size_t guard = 0;
  void* top() const { return static_cast<char*>(base) + total; }
  std::size_t usable() const { return total - guard; }
};

// Throws std::bad_alloc when the address space is exhausted.
stack allocate_stack(std::size_t usable_bytes);
void free_stack(const stack& s);

// Installs the process-wide SIGSEGV/SIGBUS handler once; `stack_size` is quoted in its message.
void install_overflow_handler(std::size_t stack_size);
// Gives the calling thread an alternate signal stack so that the handler can run after an overflow.
// Returns an opaque handle for release_alt_stack().
void* install_alt_stack();
void release_alt_stack(void* handle);

}  // namespace roost::ult
