#pragma once
// Sparse reduction with one message per tree edge (the binomial tree with
// local pipelining of the Sreduce draft (n.d.), taken to its end: a sparse
// partial result is small, so it travels whole). Each rank folds, in the tree's order,
//
//   own ⊗ c[self] ⊗ c[self+1] ...   then   c[self-1] ⊗ (...), down to c[0]
//
// straight from the caller's arrays and the received messages: the last fold
// writes into the outgoing message (exec/partial_message.hpp), or on the root
// into the caller's output. A leaf copies its entries into its message once.
// A partial result that outgrows its index/value form becomes a dense array
// in place in a message buffer, and travels dense without another copy, in
// pieces of 1 MiB that the receiver folds as they arrive (the next pieces
// already posted), so the fold hides behind the transfer.
//
//   leaf:   own ──copy──> [header | indices | values] ──> parent
//   inner:  own ⊗ child ──merge──> [header | indices | values] ──> parent
//   root:   own ⊗ child ──merge──> caller's Eigen::SparseVector / index_value_vector
//
// Memory: every buffer is a slot of the caller's node_buffers (a plan's, or
// the communicator's cache for one-shot calls), grown to the data and kept.
// Failure: a rank that fails (bad input, a throwing op, a malformed or failed
// child message) still receives every child's message, then sends an error
// message in place of its result, so no peer waits and nothing is left queued.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

#include <mpi.h>

#include "../detail/index_width.hpp"
#include "../detail/value_equal.hpp"
#include "../error.hpp"
#include "../kernel/combine.hpp"
#include "../kernel/entry_stream.hpp"
#include "../kernel/gather_entries.hpp"
#include "../kernel/merge_arrays.hpp"
#include "../op/associative_op.hpp"
#include "../repr/representation.hpp"
#include "../tree/tree.hpp"
#include "message.hpp"
#include "comm_state.hpp"
#include "partial_message.hpp"
#include "reduce_node.hpp"
#include "whole_output.hpp"
#include "whole_transport.hpp"

namespace sparse_reduce::detail {

// node_buffers slots of a whole-message reduce
enum whole_slot : std::size_t { send_slot, recv_a, recv_b, idx0, val0, idx1, val1, dense_slot };

// Sends res's failure in place of a result: a header and the text, from
// this frame (a rank out of memory can still send it).
inline void send_whole_failure(whole_transport& net, const whole_result& res, std::size_t dim, int to, int tag)
{
    const std::string& text = res.failed->text;
    partial_header h;
    h.flags = partial_header::failed;
    h.dimension = dim;
    h.count = std::min<std::size_t>(text.size(), max_error_text_bytes);
    h.total_bytes = partial_header_bytes + h.count;
    h.error_rank = res.failed->rank;
    alignas(8) std::byte msg[partial_header_bytes + max_error_text_bytes];
    std::memcpy(msg, &h, sizeof h);
    std::memcpy(msg + sizeof h, text.data(), h.count);
    net.send(to, tag, msg, h.total_bytes);
}

// The part of a rank that has failed before its fold: it receives every
// child's message whole and drops it, sends its failure in place of a
// result, and takes a forwarded result, so no peer waits and nothing stays
// queued. It reads no value, so it is compiled once, whatever the types: a
// rank whose vector cannot take part (its index type cannot hold the
// dimension) runs only this.
inline void run_failed_whole(whole_transport& net, whole_result& res, const tree::local_view& v, int destination,
                             int top, std::size_t dim)
{
    for (int child : v.children) net.receive(child, stream_tag, recv_a);
    if (v.parent >= 0 || v.forwards)
        send_whole_failure(net, res, dim, v.forwards ? destination : v.parent, v.forwards ? forward_tag : stream_tag);
    if (v.receives_forward) net.receive(top, forward_tag, recv_a);
}

// A rank's whole part when it has failed before its fold, with `text`
// (or, if there is no memory to copy it, "out of memory").
inline whole_result fail_whole(MPI_Comm comm, const tree& t, int me, std::size_t dim, node_buffers& ws,
                               const std::string& text)
{
    whole_result res;
    res.fail({me, text_or_out_of_memory([&] { return unprefixed(text); })}, true);
    whole_transport net{comm, me, ws, dense_slot, res};
    run_failed_whole(net, res, t.local(me), t.destination, t.top, dim);
    return res;
}

template <class T, class I, class Op>
class whole_reduce {
    using enum whole_slot;
    // blocked indices unpacked (one per receive slot), the sender's window pairs
    static constexpr std::size_t decoded_a = 10, decoded_b = 11, pairs_slot = 12;

public:
    static constexpr std::size_t own_idx_slot = 8, own_val_slot = 9; // the caller's entries when they need a copy

