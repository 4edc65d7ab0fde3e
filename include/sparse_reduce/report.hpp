#pragma once
// What a collective did on this rank.

#include <cstddef>
#include <ostream>
#include <string>

namespace sparse_reduce {

struct report {
    std::string algorithm;          // readable name with parameters, e.g. "binomial(wire=adaptive, segment=131072)"
    std::size_t bytes_sent = 0;     // by this rank, headers included
    std::size_t bytes_received = 0; // by this rank
    std::size_t messages_sent = 0;  // by this rank

    friend std::ostream& operator<<(std::ostream& os, const report& r)
    {
        return os << r.algorithm << ": sent " << r.bytes_sent << " B in " << r.messages_sent << " messages, received "
                  << r.bytes_received << " B";
    }
};

} // namespace sparse_reduce
