#pragma once
// One rank's part of a reduction, as a state machine with no I/O of its own
// (the Boost.MPI executor and the simulator both drive it):
//
//   children streams ──> [ fold window by window, in rank order ] ──> stream to parent
//   own vector ────────┘                                          └─> or the root's output
//
// The index space is cut into windows of W elements (at most 128 KiB of
// them: the unit in which the wire format is chosen). Every stream carries,
// window by window, one wire block per window, packed into messages: a
// message is sent once its payload reaches segment_bytes, when the next
// window might not fit, once it covers pipeline_input_bytes of the index
// space, or at the end: by data alone, never by timing, so a run moves the
// same bytes on any network. A dense partial result travels as
// segment_bytes / W windows per message (pipelined), a sparse one as few
// messages covering many windows: the Sreduce draft's (n.d.) local
// pipelining, decided by each sender on its data. The cover bound keeps a
// sparse stream pipelined too, as the 1 MiB packets of Hofmann and Rünger
// (2008) do: a parent folds the first windows while its child still scans
// the rest of a dense buffer full of zeros (at 0.1%, 2^21 doubles: 16
// messages of 1.4 KB rather than one of 22 KB after the child's whole scan).
//
// Flow control: each child has two receive buffers, the next receive posted
// only after a message without the `last` flag (none is left posted after a
// stream ends). Output has two message buffers. A drop-in's root copies its
// own windows into the output while it waits (work_ahead). Errors (a user
// op throwing, a dimension mismatch, a malformed message) never leave a
// peer waiting: the node stops computing, sends one error
// message (the end of its stream) to its parent, and keeps receiving and
// discarding its children's streams until they end.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "call_arena.hpp"
#include "../detail/fixed_fifo.hpp"
#include "../detail/value_equal.hpp"
#include "../error.hpp"
#include "../kernel/entry_stream.hpp"
#include "../kernel/fold_into_copy.hpp"
#include "../kernel/fold_rule.hpp"
#include "../kernel/merge_arrays.hpp"
#include "../op/associative_op.hpp"
#include "../wire/block.hpp"
#include "../wire/entries.hpp"
#include "message.hpp"
#include "node_binding.hpp"
#include "node_buffers.hpp"
#include "own_input.hpp"
#include "root_output.hpp"

namespace sparse_reduce::detail {

// A message covers at most this much of the index space (in the elements'
// bytes), so the receiver's work on the first windows overlaps the sender's
// on the later ones.
inline constexpr std::size_t pipeline_input_bytes = std::size_t{1} << 20;

struct stream_config {
    std::size_t dimension = 0;
    std::size_t window = 1;        // W: elements per window (at most max_window_bytes)
    std::size_t segment_bytes = 0; // a message is sent once its payload reaches this (one window or more)
    wire::format format = wire::format::adaptive;
    bool bitmap = true;            // adaptive blocks may take the bitmap form
    std::size_t window_offset = 0; // this stream carries windows offset, offset + stride, ...
    std::size_t window_stride = 1; // (two trees split the windows between them)

    // A message is sealed once its payload reaches segment_bytes, or before a
    // block that might not fit: room for segment_bytes plus one block.
    template <class T>
    std::size_t message_capacity() const
    {
        const std::size_t block = wire::max_block_bytes<T>(window, format);
        return message_header_bytes + std::max(segment_bytes, block) + block + 8;
    }
    std::size_t windows() const { return (dimension + window - 1) / window; }
    std::size_t window_length(std::size_t k) const { return std::min(window, dimension - k * window); }
};

struct node_shape {
    int rank = 0;
    std::span<const int> children; // peers sending to this node, in fold order (kept by the caller)
    int self_position = 0;     // where the own vector goes among them; -1: none
    bool sends = false;        // streams its result to a peer (else writes the root output)
};

struct failure {
    int rank;
    std::string text;
};

template <class T, class Op, class OwnReader>
class reduce_node {
public:
    // mem: the node's bookkeeping (an arena of the call, exec/call_arena.hpp).
    reduce_node(node_shape shape, stream_config cfg, const Op& op, own_input<T, OwnReader>* own, root_output<T>* out,
                node_buffers& pool, call_arena::lease* mem = nullptr)
        : shape_(shape), cfg_(cfg), op_(op), id_(identity<T>(op)), own_(own), out_(out),
          capacity_(cfg.message_capacity<T>()), children_(shape_.children.size(), mem), next_window_(cfg.window_offset)
    {
        std::size_t slot = 0;
        for (auto& c : children_) {
            for (auto& b : c.buf) b = pool.get<std::byte>(slot++, capacity_);
            c.post_next = true;
        }
        for (auto& b : out_buf_) b = shape_.sends ? pool.get<std::byte>(slot, capacity_) : nullptr, ++slot;
        dense_acc_ = pool.get<T>(slot++, cfg_.window);
        for (scratch* s : {&scratch_[0], &scratch_[1], &decoded_}) {
            s->idx = pool.get<std::uint32_t>(slot++, cfg_.window);
            s->val = pool.get<T>(slot++, cfg_.window);
        }
    }

