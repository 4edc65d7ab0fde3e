#pragma once
/// @file
/// The tuning: what automatic selection knows about the machine, the calibrated
/// cost model and Sreduce's thresholds, from a small text file written by
/// sparse_reduce_tune, or built-in defaults. Include `<sparse_reduce/sparse_reduce.hpp>`.
///
///      # sparse_reduce tuning
///      alpha = 4.1e-07              seconds per message
///      beta = 1.2e-10               seconds per byte
///      gamma = 2.3e-09              seconds per sparse entry
///      gamma_dense = 2.9e-10        seconds per dense element
///      burst_bytes = 0              a link's token bucket (the simulator; 0: none)
///      T_c_small_bytes = 65536      T_u^c: below, the binomial tree (latency-bound)
///      T_c_sparse_bytes = 67108864  T_s^c: sparse data up to this size stays binomial...
///      T_s = 0.99                   ...when more than this fraction is identity...
///      T_p_uniform = 64             ...and P is below T_u^p (uniform supports)
///      T_p_zipf = 1024              ...or below T_z^p (zipf supports)
///
/// Where it comes from: policy::automatic{.tuning_file = path}, else the file
/// named by $SPARSE_REDUCE_TUNING, else the defaults. Unknown keys and
/// malformed lines throw sparse_reduce::error naming the file and line.

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <iosfwd>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>

#include "../error.hpp"
#include "../model/cost.hpp"

