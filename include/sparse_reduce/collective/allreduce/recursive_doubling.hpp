#pragma once
// recursive_doubling allreduce (detail; collective/allreduce.hpp): log2 P
// exchanges of whole partial results with rank ^ 2^k; a partial is
// index/value until that outgrows dense, then dense. P not a power of two:
// ranks 2i+1 < 2r (r = P - 2^floor(log2 P)) fold into 2i first and get the
// result back last. Non-commutative operations keep rank order: the lower
// ranks' partial is always on the left.
//
// An exchange streams: each side sends its partial in messages of about
// stream_message_bytes (wire blocks of `window` elements, each in its
// smallest form, then a trailer: the sender's status, the windows the
// message holds) and takes the partner's as they arrive, two of its own in
// flight at most. A dense partial folds each of the partner's windows in
// place as soon as its own copy of that window has gone out, so a step
// holds the partial and a few messages, not the partial, the whole encoded
// message and the partner's whole message. A sparse partial (or the result
// sent back to a folded rank) gathers the partner's messages whole, then
// decodes and combines as one.
//
// Every exchange and the run as a whole are steppable (doubling_run): a
// blocking call steps them to their end at once; a started one
// (collective/allreduce_start.hpp) from test() and wait(), never waiting.

#include <algorithm>
#include <array>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
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

// Every message ends in a trailer of two u64 words: the sender's status and
// how many windows the message covers.
inline constexpr std::size_t trailer_words = 2, trailer_bytes = 8 * trailer_words;

// How a step takes the partner's partial: folded in on the side its ranks'
// order says, or instead of ours.
enum class doubling_fold { theirs_left, theirs_right, replace };

// This rank's side of a step: its partial in messages of whole windows;
// once failed (st; also when encoding a message fails), its status alone,
// in one message from the sender's own words.
template <class T>
class partial_sender {
public:
    partial_sender(MPI_Comm pc, int partner, const partial<T>& p, call_status& st, std::size_t dimension,
                   std::size_t window, const T& id, wire::format fmt, exchange_buffers& buffers, int tag)
        : pc_(pc), partner_(partner), tag_(tag), p_(p), st_(st), status_(st.word()), dimension_(dimension),
          window_(window), windows_((dimension + window - 1) / window),
          message_bytes_(std::max(stream_message_bytes, window * sizeof(T))), id_(id), fmt_(fmt), buffers_(buffers)
    {
    }
    ~partial_sender() { finish(true); }
    partial_sender(const partial_sender&) = delete;
    partial_sender& operator=(const partial_sender&) = delete;

    bool done() const { return sent_ > 0 && next_ == windows_; }
    // Windows sent so far: the partial may be changed below this one.
    std::size_t frontier() const { return next_; }

    // Whether the next message's buffer is free (the send from it two
    // messages ago complete); may_wait: once it is.
    bool ready(bool may_wait) { return requests_done(reqs_[sent_ % 2], may_wait); }

    // The next message (after ready()).
    void send_one(report& rep)
    {
        const std::size_t slot = sent_ % 2;
        wire_buffer& b = slot ? buffers_.send_next : buffers_.send; // kept, not shrunk: growing it again would zero it
        const std::size_t first = next_;
        std::size_t at = 0;
        if (status_ == 0) try {
                for (std::size_t covered = 0; next_ < windows_ && at < message_bytes_; next_ += covered)
                    at = append_window<T>(p_, nullptr, 0, dimension_, next_, window_, 1, id_, fmt_, b, at,
                                          buffers_.bitmap, covered);
                if (b.size() < at / 8 + trailer_words) b.resize(at / 8 + trailer_words);
                reqs_[slot].reserve(4); // isend_message's pieces (a message is below 2 GiB)
            } catch (...) {
                st_.fail_here();
                status_ = st_.word();
            }
        if (status_ != 0) { // every window left, at once
            next_ = windows_;
            alone_[0] = static_cast<std::uint64_t>(status_);
            alone_[1] = next_ - first;
            MPI_Isend(alone_, static_cast<int>(trailer_bytes), MPI_BYTE, partner_, tag_, pc_, &alone_req_);
            at = trailer_bytes;
        } else {
            b[at / 8] = 0;
            b[at / 8 + 1] = next_ - first;
            at += trailer_bytes;
            isend_message(b.data(), at, partner_, tag_, pc_, reqs_[slot]);
        }
        rep.bytes_sent += at;
        ++rep.messages_sent;
        ++sent_;
    }

