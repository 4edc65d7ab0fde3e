#pragma once
// detail::reduce_core: the reduce behind reduce_plan and the one-shot
// reduce (collective/reduce.hpp), for every policy. A call:
//
//   agree      one-shot: validate a changed policy (every rank alike); the
//              dimension, in the statistics exchange or on its own
//   path       select/path.hpp: whole messages at once, after the exchange,
//              or never
//   whole      exec/whole_reduce.hpp on the schedule's first tree
//   windows    the statistics (resolve), then exec/rank_program.hpp's nodes
//              over the schedule's one or two trees, run by exec/mpi_executor.hpp
//   started    a plan's start or ireduce: the windows, their state kept in
//              the plan's (the communicator's) slot and run by test() and
//              wait() (collective/reduce_start.hpp)
//
// Failures anywhere travel up the tree; the root and the rank that found
// one throw (collective/reduce.hpp says which).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mpi/communicator.hpp>

#include "../error.hpp"
#include "../exec/mpi_executor.hpp"
#include "../exec/call_arena.hpp"
#include "../exec/program_input.hpp"
#include "../exec/rank_program.hpp"
#include "../exec/whole_reduce.hpp"
#include "../exec/reduce_node.hpp"
#include "../kernel/combine.hpp"
#include "../kernel/entry_stream.hpp"
#include "../kernel/identity_law.hpp"
#include "../mpi/communicator.hpp"
#include "../mpi/dimension_agreement.hpp"
#include "../mpi/first_failure.hpp"
#include "../mpi/pending.hpp"
#include "../op/associative_op.hpp"
#include "../op/builtin.hpp"
#include "../policy.hpp"
#include "../policy_check.hpp"
#include "../repr/representation.hpp"
#include "../report.hpp"
#include "../schedule/schedule.hpp"
#include "../select/call_stats.hpp"
#include "../select/policy_value.hpp"
#include "../select/resolve.hpp"
#include "../select/sreduce.hpp"
#include "../select/tuning.hpp"
#include "../select/tree_table.hpp"
#include "../tree/optimal_binary.hpp"
#include "../detail/compiled_mode.hpp"
#include "call_check.hpp"
#include "reduce_memo.hpp"
#include "reduce_request.hpp"

namespace sparse_reduce::detail {

// The reduce behind reduce_plan<Policy> and the one-shot reduce, for every
// policy: the policy is a run-time value (select/policy_value.hpp), so a
// call site compiles the reduce once per (input, output, operation) however
// many policies it names. Copies share the plan's memory and policy.
class reduce_core {
public:
    // A plan's core; collective (reduce_plan's constructor says what it
    // agrees on). dimension_agreed: the ranks have agreed on the dimension
    // already (allreduce's reduce half).
    reduce_core(const boost::mpi::communicator& comm, int root, std::size_t dimension, made_policy policy,
                bool dimension_agreed);

    // A one-shot call's core (what reduce() uses): no collective here (a
    // tuning that cannot be read fails in the call's own allreduce), the
    // communicator's memory and memo, per policy type. The policy is the
    // memo's copy, made and validated when the call's policy differs from
    // the last one's: a loop of calls copies none.
    //
    // Making the memo or the copy allocates, which can fail on one rank
    // only. That rank runs on the caller's policy and a blank memo up to the
    // call's first agreement (every one-shot call has one before any
    // message), which then fails the call on every rank (throw_setup_failure).
    //
    // A policy::any's tree is adopted so, once per tree type: the call itself
    // is compiled once.
    template <reduce_policy_or_any P>
    reduce_core(one_shot_t, const boost::mpi::communicator& comm, int root, std::size_t dimension, const P& policy)
        : reduce_core(comm, root, dimension)
    {
        if constexpr (std::same_as<P, policy::any>)
            policy.visit([&](const auto& tree) { adopt_one_shot(root, dimension, tree); });
        else
            adopt_one_shot(root, dimension, policy);
    }

    int root() const { return root_; }
    std::size_t dimension() const { return dimension_; }
    const runtime_policy& policy() const { return *policy_; }

    // reduce_plan's schedule_for, tree_for and reduce.
    const schedule& schedule_for(bool commutative, std::size_t value_bytes, std::size_t local_entries = 0);
    const tree& tree_for(bool commutative, std::size_t local_entries = 0);

    template <class In, class Out, class Op>
    report reduce(const In& in, Out&& out, const Op& op)
    {
        return call(in, std::forward<Out>(out), op, {});
    }

