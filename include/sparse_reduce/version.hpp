#pragma once
/// @file
/// The library's version, as macros and as sparse_reduce::version_string.
/// Included by `<sparse_reduce/sparse_reduce.hpp>`.
// Keep in sync with project(SparseReduce VERSION ...) in the top-level
// CMakeLists.txt; configuring checks that the two agree.

#define SPARSE_REDUCE_VERSION_MAJOR 0       ///< Major version.
#define SPARSE_REDUCE_VERSION_MINOR 9       ///< Minor version.
#define SPARSE_REDUCE_VERSION_PATCH 0       ///< Patch version.
#define SPARSE_REDUCE_VERSION_STRING "0.9.0" ///< "major.minor.patch".

namespace sparse_reduce {
/// The version as text, "major.minor.patch" (SPARSE_REDUCE_VERSION_STRING).
inline constexpr const char* version_string = SPARSE_REDUCE_VERSION_STRING;
} // namespace sparse_reduce
