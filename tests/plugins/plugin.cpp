// A plugin that links roost into itself (a shared library loaded with dlopen, as a Python extension module
// or an application's plugin is). Built twice (two files, one source): tests/plugins/host.cpp loads both.
#include <roost/roost.hpp>

namespace {
long fib(int n) {
  if (n < 2) return n;
  long a = 0;
  roost::task_group tg;
  tg.run([&] { a = fib(n - 1); });
  const long b = fib(n - 2);
  tg.wait();
  return a + b;
}
}  // namespace

extern "C" __attribute__((visibility("default"))) long plugin_fib(int n) {
  roost::runtime rt;
  return rt.run([&] { return fib(n); });
}
