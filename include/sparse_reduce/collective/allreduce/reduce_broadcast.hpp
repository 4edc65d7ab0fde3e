#pragma once
// reduce_broadcast allreduce (detail; collective/allreduce.hpp): reduce's
// plan to rank 0, then a pipelined broadcast of the result: wire blocks of
// one segment of the index space each, packed into messages of about the
// segment size, each forwarded as soon as it arrives; over a binomial tree,
// or over two trees taking alternate windows after P = two_tree. The root
// sends its outcome down the first tree before any data, so a failed
// reduce ends in sparse_reduce::error on every rank.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <mpi.h>

#include "../../error.hpp"
#include "../../kernel/convert.hpp"
#include "../../policy.hpp"
#include "../../repr/index_value_vector.hpp"
#include "../../report.hpp"
#include "../../tree/two_tree.hpp"
#include "../../wire/block.hpp"
#include "../reduce_core.hpp"
#include "messages.hpp"
#include "segment_broadcast.hpp"
#include "partial_codec.hpp"
#include "status.hpp"

namespace sparse_reduce::detail {

// The reduce policy under an allreduce policy (automatic's own settings for automatic).
template <class P>
struct tree_policy_of {
    using type = policy::automatic;
};
template <class P>
    requires requires(const P& p) { p.tree; }
struct tree_policy_of<P> {
    using type = std::remove_cvref_t<decltype(std::declval<const P&>().tree)>;
};

// One binomial tree (parent clears the lowest set bit, children add bits
// below it), or the two trees of two_trees() with 0 feeding the second
// tree's top: inner ranks of one tree are leaves of the other, so every
// rank forwards about half the result twice, not log P times.
inline std::vector<broadcast_stream> broadcast_streams(int me, int P, bool two)
{
    if (!two || P < 3) {
        broadcast_stream s;
        const int low = me == 0 ? P : (me & -me);
        s.parent = me == 0 ? -1 : me - low;
        for (int b = 1; b < low && me + b < P; b <<= 1) s.children.push_back(me + b);
        return {s};
    }
    std::vector<broadcast_stream> out;
    for (const tree& t : two_trees(P, 0, true)) {
        broadcast_stream s;
        const auto m = static_cast<std::size_t>(me);
        if (me != 0) s.parent = t.parent[m] < 0 ? 0 : t.parent[m];
        for (int c : t.children[m])
            if (c != 0) s.children.push_back(c);
        if (me == 0 && t.top != 0) s.children.push_back(t.top);
        out.push_back(std::move(s));
    }
    return out;
}

// The root's outcome down the binomial tree from 0 (a byte 0, or 1 and its
// error text, of at most outcome_text_bytes), before any data, so a failed
// reduce ends in an error on every rank. Allocates nothing where it cannot:
// the sends' requests are a fixed array (a rank of the binomial tree has
// fewer than 32 children), and a text with no room goes through `drain`.
inline constexpr std::size_t outcome_text_bytes = 1024;

class outcome_broadcast {
public:
    // The root's failure (empty: none) to send, or a non-root's place to receive it.
    outcome_broadcast(MPI_Comm pc, int me, int P, const std::string& failure, int tag)
        : pc_(pc), me_(me), P_(P), tag_(tag)
    {
        if (me != 0 || failure.empty()) return;
        failed_ = true;
        try {
            text_ = "\x01" + failure.substr(0, outcome_text_bytes);
            status_ = text_.data();
            n_ = text_.size();
        } catch (...) {
            status_ = "\x01" "out of memory for the reduce's error text";
            n_ = std::strlen(status_);
        }
    }
    outcome_broadcast(const outcome_broadcast&) = delete;
    outcome_broadcast& operator=(const outcome_broadcast&) = delete;

