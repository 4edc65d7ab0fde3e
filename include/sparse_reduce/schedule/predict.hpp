#pragma once
/// @file
/// predicted_time, the analytic estimate of a schedule's completion time.
/// Include `<sparse_reduce/sparse_reduce.hpp>`.
///
/// The analytic estimate of a schedule's completion time: what automatic
/// selection compares candidates with, in microseconds of arithmetic instead
/// of a simulation. It counts what the simulator counts (the nodes' dense and
/// sparse work, bytes and messages), from expected sizes instead of data:
///
///      entries of a subtree of k ranks   merged_entries(k, n, C, model)
///      its stream                        cost_model::payload_bytes (index/value,
///                                        the bitmap where s.bitmap, or dense)
///                                        bytes, in ceil(bytes / segment) messages
///      a node's fold                     dense when its inputs' entries reach a
///                                        quarter of the window (as the node does)
///      with wire::dense                  every stream C * value bytes, and every
///                                        node with children folds densely
///
/// and composes them as a pipeline:
///
///      T = max( first piece through the tree     (recursion: a node receives its
///                                                 children's first messages in
///                                                 order of readiness on its link,
///                                                 then folds one piece)
///               + max over ranks of the rest of its work,
///               max over ranks of all its work )  (trees sharing a rank share it)
///
/// which is the recursion itself when everything fits one message, and the
/// classic fill-plus-bottleneck of a pipeline when streams are long. A rank's
/// work is its link time plus its processor time: with two buffers per
/// stream, receiving, folding and sending a window barely overlap (the
/// simulator shows it).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include "../kernel/fold_rule.hpp"
#include "../model/cost.hpp"
#include "schedule.hpp"

namespace sparse_reduce {

/// The call a prediction is for.
struct workload {
    double entries = 0;       ///< Expected non-identity entries per rank.
    bool dense_input = false; ///< Ranks pass dense arrays (scanned once).
    bool dense_output = true; ///< The root writes a dense array.
};

namespace detail {

// What predicted_time adds up over the trees, per rank: link time, processor
// time (from the set-up on), and the most pieces (messages) it sends.
struct predicted_ranks {
    double setup; // scanning the input, before anything is sent
    std::vector<double> link, cpu, pieces;
};

// A node's fold, counted as the node counts it: dense when its inputs'
// entries reach a quarter of the window (or the wire is dense), else sparse.
// f is the tree's fraction of the windows, Cf = f * C its elements.
inline double predicted_fold_work(const std::vector<int>& kids, const std::vector<double>& entries, double result_entries,
                                  double f, double Cf, bool sends, bool dense_wire, const workload& w, const cost_model& m)
{
    const double vb = m.value_bytes;
    double in_entries = f * w.entries, dense = 0, sparse = 0;
    for (int c : kids) in_entries += entries[static_cast<std::size_t>(c)];
    if ((!sends && w.dense_output) || detail::folds_densely(in_entries, Cf) || (dense_wire && !kids.empty())) {
        dense += Cf;
        if (!w.dense_input) sparse += f * w.entries; // own entries scattered in
        for (int c : kids) {
            const auto cc = static_cast<std::size_t>(c);
            if (dense_wire || m.payload_bytes(entries[cc], Cf) >= Cf * vb) dense += Cf;
            else sparse += entries[cc];
        }
        if (sends) dense += Cf;
        else if (!w.dense_output) sparse += result_entries;
    } else {
        sparse += in_entries + result_entries;
        if (dense_wire && sends) dense += Cf; // the sparse result written out as a dense block
    }
    return m.gamma_dense * dense + m.gamma * sparse;
}

// Tree t, carrying the fraction f of the windows: when its first piece is
// at the destination (the recursion of predict.hpp's header comment). Adds
// every rank's link and processor time to `ranks`.
inline double predicted_first_piece(const tree& t, double f, const schedule& s, const workload& w, const cost_model& m,
                                    const merged_size_fn& merged, predicted_ranks& ranks)
{
    const double C = static_cast<double>(s.dimension), vb = m.value_bytes;
    const double seg = static_cast<double>(std::max<std::size_t>(1, s.segment_bytes));
    const bool dense_wire = s.format == wire::format::dense;
    auto& link = ranks.link;
    auto& cpu = ranks.cpu;
    const double Cf = f * C;
    const auto n = static_cast<std::size_t>(t.size);
    std::vector<double> size(n, 1), entries(n, 0), bytes(n, 0), msgs(n, 1), ready(n, 0);
    // children before parents: reverse of a preorder from the top
    std::vector<int> order{t.top};
    for (std::size_t i = 0; i < order.size(); ++i)
        for (int c : t.children[static_cast<std::size_t>(order[i])]) order.push_back(c);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const auto v = static_cast<std::size_t>(*it);
        const auto& kids = t.children[v];
        for (int c : kids) size[v] += size[static_cast<std::size_t>(c)];
        entries[v] = f * merged(size[v]);
        const bool sends = t.parent[v] >= 0 || t.top != t.destination;
        const double work = predicted_fold_work(kids, entries, entries[v], f, Cf, sends, dense_wire, w, m);

        const double payload = dense_wire ? Cf * vb : m.payload_bytes(entries[v], Cf, s.bitmap);
        msgs[v] = std::max(1.0, std::ceil(payload / seg));
        bytes[v] = payload + msgs[v] * m.header_bytes;

        // first piece: children's first messages in order of readiness
        std::vector<std::pair<double, double>> arrivals; // (ready, transfer)
        for (int c : kids) {
            const auto cc = static_cast<std::size_t>(c);
            arrivals.push_back({ready[cc], m.alpha + m.beta * bytes[cc] / msgs[cc]});
            const double total = msgs[cc] * m.alpha + m.beta * bytes[cc];
            link[v] += total;
            link[static_cast<std::size_t>(c)] += total;
        }
        std::sort(arrivals.begin(), arrivals.end());
        double clock = ranks.setup;
        for (const auto& [r, x] : arrivals) clock = std::max(clock, r) + x;
        ready[v] = clock + work / msgs[v];
        cpu[v] += work;
        ranks.pieces[v] = std::max(ranks.pieces[v], msgs[v]);
    }
    const auto top = static_cast<std::size_t>(t.top);
    double done = ready[top];
    if (t.top != t.destination) { // forwarded, then written into the destination's output
        const auto dest = static_cast<std::size_t>(t.destination);
        const double total = msgs[top] * m.alpha + m.beta * bytes[top];
        const double write = w.dense_output ? m.gamma_dense * Cf : m.gamma * entries[top];
        done += m.alpha + m.beta * bytes[top] / msgs[top] + write / msgs[top];
        link[top] += total;
        link[dest] += total;
        cpu[dest] += write;
    }
    return done;
}

} // namespace detail

