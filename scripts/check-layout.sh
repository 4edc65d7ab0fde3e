#!/usr/bin/env bash
# Checks the layout of include/sparse_reduce/:
#   - no header over 600 lines;
#   - no include cycle between folders;
#   - no include from a lower layer into collective/ or sort/, and no include
#     that goes up the layer order below;
#   - sim/ (the simulators) included only from sim/ and simulate.hpp, so the
#     umbrella header and the collectives never parse it.
#   - no function over MAX_FUNCTION_LINES (80) lines.
# Exit 0 when all hold, 1 (with one line per violation) when not.
#
# Usage: scripts/check-layout.sh [repository root]   (default: this script's ..)
set -euo pipefail
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
exec python3 - "$root" <<'PY'
import os, re, sys
from itertools import count

root = sys.argv[1]
base = os.path.join(root, "include", "sparse_reduce")
MAX_LINES = 600
MAX_FUNCTION_LINES = 80

# The layers, bottom to top. A header may include headers of its own layer
# and of the layers before it, never of a later one. A folder is a layer of
# its own; a header at the top of include/sparse_reduce/ is placed by name
# (policy.hpp and policy_check.hpp are the selection's vocabulary: they use
# select/tuning.hpp, and select/ uses them).
LAYERS = [
    ["error.hpp", "version.hpp", "report.hpp"],  # vocabulary, no includes
    ["detail"],      # small utilities: uninitialised vectors, value equality
    ["op"],          # associative operations and their identities
    ["repr"],        # vector representations (index/value, RLE, Eigen, dense)
    ["kernel"],      # merging, folding, converting entry streams
    ["wire"],        # the block wire format
    ["model"],       # cost models: alpha-beta-gamma, merged sizes, group replication
    ["tree"],        # reduction trees (optimal_binary builds from model/)
    ["schedule"],    # trees + segmenting + wire, and their predicted time
    ["select", "policy.hpp", "policy_check.hpp", "policy_any.hpp"],  # policies, tuning, call statistics, selection
    ["mpi"],         # transport: private communicator, byte transfers, tags
    ["exec"],        # the per-rank state machines, the MPI and whole-message executors
    ["collective"],  # reduce, allreduce, reduce_scatter
    ["sort"],        # distributed sort, and reduce_scatter_balanced which uses it
    ["sim"],         # the simulator, its whole-message model, the mesh network
    ["sparse_reduce.hpp", "simulate.hpp", "compiled.hpp"],  # the umbrella header; the simulators' (not in the umbrella); the compiled mode's front
]
SIM = "sim"  # included only by sim/ and simulate.hpp: no collective's include path parses it
TOP = {"collective", "sort"}  # what no lower layer may include

rank = {}
for i, layer in enumerate(LAYERS):
    for node in layer:
        rank[node] = i
# Nodes of the folder-level graph: a folder, or a top-level header's layer.
node_name = {n: (layer[0] if n.endswith(".hpp") and layer[0] != n and not layer[0].endswith(".hpp") else n)
             for layer in LAYERS for n in layer}

def node_of(rel):
    parts = rel.split("/")
    return parts[0] if len(parts) > 1 else rel

include_re = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
problems = []
edges = {}  # node -> {node: example "a -> b"}
headers = []
for dirpath, _, files in os.walk(base):
    for f in files:
        if f.endswith((".hpp", ".h")):
            headers.append(os.path.relpath(os.path.join(dirpath, f), base))
headers.sort()

