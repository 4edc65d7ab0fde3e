#pragma once
// The compiled mode (doc/getting-started.md, "The compiled mode"; CMake target
// SparseReduce::compiled): SPARSE_REDUCE_COMPILED, set by that target, makes
// the library's type-independent members declarations only and its
// instantiations for the built-in value types and operations extern, both
// compiled once in the target's library. Header-only use (the default)
// defines neither macro: every definition is inline.
//
//   SPARSE_REDUCE_INLINE   inline, except in the compiled mode, where only
//                          the library's own sources see the definitions
//   SPARSE_REDUCE_SOURCE   defined by the library's src/core.cpp, whose
//                          translation unit holds those definitions

#ifdef SPARSE_REDUCE_COMPILED
#define SPARSE_REDUCE_INLINE
#else
#define SPARSE_REDUCE_INLINE inline
#endif
