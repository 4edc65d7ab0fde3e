#pragma once
/// @file
/// The umbrella header: includes every public header of SparseReduce.
/// `#include <sparse_reduce/sparse_reduce.hpp>` is all a user needs.

/** @mainpage SparseReduce API reference

 SparseReduce reduces sparse vectors across MPI ranks: MPI_Reduce,
 MPI_Allreduce and MPI_Reduce_scatter for Eigen, std and its own sparse
 vectors, with trees and wire formats chosen per call. Include
 `<sparse_reduce/sparse_reduce.hpp>`.

 Start with the guide, `doc/getting-started.md` in the repository (the
 tutorial, task by task), and `README.md`; `doc/design.md` describes the
 layers. This reference documents the public API:

 - the collectives: sparse_reduce::reduce, sparse_reduce::make_plan
   (sparse_reduce::reduce_plan), sparse_reduce::allreduce,
   sparse_reduce::make_allreduce_plan, sparse_reduce::reduce_scatter,
   sparse_reduce::reduce_scatter_balanced, the fixed-pattern plans
   (sparse_reduce::make_pattern_plan), and what they return,
   sparse_reduce::report; every failure is a sparse_reduce::error;
 - operations: sparse_reduce::make_op, the built-in ones (op/builtin.hpp),
   sparse_reduce::identity_element and sparse_reduce::is_commutative;
 - vectors: sparse_reduce::index_value_vector, sparse_reduce::rle_vector,
   the Eigen adapters (repr/eigen.hpp) and sparse_reduce::repr_traits;
 - policies: namespace sparse_reduce::policy, sparse_reduce::validate,
   the tuning (select/tuning.hpp);
 - trees, schedules and their predicted time (sparse_reduce::tree,
   sparse_reduce::schedule, sparse_reduce::predicted_time); the simulators
   (sparse_reduce::simulate_reduce, namespace sparse_reduce::mesh) come with
   `<sparse_reduce/simulate.hpp>`;
 - the distributed sort, sparse_reduce::histogram_sort.

 Names in namespace `detail` and the headers' internals are not part of the API.
*/

// SparseReduce: reduce sparse vectors across MPI ranks.
// Layers, bottom to top; a folder includes only its own and lower layers
// (scripts/check-layout.sh checks it; doc/design.md draws who uses whom):
//   error.hpp, version.hpp, report.hpp   errors, version, what a call reports
//   detail/      small utilities: uninitialised vectors, value equality
//   op/          operator concept, identities, commutativity, custom ops
//   repr/        representations: dense adapters, index_value_vector, rle_vector, Eigen
//   kernel/      combine kernels (a ⊗ b for every pair) and conversions
//   wire/        the adaptive block encoding that travels between ranks
//   model/       the α-β-γ cost model, merged sizes, k-ary branching, group replication
//   tree/        reduction trees as plain data (binomial, k-ary, binary, chain, optimal binary, two-tree)
//   schedule/    trees plus windows: what every rank does, printable; its predicted time
//   select/      policy.hpp and policy_check.hpp with it: the tree table, tuning, call statistics, Sreduce,
//                the schedule a policy resolves to, allreduce's group shape
//   mpi/         transport: the private communicator, chunked byte transfers, every tag
//   exec/        the per-rank state machines, the Boost.MPI and whole-message executors
//   collective/  the public collectives and their plans: reduce, allreduce
//                (reduce_broadcast, recursive_doubling, split_allgather, grouped),
//                reduce_scatter (block or caller's index ranges)
//   sort/        the distributed histogram sort (rebalance, find_splitters, move_data),
//                and reduce_scatter_balanced, whose ranges come from find_splitters
//   sim/         the simulator (the executor's programs on a modelled clock), its
//                whole-message model, the mesh network: <sparse_reduce/simulate.hpp>,
//                not included here

#include "version.hpp"
#include "error.hpp"
#include "report.hpp"

#include "op/associative_op.hpp"
#include "op/builtin.hpp"
#include "op/make_op.hpp"

#include "repr/representation.hpp"
#include "repr/index_value_vector.hpp"
#include "repr/rle_vector.hpp"
#include "repr/eigen.hpp"

#include "kernel/combine.hpp"
#include "kernel/convert.hpp"

#include "wire/block.hpp"
#include "wire/entries.hpp"

#include "model/cost.hpp"
#include "model/merged_size.hpp"
#include "model/k_ary.hpp"
#include "model/group_replication.hpp"

#include "tree/tree.hpp"
#include "tree/binomial.hpp"
#include "tree/k_ary.hpp"
#include "tree/binary.hpp"
#include "tree/chain.hpp"
#include "tree/optimal_binary.hpp"
#include "tree/two_tree.hpp"

#include "schedule/schedule.hpp"
#include "schedule/predict.hpp"

#include "policy.hpp"
#include "policy_check.hpp"
#include "select/tuning.hpp"
#include "select/tree_table.hpp"
#include "select/sreduce.hpp"
#include "select/call_stats.hpp"
#include "select/resolve.hpp"
#include "select/group_shape.hpp"

#include "mpi/transport.hpp"

#include "collective/reduce.hpp"
#include "collective/allreduce.hpp"
#include "collective/reduce_scatter.hpp"
#include "collective/pattern_plan.hpp"

#include "sort/sort_key.hpp"
#include "sort/rebalance.hpp"
#include "sort/find_splitters.hpp"
#include "sort/move_data.hpp"
#include "sort/histogram_sort.hpp"
#include "sort/reduce_scatter_balanced.hpp"