    // own: the caller's entries, validated (indices of type IA, no identities).
    whole_reduce(MPI_Comm comm, const tree& t, int me, std::size_t dimension, const Op& op, node_buffers& ws,
                 const whole_output<T>& out)
        : comm_(comm), view_(t.local(me)), dest_(t.destination), me_(me), top_(t.top), dim_(dimension), op_(op),
          id_(identity<T>(op)), ws_(ws), out_(out)
    {
    }

    whole_result& result() { return res_; }

    // Runs this rank's part; own_idx/own_val: its entries (any index type).
    template <class IA>
    void run(const IA* own_idx, const T* own_val, std::size_t own_n)
    {
        acc_ = {acc_kind::own, 0, own_n, nullptr, -1};
        const bool sends = view_.parent >= 0 || view_.forwards;
        const std::size_t nc = view_.children.size(), self = static_cast<std::size_t>(std::max(0, view_.self_position));
        // Receive order = fold order from own outwards: right children, then left ones reversed.
        for (std::size_t s = 0; s < nc; ++s) {
            const std::size_t c = s < nc - self ? self + s : nc - 1 - s;
            const bool left = c < self;
            const bool last = s + 1 == nc;
            const int slot = acc_.slot == recv_a ? recv_b : recv_a;
            const int child = view_.children[c];
            whole_transport::first_piece p = net_.receive_first(child, stream_tag, slot);
            try {
                if (!res_.failed && folds_as_it_arrives(p)) { // dense: each piece folded while the next arrives
                    T* vals = reinterpret_cast<T*>(p.buf + partial_header_bytes);
                    fold_dense_child(own_idx, own_val, vals, left, last && !sends, slot, [&](auto&& step) {
                        net_.receive_rest(child, stream_tag, p, [&](std::size_t have) {
                            step(std::min(dim_, (have - partial_header_bytes) / sizeof(T)));
                        });
                    });
                } else {
                    net_.receive_rest(child, stream_tag, p, [](std::size_t) {});
                    if (res_.failed) continue;
                    const auto v = checked_view(p.buf, p.bytes, child, slot);
                    if (res_.failed) continue;
                    fold(own_idx, own_val, v, left, last && !sends, last && sends, slot);
                }
            } catch (...) {
                set_failure({me_, caught_text()}, true);
            }
            net_.receive_rest(child, stream_tag, p, [](std::size_t) {}); // what a failure left unreceived
        }
        if (sends) {
            const int to = view_.forwards ? dest_ : view_.parent;
            const int tag = view_.forwards ? forward_tag : stream_tag;
            if (!res_.failed) {
                try {
                    if (acc_.kind != acc_kind::sent) encode(own_idx, own_val);
                } catch (...) {
                    set_failure({me_, caught_text()}, true);
                }
            }
            if (res_.failed) send_error(to, tag);
            else if (dense_values_) net_.send_header_and(to, tag, ws_.get<std::byte>(send_slot, 0), dense_values_, msg_bytes_);
            else net_.send(to, tag, ws_.get<std::byte>(msg_slot_, 0), msg_bytes_);
        } else if (!res_.failed && acc_.kind != acc_kind::sent) {
            write_output(own_idx, own_val);
        }
        if (view_.receives_forward) {
            auto [msg, bytes] = net_.receive(top_, forward_tag, recv_a);
            if (!res_.failed) {
                try {
                    const auto v = checked_view(msg, bytes, -1, recv_a);
                    if (!res_.failed) {
                        acc_ = v.dense ? acc_state{acc_kind::dense, 0, dim_, v.val, recv_a}
                                       : acc_state{acc_kind::message, 0, v.n, v.val, recv_a};
                        received_idx_ = v.idx;
                        write_output(own_idx, own_val);
                    }
                } catch (...) {
                    set_failure({me_, caught_text()}, true);
                }
            }
        }
    }

private:
    enum class acc_kind { own, scratch, message, dense, sent };
    struct acc_state {
        acc_kind kind;
        int cur;        // scratch: which of the two
        std::size_t n;  // entries (dense: dimension)
        T* dense;       // dense: the elements; message: the values
        int slot;       // the node_buffers slot holding a dense or message accumulator
    };

    void set_failure(failure f, bool detected) { res_.fail(std::move(f), detected); }