    // Every send complete; may_wait: once they are.
    bool finish(bool may_wait)
    {
        int alone = 1;
        if (may_wait) MPI_Wait(&alone_req_, MPI_STATUS_IGNORE);
        else MPI_Test(&alone_req_, &alone, MPI_STATUS_IGNORE);
        return requests_done(reqs_[0], may_wait) && requests_done(reqs_[1], may_wait) && alone;
    }

private:
    // reqs complete (then cleared); may_wait: once they are.
    static bool requests_done(std::vector<MPI_Request>& reqs, bool may_wait)
    {
        if (reqs.empty()) return true;
        int done = 1;
        if (may_wait) MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
        else MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE);
        if (done) reqs.clear();
        return done != 0;
    }

    MPI_Comm pc_;
    int partner_, tag_;
    const partial<T>& p_;
    call_status& st_;
    std::int64_t status_;
    std::size_t dimension_, window_, windows_, message_bytes_;
    T id_;
    wire::format fmt_;
    exchange_buffers& buffers_;
    std::size_t next_ = 0, sent_ = 0;
    std::vector<MPI_Request> reqs_[2];
    std::uint64_t alone_[trailer_words] = {};
    MPI_Request alone_req_ = MPI_REQUEST_NULL;
};

// The partner's side of a step, into `acc`: a dense partial folds window
// by window as messages arrive (fold_ready), anything else takes the whole
// partial at the end (finish).
template <class T, class Op>
class partial_receiver {
public:
    partial_receiver(MPI_Comm pc, int partner, partial<T>& acc, std::size_t dimension, std::size_t window, const T& id,
                     const Op& op, doubling_fold how, call_status& st, exchange_buffers& buffers, int tag)
        : pc_(pc), partner_(partner), tag_(tag), acc_(acc), dimension_(dimension), window_(window),
          windows_((dimension + window - 1) / window), id_(id), op_(op), how_(how), st_(st), buf_(buffers.receive),
          drain_(buffers.drain), streamed_(acc.is_dense && how != doubling_fold::replace && !st.failed())
    {
    }

    bool done() const { return received_ > 0 && covered_ == windows_; }
    // Windows received so far.
    std::size_t frontier() const { return covered_; }

    // The next message, folded as far as it may be; may_wait: once it is
    // in, else false while it is not.
    bool receive_one(report& rep, bool may_wait)
    {
        const std::size_t at = streamed_ ? 0 : whole_;
        if (!incoming_.receive(partner_, tag_, pc_, buf_, at, drain_, &dropped_, may_wait)) return false;
        const std::size_t n = incoming_.got;
        const bool dropped = dropped_; // no room for it: taken into the drain, and this rank fails
        incoming_ = {};
        dropped_ = false;
        if (dropped) st_.fail_no_room(at + n, partner_);
        rep.bytes_received += n;
        ++received_;
        const std::size_t end = at + n - std::min(n, trailer_bytes);
        std::uint64_t trailer[trailer_words] = {};
        if (n >= trailer_bytes)
            std::memcpy(trailer, dropped ? drain_.data() + (n - trailer_bytes) : bytes_of(buf_, end + trailer_bytes).data() + end,
                        trailer_bytes);
        const auto status = static_cast<std::int64_t>(trailer[0]);
        const std::size_t count = static_cast<std::size_t>(trailer[1]);
        if (status != 0) {
            st_.hear(status);
            covered_ = windows_; // a failed sender sends its status alone
            return true;
        }
        if (n < trailer_bytes || count > windows_ - covered_ || (count == 0 && windows_ > 0)) {
            try {
                fail("malformed message: ", n, " bytes, ", count, " windows");
            } catch (...) {
                st_.fail_here();
            }
            covered_ = windows_; // cannot come from a rank of this plan: stop here
            return true;
        }
        covered_ += count;
        if (streamed_) {
            pos_ = 0;
            end_ = end;
        } else {
            whole_ = end;
        }
        return true;
    }

