// The symbols of libroost's build mode that include/roost/detail/build_mode.hpp makes every program refer
// to: a program built in another libstdc++ mode, or with a sanitizer this libroost was built without, does
// not link. A sanitized libroost serves plain programs too (their translation units refer to the plain
// symbol).
#include "roost/detail/build_mode.hpp"

namespace roost::detail {
#if defined(_GLIBCXX_DEBUG)
extern const int libroost_built_with_GLIBCXX_DEBUG = 1;
#if defined(ROOST_ASAN)
extern const int libroost_built_with_GLIBCXX_DEBUG_and_with_AddressSanitizer = 1;
#endif
#if defined(ROOST_TSAN)
extern const int libroost_built_with_GLIBCXX_DEBUG_and_with_ThreadSanitizer = 1;
#endif
#else
extern const int libroost_built_without_GLIBCXX_DEBUG = 0;
#if defined(ROOST_ASAN)
extern const int libroost_built_without_GLIBCXX_DEBUG_and_with_AddressSanitizer = 0;
#endif
#if defined(ROOST_TSAN)
extern const int libroost_built_without_GLIBCXX_DEBUG_and_with_ThreadSanitizer = 0;
#endif
#endif
}  // namespace roost::detail
