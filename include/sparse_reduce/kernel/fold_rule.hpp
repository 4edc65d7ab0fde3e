#pragma once
// When a fold accumulates densely: the executor's rule per window
// (exec/reduce_node.hpp), mirrored by the cost model that predicts it
// (schedule/predict.hpp, Heikkinen's k in select/sreduce.hpp).

#include <cstddef>

namespace sparse_reduce::detail {

// Dense once the inputs' entries reach 1 / dense_fold_ratio of the elements:
// from there a pass over the dense window costs less than merging the lists.
inline constexpr std::size_t dense_fold_ratio = 4;

template <class N>
constexpr bool folds_densely(N entries, N elements)
{
    return static_cast<N>(dense_fold_ratio) * entries >= elements;
}

} // namespace sparse_reduce::detail
