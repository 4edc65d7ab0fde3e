#pragma once
// What a reduce plan keeps between calls, and what a one-shot call keeps on
// the communicator: the schedule chosen and the key it was chosen for, the
// report's texts, and the buffers the calls work in.

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../exec/call_arena.hpp"
#include "../exec/node_buffers.hpp"
#include "../exec/started_call.hpp"
#include "../schedule/schedule.hpp"
#include "../select/call_stats.hpp"
#include "../select/policy_value.hpp"

namespace sparse_reduce::detail {

inline constexpr int default_k = 4;


// What a schedule was chosen for: the policy (its fingerprint), root,
// dimension and values' size and, when the call measured, the summed
// statistics and the root's output kind (or optimal_binary's gathered entry
// counts and dimension). Only what every rank agrees on: a rank's own
// output kind (a non-root's may be a dummy of any kind) is not part of it,
// and a call that passes another root, dimension or policy on some ranks
// (caught by its agreement) leaves every cache as it was. So all ranks miss
// the cache together and agree on the schedule they build
// (reduce_core::keep_schedule). The whole-message path's key has
// value_bytes 0, which no windowed call has.
struct selection_key {
    double policy = 0;
    int root = -1;
    std::size_t dimension = 0;
    std::size_t value_bytes = 0;
    bool measured = false; // the statistics allreduce ran: sum holds its result
    bool whole = false;    // chosen for the whole-message path
    bool full = false;     // every input held every element (select/path.hpp, full_goes_in_windows)
    bool root_dense_output = false; // measured calls: the root's output kind, agreed
    local_summary sum;
    std::vector<double> entries; // optimal_binary: every rank's entry count
    double largest_dimension = 0; // optimal_binary: the largest dimension
    bool operator==(const selection_key&) const = default;
};

// A schedule in the cache, with the key it was chosen for. agreed: the
// ranks have agreed that every one of them built it and made its first
// call ready (reduce_core::settle); until then the next call on it agrees.
struct cached_schedule {
    selection_key key;
    schedule sched;
    bool agreed = false;
};

// What a plan remembers between calls: the schedule per commutativity, with
// the key it was chosen for, and automatic's call counter.
struct selection_memo {
    unsigned calls_since_measure[2] = {0, 0};
    std::optional<cached_schedule> cache[2];
    std::optional<cached_schedule> queried[2]; // schedule_for's (no call, no agreement)
    dense_stats_memo dense_stats; // one-shot calls on dense inputs
    // the report's text for the schedule last described (built once per schedule)
    const schedule* described = nullptr;
    bool described_whole = false;
    std::shared_ptr<const std::string> description;
    std::shared_ptr<const std::string> reason;
    std::shared_ptr<const std::string> tuning; // automatic's tuning, named once
    const sparse_reduce::tuning* fingerprinted = nullptr; // the tuning whose fingerprint is kept (agreement_sums)
    double tuning_print = 0;
    const void* identity_tested = nullptr;     // the operation type whose identity law was tested
};

// A plan's memory: its selection and the buffers its calls work in.
struct plan_memory {
    selection_memo memo;
    node_buffers whole;
    std::vector<node_buffers> pools;
    call_arena arena;
    started_call started; // reduce_plan::start's call, until it completes
};

// One-shot calls keep their selection on the communicator, per policy type
// (Policy names the memo), with a copy of the last policy, root and
// dimension they were made with: when these change, this rank forgets what
// it learnt of its own inputs (the identity law tested, a dense input's
// counts), while the schedules stay, keyed by what the ranks agree on.
template <class Policy>
struct one_shot_memo {
    std::optional<runtime_policy> policy;
    int root = -1;
    std::size_t dimension = 0;
    selection_memo memo;

    void forget_inputs()
    {
        memo.identity_tested = nullptr;
        memo.dense_stats = {};
    }
};

struct one_shot_t {};
// reduce_checked's mark of a blocking call (a started one passes its start_args).
struct blocking_call {};

} // namespace sparse_reduce::detail
