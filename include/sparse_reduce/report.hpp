#pragma once
/// @file
/// sparse_reduce::report, what a collective did on this rank (returned by
/// reduce and allreduce). Included by `<sparse_reduce/sparse_reduce.hpp>`.

#include <cstddef>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

namespace sparse_reduce {

/// A report's text, shared rather than copied: a plan builds it once per
/// schedule, so returning a report costs no allocation on the hot path. Reads
/// as a std::string (str(), an implicit conversion, `+` and `<<`).
class report_text {
public:
    report_text() = default;
    report_text(std::string s) : text_(std::make_shared<const std::string>(std::move(s))) {}
    report_text(const char* s) : report_text(std::string(s)) {}
    explicit report_text(std::shared_ptr<const std::string> shared) : text_(std::move(shared)) {}

    /// The text (empty for a default-constructed report_text).
    const std::string& str() const { return text_ ? *text_ : empty(); }
    operator const std::string&() const { return str(); }
    const char* c_str() const { return str().c_str(); }
    bool empty_text() const { return str().empty(); }
    std::size_t find(std::string_view s, std::size_t pos = 0) const { return str().find(s, pos); }
    std::size_t rfind(std::string_view s, std::size_t pos = std::string::npos) const { return str().rfind(s, pos); }

    friend std::string operator+(const report_text& a, std::string_view b) { return a.str() + std::string(b); }
    friend std::string operator+(std::string_view a, const report_text& b) { return std::string(a) + b.str(); }
    friend std::string operator+(const std::string& a, const report_text& b) { return a + b.str(); }
    friend std::string operator+(const char* a, const report_text& b) { return a + b.str(); }
    friend bool operator==(const report_text& a, std::string_view b) { return a.str() == b; }
    friend std::ostream& operator<<(std::ostream& os, const report_text& t) { return os << t.str(); }

private:
    static const std::string& empty()
    {
        static const std::string e;
        return e;
    }
    std::shared_ptr<const std::string> text_;
};

/// What a collective did on this rank: the algorithm, why, and the traffic.
/// `std::cout << report` prints every field.
struct report {
    /// What ran, with its parameters and, for automatic, the rule in symbols
    /// (doc/selection.md), e.g. "binomial(wire=adaptive, segment=131072)
    /// [automatic: binomial by C < T_c (small vector)]".
    report_text algorithm;
    /// Why, in words, e.g. "binomial tree: the data is sparse and the ranks few".
    report_text reason;
    /// The tuning automatic selection read: "built-in defaults", the file's
    /// path (policy::automatic::tuning_file or $SPARSE_REDUCE_TUNING), or the
    /// `source` of a tuning given in the policy. Empty for fixed policies.
    report_text tuning;
    std::size_t bytes_sent = 0;     ///< By this rank, headers included.
    std::size_t bytes_received = 0; ///< By this rank.
    std::size_t messages_sent = 0;  ///< By this rank.
    double seconds = 0;             ///< The call's time on this rank (MPI_Wtime around it; a started call's from start to completion).
    double wait_seconds = 0;        ///< A started call's time in reduce_request::wait (0 for other calls).

    /// One line: algorithm; reason; tuning; bytes and messages; seconds.
    friend std::ostream& operator<<(std::ostream& os, const report& r)
    {
        os << r.algorithm;
        if (!r.reason.empty_text()) os << "; " << r.reason;
        if (!r.tuning.empty_text()) os << "; tuning: " << r.tuning;
        os << "; sent " << r.bytes_sent << " B in " << r.messages_sent << " messages, received " << r.bytes_received
           << " B, in " << r.seconds << " s";
        if (r.wait_seconds > 0) os << " (" << r.wait_seconds << " s in wait)";
        return os;
    }
};

} // namespace sparse_reduce
