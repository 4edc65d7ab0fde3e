#pragma once
// What a rank program (rank_program.hpp) is fed: the stream configuration a
// schedule gives, and the rank's own input, as the MPI executor
// (collective/reduce.hpp) and the simulator (sim/simulator.hpp) build them.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

#include "../error.hpp"
#include "../kernel/combine.hpp"
#include "../kernel/entry_stream.hpp"
#include "../kernel/merge_arrays.hpp"
#include "../repr/representation.hpp"
#include "../schedule/schedule.hpp"
#include "../select/call_stats.hpp"
#include "reduce_node.hpp"
#include "root_output.hpp"

namespace sparse_reduce::detail {

// A reader with nothing to read, of the type make_reader returns: a failed
// rank's input.
template <class Reader, class T>
Reader empty_reader(const T& id)
{
    if constexpr (requires { Reader({}, {}, 0, indices_checked); }) return Reader({}, {}, 0, indices_checked);
    else if constexpr (requires { Reader(std::span<const T>{}, id); }) return Reader(std::span<const T>{}, id);
    else if constexpr (requires { Reader(std::span<const T>{}, std::size_t{0}, id); })
        return Reader(std::span<const T>{}, std::size_t{0}, id);
    else return Reader({}, {}, 0);
}

// How a rank program reads its own vector: one reader type per index width
// (or RLE), not one per representation, so Eigen vectors, index/value
// vectors of 32-bit indices and dense buffers of one value type share a
// single rank program. Indices are read through their unsigned type: an
// integer may be read so, and the signed input is checked first (a
// negative index fails there, named as such). A dense input is read from
// its array (own_input::dense); its reader has nothing to read.
template <class In, class R = repr_traits<std::remove_cvref_t<In>>, repr_kind = R::kind>
struct own_reader {
    using type = sparse_reader<value_type_of<In>, std::uint32_t>;
};
template <class In, class R>
struct own_reader<In, R, repr_kind::index_value> {
    using type = sparse_reader<value_type_of<In>, std::make_unsigned_t<typename R::index_type>>;
};
template <class In, class R>
struct own_reader<In, R, repr_kind::rle> {
    using type = rle_reader<value_type_of<In>>;
};
template <class In>
using own_reader_t = typename own_reader<In>::type;

template <representation In, class T>
own_reader_t<In> make_own_reader(const In& in, const T& id)
{
    using R = repr_traits<std::remove_cvref_t<In>>;
    using reader = own_reader_t<In>;
    if constexpr (R::kind == repr_kind::index_value) {
        using I = typename R::index_type;
        using U = std::make_unsigned_t<I>;
        const auto idx = R::indices(in);
        const auto val = R::values(in);
        const std::span<const U> unsigned_idx(reinterpret_cast<const U*>(idx.data()), idx.size());
        if constexpr (std::is_signed_v<I>) {
            sparse_reader<T, I>(idx, val, R::size(in)); // throws on a bad index, a negative one named so
            return reader(unsigned_idx, val, R::size(in), indices_checked);
        } else {
            return reader(unsigned_idx, val, R::size(in));
        }
    } else if constexpr (R::kind == repr_kind::rle) {
        return make_reader(in, id);
    } else {
        return empty_reader<reader>(id);
    }
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

// Whether this rank's windows need its input's entry counts. A dense
// input needs none where every window of it goes one way: on the
// destination of a dense output (all fold densely) and on a leaf of every
// tree (the encoder reads it as it is). That saves a scan of the whole
// input on both ranks of a drop-in at P = 2.
template <class In, class Out>
bool counts_windows(const schedule& sched, int rank, int root)
{
    constexpr bool dense_in = repr_traits<std::remove_cvref_t<In>>::kind == repr_kind::dense;
    constexpr bool dense_out = repr_traits<std::remove_cvref_t<Out>>::kind == repr_kind::dense;
    if constexpr (!dense_in) {
        return true;
    } else {
        const bool destination = rank == root;
        const bool leaf = std::ranges::all_of(
            sched.trees, [&](const tree& t) { return t.children[static_cast<std::size_t>(rank)].empty(); });
        return !((dense_out && destination) || (leaf && !destination));
    }
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
    own_input<T, own_reader_t<In>> own{nullptr, make_own_reader(in, id), {}};
    if constexpr (R::kind == repr_kind::dense) own.dense = R::read(in).data();
    if constexpr (R::kind == repr_kind::index_value) {
        // Entries at every index (valid ones are 0, 1, ..., C - 1) are a
        // dense array, an identity among them an absent element: read as
        // the drop-in's input is (a leaf encodes straight from it, an inner
        // rank folds it densely). make_own_reader checked the indices (strictly
        // increasing, below C), so C of them are 0 ... C - 1. 2^21 doubles
        // at 10 Gbit/s, P = 4: doc/benchmarks.md, "Dense whole messages in
        // pieces".
        const auto idx = R::indices(in);
        const auto val = R::values(in);
        if (cfg.dimension > 0 && R::size(in) == cfg.dimension && idx.size() == cfg.dimension) {
            own.dense = val.data();
            if (count_windows) { // every window full: no scan
                counts.resize(cfg.windows());
                for (std::size_t k = 0; k < counts.size(); ++k)
                    counts[k] = static_cast<std::uint32_t>(cfg.window_length(k));
                own.window_entries = counts;
            }
            return own;
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

// The destination's output as the windowed root writes it: a dense array in
// place; an index/value output straight into its arrays (one tree, the
// output not an input, whose entries are still to be read), with
// room to start for this rank's entries (or a window's), grown as needed;
// else entries staged by the rank program. Call it once nothing else can
// throw before the exchange: the output is emptied here and holds garbage
// until write_sparse_output (or clear_root_output on an exception).
template <class T, class Out, class Own>
root_output<T> make_root_output(Out& out, bool out_is_an_input, const schedule& s, const Own& own)
{
    using RO = repr_traits<std::remove_cvref_t<Out>>;
    root_output<T> r;
    if constexpr (RO::kind == repr_kind::dense) {
        r.dense = RO::output(out, s.dimension).data();
    } else if constexpr (writable_in_place<Out>) {
        if (s.trees.size() == 1 && !out_is_an_input) {
            std::size_t mine = 0;
            for (const auto c : own.window_entries) mine += c;
            if (own.window_entries.empty() && own.dense) mine = s.dimension; // a full index/value input
            r = caller_output<T>(out, s.dimension, std::max(mine, s.window));
        }
    }
    return r;
}

// After an exception between make_root_output and the end of the call: an
// index/value output is left empty, as on any failure (an output written in
// place would hold garbage).
template <class Out>
void clear_root_output(Out& out) noexcept
{
    if constexpr (repr_traits<Out>::kind == repr_kind::index_value) repr_traits<Out>::commit_output(out, 0);
}

} // namespace sparse_reduce::detail
