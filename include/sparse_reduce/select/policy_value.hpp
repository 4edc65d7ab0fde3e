#pragma once
// A reduce policy as a run-time value. The plan's core (collective/
// reduce_core.hpp) holds one, so a call site compiles the reduce once per
// (input, output, operation), not once more per policy type.
//
// The decisions that depend on the policy (validation, whether a call
// measures, the path, the schedule) sit behind a table of functions made
// for the policy types a program names, and only for them: a call site
// under automatic never compiles optimal_binary's tree builder. A policy
// of the caller's own (any reduce_policy) is held as it is and runs the
// binomial tree with its wire format and segment size (resolve.hpp). Type erasure by a
// table rather than std::variant: a variant of eight policies costs every
// call site its visitors.

#include <cstddef>
#include <span>
#include <type_traits>
#include <concepts>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "../error.hpp"
#include "../policy.hpp"
#include "../policy_check.hpp"
#include "call_stats.hpp"
#include "path.hpp"
#include "resolve.hpp"

namespace sparse_reduce::detail {

// The policy-dependent decisions, one table per policy type H (the policy
// is passed as a pointer to an H). validate is found by argument-dependent
// lookup too: a policy type of the caller's own may bring its own.
struct policy_ops {
    void (*validate)(const void*);
    bool (*needs_call_stats)(const void*);
    bool (*stats_needed)(const void*, std::size_t dimension, std::size_t value_bytes, bool dimensions_agree);
    unsigned (*remeasure_interval)(const void*);
    double (*fingerprint)(const void*);
    whole_rule (*whole_messages)(const void*, bool index_value_input, int ranks);
    schedule (*resolve)(const void*, int size, int root, bool commutative, std::size_t dimension,
                        std::size_t value_bytes, std::span<const double> nnz, const call_stats& stats);
    schedule (*whole_at_once)(const void*, int size, int root, bool commutative, std::size_t dimension,
                              std::size_t value_bytes);
};

template <class H>
const H& held(const void* p)
{
    return *static_cast<const H*>(p);
}

// H's table. A function, not an inline variable, so that the compiled mode
// (detail/compiled_mode.hpp) can make it for the built-in policies once:
// its address identifies H (runtime_policy::get).
template <class H>
const policy_ops& ops_of()
{
    static constexpr policy_ops ops = {
        [](const void* p) {
            using sparse_reduce::validate; // and the caller's own, by argument-dependent lookup
            validate(held<H>(p));
        },
        [](const void* p) { return needs_call_stats(held<H>(p)); },
        [](const void* p, std::size_t dimension, std::size_t value_bytes, bool agree) {
            return stats_needed(held<H>(p), dimension, value_bytes, agree);
        },
        [](const void* p) { return remeasure_interval(held<H>(p)); },
        [](const void* p) { return policy_fingerprint(held<H>(p)); },
        [](const void* p, bool index_value_input, int ranks) {
            return whole_messages(held<H>(p), index_value_input, ranks);
        },
        [](const void* p, int size, int root, bool commutative, std::size_t dimension, std::size_t value_bytes,
           std::span<const double> nnz, const call_stats& stats) {
            return resolve_schedule(held<H>(p), size, root, commutative, dimension, value_bytes, nnz, stats);
        },
        [](const void* p, int size, int root, bool commutative, std::size_t dimension, std::size_t value_bytes) {
            return whole_schedule_at_once(held<H>(p), size, root, commutative, dimension, value_bytes);
        },
    };
    return ops;
}

// A reduce policy of any type, held by value (shared by copies), or
// borrowed: the caller's own object, which must outlive this (no copy, no
// allocation; a one-shot call that could not copy its policy runs on it).
struct borrowed_t {};

class runtime_policy {
public:
    template <reduce_policy P>
    explicit runtime_policy(const P& p) : runtime_policy(p, std::make_shared<const P>(p))
    {
    }
    template <reduce_policy P>
    runtime_policy(const P& p, borrowed_t) // an empty owner: aliasing, nothing allocated
        : runtime_policy(p, std::shared_ptr<const void>(std::shared_ptr<const void>(), &p))
    {
    }