    // reduce_plan::start and ireduce (collective/reduce_start.hpp): request completes it.
    // failed_before: as in reduce_failed_before (allreduce's started reduce half).
    template <class In, class Out, class Op>
    void start(const In& in, Out&& out, const Op& op, reduce_request& request,
               const std::string& failed_before = std::string());

private:
    // A one-shot call's policy and memo (the one-shot constructor says how).
    template <reduce_policy P>
    void adopt_one_shot(int root, std::size_t dimension, const P& policy)
    {
        whole_ = &state_->whole;
        pools_ = &state_->pools;
        arena_ = &state_->arena;
        one_shot_ = true;
        one_shot_memo<P>* m = nullptr;
        try {
            m = &state_->template memo<one_shot_memo<P>>();
        } catch (const std::bad_alloc&) {
            setup_failure_ = detail::current_exception_text();
        }
        if (m && (m->root != root || m->dimension != dimension)) {
            m->forget_inputs();
            m->root = root;
            m->dimension = dimension;
        }
        if (!m || !m->policy || !m->policy->holds(policy)) {
            // the same on every rank: all throw, before anything is sent (through
            // the policy's table: the compiled mode compiles it once)
            detail::ops_of<P>().validate(&policy);
            if (m) {
                // The cached schedules are keyed by the policy's fingerprint;
                // one that differs only where the fingerprint does not look
                // (automatic's tuning) starts the memo afresh.
                if (m->policy && m->policy->fingerprint() == detail::ops_of<P>().fingerprint(&policy)) m->memo = {};
                m->forget_inputs();
                m->memo.tuning.reset();
                m->policy.reset();
                try {
                    m->policy.emplace(policy);
                } catch (const std::bad_alloc&) {
                    setup_failure_ = detail::current_exception_text();
                }
            }
        }
        if (m && m->policy) {
            policy_ = &*m->policy;
            memo_ = &m->memo;
        } else {
            policy_ = &borrowed_policy_.emplace(policy, borrowed_t{});
            memo_ = &spare_memo_.emplace();
        }
    }

public:
    // reduce on a rank that has already failed when `failure` is not empty
    // (allreduce's reduce half: a non-root's output of the wrong size fails
    // it). The failure goes up the tree as one found here would. A sparse
    // input may travel whole, as in reduce: its cost is then its entries',
    // not the windows of the dimension.
    template <class In, class Out, class Op>
    report reduce_failed_before(const In& in, Out&& out, const Op& op, const std::string& failure)
    {
        return call(in, std::forward<Out>(out), op, failure);
    }

private:
    template <class In, class Out, class Op>
    report call(const In& in, Out&& out, const Op& op, const std::string& failure)
    {
        if constexpr (detail::checked_call<In, Out, Op>()) {
            detail::require_not_finalized(); // a plan holds its communicators' handles
            complete_started_calls();
            unsettled_ = nullptr;
            const double start = MPI_Wtime();
            auto&& target = detail::writable_output(std::forward<Out>(out));
            report rep = reduce_checked(in, target, op, failure);
            rep.seconds = MPI_Wtime() - start;
            return rep;
        } else {
            return {};
        }
    }

    // A plan's one agreement, on every rank alike before anything is sent:
    // its memory and policy made on every rank (`failure`: why not here), a
    // readable tuning (where the policy reads one) and, unless agreed
    // already, one dimension. A call then checks its vector against the
    // plan's dimension locally, so the rank at fault throws.
    void agree(const std::string& failure, bool dimension_agreed, bool measures);