    // A dense partial result of this dimension, in pieces still to come.
    bool folds_as_it_arrives(const whole_transport::first_piece& p) const
    {
        partial_header h;
        std::memcpy(&h, p.buf, sizeof h);
        return p.bytes < p.total && h.magic == partial_header::magic_value && h.flags == partial_header::dense_form &&
               h.dimension == dim_ && dense_layout<T>(h, dim_);
    }

    void send_error(int to, int tag) { send_whole_failure(net_, res_, dim_, to, tag); }

    partial_view<T, I> checked_view(std::byte* msg, std::size_t bytes, int from, int slot)
    {
        const auto v = parse_partial<T, I>(msg, bytes, dim_, [&](std::size_t n) {
            return ws_.get<I>(slot == recv_a ? decoded_a : decoded_b, n);
        });
        if (v.h.flags & partial_header::failed) set_failure({v.h.error_rank, partial_error_text(msg, v.h)}, false);
        else if (v.h.dimension != dim_)
            set_failure({me_, detail::concat("dimension mismatch: rank ", from, " has dimension ", v.h.dimension,
                                             ", rank ", me_, " has ", dim_)},
                        true);
        return v;
    }

    // ---- the fold ----
    template <class F, class IA>
    decltype(auto) with_acc_entries(const IA* own_idx, const T* own_val, F&& f)
    {
        switch (acc_.kind) {
        case acc_kind::own: return f(own_idx, own_val, acc_.n);
        case acc_kind::message: return f(received_idx_, const_cast<const T*>(acc_.dense), acc_.n);
        case acc_kind::scratch:
            return f(ws_.get<I>(acc_.cur ? idx1 : idx0, 0), const_cast<const T*>(ws_.get<T>(acc_.cur ? val1 : val0, 0)),
                     acc_.n);
        case acc_kind::dense: // the callers fold a dense accumulator themselves
        case acc_kind::sent:  // and read nothing once it has gone
            break;
        }
        fail("whole-message reduce: the accumulator holds no entry list");
    }

    // A dense accumulator in a message buffer (header room in front), filled
    // with the identity and the current sparse entries.
    template <class IA>
    T* densify(const IA* own_idx, const T* own_val)
    {
        std::byte* msg = ws_.get<std::byte>(dense_slot, dense_partial_bytes<T>(dim_));
        T* d = reinterpret_cast<T*>(msg + partial_header_bytes);
        std::fill(d, d + dim_, id_);
        with_acc_entries(own_idx, own_val, [&](const auto* ix, const T* vx, std::size_t n) {
            for (std::size_t k = 0; k < n; ++k) d[as_unsigned(ix[k])] = vx[k];
        });
        acc_ = {acc_kind::dense, 0, dim_, d, dense_slot};
        return d;
    }

    bool fits_sparse(std::size_t entries) const
    {
        return entries * (sizeof(I) + sizeof(T)) <= dim_ * sizeof(T);
    }

    template <class IA>
    void fold(const IA* own_idx, const T* own_val, const partial_view<T, I>& v, bool left, bool to_output, bool to_message,
              int slot)
    {
        if (acc_.kind != acc_kind::dense && !v.dense && fits_sparse(acc_.n + v.n)) {
            with_acc_entries(own_idx, own_val, [&](const auto* ai, const T* av, std::size_t na) {
                auto merge_into = [&](auto* oi, T* ov) {
                    return left ? merge_arrays(v.idx, v.val, v.n, ai, av, na, oi, ov, op_, id_)
                                : merge_arrays(ai, av, na, v.idx, v.val, v.n, oi, ov, op_, id_);
                };
                const std::size_t cap = na + v.n;
                if (to_output && direct_output()) {
                    const auto slots = out_.begin(out_.out, dim_, cap);
                    out_.commit(out_.out, merge_into(slots.index, slots.value));
                    acc_.kind = acc_kind::sent;
                    return;
                }
                if (to_message) {
                    std::byte* msg = ws_.get<std::byte>(send_slot, partial_bytes<T, I>(cap));
                    const std::size_t n = merge_into(reinterpret_cast<I*>(msg + partial_indices_at<T, I>(cap)),
                                                     reinterpret_cast<T*>(msg + partial_header_bytes));
                    finish_message(msg, n, cap);
                    acc_.kind = acc_kind::sent;
                } else {
                    const int next = acc_.kind == acc_kind::scratch ? 1 - acc_.cur : 0;
                    I* oi = ws_.get<I>(next ? idx1 : idx0, cap);
                    T* ov = ws_.get<T>(next ? val1 : val0, cap);
                    acc_ = {acc_kind::scratch, next, merge_into(oi, ov), nullptr, -1};
                }
            });
            return;
        }
        // dense from here on
        if (v.dense) return fold_dense_child(own_idx, own_val, v.val, left, to_output, slot, [&](auto&& step) { step(dim_); });
        if (to_output && acc_.kind == acc_kind::dense && direct_output()) { // one pass into the caller's output
            const auto slots = out_.begin(out_.out, dim_, dim_);
            out_.commit(out_.out, merge_dense_sparse(acc_.dense, dim_, v.idx, v.val, v.n, !left, slots.index,
                                                     slots.value, op_, id_));
            acc_.kind = acc_kind::sent;
            return;
        }
        if (acc_.kind == acc_kind::dense) {
            scatter_fold(acc_.dense, v.idx, v.val, v.n, left, op_, id_);
        } else {
            T* d = densify(own_idx, own_val);
            scatter_fold(d, v.idx, v.val, v.n, left, op_, id_);
        }
    }

