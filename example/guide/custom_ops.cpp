// The guide's "Custom operators": a functor with identity(), make_op, a
// non-commutative operation on a struct value type.

#include <sparse_reduce/sparse_reduce.hpp>

#include <algorithm>
#include <numeric>
#include <type_traits>

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
