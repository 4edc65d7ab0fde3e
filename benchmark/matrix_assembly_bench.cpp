// Distributed sparse matrix assembly: the P1 (linear triangle) matrix of
// -Δu + u on an n x n grid of nodes, every grid square split into two
// triangles, as a finite-element code assembles its system matrix on a fixed
// mesh. PETSc's MatSetValues + MatAssembly and its COO assembly against
// SparseReduce's fixed-pattern plan.
//
//   mpiexec -n P matrix_assembly_bench [--n N] [--reps R] [--warmup W] [--csv FILE]
//                                      [--smoke] [PETSc options]
//
// Node id gy * n + gx. Rank r owns the node rows of the grid rows
// block_ranges(n, P)[r] to [r + 1] and holds the elements of the squares whose
// lower grid row lies there: those of its last grid row add into the next
// rank's first (off-process entries along every partition boundary, as in a
// real mesh). Element e adds s_e (K_e + M_e) at its three nodes, K_e and M_e
// the P1 stiffness and mass matrices and s_e in [0.5, 1.5) a hash of e, so
// that every entry is nonzero and a value folded twice, lost or put in
// another slot shows. The COO lists of a rank: the 9 (row, col) pairs of each
// of its elements in element order, row-major, repeats across elements
// (every implementation sums them); the values are the same in every call.
// Rows:
//   PETSc MatSetValues + MatAssembly  a MATAIJ of MatCreateAIJ (exact
//                                     preallocation), per call MatZeroEntries,
//                                     one MatSetValues(ADD_VALUES) of 3 x 3
//                                     per element, MatAssemblyBegin/End
//   PETSc MatSetValuesCOO             MatSetPreallocationCOO once, per call
//                                     MatSetValuesCOO(INSERT_VALUES): each
//                                     entry becomes the sum of its values
//   pattern_plan (COO)                make_pattern_plan over the COO lists
//                                     once, rows scattered by the owners'
//                                     node ranges, per call its reduce into
//                                     a RowMajor Eigen::SparseMatrix
// The rows take turns repetition by repetition in an order shuffled per
// repetition (the same on every rank), each timed as the slowest rank's
// after a barrier; the ratio is the median over repetitions of the row's
// time over the faster PETSc row's (the lower median) in the same
// repetition. After the timing every rank checks each row's owned rows
// against a serial sum of the elements that touch them (same columns,
// values within relative 1e-12), so the rows agree with each other; a
// mismatch names the row and the matrix row and makes the exit status 1.
// One-time setups (matrix creation and preallocation, the plan) are timed
// once and printed, not part of the rows. Bytes: the plan's reports'
// bytes_sent summed over ranks.

#include <sparse_reduce/sparse_reduce.hpp>

#include "options.hpp"
#include "petsc_session.hpp"
#include "timing.hpp"

#include <boost/mpi.hpp>

#ifdef SPARSE_REDUCE_HAVE_PETSC
#include <petscmat.h>
#endif

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mpi = boost::mpi;
namespace sr = sparse_reduce;
namespace sb = sparse_reduce::bench;

