#!/usr/bin/env bash
# Runs every language test (each .src under tests/lang with a .out beside it;
# modules in lib/ folders have none) and prints a summary.
#
#   tests/lang/run_all.sh VM_BINARY [VM flags...]
#
# Exit 0 when all pass, 1 otherwise. Set QUIET=1 to print only failures.
set -u
if [ $# -lt 1 ]; then
  echo "usage: $0 VM_BINARY [VM flags...]" >&2
  exit 2
fi
vm=$1
shift
case $vm in */*) vm="$(cd "$(dirname "$vm")" && pwd)/$(basename "$vm")" ;; esac
here=$(cd "$(dirname "$0")" && pwd)
pass=0
fail=0
failed=()
while IFS= read -r src; do
  [ -f "${src%.src}.out" ] || continue
  if out=$("$here/run.sh" "$vm" "$src" "$@" 2>&1); then
    pass=$((pass + 1))
    [ "${QUIET:-0}" = 1 ] || printf '%s\n' "$out"
  else
    fail=$((fail + 1))
    failed+=("${src#"$here"/}")
    printf '%s\n' "$out"
  fi
done < <(find "$here" -name '*.src' | LC_ALL=C sort)
echo "$pass passed, $fail failed"
for f in "${failed[@]+"${failed[@]}"}"; do echo "  failed: $f"; done
[ "$fail" -eq 0 ]