    template <representation In, representation Out, class Op, class Start = blocking_call>
    report reduce_checked(const In& in, Out& out, const Op& op, const std::string& failed_before, Start started = {})
    {
        using T = value_type_of<In>;
        using RO = repr_traits<std::remove_cvref_t<Out>>;
        constexpr bool commutative = is_commutative_v<Op, T>;
        if constexpr (!rle_value<T>)
            if (policy().wire() == wire::rle) detail::fail("the rle wire format needs float or double values");

        const int me = rank_;
        // A plan's ranks agreed on its dimension: past the limit, all throw
        // here. A one-shot call's throw where they agree (agree_on_dimension,
        // resolve), having read nothing of the input.
        const bool within_limit = dimension_ <= detail::max_dimension(sizeof(T));
        if (!one_shot_) detail::check_dimension_limit(dimension_, sizeof(T));
        const bool local_ok = sparse_reduce::dimension(in) == dimension_;
        std::string local_failure =
            !failed_before.empty() ? failed_before
            : local_ok             ? std::string()
                                   : detail::concat("dimension mismatch: rank ", me, " has dimension ",
                                                    sparse_reduce::dimension(in), ", the plan has ", dimension_);
        // The path (select/path.hpp): sparse inputs under the adaptive wire may
        // travel whole (one message per edge), at once or as selection finds.
        // compiled only where it may run; a started call always windows (the
        // whole-message path blocks)
        constexpr bool whole_path = index_value_representation<In> && std::same_as<Start, blocking_call>;
        const detail::whole_rule rule =
            whole_path ? policy().whole_messages(true, size_) : detail::whole_rule::never;
        const bool may_travel_whole = rule != detail::whole_rule::never;
        const bool whole_now = rule == detail::whole_rule::at_once;
        // A one-shot call's dimension is its vector's: the ranks agree on it
        // in the statistics they exchange, or else here, before anything is
        // sent, so a mismatch throws on every rank, naming the ranks at fault.
        // It also says whether every rank's input holds every element
        // (select/path.hpp, full_goes_in_windows).
        bool all_full = false;
        if (one_shot_ && (whole_now || !exchanges_statistics(sizeof(T))))
            all_full = agree_on_dimension(whole_now && local_ok && stored_entries(in) == dimension_, sizeof(T));

        const T id = identity<T>(op);
        // make_op's identity, on the first call with the op (a one-shot memo's:
        // since the policy, root or dimension last changed)
        if (local_failure.empty())
            if (auto broken = detail::identity_law_once(memo_->identity_tested, op, id, in)) local_failure = *broken;
        if constexpr (whole_path)
            if (whole_now) {
                if (!detail::full_goes_in_windows(rule, policy().needs_call_stats(), size_, all_full, dimension_,
                                                  sizeof(T)))
                    return reduce_whole<T>(in, out, op, whole_schedule(commutative, sizeof(T)), local_failure);
                detail::local_counts none; // every window full: make_own_input counts nothing
                return reduce_windows<T>(in, out, op, full_schedule(commutative, sizeof(T)), none,
                                         std::move(local_failure));
            }
        const bool count = policy().stats_needed(dimension_, sizeof(T), dimensions_agree_) && local_ok && within_limit;
        // Counted only on the calls that measure (resolve calls this). The
        // count, or else the window counts below, is the walk that checks an
        // RLE input: a malformed one fails there, and the call goes on into
        // the exchange (this rank's statistics count nothing) to carry the
        // failure up the tree.
        detail::local_counts counts;
        auto stats = [&] {
            try {
                counts = count_input(in, id, count);
            } catch (...) {
                local_failure = detail::unprefixed(detail::current_exception_text());
                counts = {{}, detail::local_stats(0, dimension_, false, {}, 1)};
            }
            return counts.stats;
        };
        const schedule& sched =
            resolve(commutative, sizeof(T), stats_source(stats), RO::kind == repr_kind::dense, may_travel_whole);
        if constexpr (whole_path)
            if (sched.whole) return reduce_whole<T>(in, out, op, sched, local_failure);
        if constexpr (!std::same_as<Start, blocking_call>) {
            start_windows<T>(in, op, sched, counts, std::move(local_failure), std::move(started));
            return {};
        } else {
            return reduce_windows<T>(in, out, op, sched, counts, std::move(local_failure));
        }
    }

    // The windowed pipeline (exec/reduce_node.hpp) on the schedule's trees:
    // this rank's input and the root's output made ready here, per input and
    // output type; the run (run_windows) per value type, operation and
    // reader, shared by every representation that reads alike.
    template <class T, class In, class Out, class Op>
    report reduce_windows(const In& in, Out& out, const Op& op, const schedule& sched, local_counts& counts,
                          std::string local_failure)
    {
        const T id = identity<T>(op);
        const detail::stream_config cfg = detail::make_stream_config(sched);
        detail::call_arena::lease lease(*arena_); // everything below: no heap in steady state
        detail::arena_array<std::uint32_t> window_counts(&lease);
        std::optional<detail::own_input<T, detail::own_reader_t<In>>> own;
        detail::root_output<T> result;
        make_windows_io(in, out, sched, cfg, id, counts, window_counts, own, result, local_failure);
        try {
            return run_windows(sched, cfg, op, *own, result, local_failure, &lease, writer_for<T, Out>(),
                               &out);
        } catch (...) {
            if (rank_ == root_) detail::clear_root_output(out);
            throw;
        }
    }

