#include <boost/test/unit_test.hpp>

#include <sparse_reduce/sparse_reduce.hpp>

#include <functional>
#include <string>
#include <vector>

namespace sr = sparse_reduce;

namespace {

int ceil_log2(int p)
{
    int d = 0;
    while ((1 << d) < p) ++d;
    return d;
}
int floor_log2(int p)
{
    int d = 0;
    while ((2 << d) <= p) ++d;
    return d;
}
// Smallest depth of a k-ary tree holding p nodes.
int k_ary_depth(int p, int k)
{
    long cap = 1, level = 1;
    int d = 0;
    while (cap < p) {
        level *= k;
        cap += level;
        ++d;
    }
    return d;
}

// Every rank reached exactly once from the top, parent and child lists
// agree, and (where claimed) the fold order is rank order. Returns "" or
// what is wrong.
std::string check_tree(const sr::tree& t, int root, bool commutative, bool may_forward = false)
{
    const int p = t.size;
    if (t.destination != root) return "destination is not the root";
    if (t.top != root && !may_forward && (commutative || !t.order_preserving))
        return "forwarding where rotation was possible";
    if (t.parent[static_cast<std::size_t>(t.top)] != -1) return "top has a parent";
    std::vector<int> seen(static_cast<std::size_t>(p), 0), order;
    std::function<bool(int, int)> visit = [&](int r, int depth) {
        if (depth > p || seen[static_cast<std::size_t>(r)]++) return false; // a cycle or a second path
        const auto v = t.local(r);
        if (v.self_position < 0 || v.self_position > static_cast<int>(v.children.size())) return false;
        for (std::size_t k = 0; k <= v.children.size(); ++k) {
            if (static_cast<int>(k) == v.self_position) order.push_back(r);
            if (k == v.children.size()) break;
            const int c = v.children[k];
            if (t.parent[static_cast<std::size_t>(c)] != r) return false;
            if (!visit(c, depth + 1)) return false;
        }
        return true;
    };
    if (!visit(t.top, 0)) return "cycle, second path or inconsistent parent";
    for (int r = 0; r < p; ++r)
        if (seen[static_cast<std::size_t>(r)] != 1) return "rank " + std::to_string(r) + " not reached";
    if (t.order_preserving)
        for (int r = 0; r < p; ++r)
            if (order[static_cast<std::size_t>(r)] != r) return "fold order is not rank order";
    return "";
}

template <class Build>
void check_all(const char* name, Build build, std::function<int(int)> depth_bound)
{
    for (int p = 1; p <= 130; ++p)
        for (bool commutative : {true, false})
            for (int root = 0; root < p; ++root) {
                const sr::tree t = build(p, root, commutative);
                const std::string problem = check_tree(t, root, commutative);
                if (!problem.empty()) BOOST_ERROR(name << " P=" << p << " root=" << root << ": " << problem);
                if (!commutative && !t.order_preserving) BOOST_ERROR(name << " P=" << p << ": no rank order");
                if (t.depth() > depth_bound(p))
                    BOOST_ERROR(name << " P=" << p << " depth " << t.depth() << " > " << depth_bound(p));
            }
}

} // namespace

BOOST_AUTO_TEST_SUITE(trees)

BOOST_AUTO_TEST_CASE(binomial)
{
    check_all("binomial", sr::binomial_tree, ceil_log2);
    const auto t = sr::binomial_tree(8, 0, true); // the diagram in tree/binomial.hpp
    BOOST_TEST((t.children[0] == std::vector<int>{1, 2, 4}));
    BOOST_TEST((t.children[4] == std::vector<int>{5, 6}));
    BOOST_TEST((t.children[6] == std::vector<int>{7}));
    BOOST_TEST(t.order_preserving);
}

BOOST_AUTO_TEST_CASE(k_ary)
{
    for (int k : {1, 2, 3, 4, 7})
        check_all(("k_ary " + std::to_string(k)).c_str(),
                  [k](int p, int root, bool c) { return sr::k_ary_tree(p, root, c, k); },
                  [k](int p) { return k == 1 ? p - 1 : k_ary_depth(p, k); });
    const auto t = sr::k_ary_tree(10, 0, true, 3);
    BOOST_TEST((t.children[0] == std::vector<int>{1, 4, 7}));
    BOOST_TEST((t.children[7] == std::vector<int>{8, 9}));
    BOOST_CHECK_THROW(sr::k_ary_tree(4, 0, true, 0), sr::error);
}

BOOST_AUTO_TEST_CASE(binary)
{
    check_all("binary", sr::binary_tree, floor_log2);
    const auto t = sr::binary_tree(7, 3, false);
    BOOST_TEST(t.top == 3);
    BOOST_TEST((t.children[3] == std::vector<int>{1, 5}));
    BOOST_TEST(t.self_position[3] == 1); // left ⊗ own ⊗ right
    const auto f = sr::binary_tree(7, 0, false); // non-commutative: same tree, forwarded
    BOOST_TEST(f.top == 3);
    BOOST_TEST(f.destination == 0);
    BOOST_TEST(f.local(3).forwards);
    BOOST_TEST(f.local(0).receives_forward);
    const auto r = sr::binary_tree(7, 0, true); // commutative: rotated onto the root
    BOOST_TEST(r.top == 0);
    BOOST_TEST(!r.order_preserving);
}

