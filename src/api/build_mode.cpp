// The symbol of libroost's libstdc++ mode that include/roost/detail/build_mode.hpp makes every program refer
// to: a program built in the other mode does not link.
#include "roost/detail/build_mode.hpp"

namespace roost::detail {
#if defined(_GLIBCXX_DEBUG)
extern const int libroost_built_with_GLIBCXX_DEBUG = 1;
#else
extern const int libroost_built_without_GLIBCXX_DEBUG = 0;
#endif
}  // namespace roost::detail
