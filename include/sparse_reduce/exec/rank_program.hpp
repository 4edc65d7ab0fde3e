#pragma once
// One rank's share of a reduction: for every tree (one, or two taking
// alternate windows) the rank's node, plus the receiver of the forwarded
// result where the tree's top is not the root. Built the same way for the
// Boost.MPI executor and for the simulator, which differ only in how they
// move the messages.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "call_arena.hpp"
#include "../error.hpp"
#include "../kernel/combine.hpp"
#include "../tree/tree.hpp"
#include "../mpi/tags.hpp"
#include "node_binding.hpp"
#include "reduce_node.hpp"
#include "root_output.hpp"

namespace sparse_reduce::detail {

// A rank program's node_buffers per tree, in the caller's pools: tree k's
// at pools_per_tree * k + one of these.
inline constexpr std::size_t node_pool = 0, forward_pool = 1, result_pool = 2, pools_per_tree = 3;

// The root's result into a sparse output (a dense output was written in
// place): the entries written into the caller's arrays kept, or the
// trees' staged windows interleaved back into index order. Where the call
// failed (throw_if_failed says why) an index/value output is left empty,
// never half written, and any other untouched.
template <class Out, class T>
void write_sparse_output(Out& out, std::span<const root_output<T>> results, std::size_t windows,
                         std::size_t dimension, const T& id, bool failed)
{
    using R = repr_traits<Out>;
    if (failed) {
        if constexpr (R::kind == repr_kind::index_value) R::commit_output(out, 0);
        return;
    }
    if constexpr (writable_in_place<Out>)
        if (results.size() == 1 && results.front().in_caller) {
            R::commit_output(out, results.front().size);
            return;
        }
    // Window w is tree (w mod trees)'s run w / trees: the runs in window
    // order are the entries in index order.
    std::size_t total = 0;
    for (const auto& r : results) total += r.size;
    const std::size_t trees = results.size();
    auto each_run = [&](auto&& f) {
        for (std::size_t w = 0; w < windows; ++w) {
            const auto& r = results[w % trees];
            if (w / trees >= r.runs) continue; // (no window: an empty output)
            const auto [b, e] = r.run(w / trees);
            f(static_cast<const std::uint64_t*>(r.index) + b, r.values + b, e - b);
        }
    };
    if constexpr (R::kind == repr_kind::index_value) {
        const auto slots = R::begin_output(out, dimension, total);
        std::size_t n = 0;
        each_run([&](const std::uint64_t* idx, const T* val, std::size_t m) {
            copy_entries(idx, val, m, slots.index + n, slots.value + n);
            n += m;
        });
        R::commit_output(out, n);
    } else {
        write_through_sink(out, dimension, total, id, [&](auto& sink) {
            each_run([&](const std::uint64_t* idx, const T* val, std::size_t m) {
                for (std::size_t k = 0; k < m; ++k) sink.put(idx[k], val[k]);
            });
            sink.finish();
        });
    }
}

template <class T, class Op, class Reader>
class rank_program {
public:
    using node_t = reduce_node<T, Op, Reader>;