/// The predicted completion time in seconds of schedule s for workload w on
/// machine m, with merged(k) the expected entries of k ranks' merged vectors.
inline double predicted_time(const schedule& s, const workload& w, const cost_model& m, const merged_size_fn& merged)
{
    const std::size_t ntrees = std::max<std::size_t>(1, s.trees.size());
    const int p = s.trees.empty() ? 1 : s.trees.front().size;
    const double C = static_cast<double>(s.dimension);
    const double setup = w.dense_input ? m.gamma_dense * C : m.gamma * w.entries;
    detail::predicted_ranks ranks{setup, std::vector<double>(static_cast<std::size_t>(p), 0),
                                  std::vector<double>(static_cast<std::size_t>(p), setup),
                                  std::vector<double>(static_cast<std::size_t>(p), 1)};
    double first = 0;

    const std::size_t windows = std::max<std::size_t>(1, s.windows());
    for (std::size_t k = 0; k < s.trees.size(); ++k) {
        // tree k carries windows k, k + ntrees, ...: none when there are fewer
        const double f = static_cast<double>((windows + ntrees - 1 - k) / ntrees) / static_cast<double>(windows);
        first = std::max(first, detail::predicted_first_piece(s.trees[k], f, s, w, m, merged, ranks));
    }
    // the rest of each rank's work after its first piece (set-up excluded:
    // it precedes the first piece), and no faster than its busiest resource
    double rest = 0, busiest = 0;
    for (std::size_t r = 0; r < ranks.link.size(); ++r) {
        const double busy = ranks.link[r] + ranks.cpu[r] - setup;
        rest = std::max(rest, busy - busy / ranks.pieces[r]);
        busiest = std::max(busiest, busy + setup);
    }
    return std::max(first + rest, busiest);
}

/// predicted_time with merged sizes from m's merge model.
inline double predicted_time(const schedule& s, const workload& w, const cost_model& m)
{
    return predicted_time(s, w, m, merged_size_fn(w.entries, static_cast<double>(s.dimension), m.merge));
}

} // namespace sparse_reduce
