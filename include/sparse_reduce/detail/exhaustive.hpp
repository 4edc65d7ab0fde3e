#pragma once
// Closing an exhaustive dispatch, so that a new case is a compile error or a
// warning rather than a silent fallback:
//
//   switch over one of the library's enums   every enumerator a case, no
//                                            `default:` (-Wswitch, in -Wall,
//                                            warns on a missing one), and
//                                            unreachable() after the switch
//                                            where the function must return
//   if constexpr chain on a kind             each kind tested explicitly, the
//                                            last branch
//                                            `else static_assert(dependent_false<T>, "...")`

namespace sparse_reduce::detail {

// false, but only once T is known: a static_assert on it fires only in the
// branch of an if constexpr chain that is instantiated.
template <class...>
inline constexpr bool dependent_false = false;

// After a switch that returns in every case of a valid enumerator: marks the
// end as not reached (C++23's std::unreachable).
[[noreturn]] inline void unreachable() { __builtin_unreachable(); }

} // namespace sparse_reduce::detail
