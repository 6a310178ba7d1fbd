#!/usr/bin/env bash
# A new user's rough edges, found by a fresh-clone run of the README: each
# case is what the user typed and what muh must say.
#   1. every error names what it is about: the file (file:line:col) or the
#      command ("muh patch: ..."), never a bare "error:"
source "$(dirname "$0")/lib.bash"
MUH=$(realpath "$MUH")
REPO=$PWD
C="$TMP/c"
mkdir -p "$C/tree" "$C/folder"
: >"$C/empty.db"
printf 'plain text\n' >"$C/text.txt"

# no stderr line of the last run starts with a bare "error:"
no_bare_error() {
	! grep -Eq '^error:' "$TMP/err" || fail "$1: a bare 'error:' on stderr: $(head -n 2 "$TMP/err")"
}

# ---- 1. a diagnostic without a file is the command's
run env -C "$C" "$MUH" report empty.db
expect_rc 2 "report empty.db"
expect_in err "^muh report: empty.db is not a muh store \(an empty file\)$" "report names itself"
no_bare_error "report empty.db"
run env -C "$C" "$MUH" report folder
expect_rc 2 "report folder"
expect_in err "^muh report: folder is not a muh store \(a directory\)$" "report, a folder"
run env -C "$C" "$MUH" patch tree --from empty.db
expect_rc 2 "patch --from empty.db"
expect_in err "^muh patch: empty.db is not a muh store \(an empty file\)$" "patch names itself"
no_bare_error "patch --from empty.db"
run env -C "$C" "$MUH" patch --emit triton-configs --from text.txt
expect_rc 2 "patch --emit --from text.txt"
expect_in err "^muh patch: text.txt is not a muh store \(not an SQLite database\)$" "patch --emit names itself"
no_bare_error "patch --emit"
# the same class in the other commands that read a store or a profile
for cmd in "export empty.db" "transfer empty.db --hw h100" "patch --rollback folder"; do
	read -ra argv <<<"$cmd"
	run env -C "$C" "$MUH" "${argv[@]}"
	[ "$rc" -ge 2 ] || fail "muh $cmd: exit $rc, expected an error"
	expect_in err "^(muh ${argv[0]}: |[^ :]+(:[0-9]+:[0-9]+)?: error: )" "muh $cmd names what it is about"
	no_bare_error "muh $cmd"
done

done_tests
