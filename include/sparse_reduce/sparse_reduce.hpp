#pragma once
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
//   exec/        the per-rank state machines, the Boost.MPI and whole-message executors,
//                the simulator, the mesh simulator
//   collective/  the public collectives and their plans: reduce, allreduce
//                (reduce_broadcast, recursive_doubling, split_allgather, grouped),
//                reduce_scatter (block or caller's index ranges)
//   sort/        the distributed histogram sort (rebalance, find_splitters, move_data),
//                and reduce_scatter_balanced, whose ranges come from find_splitters

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

#include "exec/simulator.hpp"

#include "collective/reduce.hpp"
#include "collective/allreduce.hpp"
#include "collective/reduce_scatter.hpp"

#include "sort/sort_key.hpp"
#include "sort/rebalance.hpp"
#include "sort/find_splitters.hpp"
#include "sort/move_data.hpp"
#include "sort/histogram_sort.hpp"
#include "sort/reduce_scatter_balanced.hpp"
