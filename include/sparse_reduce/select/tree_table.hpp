#pragma once
// The reduce trees selection knows, in one table. A row says which
// algorithm it is, its name, whether it takes a branching factor, from how
// many ranks Sreduce's model weighs it, how its trees are built, and (as its
// type) the policy that runs it. Everything that lists the trees reads it:
// to_string(algorithm), Sreduce's candidates (select/sreduce.hpp),
// algorithm_trees, the policy -> algorithm mapping (select/resolve.hpp),
// validate()'s names (policy_check.hpp) and the benchmarks' fixed policies.
// The pattern is CUB BlockReduce's: an enumerator picks a specialisation.
//
// Adding a tree: its builder in tree/, its policy struct in policy.hpp, an
// enumerator in `algorithm` and a row in tree_table, in the enum's order
// (checked at compile time). optimal_binary is not a row: it is built from
// the gathered entry counts, never chosen by Sreduce (select/resolve.hpp).

#include <array>
#include <concepts>
#include <cstddef>
#include <ostream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../policy.hpp"
#include "../tree/binary.hpp"
#include "../tree/binomial.hpp"
#include "../tree/chain.hpp"
#include "../tree/k_ary.hpp"
#include "../tree/tree.hpp"
#include "../tree/two_tree.hpp"

namespace sparse_reduce {

/// The reduce tree algorithms selection chooses among; one enumerator per
/// row of detail::tree_table, in its order.
enum class algorithm { binomial, k_ary, binary, chain, two_tree };

namespace detail {

// k: the branching factor (read by rows that take one).
using build_trees_fn = std::vector<tree> (*)(int size, int root, bool commutative, int k);

// What selection knows of one tree algorithm.
struct tree_algorithm {
    algorithm id;
    const char* name;     // to_string(algorithm), and so the report's text
    bool branching;       // built with a branching factor k, shown as "(k=..)"
    int min_ranks;        // Sreduce's model weighs it from this many ranks on
    build_trees_fn build; // its trees over `size` ranks, rooted at `root`
};

// A row: the descriptor, and as its type the policy that runs it.
template <class Policy>
struct tree_row : tree_algorithm {
    using policy_type = Policy;
    constexpr tree_row(algorithm id, const char* name, bool branching, int min_ranks, build_trees_fn build)
        : tree_algorithm{id, name, branching, min_ranks, build}
    {
    }
};

// Builders of one tree, as the table's signature.
template <tree (*Build)(int, int, bool)>
std::vector<tree> one_tree(int size, int root, bool commutative, int)
{
    return {Build(size, root, commutative)};
}
inline std::vector<tree> one_k_ary_tree(int size, int root, bool commutative, int k)
{
    return {k_ary_tree(size, root, commutative, k)};
}
inline std::vector<tree> both_two_trees(int size, int root, bool commutative, int)
{
    const auto t = two_trees(size, root, commutative);
    return {t[0], t[1]};
}

// Two trees start at 4 ranks: below, one tree's top is not the root and the
// root's own half travels out and back (0 -> 1 -> 0).
inline constexpr int two_tree_min_ranks = 4;

inline constexpr std::tuple tree_table{
    //        policy                 id                    name        k?     min P  builder
    tree_row<policy::binomial>{algorithm::binomial, "binomial", false, 1, one_tree<binomial_tree>},
    tree_row<policy::k_ary>{algorithm::k_ary, "k_ary", true, 1, one_k_ary_tree},
    tree_row<policy::binary>{algorithm::binary, "binary", false, 1, one_tree<binary_tree>},
    tree_row<policy::chain>{algorithm::chain, "chain", false, 1, one_tree<chain_tree>},
    tree_row<policy::two_tree>{algorithm::two_tree, "two_tree", false, two_tree_min_ranks, both_two_trees},
};

// The descriptors in the enum's order, for look-ups at run time.
inline constexpr auto tree_algorithms = std::apply(
    [](const auto&... row) { return std::array<tree_algorithm, sizeof...(row)>{row...}; }, tree_table);

static_assert(
    [] {
        for (std::size_t i = 0; i < tree_algorithms.size(); ++i)
            if (tree_algorithms[i].id != static_cast<algorithm>(i)) return false;
        return true;
    }(),
    "tree_table: one row per enumerator of sparse_reduce::algorithm, in the enum's order");

// The row of an algorithm (an enumerator without a row fails here).
inline const tree_algorithm& row_of(algorithm a)
{
    const auto i = static_cast<std::size_t>(a);
    if (i >= tree_algorithms.size()) fail("no row in tree_table for algorithm ", i);
    return tree_algorithms[i];
}

// Calls f(row) for every row, with the row's type (and so its policy).
template <class F>
void for_each_tree_row(F&& f)
{
    std::apply([&](const auto&... row) { (f(row), ...); }, tree_table);
}

// The index of Policy's row, -1 when it has none.
template <class Policy, std::size_t... I>
consteval int find_tree_row(std::index_sequence<I...>)
{
    int at = -1;
    ((std::same_as<typename std::tuple_element_t<I, std::remove_cv_t<decltype(tree_table)>>::policy_type, Policy>
          ? void(at = static_cast<int>(I))
          : void()),
     ...);
    return at;
}
template <class Policy>
inline constexpr int tree_row_index =
    find_tree_row<Policy>(std::make_index_sequence<std::tuple_size_v<std::remove_cv_t<decltype(tree_table)>>>{});

} // namespace detail

/// A reduce policy that runs one of the table's algorithms.
template <class P>
concept tree_table_policy = reduce_policy<P> && (detail::tree_row_index<P> >= 0);

namespace detail {

template <tree_table_policy Policy>
inline constexpr const tree_algorithm& tree_row_of = tree_algorithms[static_cast<std::size_t>(tree_row_index<Policy>)];

// The algorithm a policy runs.
template <tree_table_policy Policy>
inline constexpr algorithm algorithm_of = tree_row_of<Policy>.id;

// The trees of algorithm a (k: k_ary's branching factor).
inline std::vector<tree> algorithm_trees(algorithm a, int k, int size, int root, bool commutative)
{
    return row_of(a).build(size, root, commutative, k);
}

} // namespace detail

/// The algorithm's name, from its row: "binomial", "k_ary", "binary", "chain" or "two_tree".
inline const char* to_string(algorithm a) { return detail::row_of(a).name; }

/// Writes to_string(a).
inline std::ostream& operator<<(std::ostream& os, algorithm a) { return os << to_string(a); }

} // namespace sparse_reduce