    // Streamed: folds the windows received below `limit`.
    void fold_ready(std::size_t limit)
    {
        if (!streamed_) return;
        try {
            while (folded_ < covered_ && folded_ < limit && !st_.failed()) {
                const std::size_t lo = folded_ * window_;
                if (run_end_ <= folded_) { // the next block; an empty run may pass `limit`: folded as far as it may
                    const auto v = parse_window<T>(bytes_of(buf_, end_).subspan(pos_), lo,
                                                   std::min(dimension_, covered_ * window_), window_);
                    pos_ += v.bytes;
                    if (v.tag == wire::block_tag::empty_run) {
                        run_end_ = folded_ + v.count;
                    } else {
                        fold_block_into_dense(v, acc_.dense_data() + lo, id_, op_, how_ == doubling_fold::theirs_left,
                                              acc_.source ? acc_.source + lo : nullptr);
                        ++folded_;
                    }
                }
                if (run_end_ > folded_) { // nothing of theirs: ours stays, read into place if still the input
                    const std::size_t end = std::min({run_end_, covered_, limit});
                    const std::size_t hi = std::min(dimension_, end * window_);
                    if (acc_.source) std::copy(acc_.source + lo, acc_.source + hi, acc_.dense_data() + lo);
                    folded_ = end;
                }
                if (folded_ == covered_ && pos_ != end_)
                    fail("malformed message: ", end_ - pos_, " bytes after the last block");
            }
            // Every window written (and, if this rank sends, sent): the
            // partial is the output's from here on.
            if (folded_ == windows_) acc_.source = nullptr;
        } catch (...) {
            st_.fail_here();
        }
    }

    // Not streamed: the partner's whole partial, decoded and combined (or taken).
    void finish()
    {
        if (streamed_ || st_.failed()) return;
        try {
            const auto blocks = parse_partial<T>(bytes_of(buf_, whole_), dimension_, window_);
            if (how_ == doubling_fold::replace && acc_.is_dense && dense_is_smaller<T>(blocks.entries, dimension_)) {
                decode_partial_into(blocks, id_, acc_.dense_data()); // as decode_partial would, into our array
                acc_.source = nullptr; // every window replaced
                return;
            }
            auto theirs = decode_partial(blocks, dimension_, id_);
            acc_ = how_ == doubling_fold::replace       ? std::move(theirs)
                   : how_ == doubling_fold::theirs_left ? combine_partials(theirs, acc_, op_, dimension_)
                                                        : combine_partials(acc_, theirs, op_, dimension_);
        } catch (...) {
            st_.fail_here();
        }
    }

private:
    MPI_Comm pc_;
    int partner_, tag_;
    partial<T>& acc_;
    std::size_t dimension_, window_, windows_;
    T id_;
    const Op& op_;
    doubling_fold how_;
    call_status& st_;
    wire_buffer& buf_;
    std::span<std::byte> drain_;
    bool streamed_;
    message_receiver incoming_; // the message being received
    bool dropped_ = false;      // it goes into the drain
    std::size_t received_ = 0, covered_ = 0, folded_ = 0, pos_ = 0, end_ = 0, whole_ = 0;
    std::size_t run_end_ = 0; // streamed: the window after the empty run being folded
};

// One step of a rank's part: with `partner`, send ours (if send), receive
// theirs (if receive) and fold it in or take it.
struct doubling_step {
    int partner = 0;
    bool send = false, receive = false;
    doubling_fold how = doubling_fold::replace;
};

// A rank's steps, in order: for P not a power of two, 2i+1 -> 2i for
// i < extra first (virtual rank vr over pow2 ranks keeps the order), the
// result back to 2i+1 last.
//
//   P = 6, extra 2:   1 -> 0   3 -> 2        fold in
//                     {0, 2, 4, 5} ^ 1, ^ 2  as virtual ranks 0..3
//                     0 -> 1   2 -> 3        the result back
struct doubling_steps {
    std::array<doubling_step, 2 + 8 * sizeof(int)> at{};
    int count = 0;
};

inline doubling_steps doubling_steps_of(int me, int P)
{
    doubling_steps s;
    const auto add = [&](int partner, bool send, bool receive, doubling_fold how) {
        s.at[static_cast<std::size_t>(s.count++)] = {partner, send, receive, how};
    };
    const int pow2 = static_cast<int>(std::bit_floor(static_cast<unsigned>(P)));
    const int extra = P - pow2;
    int vr = -1;
    if (me < 2 * extra) {
        if (me % 2) add(me - 1, true, false, doubling_fold::replace);
        else {
            add(me + 1, false, true, doubling_fold::theirs_right);
            vr = me / 2;
        }
    } else {
        vr = me - extra;
    }
    const auto real = [&](int v) { return v < extra ? 2 * v : v + extra; };
    if (vr >= 0)
        for (int mask = 1; mask < pow2; mask <<= 1) {
            const int pv = vr ^ mask;
            add(real(pv), true, true, pv < vr ? doubling_fold::theirs_left : doubling_fold::theirs_right);
        }
    if (me < 2 * extra) {
        if (me % 2) add(me - 1, false, true, doubling_fold::replace);
        else add(me + 1, true, false, doubling_fold::replace);
    }
    return s;
}

