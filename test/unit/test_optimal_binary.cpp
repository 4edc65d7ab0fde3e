#include <boost/test/unit_test.hpp>

#include <sparse_reduce/sparse_reduce.hpp>
#include <sparse_reduce/tree/optimal_binary.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <random>
#include <vector>

namespace sr = sparse_reduce;

namespace {

sr::tree from_parents(const std::vector<int>& parent, int top, int destination, bool order_preserving)
{
    sr::tree t;
    t.size = static_cast<int>(parent.size());
    t.parent = parent;
    t.children.assign(parent.size(), {});
    t.self_position.assign(parent.size(), 0);
    for (std::size_t r = 0; r < parent.size(); ++r)
        if (parent[r] >= 0) t.children[static_cast<std::size_t>(parent[r])].push_back(static_cast<int>(r));
    t.top = top;
    t.destination = destination;
    t.order_preserving = order_preserving;
    return t;
}

// Calls f() for every binary tree over p labelled ranks rooted at root.
void for_each_free(int p, int root, std::vector<int>& parent, const std::function<void()>& f)
{
    std::function<void(int)> assign = [&](int r) {
        if (r == p) {
            // at most two children, and every rank reaches the root
            std::vector<int> kids(static_cast<std::size_t>(p), 0);
            for (int x = 0; x < p; ++x)
                if (parent[static_cast<std::size_t>(x)] >= 0 && ++kids[static_cast<std::size_t>(parent[static_cast<std::size_t>(x)])] > 2) return;
            for (int x = 0; x < p; ++x) {
                int y = x, steps = 0;
                while (y != root && steps++ <= p) y = parent[static_cast<std::size_t>(y)];
                if (y != root) return;
            }
            f();
            return;
        }
        if (r == root) {
            parent[static_cast<std::size_t>(r)] = -1;
            assign(r + 1);
            return;
        }
        for (int q = 0; q < p; ++q)
            if (q != r) {
                parent[static_cast<std::size_t>(r)] = q;
                assign(r + 1);
            }
    };
    assign(0);
}

std::vector<double> random_nnz(std::mt19937_64& rng, int p, double dimension)
{
    std::vector<double> n(static_cast<std::size_t>(p));
    for (auto& x : n) {
        const int kind = static_cast<int>(rng() % 4);
        x = kind == 0 ? 0 : kind == 1 ? dimension : std::floor(dimension * std::pow(10.0, -static_cast<double>(rng() % 40) / 10));
    }
    return n;
}

bool close(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b)); }

} // namespace

BOOST_AUTO_TEST_SUITE(optimal_binary)

BOOST_AUTO_TEST_CASE(alphabetic_is_optimal_among_every_binary_tree)
{
    std::mt19937_64 rng(21);
    for (int p = 1; p <= 7; ++p)
        for (int trial = 0; trial < 40; ++trial) {
            const double dim = trial % 2 ? 1e6 : 5000;
            sr::cost_model m;
            m.merge = trial % 3 ? sr::merge_model::uniform : sr::merge_model::disjoint;
            m.alpha = trial % 5 == 0 ? 1e-4 : 2e-6;
            const auto nnz = random_nnz(rng, p, dim);
            const int root = static_cast<int>(rng() % static_cast<unsigned>(p));
            const auto built = sr::optimal_binary_tree(nnz, dim, root, false, {m});
            BOOST_TEST(built.t.order_preserving);
            BOOST_TEST(built.t.destination == root);
            BOOST_TEST(close(sr::modelled_completion_time(built.t, nnz, dim, m), built.cost));
            double best = std::numeric_limits<double>::infinity();
            std::size_t count = 0;
            std::vector<int> parent(static_cast<std::size_t>(p), -1);
            // every in-order tree: each interval picks its root
            std::function<void(std::vector<std::pair<int, int>>, std::vector<int>, int)> expand =
                [&](std::vector<std::pair<int, int>> todo, std::vector<int> ups, int top) {
                    if (todo.empty()) {
                        ++count;
                        best = std::min(best, sr::modelled_completion_time(from_parents(parent, top, root, true), nnz, dim, m));
                        return;
                    }
                    const auto [i, j] = todo.back();
                    const int up = ups.back();
                    todo.pop_back();
                    ups.pop_back();
                    for (int k = i; k <= j; ++k) {
                        parent[static_cast<std::size_t>(k)] = up;
                        auto t2 = todo;
                        auto u2 = ups;
                        if (i <= k - 1) t2.push_back({i, k - 1}), u2.push_back(k);
                        if (k + 1 <= j) t2.push_back({k + 1, j}), u2.push_back(k);
                        expand(t2, u2, up < 0 ? k : top);
                    }
                };
            expand({{0, p - 1}}, {-1}, -1);
            const std::size_t catalan[] = {1, 1, 2, 5, 14, 42, 132, 429};
            BOOST_TEST(count == catalan[p]);
            BOOST_TEST(close(built.cost, best), "P=" << p << " trial " << trial << ": built " << built.cost << " best " << best);
        }
}

