// The compiled mode's reduce for float values: every built-in operation,
// reader and index width, and the whole one-shot calls of the built-in
// representations and policies (include/sparse_reduce/collective/reduce_instances.hpp).
#define SPARSE_REDUCE_INSTANCES_SOURCE
#include <sparse_reduce/sparse_reduce.hpp>

namespace sparse_reduce::detail {
SPARSE_REDUCE_VALUE_OPS(, float)
} // namespace sparse_reduce::detail

namespace sparse_reduce {
SPARSE_REDUCE_FRONT(float)
} // namespace sparse_reduce
