// The robustness checks that need no MPI: validate(policy) and its cost models
// (rows 4 and 5), optimal_binary_tree refusing a non-finite model instead of
// searching forever (row 5), error texts with one prefix (row 11), make_op's
// value type (row 9; the compile error itself is compile_fail.make_op_value_type),
// and find_splitters' probe in a comparator running against the
// interpolation's order (row 8; the sort itself is tested under MPI).
#include <boost/test/unit_test.hpp>

#include <sparse_reduce/error.hpp>
#include <sparse_reduce/op/make_op.hpp>
#include <sparse_reduce/policy_check.hpp>
#include <sparse_reduce/sort/find_splitters.hpp>
#include <sparse_reduce/tree/optimal_binary.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace sr = sparse_reduce;

namespace {

// The error's text, or "" when `f` returned normally.
template <class F>
std::string error_of(F&& f)
{
    try {
        f();
    } catch (const sr::error& e) {
        return e.what();
    }
    return {};
}

bool one_prefix(const std::string& what)
{
    return what.rfind("sparse_reduce: ", 0) == 0 && what.find("sparse_reduce: ", 1) == std::string::npos;
}

const double not_a_number = std::numeric_limits<double>::quiet_NaN(), infinity = std::numeric_limits<double>::infinity();

} // namespace

BOOST_AUTO_TEST_SUITE(validation)

BOOST_AUTO_TEST_CASE(cost_models_must_be_finite)
{
    BOOST_TEST(error_of([] { sr::validate(sr::cost_model{}); }).empty());
    BOOST_TEST(error_of([] { sr::validate(sr::cost_model{}.infiniband()); }).empty());
    for (int field = 0; field < 8; ++field)
        for (double x : {not_a_number, infinity, -infinity, -1.0}) {
            sr::cost_model m{};
            double* f[] = {&m.alpha,       &m.beta,        &m.gamma,        &m.gamma_dense,
                           &m.value_bytes, &m.index_bytes, &m.header_bytes, &m.burst_bytes};
            *f[field] = x;
            const auto what = error_of([&] { sr::validate(sr::policy::optimal_binary{.model = m}); });
            BOOST_TEST(what.find(std::isfinite(x) ? "must not be negative" : "cost model must be finite") != std::string::npos,
                       field << " = " << x << ": " << what);
            BOOST_TEST(one_prefix(what), what);
            sr::tuning t;
            t.machine = m;
            BOOST_TEST(!error_of([&] { sr::validate(sr::policy::automatic{.tuned = t}); }).empty());
            BOOST_TEST(!error_of([&] { sr::validate(sr::policy::grouped{.tuned = t}); }).empty());
            BOOST_TEST(!error_of([&] { sr::validate(sr::policy::reduce_broadcast<sr::policy::automatic>{.tree = {.tuned = t}}); }).empty());
        }
    sr::tuning t;
    t.limits.sparsity = not_a_number;
    BOOST_TEST(error_of([&] { sr::validate(sr::policy::automatic{.tuned = t}); }).find("T_s") != std::string::npos);
}

// Before the fix this searched until memory ran out.
BOOST_AUTO_TEST_CASE(optimal_binary_tree_refuses_a_non_finite_model)
{
    const std::vector<double> nnz{9, 1, 1, 1, 1, 1, 1, 1, 3, 2, 5, 7};
    for (double x : {not_a_number, infinity})
        for (bool commutative : {false, true})
            for (int p : {3, 8, 12}) {
                sr::cost_model m{};
                m.beta = x;
                const auto what = error_of([&] {
                    sr::optimal_binary_tree(std::span<const double>(nnz.data(), static_cast<std::size_t>(p)), 1000, 0,
                                            commutative, {.model = m});
                });
                BOOST_TEST(what.find("cost model must be finite") != std::string::npos, what);
            }
    // a finite model still gives a tree over every rank
    const auto r = sr::optimal_binary_tree(nnz, 1000, 0, true, {});
    BOOST_TEST(r.t.size == static_cast<int>(nnz.size()));
    BOOST_TEST(std::isfinite(r.cost));
}

