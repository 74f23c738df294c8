#!/usr/bin/env bash
# The gen/differential CTest test: generated programs must print the same
# bytes and exit the same way under every collector and configuration
# (tests/gen/difflib.sh lists them). No reduction: scripts/fuzz-diff does that.
#
#   tests/gen/differential.sh VM GEN FIRST_SEED COUNT [SIZE]
#
# SIZE (default 8, or $GCLAB_GEN_SIZE) is the generator's --size. Exit 0 when
# every program agrees, 1 otherwise (each failure printed with the command
# that reproduces it), 2 on misuse.
set -u
if [ $# -lt 4 ]; then
  echo "usage: $0 VM GEN FIRST_SEED COUNT [SIZE]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
DL_VM=$1
gen=$2
first=$3
count=$4
size=${5:-${GCLAB_GEN_SIZE:-8}}
DL_TMP=$(mktemp -d "${TMPDIR:-/tmp}/gclab-diff.XXXXXX") || exit 2
trap 'rm -rf "$DL_TMP"' EXIT
# shellcheck source=difflib.sh
. "$here/difflib.sh"

if [ -z "$(dl_collectors)" ]; then
  echo "differential.sh: $DL_VM lists no collectors" >&2
  exit 2
fi
unknown=$(dl_unknown_collectors)
if [ -n "$unknown" ]; then
  echo "differential.sh: DL_COLLECTORS names collectors $DL_VM does not list (or cannot run): $unknown" >&2
  exit 2
fi

fail=0
runs=0
for ((seed = first; seed < first + count; seed++)); do
  if ! "$gen" "$seed" --size "$size" > "$DL_TMP/prog.src"; then
    echo "FAIL seed $seed: $gen failed"
    fail=$((fail + 1))
    continue
  fi
  dl_check "$DL_TMP/prog.src" "$seed"
  runs=$((runs + DL_RUNS))
  case $DL_RESULT in
    ok) ;;
    reffail)
      echo "FAIL seed $seed: the reference run ($DL_REF) failed: $(dl_describe ref)"
      echo "  reproduce: $gen $seed --size $size > seed-$seed.src && $DL_VM $DL_REF seed-$seed.src"
      fail=$((fail + 1)) ;;
    disagree)
      echo "FAIL seed $seed: $DL_BAD differs from $DL_REF: $(dl_describe "$DL_BAD_TAG")"
      echo "  reproduce: $gen $seed --size $size > seed-$seed.src && $DL_VM $DL_BAD seed-$seed.src"
      echo "  reduce:    scripts/fuzz-diff 1 --start $seed --size $size --vm $DL_VM"
      fail=$((fail + 1)) ;;
  esac
done
echo "gen/differential: $count programs (seeds $first..$((first + count - 1)), size $size), $runs runs, $fail failing"
[ $fail -eq 0 ]
