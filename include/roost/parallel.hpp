// Parallel algorithms built on two-way joins (detail/fork_join2.hpp): what most programs need, with work
// hints set so that ADWS maps a loop's halves onto halves of the workers.
#pragma once
#include "roost/detail/min_max_aside.hpp"  // C headers' min/max macros kept out, given back at the end
#include <cstddef>
#include <iterator>
#include <limits>
#include <optional>
#include <utility>
#include <type_traits>

#include "roost/detail/fork_join2.hpp"
#include "roost/detail/join_values.hpp"
#include "roost/detail/spawn_inline.hpp"
#include "roost/runtime.hpp"

namespace roost {

namespace detail {
// The number of iterations in [first, last) (first < last), and first advanced by k < that. For an integer
// type in its unsigned counterpart: `last - first` in the type itself overflows for a range longer than the
// type's maximum (INT_MIN to INT_MAX), and the loop then split for ever. Unsigned arithmetic wraps, and the
// conversion back is modular (C++20), so both are exact for every range of every integer type.
// The count's type: std::size_t, or the unsigned counterpart of a wider integer type (__int128, whose range
// of 2^64 + 5 was cut to 5 in a std::size_t, and split into pieces of 2^64 iterations at grain 1: an
// outside-user campaign).
// __int128 is an integer whether or not the standard library says so (-std=c++20 says not, gnu++20 does).
template <class I>
struct unsigned_of {
  using type = std::make_unsigned_t<I>;
};
template <class I>
inline constexpr bool is_integer = std::is_integral_v<I>;
#if defined(__SIZEOF_INT128__)
__extension__ using int128 = __int128;
__extension__ using uint128 = unsigned __int128;
template <>
inline constexpr bool is_integer<int128> = true;
template <>
inline constexpr bool is_integer<uint128> = true;
template <>
struct unsigned_of<int128> {
  using type = uint128;
};
template <>
struct unsigned_of<uint128> {
  using type = uint128;
};
#endif
// Signedness by value, not std::is_signed, which says false for __int128 under -std=c++20.
template <class I>
constexpr bool signed_integer() {
  if constexpr (is_integer<I>) return static_cast<I>(-1) < static_cast<I>(0);
  else return false;
}
template <class I, bool = is_integer<I>>
struct count_of {
  using type = std::size_t;
};
template <class I>
struct count_of<I, true> {
  using type = std::common_type_t<std::size_t, typename unsigned_of<I>::type>;
};
template <class I>
using count_t = typename count_of<I>::type;
template <class I>
count_t<I> span(I first, I last) {
  if constexpr (is_integer<I>) {
    using U = typename unsigned_of<I>::type;
    return static_cast<count_t<I>>(static_cast<U>(static_cast<U>(last) - static_cast<U>(first)));
  } else {
    return static_cast<std::size_t>(last - first);
  }
}
// Called qualified (detail::span, detail::advance): with std::vector iterators an unqualified advance() also
// found std::advance by argument-dependent lookup, and the call was ambiguous (an outside-user campaign).
template <class I>
I advance(I first, count_t<I> k) {
  if constexpr (is_integer<I>) {
    using U = typename unsigned_of<I>::type;
    return static_cast<I>(static_cast<U>(static_cast<U>(first) + static_cast<U>(k)));
  } else {
    return first + static_cast<std::make_signed_t<std::size_t>>(k);
  }
}
// Bounds are integers or random-access iterators: a floating-point bound made pieces such as [8, 10.5), not a
// whole number of iterations, and a bound of 1e30 converted to std::size_t, undefined (an outside-user
// campaign).
template <class I>
inline constexpr bool numeric_bound_ok = !std::is_floating_point_v<I> && !std::is_same_v<I, bool>;
// A class type as a bound is an iterator, and a random-access one: std::list's or std::map's gave 50 KB of
// operator< candidates (an outside-user campaign).
template <class I>
inline constexpr bool iterator_bound_ok = !std::is_class_v<I> || std::random_access_iterator<I>;
template <class I>
inline constexpr bool valid_bound = numeric_bound_ok<I> && iterator_bound_ok<I>;
#define ROOST_DETAIL_CHECK_BOUNDS(call)                                                                          \
  static_assert(detail::numeric_bound_ok<I>, call ": the bounds are integers or random-access iterators, not "  \
                                             "floating-point numbers or bools");                                 \
  static_assert(detail::iterator_bound_ok<I>, call ": the bounds are integers or random-access iterators; these " \
                                              "iterators are not random-access (std::list's, std::map's, "       \
                                              "std::set's): loop over the indices of a std::vector instead")

// parallel_invoke of three or more: the first function against the rest, as a chain of two-way joins. The
// hints (1 against n - 1) give ADWS the same shares as one group of n children with equal hints.
// Always inline, as fork_join2 is: left to GCC, this function stayed out of line, so the caller built its
// closures on its stack and called here, which saved its registers again (callgrind, a fib written with
// parallel_invoke of two lambdas under ws-help: 93.0 -> 86.0 instructions a spawn; #25).
template <class F, class... Rest>
ROOST_DETAIL_SPAWN_INLINE inline void invoke_chain(F& first, Rest&... rest) {
  constexpr std::size_t n = 1 + sizeof...(Rest);
  if constexpr (n == 2) {
    fork_join2("roost::parallel_invoke", first, rest..., 2.0, 1.0);
  } else {
    auto the_rest = [&] { invoke_chain(rest...); };
    fork_join2("roost::parallel_invoke", first, the_rest, static_cast<double>(n), 1.0);
  }
}
}  // namespace detail

// Runs every function, possibly in parallel; returns when all are done. Every function runs even when
// another throws; when several throw, the exception of the first of them in argument order leaves, under
// every scheduler: the one the serial program would throw. Built from two-way joins (detail/fork_join2.hpp): under
// ws, ws-help and hws they run inline, the cheapest way roost has to split work. A function object that is
// trivially copyable and callable as const may run as a copy (detail/fork_join2.hpp, join_copies_v); any
// other runs as itself (user-guide.md, "Parallel algorithms").
// Inside runtime::run only, as task_group (one function too).
template <class... Fs>
ROOST_DETAIL_SPAWN_INLINE inline void parallel_invoke(Fs&&... fs) {
  static_assert(sizeof...(Fs) >= 1, "parallel_invoke needs at least one function");
  // 12 KB of template errors for a lambda that takes an argument (an outside-user campaign).
  static_assert((std::is_invocable_v<std::remove_reference_t<Fs>&> && ...),
                "roost::parallel_invoke: every argument is a function called with no arguments (as [&] { f(x); }); "
                "one is not callable so: bind its arguments in a lambda");
  if constexpr (!(std::is_invocable_v<std::remove_reference_t<Fs>&> && ...)) {
    return;
  } else if constexpr (sizeof...(Fs) == 1) {
    detail::current_fiber_or_throw("roost::parallel_invoke");
    (fs(), ...);
  } else {
    detail::invoke_chain(fs...);
  }
}

// Runs f() and g(), possibly in parallel, and returns both results, {f(), g()} (Rayon's `join`):
//   auto [a, b] = roost::join([&] { return fib(n - 1); }, [&] { return fib(n - 2); });
// parallel_invoke's join on every scheduler (the same halves pushed, the same exceptions: both run even when
// one throws, and the first's leaves when both do), but the results come back as values, not through the
// caller's locals: a recursion written so can become a loop, as Lace's fib does (detail/join_values.hpp).
// Each function returns an object (for functions that return nothing, parallel_invoke); a function object
// that is trivially copyable and callable as const may run as a copy. Inside runtime::run only.
template <class F, class G>
ROOST_DETAIL_SPAWN_INLINE inline auto join(F&& f, G&& g) {
  using first_t = std::remove_reference_t<F>;
  using second_t = std::remove_reference_t<G>;
  static_assert(std::is_invocable_v<first_t&> && std::is_invocable_v<second_t&>,
                "roost::join: both arguments are functions called with no arguments (as [&] { return f(x); }); "
                "one is not callable so: bind its arguments in a lambda");
  if constexpr (!(std::is_invocable_v<first_t&> && std::is_invocable_v<second_t&>)) {
    return;
  } else {
    static_assert(detail::join_result_ok_v<first_t> && detail::join_result_ok_v<second_t>,
                  "roost::join: both functions return a value, which the join moves (not void, not a reference, "
                  "not an array): for functions that return nothing use roost::parallel_invoke; return a pointer "
                  "or a std::reference_wrapper in place of a reference");
    if constexpr (detail::join_result_ok_v<first_t> && detail::join_result_ok_v<second_t>) {
      return detail::fork_join2_values("roost::join", f, g);
    }
  }
}

namespace detail {
template <class I, class Body>
void parallel_for_split(I first, I last, std::size_t grain, const Body& body) {
  const count_t<I> n = detail::span(first, last);
  if (n <= grain) {
    body(first, last);
    return;
  }
  I mid = detail::advance(first, n / 2);
  auto left = [&] { parallel_for_split(first, mid, grain, body); };
  auto right = [&] { parallel_for_split(mid, last, grain, body); };
  fork_join2("roost::parallel_for", left, right, static_cast<double>(n), static_cast<double>(n / 2));
}
template <class I, class T, class Body, class Combine>
T parallel_reduce_split(I first, I last, std::size_t grain, const T& identity, const Body& body,
                        const Combine& combine) {
  const count_t<I> n = detail::span(first, last);
  if (n <= grain) return body(first, last);
  I mid = detail::advance(first, n / 2);
  // Each half's result is made in place, from the body's or the combine's value: T need be neither copyable
  // nor default-constructible (a reduction of std::unique_ptr did not compile), and a heavy T is not copied
  // at each split. The combine is given them as rvalues where it takes them so (by value, or T&&), else
  // as lvalues.
  std::optional<T> left, right;
  auto run_left = [&] { left.emplace(parallel_reduce_split(first, mid, grain, identity, body, combine)); };
  auto run_right = [&] { right.emplace(parallel_reduce_split(mid, last, grain, identity, body, combine)); };
  fork_join2("roost::parallel_reduce", run_left, run_right, static_cast<double>(n), static_cast<double>(n / 2));
  if constexpr (std::is_invocable_v<const Combine&, T&&, T&&>) return combine(std::move(*left), std::move(*right));
  else return combine(*left, *right);
}

// The grain of a loop given none: OpenCilk's cilk_for rule, min(2048, ceil(n / (8 P))) for n iterations and
// P workers (cheetah's __cilkrts_cilk_for_grainsize): about eight pieces a worker, so that a thief finds
// work while the others finish theirs, and no piece over 2048 iterations, where the split's cost is lost.
template <class I>
std::size_t automatic_grain(I first, I last) {
  const count_t<I> n = detail::span(first, last);
  const unsigned workers = this_runtime_workers();
  const count_t<I> pieces = count_t<I>(8) * count_t<I>(workers ? workers : 1);
  const count_t<I> per_piece = n / pieces + (n % pieces != 0 ? 1 : 0);
  return per_piece >= count_t<I>(2048) ? 2048 : per_piece < count_t<I>(1) ? 1 : static_cast<std::size_t>(per_piece);
}

[[noreturn]] void throw_bad_grain(const char* call, std::size_t grain);  // usage_error
// A grain of 2^63 or more is a negative one converted to std::size_t (parallel_for(0, n, -1, f) ran the
// whole range as one piece, without a word: an outside-user campaign).
inline void check_grain(const char* call, std::size_t grain) {
  if (grain > std::numeric_limits<std::size_t>::max() / 2) [[unlikely]] throw_bad_grain(call, grain);
}
// What combine(a, b) returns, given T's as parallel_reduce_split gives them (rvalues where it takes them).
template <class Combine, class T, bool = std::is_invocable_v<const Combine&, T&&, T&&>>
struct combine_result {
  using type = std::decay_t<std::invoke_result_t<const Combine&, T&, T&>>;
};
template <class Combine, class T>
struct combine_result<Combine, T, true> {
  using type = std::decay_t<std::invoke_result_t<const Combine&, T&&, T&&>>;
};
template <class Combine, class T>
using combine_result_t = typename combine_result<Combine, T>::type;
// Whether a partial result R (the body's or the combine's) keeps its value as the identity's type T; each
// case that would not is refused with its own message (outside-user campaigns and a review found each one
// compiling and giving a wrong answer). Always true when it compiles, for a static_assert around the call.
template <class R, class T, bool kCombine = false>
constexpr bool identity_keeps() {
  // A floating-point result over an integer identity: truncated (a double body over the identity 0).
  // is_integer and signed_integer, not the std traits, which say no for __int128 under -std=c++20: an
  // __int128 body over an int identity compiled and was cut (a review).
  static_assert(!(std::is_floating_point_v<R> && is_integer<T>),
                "roost::parallel_reduce: the body or the combine returns a floating-point value and the identity is "
                "an integer (T is the identity's type), so every partial result would be truncated: give the "
                "identity as 0.0, or as T{} of the type you reduce");
  // A combine's arithmetic on a narrow identity's type (uint16_t{} + uint16_t{} is an int, as std::plus<>()
  // returns it) is cut back to T as the serial program's `x = x + y` cuts it: allowed for the combine (an
  // outside-user campaign found std::plus<>() over a short or an uint8_t refused, with advice to leave the
  // type); a body's int over such an identity is still refused.
  constexpr bool promoted = [] {
    if constexpr (kCombine && std::is_integral_v<T> && !std::is_same_v<T, bool>)
      return std::is_same_v<R, decltype(+T{})>;
    else
      return false;
  }();
  if constexpr (is_integer<R> && !std::is_same_v<R, bool> && is_integer<T> && !promoted) {
    // A long body over the identity 0 (OpenMP's reduction(+: x) written as porting.md's table says) summed
    // 2^32 to 0.
    static_assert(std::numeric_limits<T>::digits >= std::numeric_limits<R>::digits,
                  "roost::parallel_reduce: the body or the combine returns a wider integer than the identity's type "
                  "(T is the identity's type), so every partial result would be cut to it: give the identity in "
                  "that type (0L for long, 0LL for long long, std::size_t{0} for std::size_t, or T{} of the type "
                  "you reduce)");
    // A min over {4, -3, 5} gave 4: each negative partial result wrapped to a huge unsigned one.
    static_assert(!(signed_integer<R>() && !signed_integer<T>()),
                  "roost::parallel_reduce: the body or the combine returns a signed integer and the identity is "
                  "unsigned (T is the identity's type), so every negative partial result would wrap: give the "
                  "identity in that type (0, 0L, or T{} of the type you reduce)");
  }
  // An integer result over a floating-point identity with fewer digits: a long sum of 2^53 + 1 in 0.0 came
  // out 2^53, an int one of 2^24 + 1 in 0.0f 2^24. An int in 0.0 is exact, and allowed.
  if constexpr (is_integer<R> && !std::is_same_v<R, bool> && std::is_floating_point_v<T>)
    static_assert(std::numeric_limits<T>::digits >= std::numeric_limits<R>::digits,
                  "roost::parallel_reduce: the body or the combine returns an integer with more digits than the "
                  "identity's floating-point type holds (T is the identity's type), so partial results would be "
                  "rounded: give the identity in that integer type (0L), or convert in the body");
  // A double sum in a float identity lost its digits.
  if constexpr (std::is_floating_point_v<R> && std::is_floating_point_v<T>)
    static_assert(std::numeric_limits<T>::digits >= std::numeric_limits<R>::digits,
                  "roost::parallel_reduce: the body or the combine returns a wider floating-point type than the "
                  "identity's (T is the identity's type), so every partial result would be rounded to it: give the "
                  "identity in that type (0.0 for double, 0.0L for long double)");
  // A result that owns memory, held in an identity type that cannot (std::string into std::string_view):
  // each partial result was a view of a destroyed temporary (heap-use-after-free).
  static_assert(!(std::is_class_v<R> && std::is_class_v<T> && !std::is_same_v<R, T> &&
                  !std::is_trivially_destructible_v<R> && std::is_trivially_destructible_v<T>),
                "roost::parallel_reduce: the body or the combine returns a type that owns its memory and the "
                "identity's type does not (T is the identity's type: a std::string_view of a std::string, a "
                "std::span of a std::vector), so every partial result would refer to a destroyed temporary: give "
                "the identity in the owning type");
  return true;
}
}  // namespace detail

// Calls body(lo, hi) over [first, last) split by recursive bisection into pieces of at most `grain`
// iterations (grain 0 is treated as 1; a grain of 2^63 or more, a negative one converted, is a usage_error).
// A body that takes one index, body(i), as oneTBB's and OpenMP's loops are written, is called for each i of
// each piece in order (the same pieces).
// Every piece runs even when another throws; the exception of the leftmost piece that threw leaves, under
// every scheduler (parallel_reduce's too, and a combine's, in the serial program's order).
// Equal halves carry equal work hints. Inside runtime::run only, like task_group: a roost::usage_error
// elsewhere, whatever the range (it ran a range of one piece serially and threw for a longer one).
template <class I, class Body>
void parallel_for(I first, I last, std::size_t grain, const Body& body) {
  ROOST_DETAIL_CHECK_BOUNDS("roost::parallel_for");
  constexpr bool by_range = std::is_invocable_v<const Body&, I&, I&>;
  constexpr bool by_index = std::is_invocable_v<const Body&, I&>;
  static_assert(by_range || by_index || !detail::valid_bound<I>,
                "roost::parallel_for: the body is called as body(lo, hi) with a piece [lo, hi) of the range, or as "
                "body(i) with one index, of the bounds' type; it takes neither (a const call operator: the body is "
                "shared by every piece)");
  if constexpr (detail::valid_bound<I> && (by_range || by_index)) {  // else refused above: no more errors
    detail::current_fiber_or_throw("roost::parallel_for");
    detail::check_grain("roost::parallel_for", grain);
    if (!(first < last)) return;
    if constexpr (by_range) {
      detail::parallel_for_split(first, last, grain == 0 ? 1 : grain, body);
    } else {
      const auto each = [&body](I lo, I hi) {
        for (I i = lo; i < hi; ++i) body(i);
      };
      detail::parallel_for_split(first, last, grain == 0 ? 1 : grain, each);
    }
  }
}

// parallel_for with the grain OpenCilk's cilk_for chooses, for the caller's runtime: min(2048, ceil(n / 8P))
// iterations a piece for n iterations and P workers, about eight pieces a worker. oneTBB's
// parallel_for(first, last, f) and a cilk_for port as they are written. Give a grain where the iterations'
// costs differ widely, or where a piece should fit a cache. The same rules otherwise (inside runtime::run
// only; body(lo, hi) or body(i)).
template <class I, class Body>
void parallel_for(I first, I last, const Body& body) {
  ROOST_DETAIL_CHECK_BOUNDS("roost::parallel_for");
  if constexpr (detail::valid_bound<I>) {  // else refused above: no more errors
    detail::current_fiber_or_throw("roost::parallel_for");
    if (!(first < last)) return;
    parallel_for(first, last, detail::automatic_grain(first, last), body);
  }
}

// Reduces body(lo, hi) -> T over [first, last) with the associative `combine`; the split is deterministic
// (it depends on first, last and grain only), so a floating-point result is the same under every scheduler.
// `identity` is the result of an empty range only. T must be move-constructible (move-only types work);
// combine(a, b) gets the halves' results as rvalues if it can take them so. Inside runtime::run only, as
// parallel_for.
template <class I, class T, class Body, class Combine>
T parallel_reduce(I first, I last, std::size_t grain, T identity, const Body& body, const Combine& combine) {
  // T is the identity's type, and every partial result, the body's and the combine's, is made a T: one that
  // would change them does not compile (detail::identity_keeps).
  ROOST_DETAIL_CHECK_BOUNDS("roost::parallel_reduce");
  if constexpr (!detail::valid_bound<I>) {  // refused above: no more errors
    return identity;
  } else {
    static_assert(std::is_invocable_v<const Body&, I&, I&>,
                  "roost::parallel_reduce: the body is called as body(lo, hi) with a piece [lo, hi) of the range and "
                  "returns that piece's result (a const call operator: the body is shared by every piece)");
    using body_result = std::decay_t<std::invoke_result_t<const Body&, I&, I&>>;  // body(lo, hi): lvalues
    static_assert(detail::identity_keeps<body_result, T>());
    static_assert(detail::identity_keeps<detail::combine_result_t<Combine, T>, T, /*kCombine=*/true>());
    detail::current_fiber_or_throw("roost::parallel_reduce");
    detail::check_grain("roost::parallel_reduce", grain);
    if (!(first < last)) return identity;
    return detail::parallel_reduce_split(first, last, grain == 0 ? 1 : grain, identity, body, combine);
  }
}

namespace detail {
[[noreturn]] void throw_negative_bound(const char* call, const char* which, long long value);  // usage_error
// The same for a value wider than long long, given as its decimal digits (a cast kept the low 64 bits:
// -2^100 was said to be "0 ... negative").
[[noreturn]] void throw_negative_bound_digits(const char* call, const char* which, const char* digits);
template <class I>
[[noreturn]] void throw_negative(I v, const char* call, const char* which) {
#if defined(__SIZEOF_INT128__)
  if constexpr (sizeof(I) > sizeof(long long)) {
    uint128 m = uint128{0} - static_cast<uint128>(v);  // the magnitude, exact for the most negative value too
    char digits[48];
    char* p = digits + sizeof digits;
    *--p = '\0';
    do {
      *--p = static_cast<char>('0' + static_cast<int>(m % 10));
      m /= 10;
    } while (m != 0);
    *--p = '-';
    throw_negative_bound_digits(call, which, p);
  } else
#endif
  {
    throw_negative_bound(call, which, static_cast<long long>(v));
  }
}
// Two integer bounds of different types (parallel_for(0, v.size(), ...): int and std::size_t, which no single
// I deduces): both in their common type. A negative bound whose common type is unsigned would wrap to a huge
// one, and the range would be empty or enormous without a word: a roost::usage_error naming both.
template <class C, class I>
C common_bound(I v, const char* what, const char* which) {
  if constexpr (signed_integer<I>() && !signed_integer<C>())
    if (v < 0) throw_negative(v, what, which);
  return static_cast<C>(v);
}
// A trait, not a concept: the public headers compile as C++17 (tests/install). is_integer, not
// std::is_integral: parallel_for(0, n128, ...) found no overload under -std=c++20 (an outside-user campaign).
template <class I, class J>
inline constexpr bool mixed_integers = is_integer<I> && is_integer<J> && !std::is_same_v<I, J> &&
                                       !std::is_same_v<I, bool> && !std::is_same_v<J, bool>;
}  // namespace detail

// parallel_for and parallel_reduce over bounds of two integer types (0 and v.size()): both in their common
// type, the type body(lo, hi) is given; a negative bound where that type is unsigned is a usage_error.
template <class I, class J, class Body, std::enable_if_t<detail::mixed_integers<I, J>, int> = 0>
void parallel_for(I first, J last, std::size_t grain, const Body& body) {
  using C = std::common_type_t<I, J>;
  parallel_for(detail::common_bound<C>(first, "roost::parallel_for", "first"),
               detail::common_bound<C>(last, "roost::parallel_for", "last"), grain, body);
}
template <class I, class J, class Body, std::enable_if_t<detail::mixed_integers<I, J>, int> = 0>
void parallel_for(I first, J last, const Body& body) {
  using C = std::common_type_t<I, J>;
  parallel_for(detail::common_bound<C>(first, "roost::parallel_for", "first"),
               detail::common_bound<C>(last, "roost::parallel_for", "last"), body);
}
// oneTBB's shape without a grain, parallel_reduce(first, last, identity, body, combine), matched no overload and
// gave a page of candidates (an outside-user campaign): it is refused here with the reason.
template <class I, class J, class T, class Body, class Combine>
T parallel_reduce(I, J, T, const Body&, const Combine&) {
  static_assert(sizeof(I) == 0,
                "roost::parallel_reduce(first, last, grain, identity, body, combine): give a grain, the third "
                "argument (the most iterations a piece may have): the split, and so a floating-point result, "
                "depends on the range and the grain only, never on the number of workers");
  return T{};
}
template <class I, class J, class T, class Body, class Combine, std::enable_if_t<detail::mixed_integers<I, J>, int> = 0>
T parallel_reduce(I first, J last, std::size_t grain, T identity, const Body& body, const Combine& combine) {
  using C = std::common_type_t<I, J>;
  return parallel_reduce(detail::common_bound<C>(first, "roost::parallel_reduce", "first"),
                         detail::common_bound<C>(last, "roost::parallel_reduce", "last"), grain,
                         std::move(identity), body, combine);
}

}  // namespace roost

#undef ROOST_DETAIL_CHECK_BOUNDS

#include "roost/detail/min_max_back.hpp"