    // Starts in the failed state (a local problem found before any transfer).
    void fail_locally(std::string text) { fail_with({shape_.rank, std::move(text)}, true); }

    // ---- receive side ------------------------------------------------------
    std::size_t child_count() const { return children_.size(); }
    int child_rank(std::size_t c) const { return shape_.children[c]; }
    // A receive should be posted for child c into this buffer.
    std::optional<std::span<std::byte>> receive_slot(std::size_t c)
    {
        auto& ch = children_[c];
        if (!ch.post_next || ch.ended || ch.posted >= 0) return std::nullopt;
        const int free = ch.free_buffer();
        if (free < 0) return std::nullopt;
        ch.posted = free;
        ch.post_next = false;
        return std::span<std::byte>(ch.bytes(free), capacity_);
    }
    // The receive posted for child c completed with `bytes` bytes.
    void on_message(std::size_t c, std::size_t bytes)
    {
        auto& ch = children_[c];
        const int b = ch.posted;
        ch.posted = -1;
        bytes_received_ += bytes;
        try {
            const std::span<const std::byte> msg(ch.bytes(b), bytes);
            const message_header h = read_header(msg);
            if (h.flags & message_header::last) ch.ended = true;
            else ch.post_next = true;
            if (h.flags & message_header::failed) {
                fail_with({h.error_rank, error_text(msg)}, false);
                return;
            }
            if (h.dimension != cfg_.dimension)
                fail_with({shape_.rank, detail::concat("dimension mismatch: rank ", shape_.children[c],
                                                       " has dimension ", h.dimension, ", rank ", shape_.rank, " has ",
                                                       cfg_.dimension)},
                          true);
            else if (h.lo != ch.frontier || (h.hi < cfg_.dimension && h.hi % cfg_.window != 0) ||
                     (ch.ended && h.hi != cfg_.dimension))
                fail_with({shape_.rank, detail::concat("malformed stream from rank ", shape_.children[c])}, true);
            if (failed()) return;
            ch.frontier = h.hi;
            ch.queue.push_back({b, message_header_bytes, bytes});
        } catch (const error& e) {
            ch.ended = true; // an unreadable header cannot tell whether more follows
            fail_with({shape_.rank, detail::concat(unprefixed(e.what()), " (from rank ", shape_.children[c], ")")},
                      true);
        }
    }

    // ---- send side ---------------------------------------------------------
    // A message ready to go, in stream order; its buffer stays untouched
    // until on_sent(buffer).
    using outgoing = outgoing_message;
    std::optional<outgoing> take_outgoing()
    {
        if (ready_.empty()) return std::nullopt;
        const auto [b, n] = ready_.front();
        ready_.pop_front();
        in_flight_.push_back(b);
        bytes_sent_ += n;
        ++messages_sent_;
        return outgoing{b, {out_bytes(b), n}};
    }
    void on_sent(int buffer) { in_flight_.erase_value(buffer); }

