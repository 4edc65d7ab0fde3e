#pragma once
/// @file
/// sparse_reduce::policy::any: a reduce tree chosen at run time. Include
/// `<sparse_reduce/policy_any.hpp>` beside the collectives (it is not part of
/// `<sparse_reduce/sparse_reduce.hpp>`: a program that never names it does
/// not parse std::variant for it).

#include <concepts>
#include <type_traits>
#include <utility>
#include <variant>

#include "policy.hpp"

namespace sparse_reduce::policy {

/// Any of the reduce trees (policy.hpp), chosen at run time: from a command line, a
/// configuration file, a list a program loops over. reduce, make_plan and
/// simulate_reduce take it as they take the tree it holds. The caller's
/// code around the call is compiled once for every tree, where a template
/// over the tree types (a std::visit of one's own) compiles it once per type.
///
///     std::vector<policy::any> trees = {policy::binomial{}, policy::two_tree{.segment_bytes = 1 << 16}};
///     for (const policy::any& p : trees) reduce(comm, in, out, std::plus<>{}, 0, p);
template <class>
class basic_any {
public:
    /// The trees it can hold.
    using variant = std::variant<binomial, k_ary, binary, chain, optimal_binary, two_tree, automatic>;

    basic_any() = default; ///< automatic{}
    /// Holds p (implicit, as the policy it holds is taken).
    template <class P>
        requires(!std::same_as<std::remove_cvref_t<P>, basic_any> && std::is_constructible_v<variant, P &&>)
    basic_any(P&& p) : held_(std::forward<P>(p))
    {
    }

    /// The held policy; change it through the mutable one.
    const variant& held() const { return held_; }
    variant& held() { return held_; }
    /// f(the held policy), as std::visit.
    template <class F>
    decltype(auto) visit(F&& f) const
    {
        return std::visit(std::forward<F>(f), held_);
    }
    template <class F>
    decltype(auto) visit(F&& f)
    {
        return std::visit(std::forward<F>(f), held_);
    }

private:
    variant held_{automatic{}};
};

} // namespace sparse_reduce::policy
