#pragma once
/// @file
/// The compiled mode's front (doc/getting-started.md, "The compiled mode"):
/// for a translation unit whose calls are one-shot reduces of the built-in
/// combinations (collective/reduce_compiled.hpp lists them: Eigen::SparseVector,
/// index_value_vector, std::vector or the dense std::span pair, of float,
/// double, int32, int64 or uint64 values, with std::plus<>, min or max, under
/// any built-in policy). In the compiled mode (a target linking
/// SparseReduce::compiled) it declares those calls and parses nothing else of
/// the library: the call is compiled once, in the library. Another call here
/// fails to compile, naming compiled_reduce_call; include
/// `<sparse_reduce/sparse_reduce.hpp>` for it. In header-only use this is the
/// umbrella header.

#ifdef SPARSE_REDUCE_COMPILED
#include "collective/reduce_compiled.hpp"
#include "error.hpp"
#include "version.hpp"
#else
#include "sparse_reduce.hpp"
#endif
