// Task stacks: mmap'ed, with a PROT_NONE guard at the low end so that an overflow faults instead of
// corrupting the neighbour. Every guard is registered so that the SIGSEGV handler (stack.cpp) can tell a
// task stack overflow from any other crash and say which knob to turn.
//
// The guard is kGuardBytes, not a page: a function whose frame is larger than the guard moves the stack
// pointer past it in one step, and its first store lands below, in whatever is mapped there (another
// task's stack) or nowhere roost knows: a bare SIGSEGV, no message. One page caught frames up to 4 KiB;
// 8 KiB and 64 KiB frames crashed bare. 1 MiB is the gap Linux keeps below a main thread's stack
// (stack_guard_gap, 256 pages). It costs address space only (PROT_NONE, never committed) and no extra
// memory mapping. Larger frames still need the compiler's probes (-fstack-clash-protection).
#pragma once
#include <cstddef>

namespace roost::ult {

inline constexpr std::size_t kGuardBytes = std::size_t{1} << 20;

struct stack {
  void* base = nullptr;      // lowest address: the guard starts here
  std::size_t total = 0;     // guard + usable
  std::size_t guard = 0;
  void* top() const { return static_cast<char*>(base) + total; }
  std::size_t usable() const { return total - guard; }
};

// Throws std::bad_alloc when the address space is exhausted.
stack allocate_stack(std::size_t usable_bytes);
void free_stack(const stack& s);
// Frames on `s` that will never return (a parked context given up, or a stack unmapped): under
// AddressSanitizer their redzones stay poisoned in the shadow memory and would be blamed on whatever runs or
// is mapped there next, so their shadow is cleared; a no-op in other builds.
void forget_frames(const stack& s);

// Stacks are reserved, not committed (MAP_NORESERVE): a page costs memory only once a task touches it, so
// the default can be as deep as a thread's (8 MiB) at the price of what tasks really use. What a deep task
// touched stays resident while its fiber waits in a pool, until this gives it back: the pages of `s` more
// than `keep_bytes` below `top` (where the fiber's frames start) are returned to the kernel when anything in
// the kDeepMarkBytes just below the kept part was ever written (they read as zero until then, and again
// after; untouched, they all map the kernel's one zero page, so the look stays in L1). Every frame writes
// its return address, so a stack that went deeper is seen unless one frame larger than the mark band
// spans it without writing there; such a task keeps its pages until the fiber is freed.
// Returns whether pages were given back.
constexpr std::size_t kDeepMarkBytes = 4096;
bool release_deep_pages(const stack& s, const void* top, std::size_t keep_bytes);

// Task stacks mapped now by this process, and ever (each allocate_stack): what a test of the pools' reuse
// counts.
std::size_t stacks_mapped();
std::size_t stacks_ever_mapped();

// The kernel's limit on a process's memory mappings (vm.max_map_count), read once; 65530, the kernel's
// default, where it cannot be read. Each stack takes two (the guard and the rest).
std::size_t mapping_limit();

// Installs the process-wide SIGSEGV/SIGBUS handler once; `stack_size` is quoted in its message.
void install_overflow_handler(std::size_t stack_size);
// Gives the calling thread an alternate signal stack so that the handler can run after an overflow.
// Returns an opaque handle for release_alt_stack().
void* install_alt_stack();
void release_alt_stack(void* handle);

}  // namespace roost::ult
