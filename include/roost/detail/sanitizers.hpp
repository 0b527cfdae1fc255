// Which sanitizer this translation unit is built with (GCC defines __SANITIZE_*, clang has __has_feature).
#pragma once
#include "roost/detail/min_max_aside.hpp"  // C headers' min/max macros kept out, given back at the end
#if defined(__SANITIZE_THREAD__)
#define ROOST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ROOST_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define ROOST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ROOST_ASAN 1
#endif
#endif

#include "roost/detail/min_max_back.hpp"