BOOST_AUTO_TEST_CASE(free_is_optimal_among_every_binary_tree)
{
    std::mt19937_64 rng(22);
    for (int p = 1; p <= 7; ++p)
        for (int trial = 0; trial < (p <= 5 ? 30 : 4); ++trial) {
            const double dim = trial % 2 ? 1e6 : 5000;
            sr::cost_model m;
            m.merge = trial % 3 ? sr::merge_model::uniform : sr::merge_model::disjoint;
            const auto nnz = random_nnz(rng, p, dim);
            const int root = static_cast<int>(rng() % static_cast<unsigned>(p));
            const auto built = sr::optimal_binary_tree(nnz, dim, root, true, {m});
            BOOST_TEST(built.t.top == root);
            BOOST_TEST(close(sr::modelled_completion_time(built.t, nnz, dim, m), built.cost));
            double best = std::numeric_limits<double>::infinity();
            std::vector<int> parent(static_cast<std::size_t>(p), -1);
            for_each_free(p, root, parent, [&] {
                best = std::min(best, sr::modelled_completion_time(from_parents(parent, root, root, false), nnz, dim, m));
            });
            BOOST_TEST(close(built.cost, best), "P=" << p << " trial " << trial << ": built " << built.cost << " best " << best);
        }
}

// Every rank reached once from the top, at most two children, and (for
// alphabetic trees) the fold order is rank order.
std::string problems(const sr::tree& t, int root)
{
    if (t.destination != root) return "destination";
    std::vector<int> order, seen(static_cast<std::size_t>(t.size), 0);
    std::function<bool(int)> visit = [&](int r) {
        if (seen[static_cast<std::size_t>(r)]++) return false;
        const auto v = t.local(r);
        if (v.children.size() > 2) return false;
        for (std::size_t k = 0; k <= v.children.size(); ++k) {
            if (static_cast<int>(k) == v.self_position) order.push_back(r);
            if (k < v.children.size() && (t.parent[static_cast<std::size_t>(v.children[k])] != r || !visit(v.children[k])))
                return false;
        }
        return true;
    };
    if (!visit(t.top)) return "structure";
    for (int r = 0; r < t.size; ++r)
        if (seen[static_cast<std::size_t>(r)] != 1) return "unreached rank";
    if (t.order_preserving)
        for (int r = 0; r < t.size; ++r)
            if (order[static_cast<std::size_t>(r)] != r) return "fold order";
    return "";
}

BOOST_AUTO_TEST_CASE(every_p_up_to_130_and_roots)
{
    std::mt19937_64 rng(24);
    for (int p = 1; p <= 130; ++p) {
        const auto nnz = random_nnz(rng, p, 1e5);
        const std::vector<int> roots = p <= 40 ? [p] { std::vector<int> r(static_cast<std::size_t>(p)); std::iota(r.begin(), r.end(), 0); return r; }()
                                               : std::vector<int>{0, p / 2, p - 1};
        for (int root : roots)
            for (bool commutative : {true, false}) {
                const auto built = sr::optimal_binary_tree(nnz, 1e5, root, commutative);
                const std::string why = problems(built.t, root);
                if (!why.empty()) BOOST_ERROR("P=" << p << " root=" << root << " commutative=" << commutative << ": " << why);
                if (!commutative && !built.t.order_preserving) BOOST_ERROR("P=" << p << ": alphabetic tree without rank order");
                if (commutative && built.t.top != root) BOOST_ERROR("P=" << p << ": free tree not topped by the root");
            }
    }
}

BOOST_AUTO_TEST_CASE(large_p_builds_valid_trees)
{
    std::mt19937_64 rng(23);
    for (int p : {11, 64, 300, 1000}) {
        const auto nnz = random_nnz(rng, p, 1e6);
        for (bool commutative : {true, false}) {
            const int root = p / 3;
            const auto built = sr::optimal_binary_tree(nnz, 1e6, root, commutative);
            BOOST_TEST(built.t.destination == root);
            std::vector<int> seen(static_cast<std::size_t>(p), 0);
            for (int r = 0; r < p; ++r) {
                BOOST_TEST(built.t.children[static_cast<std::size_t>(r)].size() <= 2u);
                int y = r, steps = 0;
                while (built.t.parent[static_cast<std::size_t>(y)] >= 0 && steps++ <= p) y = built.t.parent[static_cast<std::size_t>(y)];
                BOOST_TEST(y == built.t.top);
            }
            BOOST_TEST(close(sr::modelled_completion_time(built.t, nnz, 1e6, {}), built.cost));
            BOOST_TEST(problems(built.t, root).empty(), "P=" << p << ": " << problems(built.t, root));
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
