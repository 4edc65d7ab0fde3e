// Checks that every code block of a Markdown guide marked
//   <!-- snippet: example/guide/file.cpp [name] -->
// equals the region of that file between its "//! [name]" lines (all such
// regions of the name, joined, with their common indentation removed), so
// the guide quotes only code that the guide's CTests compile and run.
//
//   check_snippets GUIDE.md SOURCE_ROOT [--write]
//
// --write replaces each block with the file's region instead of checking.
// Exit 0 when everything matches (or was written), 1 otherwise.

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::vector<std::string> read_lines(const std::string& path, bool& ok)
{
    std::ifstream f(path);
    ok = static_cast<bool>(f);
    std::vector<std::string> lines;
    for (std::string l; std::getline(f, l);) lines.push_back(l);
    return lines;
}

std::string trim(const std::string& s)
{
    const auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// The region's lines, dedented; empty with ok = false when there is none.
std::vector<std::string> region(const std::vector<std::string>& file, const std::string& name, bool& ok)
{
    std::vector<std::string> out;
    bool inside = false;
    int markers = 0;
    for (const std::string& l : file) {
        if (trim(l) == "//! [" + name + "]") {
            inside = !inside;
            ++markers;
        } else if (inside) {
            out.push_back(l);
        }
    }
    ok = markers > 0 && markers % 2 == 0;
    std::size_t indent = std::string::npos;
    for (const std::string& l : out)
        if (!trim(l).empty()) indent = std::min(indent, l.find_first_not_of(' '));
    for (std::string& l : out) l = trim(l).empty() ? std::string() : l.substr(indent == std::string::npos ? 0 : indent);
    return out;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s GUIDE.md SOURCE_ROOT [--write]\n", argv[0]);
        return 2;
    }
    const std::string guide_path = argv[1], root = argv[2];
    const bool write = argc > 3 && std::string(argv[3]) == "--write";
    bool ok = true;
    const std::vector<std::string> guide = read_lines(guide_path, ok);
    if (!ok) {
        std::fprintf(stderr, "check_snippets: cannot read %s\n", guide_path.c_str());
        return 1;
    }
    const std::string tag = "<!-- snippet: ";
    std::vector<std::string> result;
    int checked = 0, wrong = 0;
    for (std::size_t i = 0; i < guide.size(); ++i) {
        result.push_back(guide[i]);
        if (guide[i].rfind(tag, 0) != 0) continue;
        // "<!-- snippet: FILE [NAME] -->"
        const std::string spec = guide[i].substr(tag.size(), guide[i].rfind(" -->") - tag.size());
        const std::string file = spec.substr(0, spec.find(' ')),
                          name = spec.substr(spec.find('[') + 1, spec.rfind(']') - spec.find('[') - 1);
        bool file_ok = true, region_ok = true;
        const auto want = region(read_lines(root + "/" + file, file_ok), name, region_ok);
        const auto where = guide_path + ":" + std::to_string(i + 1);
        if (!file_ok || !region_ok || i + 1 >= guide.size() || guide[i + 1].rfind("```", 0) != 0) {
            std::fprintf(stderr, "%s: no region [%s] in %s, or no code block after the marker\n", where.c_str(),
                         name.c_str(), file.c_str());
            ++wrong;
            continue;
        }
        std::size_t end = i + 2;
        while (end < guide.size() && guide[end] != "```") ++end;
        const std::vector<std::string> have(guide.begin() + static_cast<std::ptrdiff_t>(i + 2),
                                            guide.begin() + static_cast<std::ptrdiff_t>(end));
        ++checked;
        if (have != want) {
            if (!write) {
                std::size_t k = 0;
                while (k < have.size() && k < want.size() && have[k] == want[k]) ++k;
                std::fprintf(stderr, "%s: the block differs from %s [%s] at its line %zu:\n  guide: %s\n  file:  %s\n",
                             where.c_str(), file.c_str(), name.c_str(), k + 1, k < have.size() ? have[k].c_str() : "(end)",
                             k < want.size() ? want[k].c_str() : "(end)");
            }
            ++wrong;
        }
        result.push_back(guide[i + 1]);
        result.insert(result.end(), want.begin(), want.end());
        i = end - 1; // the closing fence is pushed next
    }
    if (write) {
        std::ofstream f(guide_path);
        for (const std::string& l : result) f << l << '\n';
        std::printf("check_snippets: %d blocks, %d rewritten\n", checked, wrong);
        return f ? 0 : 1;
    }
    std::printf("check_snippets: %d blocks checked, %d differ\n", checked, wrong);
    return wrong == 0 && checked > 0 ? 0 : 1;
}