BOOST_AUTO_TEST_CASE(chain)
{
    check_all("chain", sr::chain_tree, [](int p) { return p - 1; });
    const auto t = sr::chain_tree(5, 0, false);
    BOOST_TEST(t.depth() == 4);
    BOOST_TEST((t.children[2] == std::vector<int>{3}));
}

BOOST_AUTO_TEST_CASE(two_tree)
{
    for (int p = 1; p <= 130; ++p)
        for (bool commutative : {true, false})
            for (int root = 0; root < p; ++root) {
                const auto t = sr::two_trees(p, root, commutative);
                for (const auto& x : t) {
                    // tree B keeps forwarding when rotated: one shift serves both trees
                    const std::string problem = check_tree(x, root, commutative, /*may_forward=*/true);
                    if (!problem.empty()) BOOST_ERROR("two_tree P=" << p << " root=" << root << ": " << problem);
                    if (!commutative && !x.order_preserving) BOOST_ERROR("two_tree P=" << p << ": no rank order");
                    if (x.depth() > ceil_log2(p) + 1)
                        BOOST_ERROR("two_tree P=" << p << " depth " << x.depth());
                    for (int r = 0; r < p; ++r)
                        if (x.children[static_cast<std::size_t>(r)].size() > 2) BOOST_ERROR("two_tree: not binary");
                }
                // inner nodes of one tree are leaves of the other (all of them
                // for even P; all but rank 1, inner in both, for odd P)
                int both_inner = 0;
                for (int r = 0; r < p; ++r)
                    both_inner += !t[0].children[static_cast<std::size_t>(r)].empty() &&
                                  !t[1].children[static_cast<std::size_t>(r)].empty();
                if (both_inner > (p % 2 == 1 && p > 1 ? 1 : 0))
                    BOOST_ERROR("two_tree P=" << p << ": " << both_inner << " ranks inner in both trees");
            }
    const auto t = sr::two_trees(8, 3, false); // the diagram in tree/two_tree.hpp
    BOOST_TEST((t[0].children[3] == std::vector<int>{1, 5}));
    BOOST_TEST((t[0].children[7] == std::vector<int>{6}));
    BOOST_TEST((t[1].children[4] == std::vector<int>{2, 6}));
    BOOST_TEST((t[1].children[0] == std::vector<int>{1}));
    BOOST_TEST(t[0].order_preserving);
    BOOST_TEST(t[1].order_preserving);
}

BOOST_AUTO_TEST_CASE(invalid_roots_and_text_forms)
{
    BOOST_CHECK_THROW(sr::binomial_tree(4, 4, true), sr::error);
    BOOST_CHECK_THROW(sr::binary_tree(4, -1, false), sr::error);
    const auto t = sr::binary_tree(5, 0, false);
    const std::string dot = sr::to_dot(t), text = sr::to_string(t);
    BOOST_TEST(dot.find("digraph") == 0u);
    BOOST_TEST(dot.find(std::to_string(t.top) + " -> 0 [style=dashed]") != std::string::npos);
    for (int r = 0; r < 5; ++r)
        for (int c : t.children[static_cast<std::size_t>(r)])
            BOOST_TEST(dot.find(std::to_string(c) + " -> " + std::to_string(r) + " [") != std::string::npos);
    BOOST_TEST(text.find("binary: P=5") == 0u);
}

BOOST_AUTO_TEST_CASE(schedules_print_and_draw)
{
    sr::schedule s;
    const auto t = sr::two_trees(4, 0, false);
    s.trees = {t[0], t[1]};
    s.dimension = 100;
    s.window = 16;
    s.segment_bytes = 128;
    const std::string text = sr::to_string(s), dot = sr::to_dot(s);
    BOOST_TEST(s.windows() == 7u);
    BOOST_TEST(text.find("7 windows of 16 elements") != std::string::npos, text);
    BOOST_TEST(text.find("tree 1 (two_tree, windows 1, 3, ...)") != std::string::npos, text);
    // every rank has a line per tree, and every child edge is drawn in its cluster
    for (std::size_t k = 0; k < 2; ++k)
        for (int r = 0; r < 4; ++r) {
            for (int c : t[k].children[static_cast<std::size_t>(r)])
                BOOST_TEST(dot.find("t" + std::to_string(k) + "_" + std::to_string(c) + " -> t" + std::to_string(k) + "_" +
                                    std::to_string(r) + " [label") != std::string::npos);
        }
    BOOST_TEST(dot.find("windows 1 mod 2") != std::string::npos);
    const auto b = sr::binary_tree(3, 0, false); // top 1 forwards to 0: "fold 0 ⊗ own ⊗ 2"
    sr::schedule one;
    one.trees = {b};
    one.dimension = 10;
    one.window = 10;
    const std::string line = sr::to_string(one);
    BOOST_TEST(line.find("rank 1: receive from 0 2; fold 0 ⊗ own ⊗ 2; forward the result to 0") != std::string::npos, line);
    BOOST_TEST(line.find("rank 0: fold own; send to 1; receive the result from 1") != std::string::npos, line);
}

BOOST_AUTO_TEST_SUITE_END()
