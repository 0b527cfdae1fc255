// A warning said once a process: the first time a site is reached prints its message on stderr, later times
// nothing (a condition every run, tick or thread would meet again). Thread-safe, each site its own flag:
// ROOST_SAY_ONCE(format, ...) as std::fprintf(stderr, format, ...).
#pragma once
#include <atomic>
#include <cstdio>

#define ROOST_SAY_ONCE(...)                                                \
  do {                                                                     \
    static std::atomic<bool> roost_said_once_{false};                      \
    if (!roost_said_once_.exchange(true)) std::fprintf(stderr, __VA_ARGS__); \
  } while (0)