// This rank's steps in pc.
inline doubling_steps doubling_steps_of(MPI_Comm pc)
{
    int me = 0, P = 1;
    MPI_Comm_rank(pc, &me);
    MPI_Comm_size(pc, &P);
    return doubling_steps_of(me, P);
}

// Recursive doubling over pc of the partials `acc` (dimension entries
// each), as steps: step(true) runs it to its end, step(false) as far as
// it goes without waiting. result() is then the whole reduction. A failed
// rank (st) exchanges status words only. In each exchange a side sends
// while it has not sent past what it has received, else receives: neither
// waits on the other forever, and a received window is folded once ours
// has gone out. Not movable: the exchange refers to its partial.
template <class T, class Op>
class doubling_run {
public:
    doubling_run(MPI_Comm pc, partial<T> acc, std::size_t dimension, const Op& op, wire::format fmt,
                 std::size_t window, call_status& st, exchange_buffers& buffers, int tag = doubling_tag)
        : pc_(pc), acc_(std::move(acc)), dimension_(dimension), op_(op), id_(identity<T>(op)), fmt_(fmt),
          window_(window), st_(st), buffers_(buffers), tag_(tag), steps_(doubling_steps_of(pc))
    {
        if constexpr (!rle_value<T>)
            if (fmt == wire::rle) fail("the rle wire format needs float or double values");
    }
    doubling_run(const doubling_run&) = delete;
    doubling_run& operator=(const doubling_run&) = delete;

    // True once every step is done.
    bool step(bool may_wait)
    {
        for (; next_ < steps_.count; ++next_) {
            const doubling_step& d = steps_.at[static_cast<std::size_t>(next_)];
            if (!sender_) {
                sender_.emplace(pc_, d.partner, acc_, st_, dimension_, window_, id_, fmt_, buffers_, tag_);
                receiver_.emplace(pc_, d.partner, acc_, dimension_, window_, id_, op_, d.how, st_, buffers_, tag_);
            }
            if (!exchange(d, *sender_, *receiver_, may_wait)) return false;
            receiver_.reset();
            sender_.reset();
        }
        if (!materialised_) {
            materialised_ = true;
            try {
                acc_.materialise(); // one rank, or a failed call: the input never folded
            } catch (...) {
                st_.fail_here();
            }
        }
        return true;
    }

    partial<T>& result() { return acc_; }
    report& rep() { return rep_; } // bytes and messages so far

private:
    bool exchange(const doubling_step& d, partial_sender<T>& s, partial_receiver<T, Op>& r, bool may_wait)
    {
        const std::size_t all = (dimension_ + window_ - 1) / window_;
        while ((d.send && !s.done()) || (d.receive && !r.done())) {
            if (d.send && !s.done() && (!d.receive || r.done() || r.frontier() >= s.frontier())) {
                if (!s.ready(may_wait)) return false;
                s.send_one(rep_);
            } else if (!r.receive_one(rep_, may_wait)) {
                return false;
            }
            if (d.receive) r.fold_ready(d.send ? s.frontier() : all);
        }
        if (!s.finish(may_wait)) return false;
        if (d.receive) r.finish();
        return true;
    }

    MPI_Comm pc_;
    partial<T> acc_;
    std::size_t dimension_;
    const Op& op_;
    T id_;
    wire::format fmt_;
    std::size_t window_;
    call_status& st_;
    exchange_buffers& buffers_;
    int tag_;
    doubling_steps steps_;
    int next_ = 0;
    bool materialised_ = false;
    report rep_;
    std::optional<partial_sender<T>> sender_; // the step's
    std::optional<partial_receiver<T, Op>> receiver_;
};