    // Moves it on (received, sent on, the sends complete); may_wait: until
    // then, else never blocks. True once done.
    bool step(report& rep, std::span<std::byte> drain, bool may_wait)
    {
        const int low = me_ == 0 ? P_ : (me_ & -me_); // parent me - low, children me + 1, 2, 4, ... below low
        if (!received_) {
            if (me_ != 0) {
                if (!receiver_.receive(me_ - low, tag_, pc_, buf_, 0, drain, &dropped_, may_wait)) return false;
                status_ = dropped_ ? reinterpret_cast<const char*>(drain.data()) : reinterpret_cast<const char*>(buf_.data());
                n_ = receiver_.got;
                rep.bytes_received += n_;
                // kept now: data may follow into the drain (none follow a failure)
                failed_ = n_ == 0 || status_[0] != '\0';
                if (!failed_) status_ = &ok_, n_ = 1;
                else root_text_ = text_or_out_of_memory([&] {
                    return n_ == 0 ? std::string("allreduce: empty status") : std::string(status_ + 1, status_ + n_);
                });
            }
            received_ = true;
            for (int b = 1; b < low && me_ + b < P_; b <<= 1) {
                MPI_Isend(status_, static_cast<int>(n_), MPI_BYTE, me_ + b, tag_, pc_, &sends_[sent_++]);
                rep.bytes_sent += n_;
                ++rep.messages_sent;
            }
        }
        int done = 1;
        if (may_wait) MPI_Waitall(sent_, sends_.data(), MPI_STATUSES_IGNORE);
        else MPI_Testall(sent_, sends_.data(), &done, MPI_STATUSES_IGNORE);
        return done != 0;
    }

    // After step: whether the root failed.
    bool failed() const { return failed_; }

    // After step: throws the root's failure (`failure`: this rank's own
    // text of it, where it has one).
    void throw_if_failed(const std::string& failure) const
    {
        if (failed_) fail(!failure.empty() ? failure : root_text_);
    }

private:
    MPI_Comm pc_;
    int me_, P_, tag_;
    const char ok_ = '\0';
    std::string text_;        // the root's status to send
    std::string root_text_;   // a non-root's: the root's failure, received
    const char* status_ = &ok_;
    std::size_t n_ = 1;
    bool failed_ = false;
    wire_buffer buf_; // a non-root's: the status received
    message_receiver receiver_;
    bool dropped_ = false, received_ = false;
    std::array<MPI_Request, 32> sends_;
    int sent_ = 0;
};

// The broadcast half of reduce_broadcast, around the reduce to 0: what a
// blocking call (reduce_then_broadcast) runs in one go and a started one
// (collective/allreduce_start.hpp) steps from test() and wait().
//
//   prepare   before the reduce: a non-root's dense output, the streams; a
//             failure here goes into the reduce (failure()), which carries
//             it to 0, and the root's outcome to every rank
//   reduced   after it: its report or failure, the root's result
//   step      the outcome down the binomial tree, then the data
//   finish    the report; throws the call's failure on this rank
template <class T>
class result_broadcast {
public:
    result_broadcast(MPI_Comm pc, std::size_t dimension, std::span<std::byte> drain,
                     int status_tag = broadcast_status_tag, int block_tag = broadcast_block_tag)
        : pc_(pc), dimension_(dimension), drain_(drain), status_tag_(status_tag), block_tag_(block_tag)
    {
        MPI_Comm_rank(pc, &me_);
        MPI_Comm_size(pc, &P_);
    }
    result_broadcast(const result_broadcast&) = delete;
    result_broadcast& operator=(const result_broadcast&) = delete;

    template <class Out>
    void prepare(Out& out, const runtime_policy& policy, std::size_t broadcast_segment, bool bitmap, const T& id)
    {
        using RO = repr_traits<std::remove_cvref_t<Out>>;
        // A non-root's output is checked before the reduce, whose failure
        // protocol carries it to the root and the root's outcome to everyone.
        if constexpr (RO::kind == repr_kind::dense)
            if (me_ != 0) try {
                    dense_out_ = RO::output(out, dimension_).data();
                } catch (...) {
                    failure_ = caught_text();
                }
        seg_bytes_ = broadcast_segment ? broadcast_segment : policy.segment_bytes();
        if (!seg_bytes_) seg_bytes_ = default_segment_bytes;
        window_ = std::max<std::size_t>(1, seg_bytes_ / sizeof(T));
        // One broadcast tree from 0 (binomial), or two (two_tree) that take
        // alternate windows: every rank then forwards about the result once.
        // Made before the reduce: a rank that cannot make it (the root too)
        // fails the call everywhere instead of leaving its peers waiting.
        // What it grows later (a message, the spans of decoded windows)
        // fails that rank and the ranks below it (segment_broadcast), with
        // nothing left queued.
        if (failure_.empty()) try {
                streams_ = broadcast_streams(me_, P_, policy.two_trees());
                b_.emplace(pc_, me_, dimension_, window_, seg_bytes_, id, policy.wire(), bitmap, streams_, drain_, rep_,
                           block_tag_);
            } catch (...) {
                failure_ = caught_text();
            }
    }

    // This rank's failure so far (the reduce's failed_before).
    const std::string& failure() const { return failure_; }