    // A dense child's values (vals, in its message at slot) folded into the
    // accumulator as they arrive: pieces(step) calls step(hi) once elements
    // [0, hi) are in, with hi growing to the dimension (at once for a
    // message already whole). Into the caller's sparse output in one pass
    // when this is the last fold; else into the accumulator when it is
    // dense, or the accumulator's entries into vals, which becomes it.
    template <class IA, class Pieces>
    void fold_dense_child(const IA* own_idx, const T* own_val, T* vals, bool left, bool to_output, int slot,
                          Pieces&& pieces)
    {
        std::size_t done = 0;
        if (acc_.kind == acc_kind::dense) {
            pieces([&](std::size_t hi) {
                fold_dense(acc_.dense + done, vals + done, hi - done, left, op_, id_);
                done = hi;
            });
            return;
        }
        // The accumulator's entries below hi, from entry k on.
        auto entries_below = [](const auto* ai, std::size_t k, std::size_t na, std::size_t hi) {
            return static_cast<std::size_t>(std::partition_point(ai + k, ai + na, [&](const auto& i) {
                                                return as_unsigned(i) < hi;
                                            }) -
                                            ai);
        };
        if (to_output && direct_output()) {
            const auto slots = out_.begin(out_.out, dim_, dim_);
            std::size_t n = 0;
            with_acc_entries(own_idx, own_val, [&](const auto* ai, const T* av, std::size_t na) {
                std::size_t k = 0;
                pieces([&](std::size_t hi) {
                    const std::size_t upto = entries_below(ai, k, na, hi);
                    n += merge_dense_sparse(vals, done, hi, ai + k, av + k, upto - k, left, slots.index + n,
                                            slots.value + n, op_, id_);
                    k = upto;
                    done = hi;
                });
            });
            if (res_.failed) return;
            out_.commit(out_.out, n);
            acc_.kind = acc_kind::sent;
            return;
        }
        if (acc_.kind == acc_kind::own && acc_.n == dim_) { // every element: a dense array (identities absent)
            pieces([&](std::size_t hi) {
                fold_dense(vals + done, own_val + done, hi - done, !left, op_, id_);
                done = hi;
            });
        } else {
            with_acc_entries(own_idx, own_val, [&](const auto* ai, const T* av, std::size_t na) {
                std::size_t k = 0;
                pieces([&](std::size_t hi) {
                    const std::size_t upto = entries_below(ai, k, na, hi);
                    scatter_fold(vals, ai + k, av + k, upto - k, !left, op_, id_);
                    k = upto;
                });
            });
        }
        acc_ = {acc_kind::dense, 0, dim_, vals, slot};
    }

    // The last fold merges straight into the caller's index/value arrays
    // (32-bit indices, messages of 32-bit indices); other outputs are
    // written from the result (write_output).
    bool direct_output() const { return sizeof(I) == 4 && out_.begin != nullptr; }

    // Header and final layout for a message of n entries written for room cap.
    void finish_message(std::byte* msg, std::size_t n, std::size_t cap)
    {
        msg_bytes_ = finish_partial<T, I>(msg, n, cap, dim_, pairs_room(n));
        msg_slot_ = send_slot;
    }
    std::uint32_t* pairs_room(std::size_t n) { return ws_.get<std::uint32_t>(pairs_slot, blocked_pairs_words(n)); }

