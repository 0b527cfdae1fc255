// Linked with -static (tests/CMakeLists.txt): the C library is part of this program, where a preemption
// tick cannot be told to be inside it, so installing the tick's handler must be refused with a
// config_error that names the setting and says what to do. Exit 0 when it was, and when the sleeping calls
// libroost defines (platform/sleep_calls.cpp), which take the C library's place in such a program, keep its
// conventions: cancellation points, and EINVAL for a thread's CPU-time clock (an outside-user campaign: a
// -static program's sleeping threads could no longer be cancelled).
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <string>

#include "platform/preempt_signal.hpp"
#include "roost/errors.hpp"

namespace {
// Cancelled once it is about to sleep (most often while it sleeps, whenever the cancel lands): each call must
// be a cancellation point, acted on at its entry or while it sleeps.
std::atomic<bool> g_about_to_sleep{false};
bool cancelled_while_sleeping(int which) {
  pthread_t t;
  g_about_to_sleep = false;
  auto body = [](void* p) -> void* {
    const timespec ts{30, 0};
    g_about_to_sleep = true;
    switch (*static_cast<int*>(p)) {
      case 0: sleep(30); break;
      case 1: usleep(30'000'000); break;
      case 2: nanosleep(&ts, nullptr); break;
      default: clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, nullptr); break;
    }
    return nullptr;
  };
  if (pthread_create(&t, nullptr, body, &which) != 0) return false;
  while (!g_about_to_sleep) {
  }
  const timespec a_while{0, 20'000'000};  // only makes a cancel during the sleep likely; either way must work
  nanosleep(&a_while, nullptr);
  pthread_cancel(t);
  void* result = nullptr;
  pthread_join(t, &result);
  return result == PTHREAD_CANCELED;
}
}  // namespace

int main() {
  const char* names[] = {"sleep", "usleep", "nanosleep", "clock_nanosleep"};
  for (int which = 0; which < 4; ++which)
    if (!cancelled_while_sleeping(which)) {
      std::printf("FAIL: %s is no cancellation point in a statically linked program\n", names[which]);
      return 1;
    }
  const timespec short_one{0, 1000};
  if (const int r = clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0, &short_one, nullptr); r != EINVAL) {
    std::printf("FAIL: clock_nanosleep(CLOCK_THREAD_CPUTIME_ID) gave %d, not EINVAL\n", r);
    return 1;
  }
  if (usleep(1) != 0 || sleep(0) != 0 || nanosleep(&short_one, nullptr) != 0) {
    std::puts("FAIL: a short sleep did not return 0");
    return 1;
  }
  // The masked waits' fallbacks (their system calls): what the C library returns, and a const timeout left
  // as the caller gave it (the kernel writes the time left into it).
  const timespec zero{0, 0}, negative{0, -1};
  sigset_t none;
  sigemptyset(&none);
  epoll_event e{};
  errno = 0;
  if (ppoll(nullptr, 0, &short_one, &none) != 0 || short_one.tv_nsec != 1000 ||
      pselect(0, nullptr, nullptr, nullptr, &zero, nullptr) != 0 || ppoll(nullptr, 0, &negative, nullptr) != -1 ||
      errno != EINVAL || epoll_pwait(-1, &e, 1, 0, &none) != -1 || errno != EBADF) {
    std::printf("FAIL: ppoll, pselect or epoll_pwait did not return what the C library returns (errno %d)\n", errno);
    return 1;
  }
  try {
    roost::platform::preempt::install([](void*) {}, "ROOST_PREEMPT='signal'");
    std::puts("FAIL: preemption was installed in a statically linked program");
    return 1;
  } catch (const roost::config_error& e) {
    const std::string what = e.what();
    for (const char* part : {"ROOST_PREEMPT='signal'", "the C library", "-static", "ROOST_PREEMPT=off"})
      if (what.find(part) == std::string::npos) {
        std::printf("FAIL: the error does not say '%s': %s\n", part, e.what());
        return 1;
      }
    std::printf("refused: %s\n", e.what());
    return 0;
  }
}
