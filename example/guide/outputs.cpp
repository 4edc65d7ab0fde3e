// The guide's "Reading the result": the same reduction into each kind of
// output (Eigen::SparseVector, index_value_vector, rle_vector, std::vector,
// Eigen dense, std::span), and how to read each one.

#include <sparse_reduce/sparse_reduce.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <vector>

#include "guide.hpp"

namespace sr = sparse_reduce;

namespace {

// Stands for what the application does with the result.
template <class... A>
void use(const A&...)
{
}

} // namespace

namespace guide {

bool outputs(const boost::mpi::communicator& world)
{
    const int me = world.rank(), ranks = world.size();
    const std::size_t n = 1000;
    // Rank r holds 1.0 at index r and 0.5 at index 999: the sum has ranks + 1
    // entries, 1.0 at 0 .. ranks - 1 and 0.5 * ranks at 999.
    Eigen::SparseVector<double> mine(static_cast<Eigen::Index>(n));
    mine.insertBack(me) = 1.0;
    mine.insertBack(999) = 0.5;
    const auto expected = [&](std::size_t i) { return i == 999 ? 0.5 * ranks : i < std::size_t(ranks) ? 1.0 : 0.0; };
    bool ok = true;
    {
        //! [eigen sparse]
        Eigen::SparseVector<double> sum;
        sr::reduce(world, mine, sum, std::plus<>{}, 0);
        if (me == 0) {
            // sum.size(): the dimension; sum.nonZeros(): the stored entries, in increasing index order.
            for (Eigen::SparseVector<double>::InnerIterator it(sum); it; ++it) use(it.index(), it.value());
            // or the two arrays themselves (StorageIndex is int unless you name another):
            const double* values = sum.valuePtr();
            const int* indices = sum.innerIndexPtr();
            for (Eigen::Index k = 0; k < sum.nonZeros(); ++k) use(indices[k], values[k]);
            // sum.coeff(i) reads an absent entry as 0
        }
        //! [eigen sparse]
        if (me == 0) {
            ok &= sum.size() == Eigen::Index(n) && sum.nonZeros() == ranks + 1;
            for (Eigen::SparseVector<double>::InnerIterator it(sum); it; ++it)
                ok &= it.value() == expected(static_cast<std::size_t>(it.index()));
        } else {
            ok &= sum.size() == 0; // not written on the other ranks
        }
    }
    {
        //! [index_value]
        sr::index_value_vector<double> sum; // index type std::uint32_t unless you name another
        sr::reduce(world, mine, sum, std::plus<>{}, 0);
        if (me == 0) {
            // sum.size(): the dimension; sum.nnz(): the stored entries
            const std::span<const std::uint32_t> indices = sum.indices(); // strictly increasing
            const std::span<const double> values = sum.values();         // values[k] is at indices[k]
            for (std::size_t k = 0; k < sum.nnz(); ++k) use(indices[k], values[k]);
        }
        //! [index_value]
        if (me == 0) {
            ok &= sum.size() == n && sum.nnz() == std::size_t(ranks) + 1 && sum.indices().back() == 999;
            for (std::size_t k = 0; k < sum.nnz(); ++k) ok &= sum.values()[k] == expected(sum.indices()[k]);
        } else {
            ok &= sum.size() == 0;
        }
    }
    {
        //! [rle]
        sr::rle_vector<double> sum; // float or double only
        sr::reduce(world, mine, sum, std::plus<>{}, 0);
        if (me == 0) {
            // sum.size(): the dimension; sum.nnz(): the stored values; sum.words(): the encoded stream
            // (runs of the identity are NaN markers). Read it by converting it:
            const std::vector<double> dense = sr::to_dense(sum);                   // 0 where absent
            const sr::index_value_vector<double> entries = sr::to_index_value(sum); // the entries
            use(dense, entries);
        }
        //! [rle]
        if (me == 0) {
            const std::vector<double> dense = sr::to_dense(sum);
            ok &= sum.size() == n && sum.nnz() == std::size_t(ranks) + 1 && dense.size() == n;
            for (std::size_t i = 0; i < n; ++i) ok &= dense[i] == expected(i);
            ok &= sr::to_index_value(sum).nnz() == std::size_t(ranks) + 1;
        } else {
            ok &= sum.size() == 0;
        }
    }
    {
        //! [dense]
        std::vector<double> v;                       // resized to the dimension
        Eigen::VectorXd e;                           // resized too
        std::vector<double> storage(n);              // a std::span, std::array or Eigen::Map must
        std::span<double> s(storage);                // already have the dimension
        sr::reduce(world, mine, v, std::plus<>{}, 0);
        sr::reduce(world, mine, e, std::plus<>{}, 0);
        sr::reduce(world, mine, s, std::plus<>{}, 0);
        // on the root, v[i], e[i] and s[i] hold the sum, and 0 (the identity) where no rank held a value
        //! [dense]
        if (me == 0) {
            ok &= v.size() == n && e.size() == Eigen::Index(n);
            for (std::size_t i = 0; i < n; ++i)
                ok &= v[i] == expected(i) && e[Eigen::Index(i)] == expected(i) && s[i] == expected(i);
        } else {
            ok &= v.empty() && e.size() == 0 && storage == std::vector<double>(n);
        }
    }
    {
        //! [min]
        // Under min an absent entry means +inf: convert with the operation, so the gaps get its identity.
        sr::index_value_vector<double> lowest;
        sr::reduce(world, mine, lowest, sr::min{}, 0);
        if (me == 0) {
            const std::vector<double> dense = sr::to_dense(lowest, sr::min{}); // +inf where no rank held a value
            use(dense);
        }
        //! [min]
        if (me == 0) {
            const std::vector<double> dense = sr::to_dense(lowest, sr::min{});
            ok &= lowest.nnz() == std::size_t(ranks) + 1 && dense.size() == n;
            for (std::size_t i = 0; i < n; ++i)
                ok &= dense[i] == (i == 999 ? 0.5 : i < std::size_t(ranks) ? 1.0
                                                                            : std::numeric_limits<double>::infinity());
        }
    }
    return ok;
}

} // namespace guide