namespace {

#ifdef SPARSE_REDUCE_HAVE_PETSC
// a code that assembles into PETSc holds its indices as PetscInt
using gidx = PetscInt;
#else
using gidx = std::int64_t;
#endif

struct options : sb::cell_options { // its dimension and densities unused: the mesh is n x n
    std::size_t n = 1001;
};

options parse(int argc, char** argv)
{
    options o;
    o.reps = 10;
    o.warmup = 2;
    sb::parse_cell_options(argc, argv, o, 1, [&](const std::string& a, const auto& next) {
        if (a == "--n") o.n = std::stoull(next());
    });
    if (o.smoke) o.n = 41;
    return o;
}

// s_e in [0.5, 1.5): splitmix64 of the element's global id
double element_scale(std::uint64_t e)
{
    std::uint64_t z = e + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return 0.5 + static_cast<double>(z >> 11) * 0x1.0p-53;
}

// K + M of a P1 triangle at (x[i], y[i]), row-major
std::array<double, 9> p1_element(const std::array<double, 3>& x, const std::array<double, 3>& y)
{
    std::array<double, 3> b{}, c{};
    for (int i = 0; i < 3; ++i) {
        b[i] = y[(i + 1) % 3] - y[(i + 2) % 3];
        c[i] = x[(i + 2) % 3] - x[(i + 1) % 3];
    }
    const double area = std::abs(b[0] * c[1] - b[1] * c[0]) / 2;
    std::array<double, 9> k{};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) k[i * 3 + j] = (b[i] * b[j] + c[i] * c[j]) / (4 * area) + area / 12 * (i == j ? 2 : 1);
    return k;
}

// The squares [gy0, gy1) x [0, n - 1), two triangles each: f(element id,
// nodes, 3 x 3 values)
template <class F>
void for_each_element(std::size_t n, std::size_t gy0, std::size_t gy1, F&& f)
{
    // the two shapes, nodes (a, b, d) and (a, d, c) of the square a = (0, 0),
    // b = (1, 0), c = (0, 1), d = (1, 1)
    const auto lower = p1_element({0, 1, 1}, {0, 0, 1});
    const auto upper = p1_element({0, 1, 0}, {0, 1, 1});
    for (std::size_t gy = gy0; gy < gy1; ++gy)
        for (std::size_t gx = 0; gx + 1 < n; ++gx) {
            const std::size_t a = gy * n + gx, b = a + 1, c = a + n, d = c + 1;
            const std::uint64_t e = 2 * (gy * (n - 1) + gx);
            f(e, std::array<std::size_t, 3>{a, b, d}, lower);
            f(e + 1, std::array<std::size_t, 3>{a, d, c}, upper);
        }
}

// A rank's rows [lo, hi) in CSR, columns ascending: what every row is checked on
struct owned_rows {
    std::vector<std::size_t> ptr{0};
    std::vector<std::int64_t> col;
    std::vector<double> val;
};

// The reference: the elements that touch [lo, hi) summed row by row, in the
// 7-point stencil's slots (the columns a P1 node on this mesh couples to)
owned_rows reference_rows(std::size_t n, std::size_t gy0, std::size_t gy1)
{
    const std::size_t lo = gy0 * n, hi = gy1 * n;
    const auto nn = static_cast<std::int64_t>(n);
    const std::array<std::int64_t, 7> offset{-nn - 1, -nn, -1, 0, 1, nn, nn + 1};
    std::vector<double> sum(7 * (hi - lo), 0.0);
    std::vector<char> present(7 * (hi - lo), 0);
    for_each_element(n, gy0 > 0 ? gy0 - 1 : 0, std::min(gy1, n - 1), [&](std::uint64_t e, const auto& v, const auto& k) {
        const double s = element_scale(e);
        for (int i = 0; i < 3; ++i) {
            if (v[i] < lo || v[i] >= hi) continue;
            for (int j = 0; j < 3; ++j) {
                const auto d = static_cast<std::int64_t>(v[j]) - static_cast<std::int64_t>(v[i]);
                const auto slot = static_cast<std::size_t>(std::find(offset.begin(), offset.end(), d) - offset.begin());
                sum[7 * (v[i] - lo) + slot] += s * k[i * 3 + j];
                present[7 * (v[i] - lo) + slot] = 1;
            }
        }
    });
    owned_rows r;
    for (std::size_t row = lo; row < hi; ++row) {
        for (std::size_t slot = 0; slot < 7; ++slot)
            if (present[7 * (row - lo) + slot]) {
                r.col.push_back(static_cast<std::int64_t>(row) + offset[slot]);
                r.val.push_back(sum[7 * (row - lo) + slot]);
            }
        r.ptr.push_back(r.col.size());
    }
    return r;
}

