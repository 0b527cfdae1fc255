// parallel_reduce refuses an identity whose type would cut the body's results (compile_fail/check.sh
// builds this with each case defined, and expects the compile to fail, naming the reason, for all but
// NARROW_NONE); and parallel_for refuses floating-point bounds (FLOAT_BOUNDS); and a body of neither shape
// gets the algorithm's own message (FOR_BODY_SHAPE, REDUCE_BODY_SHAPE), not a template error; nor does a root
// whose value cannot be moved out of runtime::run (RUN_UNMOVABLE).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <string>
#include <string_view>
#include <vector>

#include "roost/roost.hpp"

long sum(const std::vector<long>& v) {
#if defined(NARROW_INTEGER)  // a long body over the identity 0: every partial sum cut to int
  return roost::parallel_reduce(std::size_t{0}, v.size(), 64, 0,
                                [&](std::size_t lo, std::size_t hi) { long s = 0; for (; lo < hi; ++lo) s += v[lo]; return s; },
                                std::plus<>());
#elif defined(NARROW_FLOATING)  // a double body over the identity 0
  return static_cast<long>(roost::parallel_reduce(std::size_t{0}, v.size(), 64, 0,
                                [&](std::size_t lo, std::size_t hi) { double s = 0; for (; lo < hi; ++lo) s += v[lo]; return s; },
                                std::plus<>()));
#elif defined(NARROW_SIGNEDNESS)  // a signed body over an unsigned identity: negative results wrap
  return static_cast<long>(roost::parallel_reduce(std::size_t{0}, v.size(), 64, 0UL,
                                [&](std::size_t lo, std::size_t hi) { long s = 0; for (; lo < hi; ++lo) s += v[lo]; return s; },
                                std::plus<>()));
#elif defined(NARROW_FLOAT_WIDTH)  // a double body over a float identity: rounded to float
  return static_cast<long>(roost::parallel_reduce(std::size_t{0}, v.size(), 64, 0.0f,
                                [&](std::size_t lo, std::size_t hi) { double s = 0; for (; lo < hi; ++lo) s += v[lo]; return s; },
                                std::plus<>()));
#elif defined(NARROW_VIEW)  // a std::string body over a std::string_view identity: views of destroyed strings
  return static_cast<long>(roost::parallel_reduce(std::size_t{0}, v.size(), 64, std::string_view{},
                                [&](std::size_t lo, std::size_t hi) { return std::string(hi - lo, 'x'); },
                                [](std::string_view a, std::string_view b) { return std::string(a) + std::string(b); }).size());
#elif defined(NARROW_INT_TO_FLOAT)  // a long body over the identity 0.0: 2^53 + 1 rounded
  return static_cast<long>(roost::parallel_reduce(std::size_t{0}, v.size(), 64, 0.0,
                                [&](std::size_t lo, std::size_t hi) { long s = 0; for (; lo < hi; ++lo) s += v[lo]; return s; },
                                std::plus<>()));
#elif defined(COMBINE_VIEW)  // views all along, but the combine makes a std::string: views of destroyed strings
  return static_cast<long>(roost::parallel_reduce(std::size_t{0}, v.size(), 64, std::string_view{},
                                [&](std::size_t lo, std::size_t hi) { return std::string_view("xyz").substr(0, hi - lo > 3 ? 3 : hi - lo); },
                                [](std::string_view a, std::string_view b) { return std::string(a) + std::string(b); }).size());
#elif defined(NARROW_INT128) && defined(__SIZEOF_INT128__)  // an __int128 body over the identity 0, -std=c++20
  return static_cast<long>(roost::parallel_reduce(std::size_t{0}, v.size(), 64, 0,
                                [&](std::size_t lo, std::size_t hi) { return static_cast<__int128>(hi - lo); },
                                std::plus<>()));
#elif defined(NARROW_INT128_SIGNEDNESS) && defined(__SIZEOF_INT128__)  // a signed __int128 body, unsigned identity
  return static_cast<long>(roost::parallel_reduce(std::size_t{0}, v.size(), 64, static_cast<unsigned __int128>(0),
                                [&](std::size_t lo, std::size_t hi) { return static_cast<__int128>(hi - lo); },
                                std::plus<>()));
#elif defined(FOR_BODY_SHAPE)  // a body called neither as body(lo, hi) nor as body(i)
  roost::parallel_for(0, 10, 2, [](int, int, int) {});
  return 0;
#elif defined(REDUCE_BODY_SHAPE)  // parallel_reduce's body takes a piece, not an index
  return roost::parallel_reduce(0, 10, 2, 0, [](int i) { return i; }, std::plus<>());
#elif defined(REDUCE_NO_GRAIN)  // oneTBB's shape, without a grain
  return roost::parallel_reduce(0, 10, 0L, [](int lo, int hi) { return static_cast<long>(hi - lo); }, std::plus<>());
#elif defined(LIST_BOUNDS)  // std::list's iterators are not random-access: 50 KB of operator< candidates before
  std::list<long> l(v.begin(), v.end());
  roost::parallel_for(l.begin(), l.end(), 1, [](std::list<long>::iterator, std::list<long>::iterator) {});
  return 0;
#elif defined(INVOKE_WITH_ARGS)  // parallel_invoke calls each argument with none: 12 KB of errors before
  roost::parallel_invoke([](int) {}, [] {});
  return 0;
#elif defined(JOIN_VOID)  // roost::join of a function that returns nothing: parallel_invoke's job
  (void)roost::join([] {}, [] { return 1; });
  return 0;
#elif defined(RUN_UNMOVABLE)  // a root returning a type that cannot be moved: a template error inside <optional>
  struct unmovable {
    long v;
    explicit unmovable(long x) : v(x) {}
    unmovable(unmovable&&) = delete;
  };
  roost::runtime rt;
  return rt.run([&] { return unmovable(static_cast<long>(v.size())); }).v;
#elif defined(FLOAT_BOUNDS)  // floating-point bounds: no whole number of iterations
  double s = 0;
  roost::parallel_for(0.0, 10.5, 2, [&](double lo, double hi) { s += hi - lo; });
  return static_cast<long>(s + static_cast<double>(v.size()));
#else  // NARROW_NONE: an int body over a long identity widens, and an int body over a double identity
  // converts, which are fine; so are bounds of a wider integer type than std::size_t
  (void)roost::parallel_reduce(std::size_t{0}, v.size(), 64, 0.0,
                               [&](std::size_t lo, std::size_t hi) { return static_cast<int>(hi - lo); }, std::plus<>());
  // A body of one index, as oneTBB's and OpenMP's loops are written.
  roost::parallel_for(std::size_t{0}, v.size(), 64, [&](std::size_t i) { (void)v[i]; });
  // A narrow identity with std::plus<>, whose sum of two uint16_t is an int cut back as the serial x = x + y is.
  (void)roost::parallel_reduce(0, 1000, 16, std::uint16_t{0},
                               [](int lo, int hi) { return static_cast<std::uint16_t>(hi - lo); }, std::plus<>());
  (void)roost::parallel_reduce(0, 1000, 16, short{0}, [](int lo, int hi) { return static_cast<short>(hi - lo); },
                               std::plus<>());
  // The first refusal's advice, followed: a long body over 0L.
  (void)roost::parallel_reduce(std::size_t{0}, v.size(), 64, 0L,
                               [&](std::size_t lo, std::size_t hi) { return static_cast<long>(hi - lo); }, std::plus<>());
#if defined(__SIZEOF_INT128__)
  roost::parallel_for(__int128{0}, __int128{5}, 1, [](__int128, __int128) {});
  roost::parallel_for(0, __int128{5}, 1, [](__int128, __int128) {});  // mixed bounds, under -std=c++20 too
  (void)roost::parallel_reduce(0, __int128{5}, 1, __int128{0}, [](__int128 lo, __int128 hi) { return hi - lo; },
                               std::plus<>());
#endif
  return roost::parallel_reduce(std::size_t{0}, v.size(), 64, 0L,
                                [&](std::size_t lo, std::size_t hi) { int s = 0; for (; lo < hi; ++lo) s += static_cast<int>(v[lo]); return s; },
                                std::plus<>());
#endif
}

int main() { return 0; }