    // ---- work --------------------------------------------------------------
    // Folds every window whose inputs have arrived; returns when blocked.
    void progress()
    {
        if (failed()) return finish_failed();
        const std::size_t nwin = cfg_.windows();
        try {
            while (next_window_ < nwin) {
                release_consumed();
                bool inputs_ready = true;
                for (auto& ch : children_) inputs_ready &= !ch.queue.empty();
                if (!inputs_ready) break;
                if (shape_.sends && !room_for_window()) break;
                const std::size_t k = next_window_;
                next_window_ += cfg_.window_stride; // before folding: sealing a message reads it
                fold_window(k);
            }
            release_consumed();
            if (shape_.sends) {
                // Messages are cut by data alone (never by timing), so the
                // bytes and messages of a run are the same on every network
                // and in the simulator.
                if (next_window_ >= nwin && !end_queued_ && (building_ >= 0 || acquire_buffer())) {
                    seal(true);
                    end_queued_ = true;
                }
            }
        } catch (...) { // a user's op may throw anything
            fail_with({shape_.rank, unprefixed(current_exception_text())}, true);
            finish_failed();
        }
    }

    // Work for a node blocked on its children's messages: a root writing a
    // dense output from its own dense array (a drop-in reduce's root) copies
    // the next windows of that array ahead into the output, at most
    // pipeline_input_bytes ahead of the fold, so the copy that bounds it at
    // low density starts before the first message arrives rather than
    // after. One window per call; false when there is none to copy. A sparse
    // block is folded into the copy as it would have been into a copy made
    // then. A dense block folds the own array in the pass that writes the
    // output (fold_dense_to), which a copy ahead doubles: the first one
    // received stops the copies ahead.
    bool work_ahead()
    {
        if (failed() || dense_blocks_ || shape_.sends || children_.empty() || !own_ || !own_->dense ||
            shape_.self_position < 0 || !out_ || !out_->dense || own_->dense == out_->dense)
            return false;
        const std::size_t k = std::max(ahead_, next_window_), nwin = cfg_.windows();
        if (k >= nwin || (k - next_window_) / cfg_.window_stride * cfg_.window * sizeof(T) >= pipeline_input_bytes)
            return false;
        const std::size_t lo = k * cfg_.window, len = cfg_.window_length(k);
        std::copy(own_->dense + lo, own_->dense + lo + len, out_->dense + lo);
        dense_work_ += len;
        ahead_ = k + cfg_.window_stride;
        return true;
    }

    // Nothing left to compute or receive (sends may still be in flight).
    bool finished() const
    {
        for (const auto& ch : children_)
            if (!ch.ended || ch.posted >= 0) return false;
        return shape_.sends ? end_queued_ : (failed() || next_window_ >= cfg_.windows());
    }
    bool idle() const { return ready_.empty() && in_flight_.empty(); }

    bool failed() const { return failure_.has_value(); }
    const std::optional<failure>& failure_info() const { return failure_; }
    bool detected_failure() const { return detected_; }

    std::size_t bytes_sent() const { return bytes_sent_; }
    std::size_t bytes_received() const { return bytes_received_; }
    std::size_t messages_sent() const { return messages_sent_; }
    // The γ terms' counts: dense elements folded, copied or scanned, and
    // sparse entries merged, encoded or decoded.
    std::size_t dense_work() const { return dense_work_; }
    std::size_t sparse_work() const { return sparse_work_; }

private:
    struct queued {
        int buffer;
        std::size_t at, end; // read position and size within the buffer
    };
    struct child_state {
        std::byte* buf[2] = {};
        int posted = -1;
        bool post_next = false, ended = false;
        std::size_t frontier = 0;
        fixed_fifo<queued, 2> queue; // a message per buffer at most
        std::byte* bytes(int b) { return buf[b]; }
        int free_buffer() const
        {
            for (int b = 0; b < 2; ++b)
                if (posted != b && !queue.any_of([b](const queued& q) { return q.buffer == b; })) return b;
            return -1;
        }
    };
    struct scratch {
        std::uint32_t* idx = nullptr;
        T* val = nullptr;
        std::size_t n = 0;
        scratch_reader<T> reader() const { return {idx, val, n}; }
    };

