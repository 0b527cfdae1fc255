// Helpers shared by the tests.
#pragma once
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "roost/detail/sanitizers.hpp"

namespace roost_test {

// Sanitizer builds run the same tests at reduced sizes.
constexpr bool under_sanitizer() {
#if defined(ROOST_TSAN) || defined(ROOST_ASAN)
  return true;
#else
  return false;
#endif
}

// For tests that another worker must take part: the first task that calls this (on the worker that
// spawned) waits, sleeping, until `count` (tasks run elsewhere) is positive or 5 s have passed, and records
// in `late` whether it gave up. A fixed sleep per task left a window of tens of milliseconds, which a loaded
// machine (sanitizers, CI, nice 19) can miss with nothing wrong; 5 s cannot be missed that way.
inline void wait_for_another_worker(const std::atomic<int>& count, std::atomic<bool>& waited_once,
                                    std::atomic<bool>& late) {
  if (waited_once.exchange(true)) return;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (count.load() == 0)
    if (std::chrono::steady_clock::now() > give_up) {
      late = true;
      return;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

// Sets an environment variable for one scope and restores what was there.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) {
      had_ = true;
      old_ = old;
    }
    setenv(name, value, 1);
  }
  ~scoped_env() {
    if (had_) setenv(name_, old_.c_str(), 1);
    else unsetenv(name_);
  }
  scoped_env(const scoped_env&) = delete;

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

}  // namespace roost_test
