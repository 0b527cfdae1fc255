// The other half of min_max_aside.hpp: the caller's min and max macros, as they were (no include guard).
#pragma pop_macro("max")
#pragma pop_macro("min")
