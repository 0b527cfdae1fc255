// A replacement allocator's code is deferred like the C library's (platform/preempt_signal.hpp): a task
// preempted inside its arenas' locks would stop the next task of its thread (a review: a pthread-mutex
// allocator preloaded, three hangs in three runs under signal-yield). Two builds (tests/CMakeLists.txt):
//  - run with LD_PRELOAD naming forwarding_malloc's shared object: after install, an address inside its
//    malloc counts as a system library's;
//  - ROOST_PROBE_ALLOCATOR_IN_PROGRAM: the program defines malloc itself, which roost cannot tell from the
//    program's code: install says so on stderr, once, naming the setting.
// Exit 0 when the case holds.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "platform/preempt_signal.hpp"

#ifdef ROOST_PROBE_ALLOCATOR_IN_PROGRAM
extern "C" {
void* __libc_malloc(std::size_t);
void __libc_free(void*);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* malloc(std::size_t n) { return __libc_malloc(n); }
void free(void* p) { __libc_free(p); }
void* calloc(std::size_t n, std::size_t size) { return __libc_calloc(n, size); }
void* realloc(void* p, std::size_t n) { return __libc_realloc(p, n); }
}
#endif

namespace preempt = roost::platform::preempt;

int main() {
  const auto at = reinterpret_cast<std::uintptr_t>(::dlsym(RTLD_DEFAULT, "malloc"));
  Dl_info info{};
  if (!at || !::dladdr(reinterpret_cast<void*>(at), &info) || !info.dli_fname) {
    std::puts("FAIL: malloc's object not found");
    return 1;
  }
#ifdef ROOST_PROBE_ALLOCATOR_IN_PROGRAM
  char path[] = "/tmp/roost-allocator-probe-XXXXXX";
  const int fd = ::mkstemp(path);
  const int saved = ::dup(2);
  ::dup2(fd, 2);
  preempt::install([](void*) {}, "ROOST_PREEMPT='signal'");
  std::fflush(stderr);
  ::dup2(saved, 2);
  std::string said(4096, '\0');
  said.resize(static_cast<std::size_t>(::pread(fd, said.data(), said.size(), 0)));
  ::close(fd);
  ::unlink(path);
  preempt::uninstall();
  for (const char* part : {"ROOST_PREEMPT='signal'", "defines malloc and free itself", "ROOST_PREEMPT=off"})
    if (said.find(part) == std::string::npos) {
      std::printf("FAIL: stderr does not say '%s': '%s'\n", part, said.c_str());
      return 1;
    }
  std::printf("told: %s", said.c_str());
  return 0;
#else
  if (!std::strstr(info.dli_fname, "forwarding_malloc")) {
    std::printf("FAIL: run it with LD_PRELOAD naming the forwarding allocator; malloc is %s's\n", info.dli_fname);
    return 1;
  }
  preempt::install([](void*) {}, "ROOST_PREEMPT='signal'");
  const bool deferred = preempt::in_system_library(at);
  preempt::uninstall();
  if (!deferred) {
    std::printf("FAIL: a tick inside %s's malloc is not deferred\n", info.dli_fname);
    return 1;
  }
  std::printf("deferred: malloc in %s\n", info.dli_fname);
  return 0;
#endif
}