    // This rank's input and the root's output for the windows (own: one
    // reader per index width, not per representation). Checked inside the
    // failure protocol: a bad input or output fails the call on every rank
    // that must know, with nothing left queued.
    template <class T, class In, class Out, class Reader>
    void make_windows_io(const In& in, Out& out, const schedule& sched, const detail::stream_config& cfg, const T& id,
                         local_counts& counts, detail::arena_array<std::uint32_t>& window_counts,
                         std::optional<detail::own_input<T, Reader>>& own, detail::root_output<T>& result,
                         std::string& local_failure)
    {
        if (local_failure.empty()) {
            try {
                own.emplace(detail::make_own_input(in, cfg, id, detail::counts_windows<In, Out>(sched, rank_, root_),
                                                   window_counts, counts.blocks, detail::stats_grain));
                if (rank_ == root_)
                    result = detail::make_root_output<T>(out, detail::same_object(in, out), sched, *own);
            } catch (...) {
                local_failure = detail::unprefixed(detail::current_exception_text());
            }
        }
        if (!local_failure.empty()) own.emplace(detail::own_input<T, Reader>{nullptr, detail::empty_reader<Reader>(id), {}});
    }

    // The root's result into the caller's sparse output (rank_program.hpp,
    // write_sparse_output), behind a plain function; none for a dense
    // output, written in place.
    template <class T>
    using sparse_writer = void (*)(void* out, std::span<const detail::root_output<T>> results, std::size_t windows,
                                   std::size_t dim, const T& id, bool failed);
    template <class T, class Out>
    static sparse_writer<T> writer_for()
    {
        if constexpr (repr_traits<std::remove_cvref_t<Out>>::kind == repr_kind::dense)
            return nullptr;
        else
            return [](void* o, std::span<const detail::root_output<T>> results, std::size_t windows, std::size_t dim,
                      const T& identity, bool failed) {
                detail::write_sparse_output(*static_cast<Out*>(o), results, windows, dim, identity, failed);
            };
    }

    // The report of a windowed call whose messages are all in; the root's
    // output written (emptied where the call failed). Throws as reduce does.
    template <class T, class Op, class Reader>
    report windows_report(const schedule& sched, const detail::rank_program<T, Op, Reader>& program, const T& id,
                          sparse_writer<T> write, void* out);

    // A started call (collective/reduce_start.hpp).
    template <class T, class Op, class Reader, class Held>
    struct started_windows;
    template <class T, class In, class Op, class Start>
    void start_windows(const In& in, const Op& op, const schedule& sched, local_counts& counts,
                       std::string local_failure, Start started);
    // This core's started call (its slot's), and then every other run in
    // flight, to their ends: a blocking call's first step (the slot's memory
    // is the call's, and no rank may block while another waits on a run).
    void complete_started_calls() noexcept
    {
        detail::complete_started(started_slot());
        detail::complete_pending();
    }
    // The started call's slot: a plan's, or the communicator's for one-shot calls.
    detail::started_call& started_slot() { return memory_ ? memory_->started : state_->started; }

    // This rank's program and executor for the windows (tags: added to the
    // program's tags), agreed with the other ranks (settle): a blocking
    // call's and a started one's.
    template <class T, class Op, class Reader>
    void ready_windows(std::optional<detail::rank_program<T, Op, Reader>>& program,
                       std::optional<detail::node_run>& run, const schedule& sched, const detail::stream_config& cfg,
                       const Op& op, detail::own_input<T, Reader>& own, const detail::root_output<T>& result,
                       const std::string& local_failure, detail::call_arena::lease* mem, int tags);

    template <class T, class Op, class Reader>
    report run_windows(const schedule& sched, const detail::stream_config& cfg, const Op& op,
                       detail::own_input<T, Reader>& own, const detail::root_output<T>& result,
                       const std::string& local_failure, detail::call_arena::lease* mem, sparse_writer<T> write,
                       void* out);

    // This rank's statistics for a call that measures (count), else its
    // entries as stored. A one-shot call keeps a dense input's counts
    // between counts (select/call_stats.hpp, dense_stats_memo).
    template <class In, class T>
    detail::local_counts count_input(const In& in, const T& id, bool count)
    {
        if constexpr (repr_traits<std::remove_cvref_t<In>>::kind == repr_kind::dense) {
            if (one_shot_ && count) {
                const double sample = detail::sampled_entries(in, dimension_, id);
                auto& kept = memo_->dense_stats;
                if (kept.fits(sample, policy().remeasure_interval())) return {{}, kept.local};
                detail::local_counts counts = detail::count_locally(in, dimension_, id, true);
                kept.keep(counts.stats, sample);
                return counts;
            }
        }
        return detail::count_locally(in, dimension_, id, count);
    }

