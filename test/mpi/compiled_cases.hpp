#pragma once
// What the compiled mode's tests run (test_compiled_mode.cpp with the full
// headers, test_compiled_front.cpp with the front alone): every built-in
// value type (compiled_values, for BOOST_AUTO_TEST_CASE_TEMPLATE) and
// operation, under automatic (whole messages where they may go) and the
// windows of one tree (binomial, index/value wire) and of two (two_tree),
// with segments small enough for a few windows.

#include <sparse_reduce/compiled.hpp>

#include <boost/mpl/list.hpp>

#include <cstdint>
#include <functional>
#include <string>

namespace sparse_reduce_test {

using compiled_values = boost::mpl::list<float, double, std::int32_t, std::int64_t, std::uint64_t>;

// check(op, policy, what) for every built-in operation under each policy.
template <class Check>
void every_op_and_policy(const Check& check)
{
    namespace sr = sparse_reduce;
    auto policies = [&](const auto& op, const std::string& name) {
        check(op, sr::policy::automatic{}, name + " automatic");
        check(op, sr::policy::binomial{.wire = sr::wire::index_value, .segment_bytes = 4096}, name + " binomial");
        check(op, sr::policy::two_tree{.segment_bytes = 4096}, name + " two_tree");
    };
    policies(std::plus<>{}, "plus");
    policies(sr::min{}, "min");
    policies(sr::max{}, "max");
}

} // namespace sparse_reduce_test