    std::byte* out_bytes(int b) { return out_buf_[b]; }

    void release_consumed()
    {
        for (auto& ch : children_)
            while (!ch.queue.empty() && ch.queue.front().at >= ch.queue.front().end) ch.queue.pop_front();
    }

    // ---- output message building ----
    bool acquire_buffer()
    {
        for (int b = 0; b < 2; ++b) {
            const bool used = ready_.any_of([b](const auto& r) { return r.first == b; }) ||
                              in_flight_.any_of([b](int f) { return f == b; });
            if (!used) {
                building_ = b;
                building_size_ = message_header_bytes;
                building_windows_ = 0;
                return true;
            }
        }
        return false;
    }
    bool room_for_window()
    {
        if (building_ >= 0 && capacity_ - building_size_ < wire::max_block_bytes<T>(cfg_.window, cfg_.format)) seal(false);
        return building_ >= 0 || acquire_buffer();
    }
    void seal(bool last)
    {
        // A message covers [end of the previous one, end of its last window):
        // with two trees that range also spans the other tree's windows.
        message_header h;
        h.flags = last ? message_header::last : 0;
        h.dimension = cfg_.dimension;
        h.lo = sent_frontier_;
        h.hi = last ? cfg_.dimension
                    : std::min(cfg_.dimension, (next_window_ - cfg_.window_stride + 1) * cfg_.window);
        sent_frontier_ = h.hi;
        write_header(out_bytes(building_), h);
        ready_.push_back({building_, building_size_});
        building_ = -1;
    }

    // ---- the fold of one window ----
    wire::block_view<T> next_block(std::size_t c, std::size_t len)
    {
        auto& ch = children_[c];
        auto& q = ch.queue.front();
        const auto view = wire::parse_block<T>({ch.bytes(q.buffer) + q.at, q.end - q.at}, len);
        q.at += view.bytes;
        return view;
    }
    // A sparse block's entries, in whichever form it came (wire/entries.hpp).
    scratch_reader<T> entries(const wire::block_view<T>& v)
    {
        const auto e = wire::entries_of(v, id_, decoded_.idx, decoded_.val);
        return {e.idx, e.val, e.n};
    }
    std::size_t child_block_entries(std::size_t c, std::size_t len)
    {
        auto& ch = children_[c];
        auto& q = ch.queue.front();
        return wire::parse_block<T>({ch.bytes(q.buffer) + q.at, q.end - q.at}, len).count;
    }

    void fold_window(std::size_t k)
    {
        const std::size_t lo = k * cfg_.window, len = cfg_.window_length(k);
        const bool has_own = shape_.self_position >= 0 && own_ != nullptr;
        // (no counts: an input the caller did not count, e.g. the dense
        // input of a destination whose windows all fold densely)
        std::size_t estimate = has_own && k < own_->window_entries.size() ? own_->window_entries[k] : 0;
        for (std::size_t c = 0; c < children_.size(); ++c) estimate += child_block_entries(c, len);
        const bool to_dense_output = !shape_.sends && out_->dense != nullptr;
        // a leaf's dense input goes to the encoder as it is, whatever its density
        const bool dense_leaf = has_own && own_->dense && children_.empty() && shape_.sends;
        if (to_dense_output || dense_leaf || folds_densely(estimate, len)) {
            fold_dense(lo, len, has_own, to_dense_output);
        } else {
            fold_sparse(lo, len, has_own);
            sparse_work_ += estimate;
        }
    }