// Recursive doubling, blocking (grouped's exchange across groups); returns
// the whole reduction and adds its bytes and messages to rep.
template <class T, class Op>
partial<T> recursive_doubling(MPI_Comm pc, partial<T> acc, std::size_t dimension, const Op& op, wire::format fmt,
                              std::size_t window, report& rep, call_status& st, exchange_buffers& buffers)
{
    doubling_run<T, Op> run(pc, std::move(acc), dimension, op, fmt, window, st, buffers);
    run.step(true);
    rep.bytes_sent += run.rep().bytes_sent;
    rep.bytes_received += run.rep().bytes_received;
    rep.messages_sent += run.rep().messages_sent;
    return std::move(run.result());
}

// Whether recursive doubling builds its result in the caller's output `Out`
// (any dense one; a std::vector is resized, so its capacity serves every
// later call): the call then holds no second dense array (peak: input,
// output and messages) and allocates none, and its partial is dense from
// dense_partial_entries on.
template <class Out>
inline constexpr bool builds_in_output = repr_traits<std::remove_cvref_t<Out>>::kind == repr_kind::dense;

// One recursive_doubling call on this rank: the caller's input as a
// partial (in the output, where that is dense), the run, the result into
// out; then, after the agreement on failures (the caller's: blocking or
// started), the report or the call's error. Not movable.
template <class T, class Out, class Op>
class doubling_call {
public:
    template <class In>
    doubling_call(MPI_Comm pc, int me, std::size_t dimension, const In& in, Out& out, const Op& op, wire::format fmt,
                  std::size_t segment_bytes, exchange_buffers& buffers, int tag = doubling_tag)
        : st_(me), out_(out), op_(op), fmt_(fmt), window_(window_of<T>(segment_bytes)),
          run_(pc, input_of(in, out, dimension, op, st_), dimension, op, fmt, window_, st_, buffers, tag)
    {
    }
    doubling_call(const doubling_call&) = delete;
    doubling_call& operator=(const doubling_call&) = delete;

    // Moves the run on (may_wait: to its end); true once it is done and
    // the result written into out. Before the agreement: a rank that
    // cannot write its output fails the call.
    bool step(bool may_wait)
    {
        if (written_) return true;
        if (!run_.step(may_wait)) return false;
        written_ = true;
        if (!st_.failed()) try {
                result_into(out_, run_.result(), op_);
            } catch (...) {
                st_.fail_here();
            }
        return true;
    }

    const call_status& status() const { return st_; }

    // After the agreement (`first`: the lowest failing rank, if any): throws
    // where the call failed, else returns its report.
    report finish(const std::optional<failed_rank>& first)
    {
        throw_agreed(st_.failure, first);
        report rep = run_.rep();
        try {
            rep.algorithm = std::string("recursive_doubling(wire=") + wire::to_string(fmt_) +
                            ", segment=" + std::to_string(window_ * sizeof(T)) + ")";
        } catch (...) { // the call succeeded: its report's text is left empty
        }
        return rep;
    }

private:
    template <class In>
    static partial<T> input_of(const In& in, Out& out, std::size_t dimension, const Op& op, call_status& st)
    {
        try {
            check_dimension(in, dimension, st.rank);
            std::span<T> place;
            if constexpr (builds_in_output<Out>) place = repr_traits<std::remove_cvref_t<Out>>::output(out, dimension);
            return partial_of(in, dimension, op, place, true);
        } catch (...) {
            st.fail_here();
        }
        return {};
    }

    call_status st_; // first: the run refers to it
    Out& out_;
    const Op& op_;
    wire::format fmt_;
    std::size_t window_;
    doubling_run<T, Op> run_;
    bool written_ = false;
};

// A blocking recursive_doubling call: the run, then one allreduce of the
// ranks' statuses (agree_and_throw).
template <class In, class Out, class Op>
report doubling_allreduce(MPI_Comm pc, std::size_t dimension, const In& in, Out& out, const Op& op, wire::format fmt,
                          std::size_t segment_bytes, exchange_buffers& buffers)
{
    int me = 0;
    MPI_Comm_rank(pc, &me);
    doubling_call<value_type_of<In>, Out, Op> call(pc, me, dimension, in, out, op, fmt, segment_bytes, buffers);
    call.step(true);
    const call_status& st = call.status();
    return call.finish(first_failure(pc, me, failure_candidate(me, st.failure, st.heard), st.failure));
}

} // namespace sparse_reduce::detail
