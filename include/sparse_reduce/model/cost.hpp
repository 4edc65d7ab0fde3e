#pragma once
// The α-β-γ cost model, shared by the simulator, the optimal binary tree and
// automatic selection.
//
//   a message of B bytes costs      alpha + beta * B   (on the sender's and the
//                                                        receiver's link; the
//                                                        simulator's whole-message
//                                                        model also knows a link's
//                                                        token bucket, burst_bytes)
//   combining costs                 gamma * E          sparse: entries merged,
//                                                        encoded or decoded
//                                   + gamma_dense * N  dense: elements folded,
//                                                        copied or scanned
//   a partial result of E entries   min(E * (index + value bytes),   (the adaptive wire
//   travels as                          C / 8 + E * value bytes,     picks the smallest;
//                                       C * value bytes) + header    the bitmap where
//                                                                     bitmap_pays())
//
// The defaults are of the right order for one shared-memory node;
// sparse_reduce_tune measures them (select/tuning.hpp reads its file), and
// infiniband() and ethernet_10g() swap in a cluster's network.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>

#include "../error.hpp"
#include "merged_size.hpp"

namespace sparse_reduce {

struct cost_model {
    double alpha = 2e-6;          // seconds per message
    double beta = 1.0 / 5e9;      // seconds per byte
    double gamma = 2e-9;          // seconds per sparse entry
    double gamma_dense = 0.3e-9;  // seconds per dense element
    double value_bytes = 8;       // sizeof(T)
    double index_bytes = 4;       // wire offsets of a sparse block
    double header_bytes = 48;     // message header and one block header
    double burst_bytes = 0;       // a link's token bucket (tc tbf): bytes that pass at once after an idle spell
    merge_model merge = merge_model::uniform;

    friend bool operator==(const cost_model&, const cost_model&) = default;

    // Whether adaptive blocks take the bitmap form on this machine. Against
    // index/value it saves up to an offset (2-4 bytes) per entry and costs
    // about a quarter of γ more per entry in encoding and folding (shared
    // memory, P = 2, 10-30 %: the drop-in 5-13 % slower with it): worth it
    // where 4 β > γ (1 and 10 Gbit/s, not shared memory).
    bool bitmap_pays() const { return 4 * beta > gamma; }

    // A partial result's payload as the adaptive wire sends it: the smallest
    // of index/value, the bitmap (a bit per element and the entries'
    // values) where it pays, and dense.
    double payload_bytes(double entries, double dimension, bool bitmap) const
    {
        const double listed = std::min(entries * (index_bytes + value_bytes), dimension * value_bytes);
        return bitmap ? std::min(listed, dimension / 8 + entries * value_bytes) : listed;
    }
    double payload_bytes(double entries, double dimension) const
    {
        return payload_bytes(entries, dimension, bitmap_pays());
    }
    double message_bytes(double entries, double dimension) const { return header_bytes + payload_bytes(entries, dimension); }
    double message_time(double entries, double dimension) const
    {
        return alpha + beta * message_bytes(entries, dimension);
    }

    // This model's compute on another network.
    cost_model with_network(double alpha_s, double bytes_per_second) const
    {
        cost_model m = *this;
        m.alpha = alpha_s;
        m.beta = 1 / bytes_per_second;
        return m;
    }
    cost_model infiniband() const { return with_network(1.5e-6, 12e9); }
    cost_model ethernet_10g() const { return with_network(20e-6, 1.2e9); }
};

namespace detail {

inline std::string number_text(double x)
{
    if (std::isnan(x)) return "nan";
    if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
    return std::to_string(x);
}

inline void check_model_field(const char* who, const char* name, double x)
{
    if (!std::isfinite(x))
        fail(std::string(who) + ": cost model must be finite: " + name + " = " + number_text(x));
    if (x < 0) fail(std::string(who) + ": cost model must not be negative: " + name + " = " + number_text(x));
}

} // namespace detail

/// Checks that every field is finite and >= 0, else throws sparse_reduce::error naming `who` and
/// the field. A NaN or infinite model makes every comparison of a search over
/// it false: optimal_binary's search would never end, automatic's choice
/// would mean nothing. Policies carrying a model are checked by validate(policy)
/// (policy_check.hpp) and by optimal_binary_tree.
inline void validate(const cost_model& m, const char* who = "cost_model")
{
    detail::check_model_field(who, "alpha", m.alpha);
    detail::check_model_field(who, "beta", m.beta);
    detail::check_model_field(who, "gamma", m.gamma);
    detail::check_model_field(who, "gamma_dense", m.gamma_dense);
    detail::check_model_field(who, "value_bytes", m.value_bytes);
    detail::check_model_field(who, "index_bytes", m.index_bytes);
    detail::check_model_field(who, "header_bytes", m.header_bytes);
    detail::check_model_field(who, "burst_bytes", m.burst_bytes);
}

/// @cond INTERNAL
// A link's token bucket, as `tc tbf` shapes a link (burst_bytes = 0: no
// bucket, every byte at beta). Tokens accrue at the line rate, 1 / beta
// bytes a second, up to burst_bytes while the link idles; the bytes they
// cover pass at once, the rest at the line rate. A transfer crosses its
// sender's uplink and its receiver's downlink, two buckets in series, so the
// emptier one decides. Before the call every link has idled: full buckets.
struct link_bucket {
    double tokens, at; // tokens held at time `at`
    explicit link_bucket(const cost_model& m) : tokens(m.burst_bytes), at(0) {}
    double held(double t, const cost_model& m) const
    {
        return std::min(m.burst_bytes, tokens + std::max(0.0, t - at) / m.beta);
    }
};

// The bytes of a transfer of `bytes` from time t that pass at once; spends
// them from both buckets (each keeps what it held beyond them).
inline double spend_burst(link_bucket& from, link_bucket& to, double t, double bytes, const cost_model& m)
{
    if (!(m.burst_bytes > 0 && m.beta > 0)) return 0;
    const double a = from.held(t, m), b = to.held(t, m), free = std::min({a, b, bytes});
    const double end = t + m.beta * (bytes - free); // the rate-limited rest spends the tokens it earns
    from.tokens = a - free;
    to.tokens = b - free;
    from.at = to.at = end;
    return free;
}

// Makespan of receiving two messages on one link: they are taken in order of
// readiness (earliest release first is optimal for one machine).
inline double receive_two(double ready_a, double time_a, double ready_b, double time_b)
{
    if (ready_b < ready_a) {
        std::swap(ready_a, ready_b);
        std::swap(time_a, time_b);
    }
    return std::max(ready_a + time_a, ready_b) + time_b;
}
/// @endcond

} // namespace sparse_reduce
