#pragma once
// What a rank program (rank_program.hpp) is fed: the stream configuration a
// schedule gives, and the rank's own input, as the MPI executor
// (collective/reduce.hpp) and the simulator (simulator.hpp) build them.

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "../kernel/entry_stream.hpp"
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
