# Shared by the command-line tests: sourced after setting `vm`. Gives a
# scratch folder `tmp`, the result `fail` (exit with it), and
#   check NAME CONDITION     prints ok/FAIL for a shell condition
#   usage_error MESSAGE ARGS a usage error: exit 64, nothing runs, and on
#                            stderr exactly "vm: MESSAGE" then the hint
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }

usage_error() {
  local expected=$1
  shift
  "$vm" "$@" -e 'print("ran");' >"$tmp/out" 2>"$tmp/err"
  local status=$?
  check "$* : exit 64" '[ "$status" -eq 64 ]'
  check "$* : nothing runs" '[ ! -s "$tmp/out" ]'
  check "$* : two lines" '[ "$(wc -l <"$tmp/err")" -eq 2 ]'
  check "$* : '$expected'" '[ "$(head -n 1 "$tmp/err")" = "vm: $expected" ]'
  check "$* : the hint" '[ "$(tail -n 1 "$tmp/err")" = "Try '"'"'vm --help'"'"' for more information." ]'
}
