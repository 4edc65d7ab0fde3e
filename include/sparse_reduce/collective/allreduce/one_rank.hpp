#pragma once
// allreduce on one rank: the fold of one input is that input. automatic
// copies a dense input into the output in one pass, where an algorithm would
// count its entries (automatic's model), scan it for density, gather it into
// a partial and write that out: five passes over the input. Sparse and
// RLE inputs keep their algorithm, which validates them; a dense input has
// nothing to validate but its dimension.

#include <cstddef>

#include "../../kernel/convert.hpp"
#include "../../report.hpp"
#include "status.hpp"

namespace sparse_reduce::detail {

template <class In, class Out, class Op>
report one_rank_allreduce(std::size_t dimension, const In& in, Out& out, const Op& op)
{
    static const report_text copied("one rank, the input copied"), // (name_tuning adds "automatic: ")
        why("on one rank the result is the input");
    check_dimension(in, dimension, 0);
    convert_into(out, in, op); // in place (out aliases in): nothing to do
    report r;
    r.algorithm = copied;
    r.reason = why;
    return r;
}

} // namespace sparse_reduce::detail
