// Linked with -static-libstdc++ (tests/CMakeLists.txt) against a shared Boost.Context, which loads the shared
// libstdc++ beside the program's own copy: the C++ runtime this program calls is its own, where a tick is not
// deferred, and a runtime with preemption on says so once on stderr (platform/preempt_signal.hpp,
// cxx_runtime_in_program). It said nothing for a program built that way, the shared libstdc++ being among the
// loaded objects (an outside-user campaign). Exit 0 when the notice came and the runtime computed.
#include <roost/roost.hpp>

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace {
long fib(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
  roost::parallel_invoke([&] { a = fib(n - 1); }, [&] { b = fib(n - 2); });
  return a + b;
}
}  // namespace

int main() {
  char path[] = "/tmp/roost_static_cxx_probe_XXXXXX";
  const int fd = ::mkstemp(path);
  if (fd < 0) return 2;
  std::fflush(stderr);
  const int saved = ::dup(2);
  ::dup2(fd, 2);  // the runtime's notices, read back below
  long f = 0;
  try {
    roost::options o;
    o.scheduler = "ws";
    o.workers = 1;
    o.preempt = "signal";
    roost::runtime rt(o);
    f = rt.run([] { return fib(20); });
  } catch (...) {  // said below, with the notices; the file goes either way
  }
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(fd);
  std::stringstream said;
  said << std::ifstream(path).rdbuf();
  ::unlink(path);
  std::fputs(said.str().c_str(), stderr);
  const bool told = said.str().find("the C++ runtime is linked into this program") != std::string::npos;
  std::printf("fib(20) = %ld; the notice %s\n", f, told ? "came" : "did not come");
  return f == 6765 && told ? 0 : 1;
}
