#pragma once
// One rank's share of a reduction: for every tree (one, or two taking
// alternate windows) the rank's node, plus the receiver of the forwarded
// result where the tree's top is not the root. Built the same way for the
// Boost.MPI executor and for the simulator, which differ only in how they
// move the messages.

#include <cstddef>
#include <memory_resource>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "../kernel/combine.hpp"
#include "../tree/tree.hpp"
#include "../mpi/tags.hpp"
#include "node_binding.hpp"
#include "reduce_node.hpp"

namespace sparse_reduce::detail {

// A rank program's node_buffers per tree, in the caller's pools: tree k's
// at pools_per_tree * k + one of these.
inline constexpr std::size_t node_pool = 0, forward_pool = 1, result_pool = 2, pools_per_tree = 3;

template <class T, class Op, class Reader>
class rank_program {
public:
    using node_t = reduce_node<T, Op, Reader>;

    // dense_out: the root's dense output (nullptr when the output is sparse
    // or this rank is not the root); pools: pools_per_tree per tree (its node,
    // its forward receiver, its result staging), kept by the caller; mem: the call's
    // bookkeeping (exec/call_arena.hpp). The trees must outlive the program.
    rank_program(const std::vector<tree>& trees, int me, const stream_config& cfg, const Op& op,
                 const own_input<T, Reader>& own, T* dense_out, std::vector<node_buffers>& pools,
                 const std::string& local_failure, std::pmr::memory_resource* mem = std::pmr::get_default_resource())
        : owns_(trees.size(), own, mem), results_(trees.size(), mem), tree_nodes_(trees.size(), mem),
          forward_nodes_(trees.size(), mem), tops_(trees.size(), mem), bindings_(mem)
    {
        const std::size_t n = trees.size();
        if (pools.size() < pools_per_tree * n) pools.resize(pools_per_tree * n);
        bindings_.reserve(2 * n); // per tree its node, perhaps a forward receiver
        for (std::size_t k = 0; k < n; ++k) {
            results_[k].dense = dense_out;
            results_[k].staging = &pools[pools_per_tree * k + result_pool];
        }
        for (std::size_t k = 0; k < n; ++k) {
            const tree& t = trees[k];
            const auto view = t.local(me);
            stream_config c = cfg;
            c.window_offset = k;
            c.window_stride = n;
            const int stream = tree_tag(stream_tag, k), forward = tree_tag(forward_tag, k);
            node_shape shape{me, view.children, view.self_position, view.parent >= 0 || view.forwards};
            auto& node = tree_nodes_[k].emplace(shape, c, op, &owns_[k], shape.sends ? nullptr : &results_[k],
                                                pools[pools_per_tree * k + node_pool], mem);
            if (!local_failure.empty()) node.fail_locally(local_failure);
            bindings_.push_back({&node, view.forwards ? t.destination : view.parent, view.forwards ? forward : stream, stream});
            if (view.receives_forward) {
                tops_[k] = t.top;
                auto& fwd = forward_nodes_[k].emplace(node_shape{me, {&tops_[k], 1}, -1, false}, c, op, nullptr,
                                                      &results_[k], pools[pools_per_tree * k + forward_pool], mem);
                bindings_.push_back({&fwd, -1, -1, forward});
            }
        }
    }
    rank_program(const rank_program&) = delete;
    rank_program& operator=(const rank_program&) = delete;

    std::span<node_binding<node_t>> bindings() { return bindings_; }

    std::size_t bytes_sent() const { return sum(&node_t::bytes_sent); }
    std::size_t bytes_received() const { return sum(&node_t::bytes_received); }
    std::size_t messages_sent() const { return sum(&node_t::messages_sent); }
    std::size_t dense_work() const { return sum(&node_t::dense_work); }
    std::size_t sparse_work() const { return sum(&node_t::sparse_work); }

    // Throws on the root, and on the rank that detected a failure.
    void throw_if_failed(bool root) const
    {
        for (const auto& b : bindings_)
            if (b.node->failed() && (root || b.node->detected_failure())) {
                const auto& f = *b.node->failure_info();
                fail("reduce failed on rank " + std::to_string(f.rank) + ": " + f.text);
            }
    }

    // The root's result into a sparse output: the trees' entries merged back
    // into index order (a dense output was written in place).
    template <class Out>
    void write_sparse_output(Out& out, std::size_t dimension, const T& id)
    {
        std::size_t total = 0;
        for (const auto& r : results_) total += r.size;
        write_through_sink(out, dimension, total, id, [&](auto& sink) {
            if (results_.size() == 1) { // one tree: its entries are in order already
                const auto& r = results_.front();
                for (std::size_t k = 0; k < r.size; ++k) sink.put(r.indices[k], r.values[k]);
                return sink.finish();
            }
            std::pmr::vector<std::size_t> at(results_.size(), 0, results_.get_allocator());
            for (;;) {
                std::size_t pick = results_.size();
                for (std::size_t k = 0; k < results_.size(); ++k)
                    if (at[k] < results_[k].size &&
                        (pick == results_.size() || results_[k].indices[at[k]] < results_[pick].indices[at[pick]]))
                        pick = k;
                if (pick == results_.size()) break;
                sink.put(results_[pick].indices[at[pick]], results_[pick].values[at[pick]]);
                ++at[pick];
            }
            sink.finish();
        });
    }

private:
    std::size_t sum(std::size_t (node_t::*get)() const) const
    {
        std::size_t s = 0;
        for (const auto& b : bindings_) s += (b.node->*get)();
        return s;
    }

    std::pmr::vector<own_input<T, Reader>> owns_; // each tree reads its own windows
    std::pmr::vector<root_output<T>> results_;    // one per tree: they hold alternate windows
    std::pmr::vector<std::optional<node_t>> tree_nodes_, forward_nodes_;
    std::pmr::vector<int> tops_; // the forward receivers' one child each
    std::pmr::vector<node_binding<node_t>> bindings_;
};

} // namespace sparse_reduce::detail
