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
std::string check_tree(const sr::tree& t, int root, bool commutative)
{
    const int p = t.size;
    if (t.destination != root) return "destination is not the root";
    if (t.top != root && (commutative || !t.order_preserving)) return "forwarding where rotation was possible";
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

BOOST_AUTO_TEST_SUITE_END()