    // The policy, when it is a P.
    template <class P>
    const P* get() const
    {
        return ops_ == &ops_of<P>() ? static_cast<const P*>(held_.get()) : nullptr;
    }
    // Whether this is p (no copy of p: automatic holds strings). A policy
    // type without == never is: a one-shot call copies it every time.
    template <reduce_policy P>
    bool holds(const P& p) const
    {
        const P* h = get<P>();
        if constexpr (std::equality_comparable<P>) return h && *h == p;
        else return false;
    }

    wire::format wire() const { return wire_; }
    std::size_t segment_bytes() const { return segment_bytes_; }
    bool gathers() const { return gathers_; }
    bool two_trees() const { return two_trees_; }
    const policy::automatic* automatic() const { return automatic_; }

    void validate() const { ops_->validate(held_.get()); }
    bool needs_call_stats() const { return ops_->needs_call_stats(held_.get()); }
    bool stats_needed(std::size_t dimension, std::size_t value_bytes, bool dimensions_agree) const
    {
        return ops_->stats_needed(held_.get(), dimension, value_bytes, dimensions_agree);
    }
    unsigned remeasure_interval() const { return ops_->remeasure_interval(held_.get()); }
    double fingerprint() const { return fingerprint_; }
    whole_rule whole_messages(bool index_value_input, int ranks) const
    {
        return ops_->whole_messages(held_.get(), index_value_input, ranks);
    }
    schedule resolve_schedule(int size, int root, bool commutative, std::size_t dimension, std::size_t value_bytes,
                              std::span<const double> nnz, const call_stats& stats) const
    {
        return ops_->resolve(held_.get(), size, root, commutative, dimension, value_bytes, nnz, stats);
    }
    schedule whole_schedule_at_once(int size, int root, bool commutative, std::size_t dimension,
                                    std::size_t value_bytes) const
    {
        return ops_->whole_at_once(held_.get(), size, root, commutative, dimension, value_bytes);
    }

private:
    template <reduce_policy P>
    runtime_policy(const P& p, std::shared_ptr<const void> held)
        : ops_(&ops_of<P>()), held_(std::move(held)), fingerprint_(ops_->fingerprint(&p)), wire_(p.wire),
          segment_bytes_(static_cast<std::size_t>(p.segment_bytes)),
          gathers_(std::is_same_v<P, policy::optimal_binary>), two_trees_(std::is_same_v<P, policy::two_tree>)
    {
        if constexpr (std::is_same_v<P, policy::automatic>) automatic_ = static_cast<const P*>(held_.get());
    }

    const policy_ops* ops_;
    std::shared_ptr<const void> held_;
    double fingerprint_; // made once: every call's cache key holds it
    wire::format wire_;
    std::size_t segment_bytes_;
    bool gathers_, two_trees_;
    const policy::automatic* automatic_ = nullptr;
};

// A plan's policy: validated (every rank alike, so all throw), then made.
// Making it allocates, which can fail on one rank only: the failure is kept
// for the plan's agreement (reduce_core::agree) to throw on every rank.
struct made_policy {
    std::optional<runtime_policy> policy;
    std::string failure;
    bool measures = false; // needs_call_stats: known without the made policy
};

template <reduce_policy_or_any P>
made_policy make_plan_policy(const P& p)
{
    if constexpr (std::same_as<P, policy::any>) {
        return p.visit([](const auto& tree) { return make_plan_policy(tree); }); // the tree it holds
    } else {
        ops_of<P>().validate(&p);
        made_policy m;
        m.measures = ops_of<P>().needs_call_stats(&p);
        try {
            m.policy.emplace(p);
        } catch (...) {
            m.failure = current_exception_text();
        }
        return m;
    }
}

} // namespace sparse_reduce::detail
