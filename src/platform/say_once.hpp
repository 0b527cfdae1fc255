// A warning said once a process: the first time a site is reached prints its message on stderr, later times
// nothing (a condition every run, tick or thread would meet again). Thread-safe, each site its own flag:
// ROOST_SAY_ONCE(format, ...) as std::fprintf(stderr, format, ...). say_each_once: each distinct note once.
#pragma once
#include <atomic>
#include <cstdio>
#include <string>
#include <vector>

namespace roost::platform {
// Each note on stderr ("roost: " before it) once per process, whichever runtime meets it first: one flag per
// kind of note kept a later runtime's new note (a default distribution set in code since) from being said
// (a review). Thread-safe.
void say_each_once(const std::vector<std::string>& notes);
}  // namespace roost::platform

#define ROOST_SAY_ONCE(...)                                                \
  do {                                                                     \
    static std::atomic<bool> roost_said_once_{false};                      \
    if (!roost_said_once_.exchange(true)) std::fprintf(stderr, __VA_ARGS__); \
  } while (0)
