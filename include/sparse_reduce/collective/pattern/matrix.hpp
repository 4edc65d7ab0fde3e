#pragma once
// Eigen::SparseMatrix in pattern plans (collective/pattern_plan.hpp). A
// matrix of R rows and C columns is a vector of dimension R * C, entry
// (r, c) at r * C + c, so a block of rows [r0, r1) is the range
// [r0 * C, r1 * C), and the sorted support is row-major order:
//
//     support  1  3  5  6        C = 4:  row 0: cols 1 3
//     row      0  0  1  1                row 1: cols 1 2
//
// A pattern and its values are read in place from compressed storage (the
// values are its valuePtr(), in storage order). The result is written as a
// compressed matrix from the support's rows and columns, split once per
// plan: row-major straight (the fold writes its valuePtr()), column-major
// through a permutation from the support's order to the columns'.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <Eigen/SparseCore>

#include "../../error.hpp"
#include "layout.hpp"

namespace sparse_reduce::detail {

template <class M>
struct is_sparse_matrix : std::false_type {};
template <class T, int O, class I>
struct is_sparse_matrix<Eigen::SparseMatrix<T, O, I>> : std::true_type {};
// An Eigen::SparseMatrix (of any options and index type).
template <class M>
concept sparse_matrix = is_sparse_matrix<std::remove_cvref_t<M>>::value;

// The linear index of stored entry q of a compressed matrix, in storage order.
template <class M, class F>
void for_each_stored(const M& m, F&& f)
{
    if (!m.isCompressed()) fail("a pattern plan reads compressed matrices: call makeCompressed() first");
    const auto* outer = m.outerIndexPtr();
    const auto* inner = m.innerIndexPtr();
    const auto cols = static_cast<std::uint64_t>(m.cols());
    for (Eigen::Index k = 0; k < m.outerSize(); ++k)
        for (auto q = outer[k]; q < outer[k + 1]; ++q) {
            const auto r = static_cast<std::uint64_t>(M::IsRowMajor ? k : inner[q]);
            const auto c = static_cast<std::uint64_t>(M::IsRowMajor ? inner[q] : k);
            f(static_cast<std::size_t>(q), r * cols + c);
        }
}

// The pattern of a matrix: its stored entries' linear indices.
template <class M>
std::vector<std::uint64_t> matrix_pattern(const M& m)
{
    std::vector<std::uint64_t> p(static_cast<std::size_t>(m.nonZeros()));
    for_each_stored(m, [&](std::size_t q, std::uint64_t at) { p[q] = at; });
    return p;
}

// The pattern of COO lists (rows i, columns j), as MatSetPreallocationCOO
// takes them.
template <class RI, class CI>
std::vector<std::uint64_t> coo_pattern(std::size_t rows, std::size_t cols, std::span<const RI> i, std::span<const CI> j)
{
    if (i.size() != j.size())
        fail(i.size(), " row indices and ", j.size(), " column indices");
    std::vector<std::uint64_t> p(i.size());
    for (std::size_t k = 0; k < i.size(); ++k) {
        const auto r = static_cast<long double>(i[k]), c = static_cast<long double>(j[k]);
        if (r < 0 || c < 0 || r >= static_cast<long double>(rows) || c >= static_cast<long double>(cols))
            fail("COO entry ", k, " (", r, ", ", c, ") is outside the ", rows, " x ", cols, " matrix");
        p[k] = static_cast<std::uint64_t>(i[k]) * cols + static_cast<std::uint64_t>(j[k]);
    }
    return p;
}

// A matrix's values, checked against the plan: its shape, and its stored
// entries (all of them with check_indices, else their count).
template <class T, class M>
std::span<const T> matrix_values(const pattern_layout& l, const M& m, bool check_indices)
{
    if (l.cols == 0) fail("matrix values need a plan made from a matrix's pattern");
    if (static_cast<std::uint64_t>(m.rows()) != l.rows || static_cast<std::uint64_t>(m.cols()) != l.cols)
        fail("a ", m.rows(), " x ", m.cols(), " matrix for a plan of ", l.rows, " x ", l.cols);
    if (static_cast<std::size_t>(m.nonZeros()) != l.pattern_size())
        fail(m.nonZeros(), " stored entries for a pattern of ", l.pattern_size());
    if (check_indices)
        for_each_stored(m, [&](std::size_t q, std::uint64_t at) {
            if (at != l.pattern[q])
                fail("the matrix's pattern differs from the plan's at stored entry ", q);
        });
    else if (!m.isCompressed())
        fail("a pattern plan reads compressed matrices: call makeCompressed() first");
    return {m.valuePtr(), static_cast<std::size_t>(m.nonZeros())};
}

// The support's rows and columns, made once per plan on the first matrix
// output: row-major starts and columns, and for column-major outputs the
// column starts, rows and the place of each support entry among them.
struct matrix_split {
    // 32-bit, as a support is (pattern/layout.hpp): copied whole into an
    // output whose StorageIndex is 32-bit too
    std::vector<std::uint32_t> row_start, col_start, col, row, place;
    // Each made whole into locals and kept only then: a call that fails
    // half-way (memory) leaves nothing half made for the next.
    void make_row_major(const pattern_layout& l)
    {
        if (!row_start.empty() || l.rows == 0) return;
        const auto& sup = l.support();
        std::vector<std::uint32_t> starts(l.rows + 1, 0), cols(sup.size());
        for (std::size_t k = 0; k < sup.size(); ++k) {
            ++starts[static_cast<std::size_t>(sup[k] / l.cols) + 1];
            cols[k] = static_cast<std::uint32_t>(sup[k] % l.cols);
        }
        for (std::size_t r = 0; r < l.rows; ++r) starts[r + 1] += starts[r];
        col = std::move(cols);
        row_start = std::move(starts);
    }
    void make_col_major(const pattern_layout& l)
    {
        if (!col_start.empty() || l.cols == 0) return;
        make_row_major(l);
        const auto& sup = l.support();
        std::vector<std::uint32_t> starts(l.cols + 1, 0), rows(sup.size()), places(sup.size());
        for (std::size_t k = 0; k < sup.size(); ++k) ++starts[col[k] + 1];
        for (std::size_t c = 0; c < l.cols; ++c) starts[c + 1] += starts[c];
        std::vector<std::uint32_t> next(starts.begin(), starts.end() - 1);
        for (std::size_t r = 0; r < l.rows; ++r)
            for (std::size_t k = row_start[r]; k < row_start[r + 1]; ++k) {
                places[k] = next[col[k]]++;
                rows[places[k]] = static_cast<std::uint32_t>(r);
            }
        row = std::move(rows);
        place = std::move(places);
        col_start = std::move(starts);
    }
};

template <class I>
void copy_indices(const std::vector<std::uint32_t>& from, I* to)
{
    if constexpr (sizeof(I) == 4) std::memcpy(to, from.data(), from.size() * 4); // below 2^31: the same bits
    else std::copy(from.begin(), from.end(), to);
}

// Makes `out` the plan's rows x cols compressed matrix with the support's
// structure and returns where the fold writes: its values (row-major), or
// `staged`, which finish_matrix then places (column-major).
template <class T, class M, class Staged>
T* matrix_output(const pattern_layout& l, M& out, matrix_split& split, Staged& staged)
{
    using I = typename M::StorageIndex;
    const auto& sup = l.support();
    if (l.cols == 0) fail("a matrix output needs a plan made from a matrix's pattern");
    if (l.rows > static_cast<std::uint64_t>(std::numeric_limits<I>::max()) ||
        l.cols > static_cast<std::uint64_t>(std::numeric_limits<I>::max()) ||
        sup.size() > static_cast<std::size_t>(std::numeric_limits<I>::max()))
        fail("the result does not fit the output matrix's StorageIndex");
    if constexpr (M::IsRowMajor) split.make_row_major(l);
    else {
        split.make_col_major(l);
        staged.resize(sup.size());
    }
    // the structure written whole every call: a user may have changed it
    if (out.rows() != static_cast<Eigen::Index>(l.rows) || out.cols() != static_cast<Eigen::Index>(l.cols) ||
        !out.isCompressed())
        out.resize(static_cast<Eigen::Index>(l.rows), static_cast<Eigen::Index>(l.cols));
    out.resizeNonZeros(static_cast<Eigen::Index>(sup.size()));
    copy_indices(M::IsRowMajor ? split.row_start : split.col_start, out.outerIndexPtr());
    copy_indices(M::IsRowMajor ? split.col : split.row, out.innerIndexPtr());
    if constexpr (M::IsRowMajor) return out.valuePtr();
    else return staged.data();
}

// A column-major output's values from the support's order into its own.
template <class M, class Staged>
void finish_matrix(M& out, const matrix_split& split, const Staged& staged)
{
    if constexpr (!M::IsRowMajor)
        for (std::size_t k = 0; k < staged.size(); ++k) out.valuePtr()[split.place[k]] = staged[k];
}

} // namespace sparse_reduce::detail
