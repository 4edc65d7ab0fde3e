// The compiled mode's type-independent part: detail::reduce_core's members
// that do not depend on the call's types (collective/reduce_core_members.hpp)
// and the built-in policies' tables (collective/reduce_instances.hpp).
#define SPARSE_REDUCE_SOURCE
#include <sparse_reduce/sparse_reduce.hpp>

namespace sparse_reduce::detail {
SPARSE_REDUCE_POLICIES()
} // namespace sparse_reduce::detail
