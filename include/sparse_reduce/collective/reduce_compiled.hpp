#pragma once
// The one-shot reduce calls the compiled mode's library holds whole
// (detail/compiled_mode.hpp; <sparse_reduce/compiled.hpp>, the front that
// declares them and includes nothing else of the library's).
//
// In the compiled mode, reduce has two templates: the definition for any
// types (collective/reduce.hpp), and this declaration, constrained to the
// built-in combinations. Where both are seen, the constrained one is the
// more specialised and wins, so a call of a built-in combination is always a
// call into the library; a translation unit that includes only the front
// compiles no reduce at all, and a call of any other combination there fails
// to compile, naming compiled_reduce_call. The library's sources define the
// declaration (SPARSE_REDUCE_INSTANCES_SOURCE) and instantiate it for every
// combination (collective/reduce_instances.hpp).
//
// The combinations: values float, double, std::int32_t, std::int64_t,
// std::uint64_t; operations std::plus<>, sparse_reduce::min,
// sparse_reduce::max; every built-in policy; and these (input, output):
//
//     Eigen::SparseVector<T>          Eigen::SparseVector<T>&
//     index_value_vector<T>           index_value_vector<T>&
//     std::vector<T>                  std::vector<T>&
//     std::span<const T>              std::span<T>        (the dense drop-in)

#include <concepts>
#include <cstdint>
#include <functional>
#include <span>
#include <type_traits>
#include <vector>

#include <boost/mpi/communicator.hpp>

#include "../op/builtin.hpp"
#include "../policy.hpp"
#include "../repr/index_value_vector.hpp"
#include "../report.hpp"

namespace Eigen {
template <typename Scalar, int Options, typename StorageIndex>
class SparseVector;
} // namespace Eigen

namespace sparse_reduce::detail {

template <class T>
concept compiled_value = std::same_as<T, float> || std::same_as<T, double> || std::same_as<T, std::int32_t> ||
                         std::same_as<T, std::int64_t> || std::same_as<T, std::uint64_t>;

template <class Op>
concept compiled_operation = std::same_as<Op, std::plus<>> || std::same_as<Op, sparse_reduce::min> ||
                             std::same_as<Op, sparse_reduce::max>;

template <class P>
concept compiled_policy = std::same_as<P, policy::automatic> || std::same_as<P, policy::binomial> ||
                          std::same_as<P, policy::k_ary> || std::same_as<P, policy::binary> ||
                          std::same_as<P, policy::chain> || std::same_as<P, policy::optimal_binary> ||
                          std::same_as<P, policy::two_tree>;

template <class T>
using eigen_sparse = Eigen::SparseVector<T, 0, int>; // Eigen's defaults

// The (input, output) pairs, as reduce deduces them (Out: an lvalue's
// reference, or a span by value).
template <class In, class Out>
inline constexpr bool compiled_pair = false;
template <class T>
inline constexpr bool compiled_pair<eigen_sparse<T>, eigen_sparse<T>&> = true;
template <class T>
inline constexpr bool compiled_pair<index_value_vector<T>, index_value_vector<T>&> = true;
template <class T>
inline constexpr bool compiled_pair<std::vector<T>, std::vector<T>&> = true;
template <class T>
inline constexpr bool compiled_pair<std::span<const T>, std::span<T>> = true;

template <class In, class Out, class Op, class Policy>
concept compiled_reduce_call = compiled_pair<In, Out> && compiled_value<typename In::value_type> &&
                               compiled_operation<Op> && compiled_policy<Policy>;

} // namespace sparse_reduce::detail

#ifdef SPARSE_REDUCE_COMPILED
namespace sparse_reduce {

/// reduce (collective/reduce.hpp documents it) for the combinations the
/// compiled mode's library holds: declared here, compiled there.
template <class In, class Out, class Op, reduce_policy Policy = policy::automatic>
    requires detail::compiled_reduce_call<In, Out, Op, Policy>
report reduce(const boost::mpi::communicator& comm, const In& in, Out&& out, const Op& op, int root,
              const Policy& policy = {});

} // namespace sparse_reduce
#endif
