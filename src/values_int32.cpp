// The compiled mode's reduce for std::int32_t values: every built-in operation,
// reader and index width (include/sparse_reduce/collective/reduce_instances.hpp).
#include <sparse_reduce/sparse_reduce.hpp>

namespace sparse_reduce::detail {
SPARSE_REDUCE_VALUE_OPS(, std::int32_t)
} // namespace sparse_reduce::detail
