// Loads the plugins named on its command line with dlopen (RTLD_LOCAL, as Python loads extension modules)
// and calls each one's roost runtime. Every plugin brings its own copy of roost, whose thread-local
// variables are static TLS (initial-exec ones make the whole block so), and glibc keeps about 1.6 KiB of
// static TLS for everything dlopen'ed: with 1.3 KiB a copy, the second plugin failed to load ("cannot
// allocate memory in static TLS block"; an outside-user campaign).
#include <dlfcn.h>

#include <cstdio>

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    void* h = ::dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      std::fprintf(stderr, "plugin %d of %d: %s\n", i, argc - 1, ::dlerror());
      return 1;
    }
    auto fib = reinterpret_cast<long (*)(int)>(::dlsym(h, "plugin_fib"));
    if (!fib || fib(20) != 6765) {
      std::fprintf(stderr, "plugin %d: plugin_fib missing or wrong\n", i);
      return 2;
    }
  }
  std::printf("%d plugins loaded and run\n", argc - 1);
  return 0;
}
