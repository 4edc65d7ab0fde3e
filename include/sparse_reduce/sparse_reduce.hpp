#pragma once
// SparseReduce: reduce sparse vectors across MPI ranks.
// Layers, each in its own folder:
//   op/      operator concept, identities, commutativity, custom ops
//   repr/    representations: dense adapters, index_value_vector, rle_vector, Eigen
//   kernel/  combine kernels (a ⊗ b for every pair) and conversions
//   wire/    the adaptive block encoding that travels between ranks
//   model/   the α-β-γ cost model and merged sizes
//   tree/    reduction trees as plain data (binomial, k-ary, binary, chain, optimal binary, two-tree)
//   schedule/ trees plus windows: what every rank does, printable
//   exec/    the per-rank state machine, the Boost.MPI executor, the simulator
//   collective/  the public collectives: reduce and allreduce, and their plans, reduce_scatter (block,
//                caller's or balanced index ranges)
//   sort/    the distributed histogram sort: rebalance, find_splitters, move_data

#include "version.hpp"
#include "error.hpp"

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

#include "tree/tree.hpp"
#include "tree/binomial.hpp"
#include "tree/k_ary.hpp"
#include "tree/binary.hpp"
#include "tree/chain.hpp"
#include "tree/optimal_binary.hpp"
#include "tree/two_tree.hpp"

#include "schedule/schedule.hpp"
#include "model/cost.hpp"
#include "model/merged_size.hpp"
#include "model/k_ary.hpp"
#include "schedule/predict.hpp"
#include "model/group_replication.hpp"
#include "select/tuning.hpp"
#include "select/sreduce.hpp"
#include "select/group_shape.hpp"

#include "policy.hpp"
#include "policy_check.hpp"
#include "report.hpp"
#include "collective/reduce.hpp"
#include "collective/allreduce.hpp"
#include "exec/simulator.hpp"
#include "collective/reduce_scatter.hpp"
#include "sort/reduce_scatter_balanced.hpp"
#include "sort/sort_key.hpp"
#include "sort/rebalance.hpp"
#include "sort/find_splitters.hpp"
#include "sort/move_data.hpp"
#include "sort/histogram_sort.hpp"
