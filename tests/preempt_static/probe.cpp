// Linked with -static (tests/CMakeLists.txt): the C library is part of this program, where a preemption
// tick cannot be told to be inside it, so installing the tick's handler must be refused with a
// config_error that names the setting and says what to do. Exit 0 when it was.
#include <cstdio>
#include <string>

#include "platform/preempt_signal.hpp"
#include "roost/errors.hpp"

int main() {
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