// The first local row where got differs from want, or -1
std::int64_t first_difference(const owned_rows& got, const owned_rows& want)
{
    if (got.ptr.size() != want.ptr.size()) return 0;
    for (std::size_t i = 0; i + 1 < want.ptr.size(); ++i) {
        const std::size_t b = want.ptr[i], e = want.ptr[i + 1];
        if (got.ptr[i] != b || got.ptr[i + 1] != e) return static_cast<std::int64_t>(i);
        for (std::size_t k = b; k < e; ++k)
            if (got.col[k] != want.col[k] ||
                std::abs(got.val[k] - want.val[k]) > 1e-12 * std::max(std::abs(got.val[k]), std::abs(want.val[k])))
                return static_cast<std::int64_t>(i);
    }
    return -1;
}

#ifdef SPARSE_REDUCE_HAVE_PETSC
// One PETSc matrix: it lives across the repetitions, as in a time loop.
struct petsc_matrix {
    Mat a = nullptr;
    petsc_matrix() = default;
    petsc_matrix(const petsc_matrix&) = delete;
    petsc_matrix& operator=(const petsc_matrix&) = delete;
    ~petsc_matrix() { MatDestroy(&a); }

    // rows [lo, hi); empty when PETSc's ownership is not [lo, hi)
    owned_rows rows(std::size_t lo, std::size_t hi) const
    {
        PetscInt first = 0, end = 0;
        PetscCallAbort(PETSC_COMM_WORLD, MatGetOwnershipRange(a, &first, &end));
        if (static_cast<std::size_t>(first) != lo || static_cast<std::size_t>(end) != hi) return {};
        owned_rows r;
        for (PetscInt row = first; row < end; ++row) {
            PetscInt nc = 0;
            const PetscInt* cols = nullptr;
            const PetscScalar* vals = nullptr;
            PetscCallAbort(PETSC_COMM_WORLD, MatGetRow(a, row, &nc, &cols, &vals));
            r.col.insert(r.col.end(), cols, cols + nc);
            r.val.insert(r.val.end(), vals, vals + nc);
            PetscCallAbort(PETSC_COMM_WORLD, MatRestoreRow(a, row, &nc, &cols, &vals));
            r.ptr.push_back(r.col.size());
        }
        return r;
    }
};
#endif

using row_major = Eigen::SparseMatrix<double, Eigen::RowMajor, int>;

// rows [lo, hi) of the plan's result; empty when it is not N x N, not
// compressed or holds an entry outside them
owned_rows rows_of(const row_major& m, std::size_t dim, std::size_t lo, std::size_t hi)
{
    if (static_cast<std::size_t>(m.rows()) != dim || static_cast<std::size_t>(m.cols()) != dim || !m.isCompressed()) return {};
    owned_rows r;
    for (std::size_t row = lo; row < hi; ++row) {
        for (row_major::InnerIterator it(m, static_cast<Eigen::Index>(row)); it; ++it) {
            r.col.push_back(it.col());
            r.val.push_back(it.value());
        }
        r.ptr.push_back(r.col.size());
    }
    if (r.col.size() != static_cast<std::size_t>(m.nonZeros())) return {};
    return r;
}

// f() once, collectively: the slowest rank's seconds
double once(MPI_Comm comm, const std::function<void()>& f) { return sb::time_collective(comm, 0, 1, f).median; }

} // namespace