for rel in headers:
    path = os.path.join(base, rel)
    with open(path, encoding="utf-8") as fh:
        lines = fh.readlines()
    if len(lines) > MAX_LINES:
        problems.append(f"too long: include/sparse_reduce/{rel} has {len(lines)} lines (at most {MAX_LINES})")
    src = node_of(rel)
    if src not in rank:
        problems.append(f"no layer: include/sparse_reduce/{rel} (add '{src}' to LAYERS in scripts/check-layout.sh)")
        continue
    for no, line in enumerate(lines, 1):
        m = include_re.match(line)
        if not m:
            continue
        kind, name = m.groups()
        if kind == '"':
            target = os.path.normpath(os.path.join(os.path.dirname(path), name))
        elif name.startswith("sparse_reduce/"):
            target = os.path.join(base, name[len("sparse_reduce/"):])
        else:
            continue
        trel = os.path.relpath(target, base)
        if trel.startswith(".."):
            continue
        dst = node_of(trel)
        where = f"include/sparse_reduce/{rel}:{no} includes {trel}"
        if dst not in rank:
            problems.append(f"no layer: {where} (add '{dst}' to LAYERS in scripts/check-layout.sh)")
            continue
        a, b = node_name[src], node_name[dst]
        if a != b:
            edges.setdefault(a, {}).setdefault(b, where)
        if dst == SIM and src not in (SIM, "simulate.hpp"):
            problems.append(f"only sim/ and simulate.hpp include sim/: {where}")
        elif dst.split("/")[0] in TOP and rank[src] < rank["collective"]:
            problems.append(f"lower layer includes {dst}/: {where}")
        elif rank[dst] > rank[src]:
            problems.append(f"upward include ({src} is below {dst}): {where}")

# Folder-level cycles: strongly connected components of more than one node (Tarjan).
index, low, stack, on_stack, sccs, counter = {}, {}, [], set(), [], count()
def visit(v):
    index[v] = low[v] = next(counter)
    stack.append(v)
    on_stack.add(v)
    for w in edges.get(v, {}):
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on_stack:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on_stack.discard(w)
            comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            sccs.append(sorted(comp))
nodes = sorted(set(edges) | {w for e in edges.values() for w in e})
for v in nodes:
    if v not in index:
        visit(v)
for comp in sccs:
    inside = [edges[a][b] for a in comp for b in edges.get(a, {}) if b in comp]
    problems.append("include cycle between folders " + ", ".join(comp) + ": " + "; ".join(inside))

# Long functions: a body is a `{` whose statement head ends in
# `)` (perhaps followed by const, noexcept, a trailing return type or a
# member initialiser list) and does not start with a control keyword; its
# length runs from the head's first line to the matching `}`.
strip_re = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'', re.S)
body_head_re = re.compile(r'\)\s*(?:const|noexcept|override|final|mutable|->[^{;]*|:[^{;]*)?\s*$')
control_re = re.compile(r'^(?:else\b|if\b|for\b|while\b|switch\b|catch\b|do\b|try\b|return\b)')
for rel in headers:
    with open(os.path.join(base, rel), encoding="utf-8") as fh:
        text = strip_re.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), fh.read())
    opens, head_start, parens = [], 0, 0  # per open brace: (is a function body, line of its head)
    for i, ch in enumerate(text):
        if ch in "()":
            parens += 1 if ch == "(" else -1
        elif ch in ";{}" and parens <= 0:  # braces inside parentheses (a default `= {}`) are the head's
            if ch == "{":
                head = text[head_start:i]
                lead = len(head) - len(head.lstrip())
                body = bool(body_head_re.search(head)) and not control_re.match(head.strip())
                opens.append((body, text.count("\n", 0, head_start + lead) + 1))
            elif ch == "}" and opens:
                body, first = opens.pop()
                last = text.count("\n", 0, i) + 1
                if body and last - first + 1 > MAX_FUNCTION_LINES:
                    problems.append(f"long function: include/sparse_reduce/{rel}:{first} has {last - first + 1} lines "
                                    f"(at most {MAX_FUNCTION_LINES})")
            head_start = i + 1
if problems:
    print("check-layout: FAILED", file=sys.stderr)
    for p in problems:
        print("  " + p, file=sys.stderr)
    sys.exit(1)
print(f"check-layout: ok ({len(headers)} headers, {len(nodes)} folders, no cycle, every include goes down, "
      f"no function over {MAX_FUNCTION_LINES} lines)")
PY