namespace sparse_reduce {

/// Sreduce's thresholds (doc/selection.md).
struct thresholds {
    double small_bytes = 64 * 1024;           ///< T_u^c: below, the binomial tree (latency-bound).
    double sparse_bytes = 64.0 * 1024 * 1024; ///< T_s^c: sparse data up to this size stays binomial...
    double sparsity = 0.99;                   ///< T_s: ...when more than this fraction is identity...
    int ranks_uniform = 64;                   ///< T_u^p: ...and P is below this (uniform supports)...
    int ranks_zipf = 1024;                    ///< T_z^p: ...or below this (zipf supports).
    /// Whether a vector of this many values is below T_u^c (the small-vector rule).
    bool small(std::size_t dimension, std::size_t value_bytes) const
    {
        return static_cast<double>(dimension) * static_cast<double>(value_bytes) < small_bytes;
    }
    friend bool operator==(const thresholds&, const thresholds&) = default;
};

/// A machine's tuning: its cost model and Sreduce's thresholds.
struct tuning {
    cost_model machine{};                     ///< The calibrated α-β-γ model.
    thresholds limits{};                      ///< Sreduce's thresholds.
    std::string source = "built-in defaults"; ///< Where it was read from.
    friend bool operator==(const tuning&, const tuning&) = default;
};

/// Checks its model (validate(cost_model)) and that the thresholds are finite and >= 0.
/// @throws sparse_reduce::error naming `who` otherwise
inline void validate(const tuning& t, const char* who = "tuning")
{
    validate(t.machine, who);
    const auto limit = [&](const char* name, double x) {
        if (!std::isfinite(x) || x < 0)
            detail::fail(std::string(who) + ": tuning threshold " + name + " must be finite and >= 0, not " +
                         detail::number_text(x));
    };
    limit("T_c_small_bytes", t.limits.small_bytes);
    limit("T_c_sparse_bytes", t.limits.sparse_bytes);
    limit("T_s", t.limits.sparsity);
}

/// The tuning in the file format (parse_tuning reads it back).
inline std::string to_string(const tuning& t)
{
    std::ostringstream os;
    os.precision(6);
    os << "# sparse_reduce tuning (" << t.source << ")\n"
       << "alpha = " << t.machine.alpha << "\n"
       << "beta = " << t.machine.beta << "\n"
       << "gamma = " << t.machine.gamma << "\n"
       << "gamma_dense = " << t.machine.gamma_dense << "\n"
       << "burst_bytes = " << t.machine.burst_bytes << "\n"
       << "T_c_small_bytes = " << t.limits.small_bytes << "\n"
       << "T_c_sparse_bytes = " << t.limits.sparse_bytes << "\n"
       << "T_s = " << t.limits.sparsity << "\n"
       << "T_p_uniform = " << t.limits.ranks_uniform << "\n"
       << "T_p_zipf = " << t.limits.ranks_zipf << "\n";
    return os.str();
}

namespace detail {

// The next blank-separated word of `line` from `at` (empty at its end).
inline std::string_view next_word(std::string_view line, std::size_t& at)
{
    while (at < line.size() && (line[at] == ' ' || line[at] == '\t' || line[at] == '\r')) ++at;
    const std::size_t from = at;
    while (at < line.size() && line[at] != ' ' && line[at] != '\t' && line[at] != '\r') ++at;
    return line.substr(from, at - from);
}

// The file format's text: one `key = number` a line, `#` to the line's end
// a comment. Read with no stream, so a collective that reads a tuning
// compiles no iostreams.
inline tuning parse_tuning_text(std::string_view text, const std::string& name)
{
    tuning t;
    t.source = name;
    int no = 0;
    for (std::size_t from = 0; from < text.size(); ) {
        const std::size_t eol = std::min(text.find('\n', from), text.size());
        std::string_view line = text.substr(from, eol - from);
        from = eol + 1;
        ++no;
        line = line.substr(0, std::min(line.find('#'), line.size()));
        std::size_t at = 0;
        const std::string_view key = next_word(line, at);
        if (key.empty()) continue;
        const auto where = [&] { return concat(name, ":", no); };
        const std::string_view eq = next_word(line, at), number = next_word(line, at);
        double v = 0;
        const char* first = number.data() + (number.starts_with('+') ? 1 : 0);
        const auto [end, ec] = std::from_chars(first, number.data() + number.size(), v);
        if (eq != "=" || number.empty() || ec != std::errc() || end != number.data() + number.size() ||
            !next_word(line, at).empty())
            fail(where() + ": expected 'key = number'");
        if (!(v >= 0) || v > 1e300) fail(where() + ": " + std::string(key) + " must be a finite number >= 0");
        if (key == "alpha") t.machine.alpha = v;
        else if (key == "beta") t.machine.beta = v;
        else if (key == "gamma") t.machine.gamma = v;
        else if (key == "gamma_dense") t.machine.gamma_dense = v;
        else if (key == "burst_bytes") t.machine.burst_bytes = v;
        else if (key == "T_c_small_bytes") t.limits.small_bytes = v;
        else if (key == "T_c_sparse_bytes") t.limits.sparse_bytes = v;
        else if (key == "T_s") t.limits.sparsity = v;
        else if (key == "T_p_uniform") t.limits.ranks_uniform = static_cast<int>(std::min(v, 1e9));
        else if (key == "T_p_zipf") t.limits.ranks_zipf = static_cast<int>(std::min(v, 1e9));
        else fail(where() + ": unknown key '" + std::string(key) + "'");
    }
    return t;
}

} // namespace detail

/// Reads a tuning in the file format; `name` (the file) goes into messages and `source`.
/// @throws sparse_reduce::error naming the file and line for unknown keys and malformed lines
inline tuning parse_tuning(std::istream& in, const std::string& name)
{
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    return detail::parse_tuning_text(text, name);
}

/// A tuning file, read once per path and process (a call that finds it
/// read allocates nothing: calls that read $SPARSE_REDUCE_TUNING each time
/// stay free of allocation).
/// @throws sparse_reduce::error when the file cannot be read or is malformed
inline const tuning& load_tuning(std::string_view path)
{
    // The files read so far, newest first, in a list that only grows: a
    // lookup takes no lock (and <mutex> would bring <chrono> into every
    // translation unit). Threads that read one new file at once each parse
    // it; the first entry pushed is kept and returned to all of them.
    struct loaded {
        std::string path;
        tuning value;
        const loaded* next;
    };
    static std::atomic<const loaded*> head{nullptr};
    const auto find = [path](const loaded* from, const loaded* until) -> const loaded* {
        for (; from != until; from = from->next)
            if (from->path == path) return from;
        return nullptr;
    };
    const loaded* seen = head.load(std::memory_order_acquire);
    if (const loaded* hit = find(seen, nullptr)) return hit->value;
    const std::string name(path);
    std::string text;
    std::FILE* f = std::fopen(name.c_str(), "rb");
    char buf[4096];
    if (f)
        for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
    const bool ok = f != nullptr && std::ferror(f) == 0;
    if (f) std::fclose(f);
    if (!ok) detail::fail("cannot read the tuning file '" + name + "'");
    auto* entry = new loaded{name, detail::parse_tuning_text(text, name), seen};
    while (!head.compare_exchange_weak(entry->next, entry, std::memory_order_acq_rel, std::memory_order_acquire)) {
        if (const loaded* hit = find(entry->next, seen)) { // pushed meanwhile by another thread
            delete entry;
            return hit->value;
        }
        seen = entry->next;
    }
    return entry->value;
}

/// The tuning in use: the explicit file, else $SPARSE_REDUCE_TUNING, else the defaults.
/// @throws sparse_reduce::error when the file cannot be read or is malformed
inline const tuning& current_tuning(const std::string& path = {})
{
    static const tuning defaults{};
    if (!path.empty()) return load_tuning(path);
    if (const char* env = std::getenv("SPARSE_REDUCE_TUNING"); env && *env) return load_tuning(env);
    return defaults;
}

namespace detail {

// Whether adaptive blocks may take the bitmap form (cost_model::bitmap_pays)
// under a policy's tuning: `tuned`, else its file, else $SPARSE_REDUCE_TUNING,
// else the defaults. Never throws: a tuning that cannot be read is reported
// where the model reads it, and ranks that differ here still decode each
// other's blocks (any form travels under the adaptive wire).
template <class Policy>
bool bitmap_blocks(const Policy& policy) noexcept
{
    try {
        if constexpr (requires { policy.tuned; })
            if (policy.tuned) return policy.tuned->machine.bitmap_pays();
        if constexpr (requires { policy.tuning_file; }) return current_tuning(policy.tuning_file).machine.bitmap_pays();
        return current_tuning().machine.bitmap_pays();
    } catch (...) {
        return cost_model{}.bitmap_pays();
    }
}

// The same for a call without a policy: $SPARSE_REDUCE_TUNING, else the defaults.
inline bool bitmap_blocks() noexcept
{
    return bitmap_blocks(0);
}

} // namespace detail

} // namespace sparse_reduce