int main(int argc, char** argv)
{
    mpi::environment env(argc, argv);
#ifdef SPARSE_REDUCE_HAVE_PETSC
    sb::petsc_session petsc(argc, argv);
#endif
    mpi::communicator world;
    const options o = parse(argc, argv);
    const int P = world.size(), me = world.rank();
    const std::size_t n = o.n, N = n * n;
    if (n < 2) {
        if (me == 0) std::fprintf(stderr, "matrix_assembly_bench: --n must be at least 2\n");
        return 2;
    }
    if (N > static_cast<std::size_t>(std::numeric_limits<gidx>::max()) || N > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
        if (me == 0) std::fprintf(stderr, "matrix_assembly_bench: n * n = %zu exceeds the index types\n", N);
        return 2;
    }
    const auto grid_rows = sr::block_ranges(n, P);
    std::vector<std::size_t> row_ranges;
    for (const std::size_t g : grid_rows) row_ranges.push_back(g * n);
    const std::size_t gy0 = grid_rows[static_cast<std::size_t>(me)], gy1 = grid_rows[static_cast<std::size_t>(me) + 1];
    const std::size_t lo = gy0 * n, hi = gy1 * n;

    // this rank's elements: their nodes (for MatSetValues), COO lists and values
    std::vector<gidx> nodes, coo_i, coo_j;
    std::vector<double> v;
    for_each_element(n, gy0, std::min(gy1, n - 1), [&](std::uint64_t e, const auto& nd, const auto& k) {
        const double s = element_scale(e);
        for (int i = 0; i < 3; ++i) {
            nodes.push_back(static_cast<gidx>(nd[i]));
            for (int j = 0; j < 3; ++j) {
                coo_i.push_back(static_cast<gidx>(nd[i]));
                coo_j.push_back(static_cast<gidx>(nd[j]));
                v.push_back(s * k[i * 3 + j]);
            }
        }
    });
    const std::size_t ncoo = coo_i.size();
    const std::size_t off_process = static_cast<std::size_t>(std::count_if(
        coo_i.begin(), coo_i.end(), [&](gidx i) { return static_cast<std::size_t>(i) < lo || static_cast<std::size_t>(i) >= hi; }));
    const std::size_t coo_min = mpi::all_reduce(world, ncoo, mpi::minimum<std::size_t>());
    const std::size_t coo_max = mpi::all_reduce(world, ncoo, mpi::maximum<std::size_t>());
    const std::size_t off_total = mpi::all_reduce(world, off_process, std::plus<>{});

    struct row {
        std::string name;
        std::function<void()> call;
        std::function<owned_rows()> result;
        std::string setup_name;
        double setup = 0; // seconds, once
        bool petsc = false;
        std::function<double()> bytes; // collective; empty: not reported
        double first = 0; // the first call's seconds
    };
    std::vector<row> rows;

#ifdef SPARSE_REDUCE_HAVE_PETSC
    // MatSetValues: exact preallocation, counted on the stencil's columns
    petsc_matrix by_values;
    {
        std::vector<PetscInt> d_nnz(hi - lo), o_nnz(hi - lo);
        const auto nn = static_cast<std::int64_t>(n);
        for (std::size_t row = lo; row < hi; ++row) {
            const auto gx = static_cast<std::int64_t>(row % n), gy = static_cast<std::int64_t>(row / n);
            static constexpr std::array<std::array<std::int64_t, 2>, 7> stencil{{{-1, -1}, {0, -1}, {-1, 0}, {0, 0}, {1, 0}, {0, 1}, {1, 1}}};
            for (const auto [dx, dy] : stencil) {
                if (gx + dx < 0 || gx + dx >= nn || gy + dy < 0 || gy + dy >= nn) continue;
                const auto cy = static_cast<std::size_t>(gy + dy);
                ++(cy >= gy0 && cy < gy1 ? d_nnz : o_nnz)[row - lo];
            }
        }
        const double t = once(world, [&] {
            PetscCallAbort(PETSC_COMM_WORLD, MatCreateAIJ(PETSC_COMM_WORLD, static_cast<PetscInt>(hi - lo), static_cast<PetscInt>(hi - lo),
                                                          static_cast<PetscInt>(N), static_cast<PetscInt>(N), 0, d_nnz.data(), 0,
                                                          o_nnz.data(), &by_values.a));
            PetscCallAbort(PETSC_COMM_WORLD, MatSetOption(by_values.a, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
        });
        rows.push_back({"PETSc MatSetValues + MatAssembly",
                        [&] {
                            PetscCallAbort(PETSC_COMM_WORLD, MatZeroEntries(by_values.a));
                            for (std::size_t e = 0; e < nodes.size() / 3; ++e)
                                PetscCallAbort(PETSC_COMM_WORLD,
                                               MatSetValues(by_values.a, 3, &nodes[3 * e], 3, &nodes[3 * e], &v[9 * e], ADD_VALUES));
                            PetscCallAbort(PETSC_COMM_WORLD, MatAssemblyBegin(by_values.a, MAT_FINAL_ASSEMBLY));
                            PetscCallAbort(PETSC_COMM_WORLD, MatAssemblyEnd(by_values.a, MAT_FINAL_ASSEMBLY));
                        },
                        [&] { return by_values.rows(lo, hi); }, "MatCreateAIJ, exact preallocation", t, true, {}});
    }
    // COO: PETSc is given copies of the lists (its documentation lets it
    // reorder them), made before the timed setup
    petsc_matrix by_coo;
    {
        std::vector<PetscInt> ci(coo_i), cj(coo_j);
        const double t = once(world, [&] {
            PetscCallAbort(PETSC_COMM_WORLD, MatCreate(PETSC_COMM_WORLD, &by_coo.a));
            PetscCallAbort(PETSC_COMM_WORLD, MatSetSizes(by_coo.a, static_cast<PetscInt>(hi - lo), static_cast<PetscInt>(hi - lo),
                                                         static_cast<PetscInt>(N), static_cast<PetscInt>(N)));
            PetscCallAbort(PETSC_COMM_WORLD, MatSetType(by_coo.a, MATAIJ));
            PetscCallAbort(PETSC_COMM_WORLD, MatSetPreallocationCOO(by_coo.a, static_cast<PetscCount>(ncoo), ci.data(), cj.data()));
        });
        rows.push_back({"PETSc MatSetValuesCOO",
                        [&] { PetscCallAbort(PETSC_COMM_WORLD, MatSetValuesCOO(by_coo.a, v.data(), INSERT_VALUES)); },
                        [&] { return by_coo.rows(lo, hi); }, "MatSetPreallocationCOO", t, true, {}});
    }
#endif
    using plan_type = decltype(sr::make_pattern_plan<double>(world, N, N, coo_i, coo_j, sr::pattern_target::scatter(row_ranges)));
    std::optional<plan_type> plan;
    const double plan_setup = once(world, [&] {
        plan.emplace(sr::make_pattern_plan<double>(world, N, N, coo_i, coo_j, sr::pattern_target::scatter(row_ranges)));
    });
    row_major plan_out;
    sr::report plan_report;
    rows.push_back({"pattern_plan (COO)", [&] { plan_report = plan->reduce(std::span<const double>(v), plan_out, std::plus<>{}); },
                    [&] { return rows_of(plan_out, N, lo, hi); }, "make_pattern_plan", plan_setup, false,
                    [&] { return mpi::all_reduce(world, static_cast<double>(plan_report.bytes_sent), std::plus<>{}); }});
    if (rows.empty()) {
        if (me == 0)
            std::printf("matrix_assembly_bench: no rows\n");
        return 0;
    }

    // the first call apart, informative: PETSc's first assembly builds the
    // off-process columns' scatter
    for (auto& r : rows) r.first = once(world, r.call);
    std::vector<std::function<void()>> calls;
    for (const auto& r : rows) calls.push_back(r.call);
    const auto t = sb::time_rounds(world, o.warmup, o.reps, calls);

    // the base of the ratios: the PETSc row with the lower median, else the first row
    std::size_t base = 0;
    for (std::size_t k = 0; k < rows.size(); ++k)
        if (rows[k].petsc && (!rows[base].petsc || sb::summarize(t[k]).median < sb::summarize(t[base]).median)) base = k;

    // every rank checks its rows of every implementation against the serial sum
    const owned_rows want = reference_rows(n, gy0, gy1);
    std::vector<int> ok(rows.size());
    for (std::size_t k = 0; k < rows.size(); ++k) {
        const std::int64_t at = first_difference(rows[k].result(), want);
        if (at >= 0)
            std::fprintf(stderr, "matrix_assembly_bench: MISMATCH in row '%s' at matrix row %zu (rank %d)\n", rows[k].name.c_str(),
                         lo + static_cast<std::size_t>(at), me);
        ok[k] = mpi::all_reduce(world, static_cast<int>(at < 0), mpi::minimum<int>());
    }
    std::vector<double> bytes;
    for (const auto& r : rows) bytes.push_back(r.bytes ? r.bytes() : -1); // collective for the plan's

    int bad = 0;
    std::FILE* csv = nullptr;
    if (me == 0 && !o.csv.empty()) {
        csv = std::fopen(o.csv.c_str(), "w");
        if (csv) std::fprintf(csv, "P,n,unknowns,coo_per_rank_max,row,setup_ms,min_ms,median_ms,max_ms,bytes,ratio_to,ratio,ok\n");
    }
    if (me == 0) {
        std::printf("\n### P = %d, n = %zu (%zu unknowns), %zu elements, %d repetitions\n\n", P, n, N, 2 * (n - 1) * (n - 1), o.reps);
        std::printf("COO entries per rank: %zu to %zu; off-process, all ranks: %zu\n", coo_min, coo_max, off_total);
        std::printf("one-time setup, slowest rank (then the row's first call):\n");
        for (const auto& r : rows)
            std::printf("  %-34s %9.2f ms  (%s: first call %.2f ms)\n", r.setup_name.c_str(), r.setup * 1e3, r.name.c_str(),
                        r.first * 1e3);
        std::printf("\n");
        std::printf("| %-34s | %9s | %9s | %9s | %10s | %12s |\n", "row", "median ms", "min ms", "max ms",
                    rows[base].petsc ? "vs PETSc" : "ratio", "bytes");
        std::printf("|%s|----------:|----------:|----------:|-----------:|-------------:|\n", std::string(36, '-').c_str());
    }
    for (std::size_t k = 0; k < rows.size(); ++k) {
        std::vector<double> ratio;
        for (std::size_t i = 0; i < t[k].size(); ++i) ratio.push_back(t[base][i] > 0 ? t[k][i] / t[base][i] : 0);
        const auto s = sb::summarize(t[k]);
        const double r = sb::summarize(ratio).median;
        bad += !ok[k];
        if (me != 0) continue;
        const std::string b = bytes[k] < 0 ? "" : std::to_string(static_cast<long long>(bytes[k]));
        std::printf("| %-34s | %9.3f | %9.3f | %9.3f | %9.2fx | %12s |%s\n", rows[k].name.c_str(), s.median * 1e3, s.min * 1e3,
                    s.max * 1e3, r, b.empty() ? "-" : b.c_str(), ok[k] ? "" : " MISMATCH");
        if (csv)
            std::fprintf(csv, "%d,%zu,%zu,%zu,\"%s\",%.3f,%.6f,%.6f,%.6f,%s,\"%s\",%.4f,%d\n", P, n, N, coo_max, rows[k].name.c_str(),
                         rows[k].setup * 1e3, s.min * 1e3, s.median * 1e3, s.max * 1e3, b.c_str(), rows[base].name.c_str(), r,
                         ok[k]);
    }
    if (csv) std::fclose(csv);
    if (me == 0) std::printf("\n%s: %zu rows, %d mismatching\n", o.smoke ? "smoke" : "done", rows.size(), bad);
    return bad ? 1 : 0;
}