    // How a dense window starts. The own array is copied into acc lazily
    // (pending_own): the first dense child block on its right is folded in
    // the same pass (acc = own ⊗ x), and a sparse first block on either side
    // is folded into the copy as it is made (kernel/fold_into_copy.hpp),
    // which saves one pass over the window, the root's in a drop-in reduce.
    // Sparse own entries are written over the identity at once. Without an
    // own vector acc is not filled at all until the first block (unfilled):
    // a dense one is copied (absent ⊗ x = x), a sparse one written over the
    // identity.
    struct dense_start {
        const T* pending_own = nullptr;
        bool unfilled = false;
    };
    dense_start start_dense(T* acc, std::size_t lo, std::size_t len, bool has_own, bool own_dense)
    {
        if (own_dense) { // (a window copied ahead already holds it: work_ahead)
            if (own_->dense + lo != acc && lo / cfg_.window >= ahead_) return {own_->dense + lo, false};
            return {};
        }
        if (!has_own) return {nullptr, true};
        dense_work_ += len;
        std::fill(acc, acc + len, id_);
        own_->visit_window(lo, len, id_, [&](auto r) {
            for (; !r.done(); r.next()) acc[r.index()] = r.value();
        });
        if (lo / cfg_.window < own_->window_entries.size()) sparse_work_ += own_->window_entries[lo / cfg_.window];
        return {};
    }

    // acc = c[0] ⊗ ... ⊗ own ⊗ ... on a dense array: start from own, apply
    // the children after it on the right in order, those before it on the
    // left in reverse order. An element absent on one side (the identity)
    // takes the other side's value bit for bit (kernel/merge_arrays.hpp's
    // fold_values), never op(identity, x).
    void fold_dense(std::size_t lo, std::size_t len, bool has_own, bool to_dense_output)
    {
        const bool own_dense = has_own && own_->dense;
        if (own_dense && children_.empty() && shape_.sends) { // a leaf: encode straight from the caller's array
            emit(dense_reader<T>({own_->dense + lo, len}, id_), len);
            return;
        }
        T* acc = to_dense_output ? out_->dense + lo : dense_acc_;
        dense_start start = start_dense(acc, lo, len, has_own, own_dense);
        const T*& pending_own = start.pending_own;
        bool& unfilled = start.unfilled;
        const std::size_t self = has_own ? static_cast<std::size_t>(shape_.self_position) : 0;
        auto flush_own = [&] {
            if (!pending_own) return;
            std::copy(pending_own, pending_own + len, acc);
            dense_work_ += len;
            pending_own = nullptr;
        };
        auto fill = [&] {
            if (!unfilled) return;
            dense_work_ += len;
            std::fill(acc, acc + len, id_);
            unfilled = false;
        };
        auto apply = [&](std::size_t c, bool left) {
            const auto block = next_block(c, len);
            if (block.tag == wire::block_tag::dense) { // elementwise
                dense_work_ += len;
                dense_blocks_ = true;
                const T* x = block.values;
                if (unfilled) {
                    std::copy(x, x + len, acc);
                    unfilled = false;
                } else if (pending_own && !left) {
                    fold_dense_to(acc, pending_own, x, len, op_, id_);
                    pending_own = nullptr;
                } else {
                    flush_own();
                    detail::fold_dense(acc, x, len, left, op_, id_);
                }
                return;
            }
            auto r = entries(block);
            if (pending_own) { // own and the entries in one pass over acc
                const auto fold = [left, &op = op_, id = id_](const T& a, const T& v) {
                    return fold_onto(a, v, left, op, id);
                };
                sparse_work_ += fold_into_copy(pending_own, acc, len, r, fold);
                dense_work_ += len;
                pending_own = nullptr;
                return;
            }
            fill();
            sparse_work_ += r.n; // a block's entries are never the identity
            for (std::size_t k = 0; k < r.n; ++k) acc[r.idx[k]] = fold_onto(acc[r.idx[k]], r.val[k], left, op_, id_);
        };
        for (std::size_t c = self; c < children_.size(); ++c) apply(c, false);
        for (std::size_t c = self; c-- > 0;) apply(c, true);
        flush_own();
        fill();
        if (shape_.sends) {
            emit(dense_reader<T>({acc, len}, id_), len);
        } else if (!to_dense_output) {
            sparse_work_ += out_->append_dense(acc, len, lo, id_); // the model's count: entries written
        }
    }

