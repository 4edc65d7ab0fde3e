#pragma once
/// @file
/// sparse_reduce::schedule, the trees plus the cut of the index space into windows,
/// and its text and Graphviz forms. Include `<sparse_reduce/sparse_reduce.hpp>`.
///
/// A schedule: the tree(s) plus the cut of the index space into windows, i.e.
/// everything a rank needs to know to run its part, as plain data:
///
///      for each of its windows s (all of them, or every other one per tree):
///        take window s of every child's stream, fold in the tree's order
///        (c[0] ⊗ ... ⊗ own ⊗ ...), encode, append to the message for the
///        parent; send the message once it holds segment_bytes
///
/// Printable (to_string) and drawable (to_dot) without MPI; a reduce_plan
/// gives the one it runs (plan.schedule_for(commutative)).

#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

#include "../tree/tree.hpp"
#include "../wire/block.hpp"

namespace sparse_reduce {

/// What every rank runs: the tree(s) and the windows (see the file's description).
struct schedule {
    std::vector<tree> trees;         ///< One, or two taking alternate windows.
    std::size_t dimension = 0;       ///< The vectors' dimension.
    std::size_t window = 1;          ///< Elements per window: min(segment_bytes, max_window_bytes) of them.
    std::size_t segment_bytes = 0;   ///< Bytes a message is sent at.
    wire::format format = wire::adaptive; ///< The wire format.
    bool bitmap = true; ///< Adaptive blocks may take the bitmap form (cost_model::bitmap_pays of the tuning).
    /// Whole messages (exec/whole_reduce.hpp): one per edge of the first tree,
    /// no windows. Sparse inputs under the adaptive wire, unless selection
    /// found the windowed pipeline faster.
    bool whole = false;
    std::string selection; ///< How policy::automatic chose it; empty for a fixed policy.
    std::string reason;    ///< Why this tree, in words (report::reason).

    /// The number of windows.
    std::size_t windows() const { return (dimension + window - 1) / window; }
};

/// One line: what a report calls the algorithm.
inline std::string describe(const schedule& s)
{
    std::string d = detail::concat(s.trees.empty() ? std::string_view("none") : std::string_view(s.trees.front().name),
                                   "(wire=", wire::to_string(s.format), ", segment=", s.segment_bytes, ")");
    for (const tree& t : s.trees)
        if (t.order_preserving && t.top != t.destination) d += detail::concat(", rank order, forwarded from ", t.top);
    if (!s.selection.empty()) d += detail::concat(" [", s.selection, "]");
    return d;
}

/// Text form: per tree, what every rank receives, folds and sends.
inline std::string to_string(const schedule& s)
{
    std::ostringstream os;
    os << "schedule: dimension " << s.dimension << ", " << s.windows() << " windows of " << s.window
       << " elements, messages sent at " << s.segment_bytes << " bytes, wire " << wire::to_string(s.format) << "\n";
    for (std::size_t k = 0; k < s.trees.size(); ++k) {
        const tree& t = s.trees[k];
        os << "tree " << k << " (" << t.name << ", windows " << k;
        if (s.trees.size() > 1) os << ", " << k + s.trees.size() << ", ...";
        else os << "..." << (s.windows() ? s.windows() - 1 : 0);
        os << "):\n";
        for (int r = 0; r < t.size; ++r) {
            const auto v = t.local(r);
            os << "  rank " << r << ": ";
            if (!v.children.empty()) {
                os << "receive from";
                for (int c : v.children) os << " " << c;
                os << "; fold ";
            } else {
                os << "fold ";
            }
            for (std::size_t j = 0; j <= v.children.size(); ++j) {
                if (static_cast<int>(j) == v.self_position) os << (j ? " ⊗ " : "") << "own";
                if (j < v.children.size()) os << (j || v.self_position == 0 ? " ⊗ " : "") << v.children[j];
            }
            if (v.parent >= 0) os << "; send to " << v.parent;
            else if (v.forwards) os << "; forward the result to " << t.destination;
            else os << "; write the result";
            if (v.receives_forward) os << "; receive the result from " << t.top;
            os << "\n";
        }
    }
    return os.str();
}

/// Graphviz text: one cluster per tree, edges child -> parent labelled with
/// the windows they carry, dashed edges for forwards to the root.
inline std::string to_dot(const schedule& s)
{
    std::ostringstream os;
    os << "digraph schedule {\n  rankdir=BT;\n  node [shape=circle];\n";
    const std::size_t n = s.trees.size();
    for (std::size_t k = 0; k < n; ++k) {
        const tree& t = s.trees[k];
        const std::string label = n == 1 ? "all windows" : detail::concat("windows ", k, " mod ", n);
        os << "  subgraph cluster_" << k << " {\n    label=\"" << t.name << ": " << label << "\";\n";
        for (int r = 0; r < t.size; ++r)
            os << "    t" << k << "_" << r << " [label=\"" << r << "\"" << (r == t.destination ? ", peripheries=2" : "")
               << "];\n";
        for (int r = 0; r < t.size; ++r) {
            const auto& c = t.children[static_cast<std::size_t>(r)];
            for (std::size_t j = 0; j < c.size(); ++j)
                os << "    t" << k << "_" << c[j] << " -> t" << k << "_" << r << " [label=\"" << j << "\"];\n";
        }
        if (t.top != t.destination)
            os << "    t" << k << "_" << t.top << " -> t" << k << "_" << t.destination << " [style=dashed];\n";
        os << "  }\n";
    }
    os << "}\n";
    return os.str();
}

} // namespace sparse_reduce