    reduce_core(const boost::mpi::communicator& comm, int root, std::size_t dimension);

    // The key's part every call has: the policy, root, dimension and values'
    // size; and whether a cached key has it.
    detail::selection_key key_for(std::size_t value_bytes) const;
    bool same_head(const detail::selection_key& k, std::size_t value_bytes) const;

    // The schedule of a call that travels whole at once, built once (key:
    // value_bytes 0, which no chosen schedule's key has): no collective, no
    // allocation in steady state.
    const schedule& whole_schedule(bool commutative, std::size_t value_bytes);
    // The schedule of a call full_goes_in_windows sends (its key: full).
    const schedule& full_schedule(bool commutative, std::size_t value_bytes);

    // The whole-message reduce (exec/whole_reduce.hpp) on the schedule's
    // first tree.
    template <class T, class In, class Out, class Op>
    report reduce_whole(const In& in, Out& out, const Op& op, const schedule& sched, const std::string& local_failure)
    {
        settle(make_drain());
        // One tree: a whole message gains nothing from a second one.
        const tree& t = sched.trees.front();
        const detail::whole_result r =
            detail::run_whole_call<T>(private_, t, rank_, dimension_, in, out, op, *whole_, local_failure);
        if (r.failed && (rank_ == root_ || r.detected)) {
            // the root's index/value output may hold part of a fold: left empty
            if constexpr (repr_traits<Out>::kind == repr_kind::index_value)
                if (rank_ == root_) repr_traits<Out>::commit_output(out, 0);
            detail::fail("reduce failed on rank ", r.failed->rank, ": ", r.failed->text);
        }
        report rep;
        rep.algorithm = describe_once(sched, true);
        rep.reason = report_text(memo_->reason);
        rep.tuning = tuning_name();
        rep.bytes_sent = r.bytes_sent;
        rep.bytes_received = r.bytes_received;
        rep.messages_sent = r.messages_sent;
        return rep;
    }

    // Whether a windowed call exchanges statistics (resolve's allreduce or
    // optimal_binary's allgather), where the ranks also agree on the
    // dimension. A one-shot call's answer is the same on every rank, whatever
    // its dimension: automatic and k_ary{.k = 0} always measure there.
    bool exchanges_statistics(std::size_t value_bytes) const;

    // The tuning automatic reads, for the report (empty for fixed policies).
    report_text tuning_name();

    // Empty when this rank can read the tuning the policy uses, else why not
    // (the caller agrees on it with the other ranks before anyone throws).
    std::string tuning_read_error() const;

    // automatic's tuning as agreement_sums compares it (0 for other policies,
    // or where it cannot be read: tuning_read_error says so), kept per tuning.
    double tuning_print() const noexcept;

    report_text describe_once(const schedule& s, bool whole);

    // This rank's statistics, counted on demand: a plain function, so that
    // resolve is compiled once, not once per call site's input type.
    struct stats_source {
        template <class F>
        explicit stats_source(F& f)
            : ctx(&f), count([](void* c) -> detail::local_summary { return (*static_cast<F*>(c))(); })
        {
        }
        detail::local_summary operator()() const { return count(ctx); }
        void* ctx;
        detail::local_summary (*count)(void*);
    };

    // The call's one small collective, then the cached schedule or a new one.
    // stats_of() gives this rank's statistics; called only when the call
    // measures (automatic keeps its choice between measurements). query:
    // for schedule_for, which keeps its own cache (no call follows, and a
    // rank may ask alone: the calls' cache stays the same on every rank).
    const schedule& resolve(bool commutative, std::size_t value_bytes, stats_source stats_of, bool dense_output,
                            bool whole = false, bool query = false);

    // mpi/dimension_agreement.hpp's agreement on this call's dimension; full:
    // this rank's input holds every element (returned: whether every rank's does).
    bool agree_on_dimension(bool full, std::size_t value_bytes);

    // Every rank's entry count and the largest dimension, by one allgather
    // on the private communicator.
    void gather_entries(std::size_t local, std::vector<double>& entries, double& dimension);

