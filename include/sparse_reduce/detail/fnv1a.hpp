#pragma once
// FNV-1a, 64-bit: the fingerprints ranks compare to agree on arguments (a
// policy, reduce_scatter's ranges). Equal bytes give equal fingerprints on
// every rank; a collision only lets a disagreement pass that check.

#include <cstddef>
#include <cstdint>

namespace sparse_reduce::detail {

struct fnv1a {
    std::uint64_t hash = 1469598103934665603ull;

    void mix(const void* data, std::size_t n)
    {
        const auto* b = static_cast<const unsigned char*>(data);
        for (std::size_t k = 0; k < n; ++k) hash = (hash ^ b[k]) * 1099511628211ull;
    }
    template <class V>
    void mix_value(const V& v)
    {
        mix(&v, sizeof v);
    }
};

} // namespace sparse_reduce::detail
