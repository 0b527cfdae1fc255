// Included first by every public header, with min_max_back.hpp last (no include guard: each inclusion acts).
// C headers (BOTS's among them) define function-like macros min(a, b) and max(a, b); the standard headers a
// roost header includes, and its own code, would expand them (std::numeric_limits<T>::max(), std::min). So
// a roost header sets them aside for its own text and gives them back after it: a program may include
// roost after such a header (docs/porting.md). #pragma push_macro/pop_macro: GCC, Clang, MSVC.
#pragma push_macro("min")
#pragma push_macro("max")
#undef min
#undef max
