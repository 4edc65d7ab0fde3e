#pragma once
// detail::reduce_core's members that do not depend on the call's types
// (collective/reduce_core.hpp): the plan's agreement, the schedule cache
// and the statistics exchange, the report's texts. Included by
// reduce_core.hpp, as inline definitions, unless the compiled mode
// (detail/compiled_mode.hpp) compiles them once in its library.

#include <algorithm>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include <mpi.h>

#include "reduce_core.hpp"

namespace sparse_reduce::detail {

SPARSE_REDUCE_INLINE reduce_core::reduce_core(const boost::mpi::communicator& comm, int root, std::size_t dimension,
                                              made_policy policy, bool dimension_agreed)
    : reduce_core(comm, root, dimension)
{
    // the plan's share of the duplicate: collective on the communicator's
    // first use, and agreed there
    private_owner_ = detail::private_comm_owner(MPI_Comm(comm));
    std::string failure = std::move(policy.failure);
    if (failure.empty()) {
        try {
            memory_ = std::make_shared<plan_memory>();
            owned_policy_ = std::make_shared<const runtime_policy>(std::move(*policy.policy));
        } catch (...) {
            failure = detail::current_exception_text();
        }
    }
    if (memory_) {
        memo_ = &memory_->memo;
        whole_ = &memory_->whole;
        pools_ = &memory_->pools;
        arena_ = &memory_->arena;
    }
    policy_ = owned_policy_.get();
    agree(failure, dimension_agreed, policy.measures);
}

SPARSE_REDUCE_INLINE const schedule& reduce_core::schedule_for(bool commutative, std::size_t value_bytes,
                                                               std::size_t local_entries)
{
    auto stats = [&] { return detail::local_stats(static_cast<double>(local_entries), dimension_, false, {}, 1); };
    return resolve(commutative, value_bytes, stats_source(stats), true, false, true);
}

SPARSE_REDUCE_INLINE const tree& reduce_core::tree_for(bool commutative, std::size_t local_entries)
{
    return schedule_for(commutative, 8, local_entries).trees.front();
}

SPARSE_REDUCE_INLINE void reduce_core::agree(const std::string& failure, bool dimension_agreed, bool measures)
{
    dimensions_agree_ = true;
    // allreduce's reduce half: its plan has agreed on the dimension, and the
    // half makes no collective of its own unless it reads a tuning (measures,
    // on every rank alike: a rank whose policy could not be made takes part).
    // A failure without it is thrown here, for the plan to agree on.
    if (dimension_agreed && !measures) {
        if (!failure.empty()) detail::fail(failure);
        return;
    }
    const bool tuned = failure.empty() && measures;
    const std::string tuning_error =
        tuned ? detail::text_or_out_of_memory([&] { return tuning_read_error(); }) : std::string();
    // automatic's tuning, agreed with the plan: whether a call measures at
    // all may depend on it, so a later call could not agree on it
    const auto print = static_cast<unsigned long long>(tuned && tuning_error.empty() ? tuning_print() : 0);
    const unsigned long long mine[6] = {tuning_error.empty() ? 0ull : 1ull, dimension_, ~dimension_,
                                        failure.empty() ? 0ull : static_cast<unsigned long long>(rank_) + 1,
                                        print, ~print};
    unsigned long long all[6];
    detail::complete_pending(); // (mpi/pending.hpp: no rank blocks here with runs in flight)
    MPI_Allreduce(mine, all, 6, MPI_UNSIGNED_LONG_LONG, MPI_MAX, private_);
    if (all[3])
        detail::fail("making the plan failed on rank ", all[3] - 1, failure.empty() ? "" : ": ", failure);
    if (all[0]) detail::fail(tuning_error.empty() ? "the tuning could not be read on another rank" : tuning_error);
    if (all[4] != ~all[5]) detail::fail(detail::different_tunings_text);
    if (all[1] != ~all[2]) detail::fail(detail::dimension_mismatch_text(private_, dimension_, root_));
}

SPARSE_REDUCE_INLINE reduce_core::reduce_core(const boost::mpi::communicator& comm, int root, std::size_t dimension)
    // started calls first (mpi/pending.hpp): a communicator's first use is collective
    : state_((detail::complete_pending(), &detail::state_of(MPI_Comm(comm)))), private_(state_->dup),
      duplicate_(state_->duplicate), root_(root), dimension_(dimension)
{
    MPI_Comm_rank(private_, &rank_);
    MPI_Comm_size(private_, &size_);
    if (root < 0 || root >= size_)
        detail::fail("invalid root ", root, " for a communicator of size ", size_);
}

SPARSE_REDUCE_INLINE const schedule& reduce_core::whole_schedule(bool commutative, std::size_t value_bytes)
{
    auto& cached = memo_->cache[commutative ? 1 : 0];
    if (cached && same_head(cached->key, 0)) return reuse(cached); // (only this path's key has value_bytes 0)
    return keep_schedule(cached, [&] {
        schedule s = policy().whole_schedule_at_once(size_, root_, commutative, dimension_, value_bytes);
        return detail::cached_schedule{key_for(0), std::move(s)};
    });
}

SPARSE_REDUCE_INLINE const schedule& reduce_core::full_schedule(bool commutative, std::size_t value_bytes)
{
    auto& cached = memo_->cache[commutative ? 1 : 0];
    detail::selection_key key = key_for(value_bytes);
    key.full = true;
    if (cached && cached->key == key) return reuse(cached);
    return keep_schedule(cached, [&] {
        schedule s = detail::full_schedule_in_windows(size_, root_, commutative, dimension_, value_bytes);
        return detail::cached_schedule{std::move(key), std::move(s)};
    });
}

SPARSE_REDUCE_INLINE detail::selection_key reduce_core::key_for(std::size_t value_bytes) const
{
    detail::selection_key key;
    key.policy = policy().fingerprint();
    key.root = root_;
    key.dimension = dimension_;
    key.value_bytes = value_bytes;
    return key;
}

SPARSE_REDUCE_INLINE bool reduce_core::same_head(const detail::selection_key& k, std::size_t value_bytes) const
{
    return k.value_bytes == value_bytes && k.root == root_ && k.dimension == dimension_ &&
           k.policy == policy().fingerprint();
}

SPARSE_REDUCE_INLINE bool reduce_core::exchanges_statistics(std::size_t value_bytes) const
{
    return policy().gathers() || policy().stats_needed(dimension_, value_bytes, dimensions_agree_);
}

// The report's texts are made once per schedule, after the call's messages:
// a rank that cannot allocate one reports it empty, for its call succeeded.
SPARSE_REDUCE_INLINE report_text reduce_core::tuning_name()
{
    const auto* a = policy_->automatic();
    if (!a) return {};
    if (memo_->tuning) return report_text(memo_->tuning);
    try {
        memo_->tuning =
            std::make_shared<const std::string>(a->tuned ? a->tuned->source : current_tuning(a->tuning_file).source);
    } catch (const std::bad_alloc&) {
        return {};
    }
    return report_text(memo_->tuning);
}

SPARSE_REDUCE_INLINE double reduce_core::tuning_print() const noexcept
{
    const auto* a = policy_->automatic();
    if (!a) return 0;
    try {
        const tuning& t = a->tuned ? *a->tuned : current_tuning(a->tuning_file);
        if (memo_->fingerprinted != &t) {
            memo_->tuning_print = detail::tuning_fingerprint(t);
            memo_->fingerprinted = &t;
        }
        return memo_->tuning_print;
    } catch (...) {
        return 0;
    }
}

SPARSE_REDUCE_INLINE std::string reduce_core::tuning_read_error() const
{
    try {
        if (const auto* a = policy_->automatic()) {
            if (!a->tuned) current_tuning(a->tuning_file);
        } else {
            current_tuning();
        }
    } catch (...) {
        return detail::current_exception_text();
    }
    return {};
}

SPARSE_REDUCE_INLINE report_text reduce_core::describe_once(const schedule& s, bool whole)
{
    if (memo_->described == &s && memo_->described_whole == whole && memo_->description)
        return report_text(memo_->description);
    memo_->described = nullptr;
    try {
        memo_->description = std::make_shared<const std::string>(describe(s) + (whole ? ", whole messages" : ""));
        memo_->reason = std::make_shared<const std::string>(s.reason);
    } catch (const std::bad_alloc&) {
        memo_->description.reset();
        memo_->reason.reset();
        return {};
    }
    memo_->described = &s;
    memo_->described_whole = whole;
    return report_text(memo_->description);
}

SPARSE_REDUCE_INLINE const schedule& reduce_core::resolve(bool commutative, std::size_t value_bytes,
                                                          stats_source stats_of, bool dense_output, bool whole,
                                                          bool query)
{
    auto& cached = (query ? memo_->queried : memo_->cache)[commutative ? 1 : 0];
    const auto same_call = [&] {
        return cached && same_head(cached->key, value_bytes) && cached->key.whole == whole && !cached->key.full;
    };
    const bool gathering = policy().gathers();
    const bool measures = !gathering && policy().stats_needed(dimension_, value_bytes, dimensions_agree_);
    if (const auto* a = policy_->automatic()) {
        // Between measurements the plan keeps its choice: every rank
        // counts the same calls, so all keep or all measure.
        auto& calls = memo_->calls_since_measure[commutative ? 1 : 0];
        if (!one_shot_ && same_call() && cached->key.measured && a->remeasure_every > 0 &&
            ++calls % a->remeasure_every != 0)
            return reuse(cached);
        calls = 0;
    }
    // No collective: the choice depends only on the values' size and the
    // output's kind, so a cached schedule for them stands.
    if (!gathering && !measures && same_call() && !cached->key.measured) return reuse(cached);

    const detail::local_summary local = stats_of();
    detail::selection_key key = key_for(value_bytes);
    key.whole = whole;
    key.measured = measures;
    if (gathering) {
        gather_entries(static_cast<std::size_t>(local.entries), key.entries, key.largest_dimension);
        detail::check_dimension_limit(dimension_, value_bytes);
    } else if (measures) {
        // A one-shot call also agrees here on whether every rank could
        // read the tuning (a plan did that once, when it was made).
        std::string tuning_error;
        detail::stats_message mine{local, detail::agreement_of(root_, policy().fingerprint(), dimension_, tuning_print())},
            sum;
        // The root's output kind, not each rank's: only the root writes
        // one, and a non-root may pass another kind (a dummy).
        mine.agreement.root_dense_output = rank_ == root_ && dense_output ? 1 : 0;
        if (one_shot_) {
            tuning_error = tuning_read_error();
            mine.agreement.tuning_failures = tuning_error.empty() ? 0 : 1;
            mine.agreement.setup_failures = setup_failure_.empty() ? 0 : 1;
            mine.agreement.setup_failed_ranks = setup_failure_.empty() ? 0 : rank_;
        }
        detail::complete_pending();
        MPI_Allreduce(&mine, &sum, detail::stats_message::doubles, MPI_DOUBLE, MPI_SUM, private_);
        if (sum.agreement.setup_failures > 0)
            throw_setup_failure(sum.agreement.setup_failures == 1 ? static_cast<int>(sum.agreement.setup_failed_ranks)
                                                                   : -1);
        if (sum.agreement.tuning_failures > 0)
            detail::fail(tuning_error.empty() ? "the tuning could not be read on another rank" : tuning_error);
        if (!detail::check_agreement(sum.agreement, size_))
            detail::fail(detail::dimension_mismatch_text(private_, dimension_, root_));
        detail::check_dimension_limit(dimension_, value_bytes);
        key.sum = sum.summary;
        key.root_dense_output = sum.agreement.root_dense_output > 0.5;
    }
    if (cached && cached->key == key) return reuse(cached);
    return keep_schedule(cached, [&] {
        call_stats stats;
        if (measures) {
            stats = detail::agreed_stats(key.sum, size_, value_bytes, key.root_dense_output, whole);
        } else { // no allreduce: this rank's view, which is all the choice depends on
            stats = detail::agreed_stats(local, 1, value_bytes, dense_output, whole);
            stats.ranks = size_;
        }
        const std::size_t dimension = gathering ? static_cast<std::size_t>(key.largest_dimension) : dimension_;
        schedule s = policy().resolve_schedule(size_, root_, commutative, dimension, value_bytes, key.entries, stats);
        s.dimension = dimension_; // a plan streams its own dimension, whatever optimal_binary's gather said
        return detail::cached_schedule{std::move(key), std::move(s)};
    }, query);
}

SPARSE_REDUCE_INLINE bool reduce_core::agree_on_dimension(bool full, std::size_t value_bytes)
{
    const detail::dimension_vote vote =
        detail::vote_on_dimension(private_, dimension_, root_, full, setup_failure_.empty() ? -1 : rank_);
    if (vote.failed_setup >= 0) throw_setup_failure(vote.failed_setup);
    detail::check_dimension_limit(dimension_, value_bytes);
    return vote.all_full;
}

SPARSE_REDUCE_INLINE void reduce_core::settle(const std::string& failure)
{
    cache_slot* built = std::exchange(unsettled_, nullptr);
    if (!built) {
        // A cached schedule's calls fit in the memory its first call grew:
        // nothing here allocates, barring memory shared with a call of
        // another kind that shrank it.
        if (!failure.empty()) detail::fail("preparing the call failed on " + failure);
        return;
    }
    detail::complete_pending();
    try {
        detail::throw_if_any_failed(private_, failure, "preparing the call failed on");
    } catch (...) {
        built->reset();
        throw;
    }
    (*built)->agreed = true;
}

SPARSE_REDUCE_INLINE std::string reduce_core::make_drain()
{
    if (whole_->drain().empty()) try {
            whole_->make_drain(detail::whole_piece_bytes);
        } catch (...) {
            return detail::text_or_out_of_memory([&] { return detail::rank_failure_text(rank_); });
        }
    return {};
}

SPARSE_REDUCE_INLINE void reduce_core::throw_setup_failure(int failed_rank) const
{
    const std::string start = "setting up the call failed on ";
    if (!setup_failure_.empty()) detail::fail(start, "rank ", rank_, ": ", setup_failure_);
    if (failed_rank >= 0) detail::fail(start, "rank ", failed_rank);
    detail::fail(start + "several ranks");
}

SPARSE_REDUCE_INLINE void reduce_core::gather_entries(std::size_t local, std::vector<double>& entries,
                                                      double& dimension)
{
    // with whether this rank's setup failed (a one-shot call's first agreement)
    const unsigned long long mine[3] = {local, dimension_, setup_failure_.empty() ? 0ull : 1ull};
    std::vector<unsigned long long> all(3 * static_cast<std::size_t>(size_));
    detail::complete_pending();
    MPI_Allgather(mine, 3, MPI_UNSIGNED_LONG_LONG, all.data(), 3, MPI_UNSIGNED_LONG_LONG, private_);
    for (std::size_t r = 0; r < all.size(); r += 3)
        if (all[r + 2]) throw_setup_failure(static_cast<int>(r / 3));
    unsigned long long largest = 0;
    bool same = true; // every rank sees every dimension: all throw, or none does
    for (std::size_t r = 0; r < all.size(); r += 3) {
        entries.push_back(static_cast<double>(all[r]));
        largest = std::max(largest, all[r + 1]);
        same = same && all[r + 1] == all[1];
    }
    if (!same) detail::fail(detail::dimension_mismatch_text(private_, dimension_, root_));
    dimension = static_cast<double>(largest);
}

} // namespace sparse_reduce::detail
