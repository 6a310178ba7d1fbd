#!/usr/bin/env python3
"""layers.py - the module graph of libmuh's src/, its circles and the imports
that run back up a layer.  python3, stdlib only.

    python3 scripts/layers.py [--root DIR] [--edges] [--layers]

How it decides
--------------
Module.  A file's module is its base name without the extension and without an
  `_int` suffix: src/space/expr.c, src/space/expr_int.h and src/include/muh/expr.h are
  module `expr`; src/scan/scan_args.c and src/scan/scan_args.h are `scan_args`.  Files
  read: src/*.c, src/*.h, src/SUBSYSTEM/*.[ch], src/include/muh/*.h and include/muh/*.h (the public
  libmuh.h; its functions are src/api.c's).  src/cli/ is the program, not
  libmuh.

Import.  Module A imports module B (A -> B) when a file of A `#include "..."`s
  a header H, directly or through the headers H includes, and A's files name a
  function that H declares and that B defines: a non-static function of one of
  B's .c files, or a static inline function of one of B's headers.  So the
  edge is drawn from the #include lines, and only where the include is used to
  reach code: an include used for its types alone draws no edge (types are the
  contract, not a call), and a header that declares functions of several
  modules (pool_int.h: pool's and pool_mpi's) draws an edge to each module
  whose functions the includer names.

Circle.  A strongly connected component of two or more modules (Tarjan).

Layer.  LAYERS below is the explicit list of the subsystems, lowest first; a
  module takes the layer of the first pattern (fnmatch) that names it.  A
  module that no pattern names takes a layer from a topological order of the
  condensed graph: one above the highest layer it imports (0 when it imports
  nothing).  An import A -> B runs back up when B's layer is above A's (a
  lower subsystem reaching into a higher one).  Imports inside one layer are
  allowed; a circle inside one layer is still a circle.

Exit status: 0 (it reports; it does not judge).
"""
import argparse
import fnmatch
import os
import re
import sys

# The subsystems, lowest layer first (fnmatch patterns over module names).
LAYERS = [
    # 0: base - status, messages, containers, files, text
    ["muh", "muh_kernel", "diag", "value", "fileio", "strbuf", "textcut",
     "u64map", "stats", "svg", "yamlcheck", "curl_dl", "json", "store_vfs"],
    # 1: the spec language - expressions, specs, hardware, spaces, prior knowledge
    ["expr", "expr_*", "spec", "hw", "space", "kb_cccl", "kb"],
    # 2: reading engine trees - Python facts, the surface, deployment files
    ["pyfile", "pyfile_*", "pyflow", "scan", "scan_*", "deploy", "deploy_*"],
    # 3: writing engine trees
    ["patch", "patch_*"],
    # 4: measuring - the evaluator (its records, runner, line reader), backends,
    #    targets, overlays (variants as patched files), load, the objective
    ["eval", "eval_*", "linebuf", "target", "backend_*", "overlay", "load", "load_*",
     "engine", "objective"],
    # 5: remembering and searching
    ["store", "replay", "replay_*", "strategy", "strategy_*", "transfer", "transfer_*",
     "baseline", "best", "decide", "pool", "pool_*"],
    # 6: the session and the workflows over it (decide_run: session_decide)
    ["session", "session_*", "decide_run"],
    # 7: the public boundary (include/muh/libmuh.h over src/api.c's wrappers)
    ["api", "libmuh"],
]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
IDENT = re.compile(r"[A-Za-z_]\w*")
# a function definition at column 0: type words, name, '(' ... then '{' (not ';')
DEF = re.compile(r"^(?!static\b)(?:[A-Za-z_][\w \t\*]*?[\s\*])([A-Za-z_]\w*)\s*\([^;{]*?\)\s*(?:__attribute__\s*\(\(.*?\)\)\s*)?\{",
                 re.M | re.S)
INLINE = re.compile(r"^static\s+inline\s+[\w \t\*]*?[\s\*]([A-Za-z_]\w*)\s*\(", re.M)
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')


def module_of(path):
    base = os.path.basename(path)
    base = base.rsplit(".", 1)[0]
    if base.endswith("_int"):
        base = base[:-4]
    return base


def strip(text):
    return STRING.sub('""', COMMENT.sub(" ", text))