    // The dense form's header at msg, which goes out from slot.
    void dense_header(std::byte* msg, std::size_t slot)
    {
        partial_header h;
        h.flags = partial_header::dense_form;
        h.dimension = dim_;
        h.count = dim_;
        h.value_offset = partial_header_bytes;
        h.total_bytes = dense_partial_bytes<T>(dim_);
        h.index_bytes = sizeof(I);
        std::memcpy(msg, &h, sizeof h);
        msg_slot_ = slot;
        msg_bytes_ = h.total_bytes;
    }

    // A dense accumulator goes out from where it is: its buffer has header room.
    void send_dense_in_place()
    {
        dense_header(reinterpret_cast<std::byte*>(acc_.dense) - partial_header_bytes, static_cast<std::size_t>(acc_.slot));
    }

    template <class IA>
    void encode(const IA* own_idx, const T* own_val)
    {
        if (acc_.kind == acc_kind::dense) {
            std::size_t n = 0;
            for (std::size_t i = 0; i < dim_; ++i) n += !same_value(acc_.dense[i], id_);
            if (!fits_sparse(n)) return send_dense_in_place();
            std::byte* msg = ws_.get<std::byte>(send_slot, partial_bytes<T, I>(n));
            gather_entries(acc_.dense, dim_, reinterpret_cast<I*>(msg + partial_indices_at<T, I>(n)),
                           reinterpret_cast<T*>(msg + partial_header_bytes), id_);
            finish_message(msg, n, n);
            return;
        }
        if (!fits_sparse(acc_.n)) { // too many entries for index/value: dense form
            if (acc_.kind == acc_kind::own && acc_.n == dim_) { // every element held: the values are the dense form
                dense_header(ws_.get<std::byte>(send_slot, partial_header_bytes), send_slot);
                dense_values_ = own_val;
                return;
            }
            densify(own_idx, own_val);
            return send_dense_in_place();
        }
        with_acc_entries(own_idx, own_val, [&](const auto* ai, const T* av, std::size_t n) {
            std::byte* msg = ws_.get<std::byte>(send_slot, partial_bytes<T, I>(n));
            msg_bytes_ = write_partial<T, I>(msg, ai, av, n, dim_, pairs_room(n));
            msg_slot_ = send_slot;
        });
    }

    // The accumulator into the caller's output (the root). Sizing the
    // output allocates: a failure there is the call's, which the root then
    // throws (every message has been received).
    template <class IA>
    void write_output(const IA* own_idx, const T* own_val)
    {
        try {
            put_output(own_idx, own_val);
        } catch (...) {
            set_failure({me_, caught_text()}, true);
        }
    }

    template <class IA>
    void put_output(const IA* own_idx, const T* own_val)
    {
        if (acc_.kind == acc_kind::dense) {
            if (out_.dense) {
                std::copy(acc_.dense, acc_.dense + dim_, out_.dense(out_.out, dim_));
            } else if (direct_output()) { // one pass, straight into the output
                const auto slots = out_.begin(out_.out, dim_, dim_);
                out_.commit(out_.out, gather_entries(acc_.dense, dim_, slots.index, slots.value, id_));
            } else {
                out_.from_dense(out_.out, dim_, acc_.dense, id_);
            }
            return;
        }
        with_acc_entries(own_idx, own_val, [&](const auto* ai, const T* av, std::size_t n) {
            if (direct_output()) {
                const auto slots = out_.begin(out_.out, dim_, n);
                copy_entries(ai, av, n, slots.index, slots.value);
                out_.commit(out_.out, n);
            } else {
                out_.put_entries(dim_, ai, av, n, id_);
            }
        });
    }

