#pragma once
// The reduce's instantiations for the built-in value types (float, double,
// std::int32_t, std::int64_t, std::uint64_t) and operations (std::plus<>,
// sparse_reduce::min, sparse_reduce::max), for every policy: the windowed
// run per reader (32- and 64-bit indices; rle_vector inputs compile where
// they are called) and the whole-message node per index widths. The compiled mode
// (detail/compiled_mode.hpp) makes them once in its library and declares
// them extern everywhere else; header-only use compiles what it calls.

#include <cstdint>
#include <functional>

#include "../detail/compiled_mode.hpp"
#include "../exec/whole_reduce.hpp"
#include "../op/builtin.hpp"
#include "../policy.hpp"
#include "../select/policy_value.hpp"
#include "reduce_core.hpp"

namespace sparse_reduce::detail {

template <class T>
using reader32 = sparse_reader<T, std::uint32_t>;
template <class T>
using reader64 = sparse_reader<T, std::uint64_t>;

} // namespace sparse_reduce::detail

// X: extern (a declaration) or nothing (the definition, in the library);
// expanded in namespace sparse_reduce::detail.
#define SPARSE_REDUCE_RUN_WINDOWS(X, T, Op, Reader)                                                                  \
    X template report reduce_core::run_windows<T, Op, Reader>(const schedule&, const stream_config&, const Op&,      \
                                                              own_input<T, Reader>&, const root_output<T>&,          \
                                                              const std::string&, detail::call_arena::lease*,        \
                                                              reduce_core::sparse_writer<T>, void*);

#define SPARSE_REDUCE_WHOLE_NODE(X, T, Op, I, U)                                                                     \
    X template whole_result run_whole_node<I, T, Op, U>(MPI_Comm, const tree&, int, std::size_t, const Op&,           \
                                                        node_buffers&, const whole_output<T>&, const U*, const T*,   \
                                                        std::size_t);

#define SPARSE_REDUCE_VALUE_OP(X, T, Op)                                                                             \
    SPARSE_REDUCE_RUN_WINDOWS(X, T, Op, ::sparse_reduce::detail::reader32<T>)                                         \
    SPARSE_REDUCE_RUN_WINDOWS(X, T, Op, ::sparse_reduce::detail::reader64<T>)                                         \
    SPARSE_REDUCE_WHOLE_NODE(X, T, Op, std::uint32_t, std::uint32_t)                                                  \
    SPARSE_REDUCE_WHOLE_NODE(X, T, Op, std::uint32_t, std::uint64_t)                                                  \
    SPARSE_REDUCE_WHOLE_NODE(X, T, Op, std::uint64_t, std::uint64_t)

// The built-in operations and policies: M(args..., each one).
#define SPARSE_REDUCE_EACH_OP(M, ...)                                                                                \
    M(__VA_ARGS__, std::plus<>) M(__VA_ARGS__, ::sparse_reduce::min) M(__VA_ARGS__, ::sparse_reduce::max)

#define SPARSE_REDUCE_EACH_POLICY(M, ...)                                                                            \
    M(__VA_ARGS__, ::sparse_reduce::policy::binomial)                                                                 \
    M(__VA_ARGS__, ::sparse_reduce::policy::k_ary)                                                                    \
    M(__VA_ARGS__, ::sparse_reduce::policy::binary)                                                                   \
    M(__VA_ARGS__, ::sparse_reduce::policy::chain)                                                                    \
    M(__VA_ARGS__, ::sparse_reduce::policy::optimal_binary)                                                           \
    M(__VA_ARGS__, ::sparse_reduce::policy::two_tree)                                                                 \
    M(__VA_ARGS__, ::sparse_reduce::policy::automatic)

#define SPARSE_REDUCE_VALUE_OPS(X, T) SPARSE_REDUCE_EACH_OP(SPARSE_REDUCE_VALUE_OP, X, T)

#define SPARSE_REDUCE_POLICY(X, P) X template const policy_ops& ops_of<P>();

#define SPARSE_REDUCE_POLICIES(X) SPARSE_REDUCE_EACH_POLICY(SPARSE_REDUCE_POLICY, X)

#define SPARSE_REDUCE_INSTANCES(X)                                                                                   \
    SPARSE_REDUCE_VALUE_OPS(X, float)                                                                                 \
    SPARSE_REDUCE_VALUE_OPS(X, double)                                                                                \
    SPARSE_REDUCE_VALUE_OPS(X, std::int32_t)                                                                          \
    SPARSE_REDUCE_VALUE_OPS(X, std::int64_t)                                                                          \
    SPARSE_REDUCE_VALUE_OPS(X, std::uint64_t)                                                                         \
    SPARSE_REDUCE_POLICIES(X)

// The compiled mode's whole one-shot calls (collective/reduce_compiled.hpp),
// for values T; expanded in namespace sparse_reduce by the library's sources.
#define SPARSE_REDUCE_FRONT_CALL(Op, In, Out, P)                                                                     \
    template report reduce<In, Out, Op, P>(const boost::mpi::communicator&, const In&,                              \
                                           std::add_rvalue_reference_t<Out>, const Op&, int, const P&);

#define SPARSE_REDUCE_FRONT_PAIRS(T, Op)                                                                             \
    SPARSE_REDUCE_EACH_POLICY(SPARSE_REDUCE_FRONT_CALL, Op, ::sparse_reduce::detail::eigen_sparse<T>,                  \
                              ::sparse_reduce::detail::eigen_sparse<T>&)                                              \
    SPARSE_REDUCE_EACH_POLICY(SPARSE_REDUCE_FRONT_CALL, Op, ::sparse_reduce::index_value_vector<T>,                    \
                              ::sparse_reduce::index_value_vector<T>&)                                                \
    SPARSE_REDUCE_EACH_POLICY(SPARSE_REDUCE_FRONT_CALL, Op, std::vector<T>, std::vector<T>&)                           \
    SPARSE_REDUCE_EACH_POLICY(SPARSE_REDUCE_FRONT_CALL, Op, std::span<const T>, std::span<T>)

#define SPARSE_REDUCE_FRONT(T) SPARSE_REDUCE_EACH_OP(SPARSE_REDUCE_FRONT_PAIRS, T)

#ifdef SPARSE_REDUCE_COMPILED
namespace sparse_reduce::detail {
SPARSE_REDUCE_INSTANCES(extern)
} // namespace sparse_reduce::detail
#endif
