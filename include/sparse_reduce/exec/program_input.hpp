#pragma once
// What a rank program (rank_program.hpp) is fed: the stream configuration a
// schedule gives, and the rank's own input, as the MPI executor
// (collective/reduce.hpp) and the simulator (simulator.hpp) build them.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

#include "../error.hpp"
#include "../kernel/entry_stream.hpp"
#include "../kernel/merge_arrays.hpp"
#include "../repr/representation.hpp"
#include "../schedule/schedule.hpp"
#include "../select/call_stats.hpp"
#include "reduce_node.hpp"

namespace sparse_reduce::detail {

// A reader with nothing to read, of the type make_reader returns: a failed
// rank's input.
template <class Reader, class T>
Reader empty_reader(const T& id)
{
    if constexpr (requires { Reader(std::span<const T>{}, id); }) return Reader(std::span<const T>{}, id);
    else if constexpr (requires { Reader(std::span<const T>{}, std::size_t{0}, id); })
        return Reader(std::span<const T>{}, std::size_t{0}, id);
    else return Reader({}, {}, 0);
}

inline stream_config make_stream_config(const schedule& s)
{
    stream_config cfg;
    cfg.dimension = s.dimension;
    cfg.segment_bytes = s.segment_bytes;
    cfg.window = s.window;
    cfg.format = s.format;
    cfg.bitmap = s.bitmap;
    cfg.window_stride = s.trees.size();
    return cfg;
}

// How a rank reads its own vector: the dense array when there is one, a
// reader over its entries, and its entries per window (summed from finer
// blocks counted already, when they divide the window), kept in `counts`
// (a vector of uint32_t that outlives the program).
template <representation In, class T, class Counts>
auto make_own_input(const In& in, const stream_config& cfg, const T& id, bool count_windows, Counts& counts,
                    std::span<const std::uint32_t> blocks = {}, std::size_t grain = 0)
{
    using R = repr_traits<std::remove_cvref_t<In>>;
    own_input<T, decltype(make_reader(in, id))> own{nullptr, make_reader(in, id), {}};
    if constexpr (R::kind == repr_kind::dense) own.dense = R::read(in).data();
    if constexpr (R::kind == repr_kind::index_value) {
        // Entries at every index (valid ones are 0, 1, ..., C - 1) are a
        // dense array, an identity among them an absent element: read as
        // the drop-in's input is (a leaf encodes straight from it, an inner
        // rank folds it densely), checked once here instead of entry by
        // entry. 2^21 doubles at 10 Gbit/s, P = 4: doc/benchmarks.md,
        // "Dense whole messages in pieces".
        const auto idx = R::indices(in);
        const auto val = R::values(in);
        if (cfg.dimension > 0 && idx.size() == cfg.dimension && val.size() == idx.size()) {
            const std::string bad = validate_entries(idx.data(), val.data(), idx.size(), cfg.dimension, nullptr, id);
            if (!bad.empty()) fail(bad);
            own.dense = val.data();
        }
    }
    if (!count_windows) return own;
    if (grain && cfg.window % grain == 0 && !blocks.empty()) {
        counts.assign(cfg.windows(), 0);
        for (std::size_t b = 0; b < blocks.size(); ++b) // empty blocks skipped: a sparse call has mostly those
            if (blocks[b]) counts[b * grain / cfg.window] += blocks[b];
    } else {
        block_entries<T>(counts, in, cfg.dimension, cfg.window, id);
    }
    own.window_entries = counts;
    return own;
}

} // namespace sparse_reduce::detail