    // A schedule built on a cache miss. Every rank misses together (the
    // key holds only what the ranks agree on). Building it, and the first
    // call on it, grow this rank's memory (the buffers and bookkeeping of
    // its nodes), which can fail on one rank only; later calls on it fit in
    // what they left. So the ranks agree once the call is ready to send
    // (settle: one allreduce, on misses only): all keep the schedule and go
    // on, or all drop it and throw, and miss together again next time.
    using cache_slot = std::optional<detail::cached_schedule>;
    template <class Build>
    const schedule& keep_schedule(cache_slot& cached, Build&& build, bool query = false)
    {
        memo_->described = nullptr;
        if (query) return cached.emplace(build()).sched; // schedule_for's own: nothing to agree on
        unsettled_ = &cached;
        try {
            cached.emplace(build());
        } catch (const std::bad_alloc&) {
            settle(detail::rank_failure_text(rank_)); // throws (the others at their settle)
        }
        return cached->sched;
    }
    // A cached schedule; one not yet agreed on is agreed on by this call.
    const schedule& reuse(cache_slot& cached)
    {
        if (!cached->agreed) unsettled_ = &cached;
        return cached->sched;
    }

    // The agreement of a call on a new schedule, before its first message:
    // failure says why this rank is not ready (empty: it is). Throws on
    // every rank when some rank is not; on a call on a cached schedule,
    // which needs no agreement, only where failure is not empty.
    void settle(const std::string& failure);
    // The whole-message buffers' drain (exec/node_buffers.hpp), made on the
    // first whole-message call, a schedule miss; this rank's failure, if any.
    std::string make_drain();

    // Throws the error of a one-shot call whose setup failed on some rank
    // (failed_rank; -1: on several), told by the call's first agreement.
    [[noreturn]] void throw_setup_failure(int failed_rank) const;

    int rank_ = 0, size_ = 0; // in the user's communicator (also the private duplicate's)
    detail::comm_state* state_;
    MPI_Comm private_;
    // private_'s owner: its count of started calls (a plan's outlives state_)
    detail::private_duplicate* duplicate_;
    int root_;
    std::size_t dimension_;
    // A plan's own policy, shared by its copies; a one-shot call's is the
    // communicator's memo's (see the one-shot constructor).
    std::shared_ptr<const runtime_policy> owned_policy_;
    const runtime_policy* policy_ = nullptr;
    bool dimensions_agree_ = false;
    bool one_shot_ = false;
    std::shared_ptr<plan_memory> memory_; // a plan's own; none for one-shot calls
    // A plan's share of private_: it works after the user frees the
    // communicator (state_ is then gone; a plan reads it only when made).
    std::shared_ptr<detail::private_duplicate> private_owner_;
    detail::selection_memo* memo_ = nullptr;
    detail::node_buffers* whole_ = nullptr;
    std::vector<detail::node_buffers>* pools_ = nullptr; // per tree: its node, its forward receiver, its result
    detail::call_arena* arena_ = nullptr;
    // A one-shot call whose setup failed here: why, and what it runs on
    // until its first agreement fails it everywhere.
    std::string setup_failure_;
    std::optional<runtime_policy> borrowed_policy_;
    std::optional<detail::selection_memo> spare_memo_;
    cache_slot* unsettled_ = nullptr; // the schedule this call built, until settled
};

// The windowed run: the rank program over the schedule's trees, run by the
// MPI executor. Not inline: the compiled mode makes it once for the
// built-in value types and operations (reduce_instances.hpp).
template <class T, class Op, class Reader>
report reduce_core::run_windows(const schedule& sched, const detail::stream_config& cfg, const Op& op,
                                detail::own_input<T, Reader>& own, const detail::root_output<T>& result,
                                const std::string& local_failure, detail::call_arena::lease* mem,
                                sparse_writer<T> write, void* out)
{
    std::optional<detail::rank_program<T, Op, Reader>> program;
    std::optional<detail::node_run> run;
    ready_windows(program, run, sched, cfg, op, own, result, local_failure, mem, 0);
    run->run();
    return windows_report(sched, *program, identity<T>(op), write, out);
}

} // namespace sparse_reduce::detail

// The members that do not depend on the call's types: inline here, or
// compiled once by the compiled mode (detail/compiled_mode.hpp).
#if !defined(SPARSE_REDUCE_COMPILED) || defined(SPARSE_REDUCE_SOURCE)
#include "reduce_core_members.hpp"
#endif
#include "reduce_instances.hpp"
#include "reduce_start.hpp"
