#pragma once
// Library version. Keep in sync with project(SparseReduce VERSION ...) in the
// top-level CMakeLists.txt; configuring checks that the two agree.

#define SPARSE_REDUCE_VERSION_MAJOR 0
#define SPARSE_REDUCE_VERSION_MINOR 1
#define SPARSE_REDUCE_VERSION_PATCH 0
#define SPARSE_REDUCE_VERSION_STRING "0.1.0"

namespace sparse_reduce {
inline constexpr const char* version_string = SPARSE_REDUCE_VERSION_STRING;
} // namespace sparse_reduce
