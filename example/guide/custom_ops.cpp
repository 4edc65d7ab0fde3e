// The guide's "Custom operators": a functor with identity(), make_op, the
// identity contract, a non-commutative operation on a struct value type.

#include <sparse_reduce/sparse_reduce.hpp>

#include <boost/mpi/collectives.hpp>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "guide.hpp"

namespace sr = sparse_reduce;

//! [functor]
// Counts that saturate at a cap. Absent entries are 0, the identity.
struct saturating_add {
    int cap = 255;
    int identity() const { return 0; }
    int operator()(int a, int b) const { return std::min(a + b, cap); }
};
// Declared commutative (the default is not): the trees may then be rotated onto any root.
template <>
struct sparse_reduce::is_commutative<saturating_add, int> : std::true_type {};
//! [functor]

//! [struct]
// A 2x2 matrix: a value type of four doubles. Products do not commute.
struct mat2 {
    double a = 1, b = 0, c = 0, d = 1; // the unit matrix: the identity of the product
    friend bool operator==(const mat2&, const mat2&) = default; // needed: its members are doubles
};
mat2 operator*(const mat2& x, const mat2& y)
{
    return {x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c, x.c * y.b + x.d * y.d};
}
static_assert(std::is_trivially_copyable_v<mat2> && alignof(mat2) <= 8);
//! [struct]

namespace guide {

bool custom_ops(const boost::mpi::communicator& world)
{
    const int me = world.rank(), ranks = world.size();
    bool ok = true;
    {
        //! [functor use]
        std::vector<int> hits(1000, 0), total; // dense: the zeros stay off the wire
        hits[me] = 200;
        hits[999] = 100;
        sr::reduce(world, hits, total, saturating_add{}, 0);
        // on rank 0: total[999] == min(100 * ranks, 255)
        //! [functor use]
        if (me == 0) ok &= total.size() == 1000 && total[999] == std::min(100 * ranks, 255) && total[0] == 200;
    }
    {
        //! [make_op]
        // gcd is commutative and gcd(0, x) = x: 0 is its identity.
        const auto gcd = sr::make_op([](long a, long b) { return std::gcd(a, b); }, 0L, sr::commutative);
        sr::index_value_vector<long> mine(100), out;
        mine.push_back(42, 6L * (me + 1)); // 6, 12, 18, ...: the gcd is 6
        sr::reduce(world, mine, out, gcd, 0);
        //! [make_op]
        if (me == 0) ok &= out.nnz() == 1 && out.indices()[0] == 42 && out.values()[0] == 6;
    }
    {
        // Signed data: rank 1 alone holds -7 at index 3; every rank holds 2 at index 5.
        std::vector<double> x(8, 0.0), out;
        if (me == 1) x[3] = -7.0;
        x[5] = 2.0;
        //! [identity fixed]
        // The largest magnitude. 0 is an identity of max(a, b) for a, b >= 0 only, so reduce |x|:
        std::vector<double> magnitude(x.size());
        std::transform(x.begin(), x.end(), magnitude.begin(), [](double v) { return std::abs(v); });
        const auto largest = sr::make_op([](double a, double b) { return std::max(a, b); }, 0.0, sr::commutative);
        sr::reduce(world, magnitude, out, largest, 0); // on rank 0: out[3] == 7
        // For the largest signed value, a max whose identity is -inf: sr::max (or make_op with
        // -std::numeric_limits<double>::infinity(), std::numeric_limits<T>::lowest() for integers).
        //! [identity fixed]
        // MPI_Reduce of the same dense data with max(|a|, |b|) (Boost.MPI builds the MPI_Op).
        std::vector<double> mpi(x.size(), 0.0);
        const auto abs_max = [](double a, double b) { return std::max(std::abs(a), std::abs(b)); };
        if (me == 0) boost::mpi::reduce(world, x.data(), int(x.size()), mpi.data(), abs_max, 0);
        else boost::mpi::reduce(world, x.data(), int(x.size()), abs_max, 0);
        if (me == 0) ok &= (ranks < 2 || (out[3] == 7.0 && mpi[3] == 7.0)) && out[5] == 2.0 && out == mpi;

        std::string text;
        //! [identity broken]
        // Wrong: 0 is not an identity of max(|a|, |b|) on signed data: op(0, -7) = 7, not -7.
        const auto abs_max_op = sr::make_op([](double a, double b) { return std::max(std::abs(a), std::abs(b)); },
                                            0.0, sr::commutative);
        try {
            sr::reduce(world, x, out, abs_max_op, 0); // unchecked, rank 0 would receive -7 at index 3
        } catch (const sr::error& e) {
            // on rank 1 (it holds the -7) and on the root: "sparse_reduce: reduce failed on rank 1: make_op's
            // identity 0 is not an identity of the operation: op(0, -7) = 7, not -7 (...)"
            std::cerr << e.what() << '\n';
            //! [identity broken]
            text = e.what();
            //! [identity broken]
        }
        //! [identity broken]
        const bool should_throw = ranks >= 2 && (me == 0 || me == 1);
        ok &= should_throw == !text.empty() &&
              (text.empty() || text.find("op(0, -7) = 7, not -7") != std::string::npos);
    }
    {
        //! [non-commutative]
        const auto product = sr::make_op([](const mat2& x, const mat2& y) { return x * y; }, mat2{},
                                         sr::non_commutative);
        // Rank r holds the map x -> (r + 2) x + 1 at index 7; rank 0 gets M_0 M_1 ... M_{P-1}.
        sr::index_value_vector<mat2> mine(16), out;
        mine.push_back(7, mat2{double(me + 2), 1, 0, 1});
        sr::reduce(world, mine, out, product, 0, sr::policy::binary{}); // any policy: rank order is kept
        //! [non-commutative]
        if (me == 0) {
            mat2 serial{};
            for (int r = 0; r < ranks; ++r) serial = serial * mat2{double(r + 2), 1, 0, 1};
            ok &= out.nnz() == 1 && out.indices()[0] == 7 && out.values()[0] == serial;
        }
    }
    return ok;
}

} // namespace guide