BOOST_AUTO_TEST_CASE(segments_must_be_below_a_gibibyte)
{
    const std::size_t gib = std::size_t{1} << 30;
    BOOST_TEST(error_of([&] { sr::validate(sr::policy::binomial{.segment_bytes = gib - 1}); }).empty());
    BOOST_TEST(error_of([&] { sr::validate(sr::policy::binomial{.segment_bytes = 0}); }).empty());
    const auto what = error_of([&] { sr::validate(sr::policy::two_tree{.segment_bytes = gib}); });
    BOOST_TEST(what.find("segment_bytes") != std::string::npos, what);
    BOOST_TEST(what.find("1 GiB") != std::string::npos, what);
    BOOST_TEST(!error_of([&] { sr::validate(sr::policy::k_ary{.segment_bytes = 5 * gib}); }).empty());
    BOOST_TEST(!error_of([&] { sr::validate(sr::policy::recursive_doubling{.segment_bytes = gib}); }).empty());
    BOOST_TEST(!error_of([&] { sr::validate(sr::policy::split_allgather{.segment_bytes = gib}); }).empty());
    BOOST_TEST(!error_of([&] { sr::validate(sr::policy::grouped{.segment_bytes = gib}); }).empty());
    BOOST_TEST(!error_of([&] {
                    sr::validate(sr::policy::reduce_broadcast<sr::policy::binomial>{.broadcast_segment_bytes = gib});
                }).empty());
    BOOST_TEST(!error_of([&] {
                    sr::validate(sr::policy::reduce_broadcast<sr::policy::chain>{.tree = {.segment_bytes = gib}});
                }).empty());
    // every schedule built refuses it too (reduce builds one on every rank alike)
    BOOST_TEST(!error_of([&] { sr::detail::make_schedule({}, 100, 8, gib, sr::wire::adaptive); }).empty());
}

BOOST_AUTO_TEST_CASE(error_texts_have_one_prefix)
{
    const auto first = error_of([] { sr::detail::fail("inner problem"); });
    BOOST_TEST(first == "sparse_reduce: inner problem");
    const auto passed_on = error_of([&] { sr::detail::fail(first); });
    BOOST_TEST(passed_on == "sparse_reduce: inner problem");
    BOOST_TEST(sr::detail::unprefixed("sparse_reduce: sparse_reduce: x") == "x");
    // the tuning reader's text, passed on the way reduce's plan passes it
    std::istringstream bad("alpha = x\n");
    const auto parsed = error_of([&] { sr::parse_tuning(bad, "t.txt"); });
    BOOST_TEST(one_prefix(parsed), parsed);
    const auto again = error_of([&] { sr::detail::fail(parsed); });
    BOOST_TEST(one_prefix(again), again);
    BOOST_TEST(again.find("t.txt:1") != std::string::npos, again);
}

BOOST_AUTO_TEST_CASE(current_exception_text_of_anything)
{
    std::string text;
    try {
        throw 42;
    } catch (...) {
        text = sr::detail::current_exception_text();
    }
    BOOST_TEST(text.find("not derived from std::exception") != std::string::npos, text);
    try {
        throw std::runtime_error("boom");
    } catch (...) {
        text = sr::detail::current_exception_text();
    }
    BOOST_TEST(text == "boom");
}

BOOST_AUTO_TEST_CASE(make_op_value_type_is_the_identity_type_or_named)
{
    const auto f = [](double a, double b) { return a + b; };
    const auto by_identity = sr::make_op(f, 0.0, sr::commutative);
    const auto named = sr::make_op<double>(f, 0, sr::commutative);
    static_assert(std::is_same_v<decltype(by_identity)::value_type, double>);
    static_assert(std::is_same_v<decltype(named)::value_type, double>);
    static_assert(sr::associative_op<decltype(named), double>);
    BOOST_TEST(named(0.5, 0.25) == 0.75);
    BOOST_TEST(sr::identity<double>(named) == 0.0);
    // an op over int still works on int data
    const auto ints = sr::make_op([](int a, int b) { return a + b; }, 0, sr::commutative);
    static_assert(sr::associative_op<decltype(ints), int>);
    BOOST_TEST(ints(2, 3) == 5);
}

// std::greater<> against interpolate's operator<: the probe must still land
// strictly inside the bracket (before the fix it fell back to lo's key).
BOOST_AUTO_TEST_CASE(probe_inside_a_descending_bracket)
{
    sr::detail::bracket<std::int64_t> b;
    b.lo = {1000000, 0};
    b.hi = {-1000000, 80000};
    b.clo = 0;
    b.chi = 80000;
    b.target = 20000;
    const auto p = sr::detail::next_probe(b, 80000, std::greater<>{}, sr::interpolate{});
    BOOST_TEST(p.key < 1000000);
    BOOST_TEST(p.key > -1000000);
    BOOST_TEST(std::abs(p.key - 500000) <= 1); // a quarter of the way down
    BOOST_TEST(!b.done);
    sr::detail::bracket<double> d;
    d.lo = {1.0, 0};
    d.hi = {-1.0, 100};
    d.clo = 0;
    d.chi = 100;
    d.target = 50;
    d.bisect = true;
    const auto q = sr::detail::next_probe(d, 100, std::greater<>{}, sr::interpolate{});
    BOOST_TEST(q.key < 1.0);
    BOOST_TEST(q.key > -1.0);
}

BOOST_AUTO_TEST_SUITE_END()