def read_tree(root):
    files = {}
    subs = ["src"] + sorted(os.path.join("src", d) for d in os.listdir(os.path.join(root, "src"))
                            if os.path.isdir(os.path.join(root, "src", d)) and d not in ("cli", "include", "ts_compat"))
    for sub in subs + [os.path.join("src", "include", "muh"), os.path.join("include", "muh")]:
        d = os.path.join(root, sub)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if name.endswith((".c", ".h")):
                p = os.path.join(d, name)
                with open(p, encoding="utf-8", errors="replace") as f:
                    files[os.path.relpath(p, root)] = f.read()
    return files


def resolve(inc, frm, files):
    """The file an #include "inc" in file frm names, or None (not ours)."""
    here = [os.path.join(os.path.dirname(frm), inc), os.path.join("src", inc),
            os.path.join("src", "include", inc), os.path.join("include", inc)]
    # the subsystem folders are on the include path (CMakeLists.txt)
    others = sorted({os.path.join(os.path.dirname(f), inc) for f in files if f.startswith("src" + os.sep)})
    for cand in here + others:
        cand = os.path.normpath(cand)
        if cand in files:
            return cand
    return None


def build(root):
    files = read_tree(root)
    clean = {p: strip(t) for p, t in files.items()}
    includes = {p: [r for r in (resolve(i, p, files) for i in INCLUDE.findall(t)) if r]
                for p, t in files.items()}
    # who defines what
    definer = {}
    for p, t in clean.items():
        if p.endswith(".c"):
            for m in DEF.finditer(t):
                definer.setdefault(m.group(1), set()).add(module_of(p))
        else:
            for m in INLINE.finditer(t):
                definer.setdefault(m.group(1), set()).add(module_of(p))
    # what each header names (declares or defines)
    names_in = {p: set(IDENT.findall(t)) for p, t in clean.items()}

    def visible(p):
        seen, todo = set(), list(includes[p])
        while todo:
            h = todo.pop()
            if h in seen:
                continue
            seen.add(h)
            todo.extend(includes.get(h, []))
        return seen

    modules = sorted({module_of(p) for p in files})
    edges = {m: {} for m in modules}  # a -> {b: [function, ...]}
    for p in files:
        a = module_of(p)
        used = names_in[p]
        for h in visible(p):
            for n in names_in[h] & used:
                for b in definer.get(n, ()):
                    if b != a:
                        edges[a].setdefault(b, set()).add(n)
    return modules, edges


def tarjan(nodes, edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in nodes:
        if v not in index:
            visit(v)
    return out  # in reverse topological order (sinks first)


def layers_of(nodes, edges, sccs):
    layer = {}
    for m in nodes:
        for i, pats in enumerate(LAYERS):
            if any(fnmatch.fnmatchcase(m, pat) for pat in pats):
                layer[m] = i
                break
    # the rest: topological order of the condensed graph (sccs come sinks first)
    for comp in sccs:
        free = [m for m in comp if m not in layer]
        if not free:
            continue
        below = [layer.get(b, 0) for m in comp for b in edges[m] if b not in comp]
        lv = max(below) + 1 if below else 0
        for m in free:
            layer[m] = lv
    return layer


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--edges", action="store_true", help="print every import with the functions it uses")
    ap.add_argument("--layers", action="store_true", help="print each module's layer")
    args = ap.parse_args()
    nodes, edges = build(os.path.abspath(args.root))
    sccs = tarjan(nodes, edges)
    layer = layers_of(nodes, edges, sccs)
    circles = [c for c in sccs if len(c) > 1]

    if args.layers:
        for m in sorted(nodes, key=lambda m: (layer[m], m)):
            print(f"layer {layer[m]}  {m}")
    if args.edges:
        for a in nodes:
            for b in sorted(edges[a]):
                print(f"{a} -> {b}: {', '.join(sorted(edges[a][b]))}")

    print(f"modules: {len(nodes)}  imports: {sum(len(e) for e in edges.values())}")
    print(f"circles: {len(circles)}")
    for c in sorted(circles):
        inner = [f"{a}->{b}({len(edges[a][b])})" for a in c for b in sorted(edges[a]) if b in c]
        print(f"  {' '.join(c)}    [{', '.join(inner)}]")
    up = [(a, b) for a in nodes for b in edges[a] if layer[b] > layer[a]]
    print(f"imports running back up a layer: {len(up)}")
    for a, b in sorted(up):
        fns = sorted(edges[a][b])
        more = f" +{len(fns) - 4}" if len(fns) > 4 else ""
        print(f"  {a} (layer {layer[a]}) -> {b} (layer {layer[b]}): {', '.join(fns[:4])}{more}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