    MPI_Comm comm_;
    tree::local_view view_;
    int dest_, me_, top_;
    std::size_t dim_;
    Op op_;
    T id_;
    node_buffers& ws_;
    whole_output<T> out_;
    acc_state acc_{acc_kind::own, 0, 0, nullptr, -1};
    const I* received_idx_ = nullptr;
    const T* dense_values_ = nullptr; // the caller's values, sent after the header as they are
    std::size_t msg_slot_ = send_slot, msg_bytes_ = 0;
    whole_result res_;
    whole_transport net_{comm_, me_, ws_, dense_slot, res_};
};

// The node over this rank's entries (indices of 32 or 64 bits, no
// identity among them): compiled once per value type, operation and index
// widths, whatever the representations.
template <class I, class T, class Op, class U>
whole_result run_whole_node(MPI_Comm comm, const tree& t, int me, std::size_t dim, const Op& op, node_buffers& ws,
                            const whole_output<T>& out, const U* idx, const T* val, std::size_t n)
{
    whole_reduce<T, I, Op> node(comm, t, me, dim, op, ws, out);
    node.run(idx, val, n);
    return node.result();
}

// One rank's part of a whole-message reduce over tree t of this rank's
// index/value input: validated once (indices increasing and in range, in one
// pass), the caller's arrays used as they are unless they hold identities (or
// are also the output, or have indices narrower than 32 bits), else copied
// without them.
template <class I, class T, class Op, index_value_representation In, class Out>
whole_result run_whole_reduce(MPI_Comm comm, const tree& t, int me, std::size_t dim, const In& in, Out& out,
                              const Op& op, node_buffers& ws, const std::string& local_failure)
{
    using RI = repr_traits<std::remove_cvref_t<In>>;
    using J = typename RI::index_type;
    using node_t = whole_reduce<T, I, Op>;
    const T id = identity<T>(op);
    if (!local_failure.empty()) return fail_whole(comm, t, me, dim, ws, local_failure);
    const auto idx = RI::indices(in);
    const auto val = RI::values(in);
    // Entries at every index (valid ones are 0, 1, ..., dim - 1) are a
    // dense array, where an identity is an absent element: the node
    // treats them so (sends them as the dense form, folds them as a
    // dense array), and their identities need no count (2^21 doubles:
    // 1 of the check's 2.5 ms). Not on a lone root, which copies its
    // entries to the output.
    const auto v = t.local(me);
    const bool full = idx.size() == dim && !(v.children.empty() && v.parent < 0 && !v.forwards);
    // Read as unsigned (checked not negative; an integer may be read through
    // its unsigned type), so Eigen's int indices meet the messages' unsigned
    // ones in one merge rather than in each mix of the two.
    using U = std::conditional_t<sizeof(J) <= 4, std::uint32_t, std::uint64_t>;
    const U* own_idx = nullptr;
    const T* own_val = nullptr;
    std::size_t n = 0;
    std::string bad;
    try { // nothing sent yet: a failure here (a bad input, no memory for its copy) goes up the tree
        std::size_t identities = 0;
        bad = idx.size() != val.size() ? std::string("index and value arrays differ in length")
                                       : validate_entries(idx.data(), val.data(), idx.size(), dim,
                                                          full ? nullptr : &identities, id);
        if (bad.empty() && sizeof(J) == sizeof(U) && identities == 0 && !same_object(in, out)) {
            own_idx = reinterpret_cast<const U*>(idx.data());
            own_val = val.data();
            n = idx.size();
        } else if (bad.empty()) {
            U* oi = ws.get<U>(node_t::own_idx_slot, idx.size());
            T* ov = ws.get<T>(node_t::own_val_slot, idx.size());
            for (std::size_t k = 0; k < idx.size(); ++k) {
                oi[n] = static_cast<U>(idx[k]);
                ov[n] = val[k];
                n += !same_value(val[k], id);
            }
            own_idx = oi;
            own_val = ov;
        }
    } catch (...) {
        bad = caught_text();
    }
    if (!bad.empty()) return fail_whole(comm, t, me, dim, ws, bad);
    return run_whole_node<I>(comm, t, me, dim, op, ws, make_whole_output<T>(out), own_idx, own_val, n);
}

// A whole-message call: messages carry 32-bit indices up to a dimension of
// 2^32, else 64-bit ones. A vector with indices of 4 bytes or fewer cannot
// take part in a larger dimension: that rank fails (so a call site with such
// vectors, e.g. Eigen's default StorageIndex, does not compile the 64-bit
// fold at all).
template <class T, class Op, index_value_representation In, class Out>
whole_result run_whole_call(MPI_Comm comm, const tree& t, int me, std::size_t dim, const In& in, Out& out,
                            const Op& op, node_buffers& ws, const std::string& local_failure)
{
    using J = typename repr_traits<std::remove_cvref_t<In>>::index_type;
    if (narrow_indices(dim))
        return run_whole_reduce<std::uint32_t, T>(comm, t, me, dim, in, out, op, ws, local_failure);
    if constexpr (sizeof(J) <= 4)
        return fail_whole(comm, t, me, dim, ws, text_or_out_of_memory([&] {
                              return !local_failure.empty()
                                         ? local_failure
                                         : concat("indices of ", sizeof(J), " bytes cannot address dimension ", dim);
                          }));
    else
        return run_whole_reduce<std::uint64_t, T>(comm, t, me, dim, in, out, op, ws, local_failure);
}

} // namespace sparse_reduce::detail