    // out: the root's output (nothing on other ranks): its dense array, or
    // the caller's index and value arrays (caller_output), which one tree
    // writes as it folds; two trees stage their entries instead
    // (write_sparse_output interleaves them). pools: pools_per_tree per tree (its
    // node, its forward receiver, its result staging), kept by the caller;
    // mem: the call's bookkeeping (exec/call_arena.hpp); tag_offset: added
    // to every tag (a started call's, mpi/tags.hpp). The trees must outlive
    // the program.
    rank_program(const std::vector<tree>& trees, int me, const stream_config& cfg, const Op& op,
                 const own_input<T, Reader>& own, const root_output<T>& out, std::vector<node_buffers>& pools,
                 const std::string& local_failure, call_arena::lease* mem = nullptr,
                 int tag_offset = 0)
        : windows_(cfg.windows()), owns_(trees.size(), own, mem), results_(trees.size(), mem),
          tree_nodes_(trees.size(), mem), forward_nodes_(trees.size(), mem), tops_(trees.size(), mem), bindings_(mem),
          refs_(mem)
    {
        const std::size_t n = trees.size();
        if (pools.size() < pools_per_tree * n) pools.resize(pools_per_tree * n);
        bindings_.reserve(2 * n); // per tree its node, perhaps a forward receiver
        // Staging takes a word per window: a root that cannot allocate it
        // fails inside the protocol (its nodes start failed, drain their
        // children and tell the ranks that must know), not with a bare
        // std::bad_alloc that leaves the children's messages queued.
        std::string failure = local_failure;
        for (std::size_t k = 0; k < n; ++k) {
            if (n == 1 && out.in_caller) {
                results_[k] = out;
            } else if (trees[k].destination == me && failure.empty()) { // (elsewhere no output is written)
                try {
                    results_[k] = staged_output<T>(pools[pools_per_tree * k + result_pool], cfg.windows() / n + 1);
                } catch (...) {
                    failure = concat("cannot stage the root's output (", cfg.windows(),
                                     " windows): ", unprefixed(current_exception_text()));
                }
                results_[k].dense = out.dense;
            }
        }
        for (std::size_t k = 0; k < n; ++k) {
            const tree& t = trees[k];
            const auto view = t.local(me);
            stream_config c = cfg;
            c.window_offset = k;
            c.window_stride = n;
            const int stream = tag_offset + tree_tag(stream_tag, k), forward = tag_offset + tree_tag(forward_tag, k);
            node_shape shape{me, view.children, view.self_position, view.parent >= 0 || view.forwards};
            auto& node = tree_nodes_[k].emplace(shape, c, op, &owns_[k], shape.sends ? nullptr : &results_[k],
                                                pools[pools_per_tree * k + node_pool], mem);
            if (!failure.empty()) node.fail_locally(failure);
            bindings_.push_back({&node, view.forwards ? t.destination : view.parent, view.forwards ? forward : stream, stream});
            if (view.receives_forward) {
                tops_[k] = t.top;
                auto& fwd = forward_nodes_[k].emplace(node_shape{me, {&tops_[k], 1}, -1, false}, c, op, nullptr,
                                                      &results_[k], pools[pools_per_tree * k + forward_pool], mem);
                if (!failure.empty()) fwd.fail_locally(failure); // (nothing staged to write into)
                bindings_.push_back({&fwd, -1, -1, forward});
            }
        }
        refs_.reserve(bindings_.size());
        for (const auto& b : bindings_) refs_.emplace_back(b);
    }
    rank_program(const rank_program&) = delete;
    rank_program& operator=(const rank_program&) = delete;

    std::span<node_binding<node_t>> bindings() { return bindings_; }
    // The same nodes for the MPI executor (exec/mpi_executor.hpp).
    std::span<const node_ref> refs() const { return refs_; }

    std::size_t bytes_sent() const { return sum(&node_t::bytes_sent); }
    std::size_t bytes_received() const { return sum(&node_t::bytes_received); }
    std::size_t messages_sent() const { return sum(&node_t::messages_sent); }
    std::size_t dense_work() const { return sum(&node_t::dense_work); }
    std::size_t sparse_work() const { return sum(&node_t::sparse_work); }

    bool failed() const
    {
        return std::ranges::any_of(bindings_, [](const auto& b) { return b.node->failed(); });
    }

    // Throws on the root, and on the rank that detected a failure.
    void throw_if_failed(bool root) const
    {
        for (const auto& b : bindings_)
            if (b.node->failed() && (root || b.node->detected_failure())) {
                const auto& f = *b.node->failure_info();
                fail("reduce failed on rank ", f.rank, ": ", f.text);
            }
    }

    // What the root's trees wrote (one per tree) and the call's windows.
    std::span<const root_output<T>> results() const { return results_; }
    std::size_t windows() const { return windows_; }

    // The root's result into a sparse output: write_sparse_output below.
    template <class Out>
    void write_sparse_output(Out& out, std::size_t dimension, const T& id) const
    {
        detail::write_sparse_output(out, results(), windows_, dimension, id, failed());
    }

private:
    std::size_t sum(std::size_t (node_t::*get)() const) const
    {
        std::size_t s = 0;
        for (const auto& b : bindings_) s += (b.node->*get)();
        return s;
    }

    std::size_t windows_;                         // the call's, over all trees
    arena_array<own_input<T, Reader>> owns_; // each tree reads its own windows
    arena_array<root_output<T>> results_;    // one per tree: they hold alternate windows
    arena_array<std::optional<node_t>> tree_nodes_, forward_nodes_;
    arena_array<int> tops_; // the forward receivers' one child each
    arena_array<node_binding<node_t>> bindings_;
    arena_array<node_ref> refs_;
};

} // namespace sparse_reduce::detail
