// Parallel algorithms built on two-way joins (detail/fork_join2.hpp): what most programs need, with work
// hints set so that ADWS maps a loop's halves onto halves of the workers.
#pragma once
#include "roost/detail/min_max_aside.hpp"  // C headers' min/max macros kept out, given back at the end
#include <cstddef>
#include <limits>
#include <optional>
#include <utility>
#include <type_traits>

#include "roost/detail/fork_join2.hpp"

namespace roost {

namespace detail {
// The number of iterations in [first, last) (first < last), and first advanced by k < that. For an integer
// type in its unsigned counterpart: `last - first` in the type itself overflows for a range longer than the
// type's maximum (INT_MIN to INT_MAX), and the loop then split for ever. Unsigned arithmetic wraps, and the
// conversion back is modular (C++20), so both are exact for every range of every integer type.
template <class I>
std::size_t span(I first, I last) {
  if constexpr (std::is_integral_v<I>) {
    using U = std::make_unsigned_t<I>;
    return static_cast<std::size_t>(static_cast<U>(static_cast<U>(last) - static_cast<U>(first)));
  } else {
    return static_cast<std::size_t>(last - first);
  }
}
template <class I>
I advance(I first, std::size_t k) {
  if constexpr (std::is_integral_v<I>) {
    using U = std::make_unsigned_t<I>;
    return static_cast<I>(static_cast<U>(static_cast<U>(first) + static_cast<U>(k)));
  } else {
    return first + static_cast<std::make_signed_t<std::size_t>>(k);
  }
}

// parallel_invoke of three or more: the first function against the rest, as a chain of two-way joins. The
// hints (1 against n - 1) give ADWS the same shares as one group of n children with equal hints.
// Always inline, as fork_join2 is: left to GCC, this function stayed out of line, so the caller built its
// closures on its stack and called here, which saved its registers again (callgrind, a fib written with
// parallel_invoke of two lambdas under ws-help: 93.0 -> 86.0 instructions a spawn; #25).
template <class F, class... Rest>
__attribute__((always_inline)) inline void invoke_chain(F& first, Rest&... rest) {
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
// ws, ws-help and hws they run inline, the cheapest way roost has to split work.
// Inside runtime::run only, as task_group (one function too).
template <class... Fs>
__attribute__((always_inline)) inline void parallel_invoke(Fs&&... fs) {
  static_assert(sizeof...(Fs) >= 1, "parallel_invoke needs at least one function");
  if constexpr (sizeof...(Fs) == 1) {
    detail::current_fiber_or_throw("roost::parallel_invoke");
    (fs(), ...);
  } else {
    detail::invoke_chain(fs...);
  }
}

namespace detail {
template <class I, class Body>
void parallel_for_split(I first, I last, std::size_t grain, const Body& body) {
  std::size_t n = span(first, last);
  if (n <= grain) {
    body(first, last);
    return;
  }
  I mid = advance(first, n / 2);
  auto left = [&] { parallel_for_split(first, mid, grain, body); };
  auto right = [&] { parallel_for_split(mid, last, grain, body); };
  fork_join2("roost::parallel_for", left, right, static_cast<double>(n), static_cast<double>(n / 2));
}
template <class I, class T, class Body, class Combine>
T parallel_reduce_split(I first, I last, std::size_t grain, const T& identity, const Body& body,
                        const Combine& combine) {
  std::size_t n = span(first, last);
  if (n <= grain) return body(first, last);
  I mid = advance(first, n / 2);
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

[[noreturn]] void throw_bad_grain(const char* call, std::size_t grain);  // usage_error
// A grain of 2^63 or more is a negative one converted to std::size_t (parallel_for(0, n, -1, f) ran the
// whole range as one piece, without a word: an outside-user campaign).
inline void check_grain(const char* call, std::size_t grain) {
  if (grain > std::numeric_limits<std::size_t>::max() / 2) [[unlikely]] throw_bad_grain(call, grain);
}
}  // namespace detail

// Calls body(lo, hi) over [first, last) split by recursive bisection into pieces of at most `grain`
// iterations (grain 0 is treated as 1; a grain of 2^63 or more, a negative one converted, is a usage_error).
// Every piece runs even when another throws; the exception of the leftmost piece that threw leaves, under
// every scheduler (parallel_reduce's too, and a combine's, in the serial program's order).
// Equal halves carry equal work hints. Inside runtime::run only, like task_group: a roost::usage_error
// elsewhere, whatever the range (it ran a range of one piece serially and threw for a longer one).
template <class I, class Body>
void parallel_for(I first, I last, std::size_t grain, const Body& body) {
  detail::current_fiber_or_throw("roost::parallel_for");
  detail::check_grain("roost::parallel_for", grain);
  if (!(first < last)) return;
  detail::parallel_for_split(first, last, grain == 0 ? 1 : grain, body);
}

// Reduces body(lo, hi) -> T over [first, last) with the associative `combine`; the split is deterministic
// (it depends on first, last and grain only), so a floating-point result is the same under every scheduler.
// `identity` is the result of an empty range only. T must be move-constructible (move-only types work);
// combine(a, b) gets the halves' results as rvalues if it can take them so. Inside runtime::run only, as
// parallel_for.
template <class I, class T, class Body, class Combine>
T parallel_reduce(I first, I last, std::size_t grain, T identity, const Body& body, const Combine& combine) {
  // T is the identity's type: parallel_reduce(0, n, g, 0, body, plus) over a body that returns double
  // would truncate every partial result to int without a word (an outside-user campaign).
  using body_result = std::decay_t<std::invoke_result_t<const Body&, I&, I&>>;  // body(lo, hi): lvalues
  static_assert(!(std::is_floating_point_v<body_result> && std::is_integral_v<T>),
                "roost::parallel_reduce: the body returns a floating-point value and the identity is an integer "
                "(T is the identity's type), so every partial result would be truncated: give the identity as "
                "0.0, or as T{} of the type you reduce");
  // The same of an integer body over a narrower integer identity: a body returning long over the identity 0
  // (OpenMP's reduction(+: x) written as porting.md's table says) summed 2^32 to 0 (an outside-user campaign).
  if constexpr (std::is_integral_v<body_result> && std::is_integral_v<T> && !std::is_same_v<body_result, bool>)
    static_assert(std::numeric_limits<T>::digits >= std::numeric_limits<body_result>::digits,
                  "roost::parallel_reduce: the body returns a wider integer than the identity's type (T is the "
                  "identity's type), so every partial result would be cut to it: give the identity in the body's "
                  "type (0L, 0UL, std::size_t{0}, or T{} of the type you reduce)");
  detail::current_fiber_or_throw("roost::parallel_reduce");
  detail::check_grain("roost::parallel_reduce", grain);
  if (!(first < last)) return identity;
  return detail::parallel_reduce_split(first, last, grain == 0 ? 1 : grain, identity, body, combine);
}

namespace detail {
[[noreturn]] void throw_negative_bound(const char* call, const char* which, long long value);  // usage_error
// Two integer bounds of different types (parallel_for(0, v.size(), ...): int and std::size_t, which no single
// I deduces): both in their common type. A negative bound whose common type is unsigned would wrap to a huge
// one, and the range would be empty or enormous without a word: a roost::usage_error naming both.
template <class C, class I>
C common_bound(I v, const char* what, const char* which) {
  if constexpr (std::is_signed_v<I> && std::is_unsigned_v<C>)
    if (v < 0) throw_negative_bound(what, which, static_cast<long long>(v));
  return static_cast<C>(v);
}
// A trait, not a concept: the public headers compile as C++17 (tests/install).
template <class I, class J>
inline constexpr bool mixed_integers = std::is_integral_v<I> && std::is_integral_v<J> && !std::is_same_v<I, J> &&
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
template <class I, class J, class T, class Body, class Combine, std::enable_if_t<detail::mixed_integers<I, J>, int> = 0>
T parallel_reduce(I first, J last, std::size_t grain, T identity, const Body& body, const Combine& combine) {
  using C = std::common_type_t<I, J>;
  return parallel_reduce(detail::common_bound<C>(first, "roost::parallel_reduce", "first"),
                         detail::common_bound<C>(last, "roost::parallel_reduce", "last"), grain,
                         std::move(identity), body, combine);
}

}  // namespace roost

#include "roost/detail/min_max_back.hpp"
