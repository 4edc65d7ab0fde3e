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
#include "../schedule/schedule.hpp"
#include "../select/call_stats.hpp"
#include "../select/policy_value.hpp"

namespace sparse_reduce::detail {

inline constexpr int default_k = 4;


// What a schedule was chosen for: the values' size and the output's kind,
// and, when the call measured, the summed statistics (or optimal_binary's
// gathered entry counts and dimension). The whole-message path's key is all
// zero (value_bytes 0, which no windowed call has).
struct selection_key {
    std::size_t value_bytes = 0;
    bool dense_output = false;
    bool measured = false; // the statistics allreduce ran: sum holds its result
    bool whole = false;    // chosen for the whole-message path
    bool full = false;     // every input held every element (select/path.hpp, full_goes_in_windows)
    bool root_dense_output = false; // measured calls: the root's output kind, agreed
    local_summary sum;
    std::vector<double> entries; // optimal_binary: every rank's entry count
    double dimension = 0;        // optimal_binary: the largest dimension
    bool operator==(const selection_key&) const = default;
};

// What a plan remembers between calls: the schedule per commutativity, with
// the key it was chosen for, and automatic's call counter.
struct selection_memo {
    unsigned calls_since_measure[2] = {0, 0};
    std::optional<std::pair<selection_key, schedule>> cache[2];
    dense_stats_memo dense_stats; // one-shot calls on dense inputs
    // the report's text for the schedule last described (built once per schedule)
    const schedule* described = nullptr;
    bool described_whole = false;
    std::shared_ptr<const std::string> description;
    std::shared_ptr<const std::string> reason;
    std::shared_ptr<const std::string> tuning; // automatic's tuning, named once
    const void* identity_tested = nullptr;     // the operation type whose identity law was tested
};

// A plan's memory: its selection and the buffers its calls work in.
struct plan_memory {
    selection_memo memo;
    node_buffers whole;
    std::vector<node_buffers> pools;
    call_arena arena;
};

// One-shot calls keep their selection on the communicator, per policy type
// (Policy names the memo), for the last (policy, root, dimension) they were
// made with.
template <class Policy>
struct one_shot_memo {
    std::optional<runtime_policy> policy;
    int root = -1;
    std::size_t dimension = 0;
    selection_memo memo;
};

struct one_shot_t {};

} // namespace sparse_reduce::detail
