// Helpers shared by the tests.
#pragma once
#include <stdlib.h>

#include <string>

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
