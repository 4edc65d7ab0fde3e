#pragma once
/// @file
/// sparse_reduce::tree, a reduction tree as plain data, and its text and
/// Graphviz forms. Include `<sparse_reduce/sparse_reduce.hpp>`.

#include <algorithm>
#include <cstddef>
#include <functional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "../error.hpp"

namespace sparse_reduce {

/// A reduction tree as plain data: who sends to whom, and in which order a
/// node folds its children's results with its own. Printable and testable
/// without MPI; the executors read only the rank-local view.
///
///     parent[r]         the rank r sends its partial result to (-1 at the top)
///     children[r]       the ranks r receives from, in fold order
///     self_position[r]  where r's own vector goes among them: r folds
///                         c[0] ⊗ ... ⊗ c[p-1] ⊗ own ⊗ c[p] ⊗ ...
///     top               the rank where the fold completes
///     destination       the root the caller asked for; when it differs from
///                       top, top forwards the result in one more transfer (how
///                       order-preserving trees serve any root)
///     order_preserving  every subtree covers a contiguous range of ranks and
///                       the fold order is rank order: safe for non-commutative ops
struct tree {
    int size = 0;                           ///< P, the number of ranks.
    int top = 0;                            ///< The rank where the fold completes.
    int destination = 0;                    ///< The root the caller asked for.
    bool order_preserving = false;          ///< Folds in rank order (safe for non-commutative ops).
    std::string name;                       ///< E.g.\ "binomial", "k_ary(k=4)".
    std::vector<int> parent;                ///< parent[r]: where r sends (-1 at the top).
    std::vector<std::vector<int>> children; ///< children[r]: whom r receives from, in fold order.
    std::vector<int> self_position;         ///< self_position[r]: where r's own vector goes among them.

    /// What one rank needs of the tree.
    struct local_view {
        int parent;                    // -1 at the top
        std::span<const int> children; // fold order
        int self_position;
        bool forwards;                 // this rank is top and must send the result to destination
        bool receives_forward;         // this rank is destination and top is another rank
    };
    /// Rank `rank`'s view.
    local_view local(int rank) const
    {
        const auto r = static_cast<std::size_t>(rank);
        return {parent[r], children[r], self_position[r], rank == top && top != destination,
                rank == destination && top != destination};
    }

    /// Levels below the top (a single rank has depth 0).
    int depth() const
    {
        int d = 0;
        for (int r = 0; r < size; ++r) {
            int k = 0;
            for (int x = r; parent[static_cast<std::size_t>(x)] >= 0; x = parent[static_cast<std::size_t>(x)]) ++k;
            d = std::max(d, k);
        }
        return d;
    }
};

namespace detail {

// Trees are built over virtual ranks 0..P-1 from a rule that splits an
// interval [lo, hi) into its head (the node itself) and child intervals.
// Children intervals are contiguous and given in rank order, so the virtual
// tree preserves order. split(lo, hi, k, children_out) returns the node's
// rank within [lo, hi) and appends the child intervals; k is the rule's one
// parameter (k_ary's branching factor). A plain function pointer, so the
// builder is compiled once for every tree.
struct interval {
    int lo, hi;
};
using split_rule = int (*)(int lo, int hi, int k, std::vector<interval>& out);

inline tree build_interval_tree(int size, split_rule split, int k = 0)
{
    tree t;
    t.size = size;
    t.order_preserving = true;
    t.parent.assign(static_cast<std::size_t>(size), -1);
    t.children.assign(static_cast<std::size_t>(size), {});
    t.self_position.assign(static_cast<std::size_t>(size), 0);
    if (size == 0) return t;
    std::vector<std::pair<interval, int>> stack{{{0, size}, -1}};
    std::vector<interval> parts;
    bool first = true;
    while (!stack.empty()) {
        const auto [iv, up] = stack.back();
        stack.pop_back();
        parts.clear();
        const int self = split(iv.lo, iv.hi, k, parts);
        const auto s = static_cast<std::size_t>(self);
        if (first) t.top = self, first = false;
        t.parent[s] = up;
        int position = 0;
        for (const interval& c : parts) {
            if (c.hi <= self) ++position;
            // the child's own node is decided when its interval is split
            stack.push_back({c, self});
        }
        t.self_position[s] = position;
    }
    // children in interval (= rank) order
    for (int r = 0; r < size; ++r)
        if (t.parent[static_cast<std::size_t>(r)] >= 0)
            t.children[static_cast<std::size_t>(t.parent[static_cast<std::size_t>(r)])].push_back(r);
    for (auto& c : t.children) std::sort(c.begin(), c.end());
    t.destination = t.top;
    return t;
}

// Serves `root`: order-preserving trees keep their shape and forward from
// their top when the operation is not commutative; otherwise the virtual
// ranks are rotated so that the top lands on root.
inline tree place_root(tree t, int root, bool commutative)
{
    if (root < 0 || root >= std::max(t.size, 1))
        fail("invalid root ", root, " for a communicator of size ", t.size);
    if (t.size == 0 || root == t.top) {
        t.destination = root;
        return t;
    }
    if (!commutative && t.order_preserving) {
        t.destination = root;
        return t;
    }
    const int shift = root - t.top, p = t.size;
    auto map = [&](int v) { return v < 0 ? v : ((v + shift) % p + p) % p; };
    tree r = t;
    for (int v = 0; v < p; ++v) {
        const auto dst = static_cast<std::size_t>(map(v));
        r.parent[dst] = map(t.parent[static_cast<std::size_t>(v)]);
        r.children[dst].clear();
        for (int c : t.children[static_cast<std::size_t>(v)]) r.children[dst].push_back(map(c));
        r.self_position[dst] = t.self_position[static_cast<std::size_t>(v)];
    }
    r.top = r.destination = root;
    r.order_preserving = false; // fold order is no longer rank order
    return r;
}

} // namespace detail

/// Text form, one rank per line: "r <- [children] self@k -> parent".
inline std::string to_string(const tree& t)
{
    std::ostringstream os;
    os << t.name << ": P=" << t.size << " top=" << t.top << " destination=" << t.destination
       << (t.order_preserving ? " (rank order)" : "") << " depth=" << t.depth() << "\n";
    for (int r = 0; r < t.size; ++r) {
        const auto v = t.local(r);
        os << "  " << r << " <- [";
        for (std::size_t k = 0; k < v.children.size(); ++k) os << (k ? " " : "") << v.children[k];
        os << "] self@" << v.self_position << " -> " << v.parent << "\n";
    }
    return os.str();
}

/// Graphviz text: an edge child -> parent for every transfer, labelled with its
/// position in the parent's fold; a dashed edge for the forward to the root.
inline std::string to_dot(const tree& t)
{
    std::ostringstream os;
    os << "digraph \"" << t.name << "\" {\n  rankdir=BT;\n  node [shape=circle];\n";
    for (int r = 0; r < t.size; ++r) {
        os << "  " << r << (r == t.destination ? " [style=bold, peripheries=2]" : "") << ";\n";
        const auto& c = t.children[static_cast<std::size_t>(r)];
        for (std::size_t k = 0; k < c.size(); ++k) os << "  " << c[k] << " -> " << r << " [label=\"" << k << "\"];\n";
    }
    if (t.top != t.destination) os << "  " << t.top << " -> " << t.destination << " [style=dashed];\n";
    os << "}\n";
    return os.str();
}

} // namespace sparse_reduce
