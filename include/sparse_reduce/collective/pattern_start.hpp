#pragma once
// pattern_plan::start (collective/pattern_plan.hpp): a pattern plan's call
// started and left running on the process's pending runs (mpi/pending.hpp),
// never waiting:
//
//   start     the values checked, the output made, the runs posted
//             (pattern_exchange, on the call's own tags: a start number's)
//   run       the runs folded in rank order as they arrive; the ranks
//             agree on the lowest failing rank by messages over recursive
//             doubling's steps (doubling_agreement: a started call cannot
//             end in a collective), along with the runs where the
//             operation cannot throw, else after the folds; an
//             allreduce's owners' sums then go to every rank point to point
//   complete  the error thrown on every rank where one failed, a matrix's
//             output finished, the report
//
// The state is built in the plan's room (pattern_state::started_room), so
// no start allocates it; the plan runs one call at a time.

#include <climits>
#include <cstddef>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <mpi.h>

#include "../mpi/bytes.hpp"
#include "../mpi/tags.hpp"
#include "../report.hpp"
#include "allreduce/doubling_agreement.hpp"
#include "allreduce/status.hpp"
#include "allreduce_start.hpp"
#include "pattern/call.hpp"
#include "reduce_request.hpp"

namespace sparse_reduce::detail {

// A started pattern plan call: the exchange, the agreement, the allgather.
template <class T, class Held, class Op>
struct started_pattern : started_base<Held, Op, pattern_state<T>> {
    template <class Values>
    started_pattern(started_base<Held, Op, pattern_state<T>> base, const Values& values, int tags)
        : started_base<Held, Op, pattern_state<T>>(std::move(base)),
          exchange(*this->buffers, values, this->out.get(), this->op, tags + 1),
          agreement(this->duplicate->comm, tags + 2, this->buffers->agreement_send, this->buffers->agreement_receive,
                    std::span<std::byte>(this->buffers->agreement_drain)),
          gather_tag(tags + 3)
    {
    }

    pattern_exchange<T, Op> exchange;
    doubling_agreement agreement;
    int gather_tag;
    bool agreeing = false, exchanged = false, gathering = false;

    // An operation that cannot throw: the agreement, on the checks' failures
    // alone, goes along with the runs (as the blocking call's agreement
    // does); else it follows the folds.
    static constexpr bool folds_cannot_fail =
        noexcept(std::declval<const Op&>()(std::declval<const T&>(), std::declval<const T&>()));

    bool step(bool may_wait)
    {
        const auto part = [&] {
            const std::string& f = exchange.failure();
            return std::pair<int, std::string_view>(f.empty() ? INT_MAX : this->buffers->l.rank, f);
        };
        if constexpr (folds_cannot_fail) {
            if (!agreeing) {
                agreeing = true;
                const auto [candidate, text] = part();
                agreement.begin(candidate, text);
            }
            if (!exchanged) exchanged = exchange.step(may_wait);
            if (!agreement.step(may_wait) || !exchanged) return false;
        } else if (!step_then_agree(exchange, agreement, agreeing, may_wait, part)) {
            return false;
        }
        const pattern_layout& l = this->buffers->l;
        if (l.to_all && !agreement.first()) {
            if (!gathering) {
                gathering = true;
                post_gather(l);
            }
            return requests_done(this->buffers->reqs, may_wait);
        }
        return true;
    }

    // After the agreement: where any rank failed, the lowest failing rank's
    // error on every rank, as the blocking call throws it (that rank its own
    // whole text; the agreement carries its first agreed_text_bytes); else
    // the report.
    report finish()
    {
        if (const auto& first = agreement.first()) {
            const std::string& mine = exchange.failure();
            const std::string& text = first->rank == this->buffers->l.rank && !mine.empty() ? mine : first->text;
            fail("pattern plan reduce failed on " +
                 (text.empty() ? "rank " + std::to_string(first->rank) : text));
        }
        if constexpr (sparse_matrix<typename Held::type>)
            if (exchange.output()) finish_matrix(this->out.get(), this->buffers->split, this->buffers->staged);
        return this->buffers->traffic;
    }

private:
    // Every owner's sums to every rank, into the output (an allreduce's).
    void post_gather(const pattern_layout& l)
    {
        pattern_state<T>& s = *this->buffers;
        auto* o = reinterpret_cast<std::byte*>(exchange.output());
        const MPI_Comm pc = this->duplicate->comm;
        s.reqs.clear();
        for (int r = 0; r < l.ranks; ++r) {
            const auto k = static_cast<std::size_t>(r);
            if (r == l.rank || !s.all_bytes[k]) continue;
            irecv_bytes(o + s.all_at[k], static_cast<std::size_t>(s.all_bytes[k]), r, gather_tag, pc, s.reqs);
        }
        const auto mine = static_cast<std::size_t>(l.rank);
        if (s.all_bytes[mine])
            for (int d = 0; d < l.ranks; ++d)
                if (d != l.rank)
                    isend_bytes(o + s.all_at[mine], static_cast<std::size_t>(s.all_bytes[mine]), d, gather_tag, pc,
                                s.reqs);
    }
};

// Starts a pattern plan's call of `values` into `target` (the caller's
// output, as writable_output gives it).
template <class T, class Values, class Target, class Op>
void start_pattern(const std::shared_ptr<pattern_state<T>>& s, const Values& values, Target&& target, const Op& op,
                   reduce_request& request)
{
    using state_t = started_pattern<T, held_output<Target>, Op>;
    void* room = started_room_for<state_t>(*s);
    if (s->agreement_drain.size() < 16 + agreed_text_bytes) s->agreement_drain.resize(16 + agreed_text_bytes);
    const double t0 = MPI_Wtime();
    const int tags = request_tags(s->comm->starts++); // every rank counts every start
    auto* state = new (room)
        state_t({s, s->comm, hold_output(std::forward<Target>(target)), op, s->traffic.reason, {}}, values, tags);
    run_started(state, t0, request);
}

} // namespace sparse_reduce::detail
