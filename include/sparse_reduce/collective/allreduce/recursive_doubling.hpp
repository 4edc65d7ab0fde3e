#pragma once
// recursive_doubling allreduce (detail; collective/allreduce.hpp): log2 P
// exchanges of whole partial results with rank ^ 2^k; a partial is
// index/value until that outgrows dense, then dense (folded in place); on
// the wire, per block, whichever form is smaller. P not a power of two:
// ranks 2i+1 < 2r (r = P - 2^floor(log2 P)) fold into 2i first and get the
// result back last. Non-commutative operations keep rank order: the lower
// ranks' partial is always on the left.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <mpi.h>

#include "../../error.hpp"
#include "../../kernel/convert.hpp"
#include "../../report.hpp"
#include "../../wire/block.hpp"
#include "messages.hpp"
#include "partial_codec.hpp"
#include "partial_ops.hpp"
#include "status.hpp"

namespace sparse_reduce::detail {

// Sends `n` bytes and receives whatever the partner sends (probed size;
// messages of 1 GiB or more go in pieces).
inline std::size_t exchange(MPI_Comm comm, int partner, const wire_buffer& out, std::size_t n, wire_buffer& in,
                            bool send, bool receive)
{
    std::vector<MPI_Request> reqs;
    if (send) isend_message(out.data(), n, partner, doubling_tag, comm, reqs);
    const std::size_t got = receive ? recv_message(partner, doubling_tag, comm, in) : 0;
    wait_all(reqs);
    return got;
}

// Recursive doubling over pc of the partials `acc` (dimension entries each);
// returns the whole reduction. A failed rank (st) exchanges status words only.
template <class T, class Op>
partial<T> recursive_doubling(MPI_Comm pc, partial<T> acc, std::size_t dimension, const Op& op, wire::format fmt,
                              std::size_t window, report& rep, call_status& st, exchange_buffers& buffers)
{
    if constexpr (!rle_value<T>)
        if (fmt == wire::rle) fail("the rle wire format needs float or double values");
    int me = 0, P = 1;
    MPI_Comm_rank(pc, &me);
    MPI_Comm_size(pc, &P);
    const T id = identity<T>(op);
    wire_buffer &sendbuf = buffers.send, &recvbuf = buffers.receive;
    // One step with `partner`: send ours (if send), receive theirs (if
    // receive) and fold it in on the side its ranks' order says, or take it.
    enum class fold { theirs_left, theirs_right, replace };
    const auto step = [&](int partner, bool send, bool receive, fold how) {
        std::size_t n = 0;
        if (send) {
            n = encode_partial(st.failed() ? nullptr : &acc, dimension, window, id, fmt, st.word(), sendbuf);
            rep.bytes_sent += n;
            ++rep.messages_sent;
        }
        const std::size_t got = exchange(pc, partner, sendbuf, n, recvbuf, send, receive);
        if (!receive) return;
        rep.bytes_received += got;
        try {
            if (got < 8) fail("malformed message: " + std::to_string(got) + " bytes");
            const auto their_status = static_cast<std::int64_t>(recvbuf[0]);
            if (their_status != 0) return st.hear(their_status);
            if (st.failed()) return;
            const auto blocks = parse_partial<T>(bytes_of(recvbuf, got).subspan(8), dimension, window);
            if (acc.is_dense && how != fold::replace) // in place: no new dense array per step
                return fold_into_dense(blocks, acc.dense, window, id, op, how == fold::theirs_left);
            auto theirs = decode_partial(blocks, dimension, window, id);
            acc = how == fold::replace      ? std::move(theirs)
                  : how == fold::theirs_left ? combine_partials(theirs, acc, op, dimension)
                                             : combine_partials(acc, theirs, op, dimension);
        } catch (...) {
            st.fail_here();
        }
    };

    const int pow2 = static_cast<int>(std::bit_floor(static_cast<unsigned>(P)));
    const int extra = P - pow2;
    // fold: 2i+1 -> 2i for i < extra; virtual rank vr over pow2 ranks keeps the order
    int vr = -1;
    if (me < 2 * extra) {
        if (me % 2) step(me - 1, true, false, fold::replace);
        else {
            step(me + 1, false, true, fold::theirs_right);
            vr = me / 2;
        }
    } else {
        vr = me - extra;
    }
    const auto real = [&](int v) { return v < extra ? 2 * v : v + extra; };
    if (vr >= 0)
        for (int mask = 1; mask < pow2; mask <<= 1) {
            const int pv = vr ^ mask;
            step(real(pv), true, true, pv < vr ? fold::theirs_left : fold::theirs_right);
        }
    // send the result back to the folded ranks
    if (me < 2 * extra) {
        if (me % 2) step(me - 1, false, true, fold::replace);
        else step(me + 1, true, false, fold::replace);
    }
    return acc;
}

// One recursive_doubling call: the caller's input as a partial, the steps,
// the agreement on failures, the result into out.
template <class In, class Out, class Op>
report doubling_allreduce(MPI_Comm pc, std::size_t dimension, const In& in, Out& out, const Op& op, wire::format fmt,
                          std::size_t segment_bytes, exchange_buffers& buffers)
{
    using T = value_type_of<In>;
    int me = 0;
    MPI_Comm_rank(pc, &me);
    report rep;
    call_status st{me};
    partial<T> acc;
    try {
        check_dimension(in, dimension, me);
        acc = partial_of(in, dimension, op);
    } catch (...) {
        st.fail_here();
    }
    const std::size_t window = window_of<T>(segment_bytes);
    acc = recursive_doubling(pc, std::move(acc), dimension, op, fmt, window, rep, st, buffers);
    agree_and_throw(pc, me, st.failure, st.heard);
    if (acc.is_dense) convert_into(out, acc.dense, op);
    else convert_into(out, acc.sparse, op);
    rep.algorithm = std::string("recursive_doubling(wire=") + wire::to_string(fmt) +
                    ", segment=" + std::to_string(window * sizeof(T)) + ")";
    return rep;
}

} // namespace sparse_reduce::detail