    void fold_sparse(std::size_t lo, std::size_t len, bool has_own)
    {
        int cur = 0;
        scratch_[0].n = 0;
        // The own entries are merged straight from the caller's vector with
        // the first child block (on either side of it), not copied first.
        bool own_pending = has_own;
        const std::size_t self = has_own ? static_cast<std::size_t>(shape_.self_position) : 0;
        auto apply = [&](std::size_t c, bool left) {
            const scratch_reader<T> r = entries(next_block(c, len)); // (a dense block folds densely: fold_window)
            scratch& dst = scratch_[1 - cur];
            sparse_sink<T, std::uint32_t> sink(dst.idx, dst.val, id_);
            if (own_pending) {
                own_->visit_window(lo, len, id_, [&](auto own) {
                    if (left) merge(r, own, sink, op_);
                    else merge(own, r, sink, op_);
                });
                own_pending = false;
            } else if (left) {
                merge(r, scratch_[cur].reader(), sink, op_);
            } else {
                merge(scratch_[cur].reader(), r, sink, op_);
            }
            dst.n = sink.count();
            cur = 1 - cur;
        };
        for (std::size_t c = self; c < children_.size(); ++c) apply(c, false);
        for (std::size_t c = self; c-- > 0;) apply(c, true);
        if (own_pending) { // no children
            sparse_sink<T, std::uint32_t> sink(scratch_[cur].idx, scratch_[cur].val, id_);
            own_->visit_window(lo, len, id_, [&](auto r) { drain(r, sink); });
            scratch_[cur].n = sink.count();
        }
        if (shape_.sends) {
            emit(scratch_[cur].reader(), len);
        } else {
            sparse_work_ += scratch_[cur].n;
            out_->append_entries(scratch_[cur].idx, scratch_[cur].val, scratch_[cur].n, lo);
        }
    }

    template <class Reader>
    void emit(Reader r, std::size_t len)
    {
        if constexpr (requires { r.source(); }) dense_work_ += len; // measured, then encoded
        else sparse_work_ += r.n;
        building_size_ += wire::encode_block<T>(r, len, id_, cfg_.format, out_bytes(building_) + building_size_,
                                                cfg_.bitmap);
        ++building_windows_;
        const bool full = building_size_ - message_header_bytes >= cfg_.segment_bytes ||
                          building_windows_ * cfg_.window * sizeof(T) >= pipeline_input_bytes;
        if (full && next_window_ < cfg_.windows()) seal(false); // the last window goes with the end
    }

    // ---- failure ----
    void fail_with(failure f, bool detected_here)
    {
        if (failure_) return;
        failure_ = std::move(f);
        detected_ = detected_here;
    }
    void finish_failed()
    {
        // discard whatever the children sent; keep receiving until they end
        for (auto& ch : children_) ch.queue.clear();
        if (shape_.sends && !end_queued_) {
            if (building_ < 0 && !acquire_buffer()) return; // wait for a send buffer
            ready_.push_back({building_, write_error_message(out_bytes(building_), capacity_, cfg_.dimension,
                                                             failure_->rank, failure_->text)});
            building_ = -1;
            end_queued_ = true;
        }
    }

    node_shape shape_;
    stream_config cfg_;
    Op op_;
    T id_;
    own_input<T, OwnReader>* own_;
    root_output<T>* out_;
    std::size_t capacity_;
    arena_array<child_state> children_;
    std::size_t next_window_ = 0;
    std::size_t ahead_ = 0;     // the root's own windows below this one are in its output (work_ahead)
    bool dense_blocks_ = false; // a dense child block has arrived (no more work ahead)

    std::byte* out_buf_[2] = {};
    int building_ = -1;
    std::size_t building_size_ = 0, building_windows_ = 0, sent_frontier_ = 0;
    fixed_fifo<std::pair<int, std::size_t>, 2> ready_; // (buffer, bytes): two output buffers
    fixed_fifo<int, 2> in_flight_;
    bool end_queued_ = false;

    T* dense_acc_ = nullptr;
    scratch scratch_[2];
    scratch decoded_; // a child block's entries in a form other than index_value32 (entries)

    std::optional<failure> failure_;
    bool detected_ = false;
    std::size_t bytes_sent_ = 0, bytes_received_ = 0, messages_sent_ = 0, dense_work_ = 0, sparse_work_ = 0;
};

} // namespace sparse_reduce::detail
