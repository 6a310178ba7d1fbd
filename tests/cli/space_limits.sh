#!/usr/bin/env bash
# No recursion depth or size that crashes (issue 30, item 3): long
# constraints (10,000 terms of every left-associative kind) compile and count
# right; nesting deeper than the stated limit (200 levels: parentheses, unary
# chains, a ** b ** ..., conditional chains) is refused with exit 2 at
# file:line:col; param lists of 40,000 and 100,000 values (duplicates dropped
# by a hash, not a quadratic scan) are read. A crash (SIGSEGV: exit 139) or a
# quadratic read (the ctest timeout) fails it. Nothing is left in the folder.
source "$(dirname "$0")/lib.bash"
MUH=$(realpath "$MUH")
W="$TMP/w"
mkdir -p "$W"
cd "$W" || exit 1

python3 - <<'EOF'
n = 10000
head = "name: big\ntarget: {backend: cpu, source: x.c}\nparams:\n  A: [1, 2, 3]\n  B: [4, 5]\nconstraints:\n"
shapes = {
    # A counted 10,000 times: A > 1.5 keeps A = 2, 3 (x2 for B): 4
    "sum": " + ".join("A" for _ in range(n)) + " > 15000",
    "consts": " + ".join(f"A*{i % 7 + 1}" for i in range(n)) + " - 40000 > 0",
    "and": " and ".join(f"A < {i + 3}" for i in range(n)),
    "or": " or ".join(f"A == {i + 3}" for i in range(n)),
    "chain": " <= ".join("A" for _ in range(n)) + " < 3",
    "mixed": " + ".join(f"(A*{i % 5} - B // 2)" for i in range(n)) + " > 0",
}
for k, v in shapes.items():
    open(f"{k}.yaml", "w").write(head + f'  - "{v}"\n')
deep = {
    "parens": "(" * 10000 + "A" + ")" * 10000 + " > 0",
    "neg": "-" * 10000 + "A > 0",
    "pow": " ** ".join("A" for _ in range(10000)) + " > 0",
    "cond": " if A > 1 else ".join(str(i) for i in range(10000)),
}
for k, v in deep.items():
    open(f"deep_{k}.yaml", "w").write(head + f'  - "{v}"\n')
open("min.yaml", "w").write(head + '  - "min(' + ", ".join(f"A+{i}" for i in range(300)) + ') > 0"\n')
# 40,000 values, each written twice: 20,000 distinct; 1 and 1.0 are one value
vals = ", ".join(str(i % 20000) for i in range(40000)) + ", 1.0"
open("p40k.yaml", "w").write("name: big\ntarget: {backend: cpu, source: x.c}\nparams:\n  A: [" + vals + "]\n")
vals = ", ".join(str(i) for i in range(100000))
open("p100k.yaml", "w").write("name: big\ntarget: {backend: cpu, source: x.c}\nparams:\n  A: [" + vals + "]\n  B: \"[i % 50000 for i in range(100000)]\"\n")
EOF
[ -f sum.yaml ] || fail "test setup: the specs were written"
before=$(ls -A)

# expect_valid SPEC N: exit 0 and the space has N valid configurations
expect_valid() {
	run "$MUH" space "$1" --json
	expect_rc 0 "$1"
	grep -Eq "\"valid\":[[:space:]]*$2," "$TMP/out" || fail "$1: valid $2 expected: $(head -c 300 "$TMP/out")"
}
expect_valid sum.yaml 4
expect_valid consts.yaml 4   # 39,994 * A > 40,000: A = 2, 3, for each B
expect_valid and.yaml 4     # A < 3
expect_valid or.yaml 2      # A == 3
expect_valid chain.yaml 4   # A < 3
expect_valid mixed.yaml 4   # 20,000 * A > 20,000

for k in parens neg pow cond; do
	run "$MUH" space "deep_$k.yaml"
	expect_rc 2 "$k nested 10,000 deep"
	expect_in err "^deep_$k.yaml:7:[0-9]+: error: expression nested too deeply \(more than 200 levels\)" "$k: the stated depth, at file:line:col"
done
run "$MUH" space min.yaml
expect_rc 2 "min() of 300 arguments"
expect_in err "^min.yaml:7:6: error: min\(\) takes at most 256 arguments, got 300" "min(): the stated limit"

expect_valid p40k.yaml 20000
expect_valid p100k.yaml 5000000000

[ "$(ls -A)" = "$before" ] || fail "the folder holds something new: $(ls -A)"
done_tests