    // The reduce's end: run() (the blocking reduce, or the started one's
    // wait) gives its report or throws this rank's failure; then the root's
    // result is read from out.
    template <class Run, class Out, class Op>
    void reduced(Run&& run, Out& out, const Op& op)
    {
        using RO = repr_traits<std::remove_cvref_t<Out>>;
        try {
            rep_ = run();
        } catch (...) {
            failure_ = text_or_out_of_memory([&] { return current_failure_text(me_); });
        }
        if constexpr (RO::kind != repr_kind::dense)
            if (me_ == 0 && failure_.empty()) try {
                    convert_into(root_result_.sparse, out, op);
                } catch (...) {
                    failure_ = text_or_out_of_memory([&] { return current_failure_text(me_); });
                }
        if constexpr (RO::kind == repr_kind::dense) // a dense result is encoded straight from out
            if (me_ == 0 && failure_.empty()) root_dense_ = RO::output(out, dimension_).data(); // checked by the reduce
        outcome_.emplace(pc_, me_, P_, failure_, status_tag_);
    }

    // Moves it on; may_wait: to its end, else never blocks. True once every
    // message is in and sent on. Throws nothing a blocking call would not
    // have met (its failures are finish()'s).
    bool step(bool may_wait)
    {
        if (!outcome_sent_) {
            if (!outcome_->step(rep_, drain_, may_wait)) return false;
            outcome_sent_ = true;
            if (outcome_->failed()) return true; // no data follow
            if (b_) b_->source(&root_result_, root_dense_, dense_out_);
        }
        if (!b_) return true;
        if (!b_->step(reqs_, may_wait)) return false;
        int done = 1;
        if (may_wait) MPI_Waitall(static_cast<int>(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE);
        else MPI_Testall(static_cast<int>(reqs_.size()), reqs_.data(), &done, MPI_STATUSES_IGNORE);
        return done != 0;
    }

    // Every message is in: the report, out written on the non-roots; throws
    // where the call failed.
    template <class Out, class Op>
    report finish(Out& out, const Op& op)
    {
        using RO = repr_traits<std::remove_cvref_t<Out>>;
        outcome_->throw_if_failed(failure_);
        if (!b_) fail(failure_); // (a failed rank's outcome has thrown above)
        if (!b_->error_text().empty()) fail(b_->error_text());
        if (!failure_.empty()) fail(failure_); // reduce reports every failure to the root: not expected here
        // What fails below fails this rank alone.
        if constexpr (RO::kind != repr_kind::dense)
            if (me_ != 0) try {
                    convert_into(out, b_->entries(), op);
                } catch (...) {
                    fail("allreduce failed on " + text_or_out_of_memory([&] { return current_failure_text(me_); }));
                }
        try { // the call succeeded: a text that cannot be made is left empty
            rep_.algorithm = "reduce_broadcast(" + rep_.algorithm + (streams_.size() > 1 ? ", two-tree" : ", binomial") +
                             " broadcast, segment=" + std::to_string(window_ * sizeof(T)) + ")";
        } catch (...) {
            rep_.algorithm = report_text();
        }
        return rep_;
    }

private:
    MPI_Comm pc_;
    std::size_t dimension_;
    std::span<std::byte> drain_;
    int status_tag_, block_tag_;
    int me_ = 0, P_ = 1;
    report rep_;
    std::string failure_;
    T* dense_out_ = nullptr;
    const T* root_dense_ = nullptr;
    partial<T> root_result_; // a sparse result, as index/value
    std::size_t seg_bytes_ = 0, window_ = 1;
    std::vector<broadcast_stream> streams_;
    std::optional<segment_broadcast<T>> b_;
    std::optional<outcome_broadcast> outcome_;
    bool outcome_sent_ = false;
    std::vector<MPI_Request> reqs_; // grown inside the broadcast's own protocol
};

// reduce to 0 with `reduce`, then the pipelined broadcast of the result.
template <class In, class Out, class Op>
report reduce_then_broadcast(reduce_core& reduce, MPI_Comm pc, std::size_t dimension, const In& in,
                             Out& out, const Op& op, std::size_t broadcast_segment, bool bitmap,
                             std::span<std::byte> drain)
{
    using T = value_type_of<In>;
    result_broadcast<T> b(pc, dimension, drain);
    b.prepare(out, reduce.policy(), broadcast_segment, bitmap, identity<T>(op));
    b.reduced([&] { return reduce.reduce_failed_before(in, out, op, b.failure()); }, out, op);
    b.step(true);
    return b.finish(out, op);
}

} // namespace sparse_reduce::detail
