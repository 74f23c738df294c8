#!/usr/bin/env bash
# scripts/bench --against: two gclab binaries timed in the same rounds,
# each side's best and spread and the ratio of the bests; outputs that
# differ are warned about and not compared.
#
#   tests/cli/bench_against_test.sh VM SOURCE_DIR
set -u
vm=$1
top=$2
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"

"$top/scripts/bench" --against "$vm" --vm "$vm" --only takl --gc marksweep -r 2 >"$tmp/out" 2>"$tmp/err"
check "itself: exit 0" '[ $? -eq 0 ]'
check "itself: a row with both bests, spreads and the ratio" \
  'grep -Eq "^takl +marksweep +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{2} +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{2} +[0-9]+\.[0-9]{3}$" "$tmp/out"'
check "itself: the ratio is the bests' quotient" \
  'awk "/^takl/ { r = \$3 / \$5; d = r - \$7; if (d < 0) d = -d; exit !(d < 0.002) }" "$tmp/out"'
check "itself: a spread is at least 1" 'awk "/^takl/ { exit !(\$4 >= 1 && \$6 >= 1) }" "$tmp/out"'
check "itself: the geometric mean" 'grep -Eq "^  marksweep +[0-9]+\.[0-9]{3}  \(1 benchmark\)$" "$tmp/out"'
check "itself: no warning" '! grep -q WARNING "$tmp/out"'

# A binary whose program prints something else is not compared.
printf '#!/bin/sh\necho other\n' >"$tmp/other"
chmod +x "$tmp/other"
"$top/scripts/bench" --against "$tmp/other" --vm "$vm" --only takl --gc marksweep -r 1 >"$tmp/out" 2>"$tmp/err"
check "different output: warned" 'grep -qx "WARNING: takl under marksweep: the two binaries print different results" "$tmp/out"'
check "different output: no ratio" 'grep -Eq "^takl +marksweep .* -$" "$tmp/out"'
check "different output: no geometric mean" 'grep -q "marksweep .*(no successful runs)" "$tmp/out"'

# A line ending in " ms" is the benchmark's own measurement, which differs
# from run to run: left out of the comparison.
for t in 1 2; do printf '#!/bin/sh\n"%s" "$@"; echo "measured: %s.5 ms"\n' "$vm" "$t" >"$tmp/measures$t"; done
chmod +x "$tmp/measures1" "$tmp/measures2"
"$top/scripts/bench" --against "$tmp/measures1" --vm "$tmp/measures2" --only takl --gc marksweep -r 1 >"$tmp/out" 2>"$tmp/err"
check "own measurement: compared" '! grep -q WARNING "$tmp/out" && grep -Eq "^takl +marksweep .* [0-9]+\.[0-9]{3}$" "$tmp/out"'

# Which side runs first alternates from round to round: each wrapper
# appends its name to one log as it starts.
for side in new old; do printf '#!/bin/sh\necho %s >>"%s"\n"%s" "$@"\n' "$side" "$tmp/order" "$vm" >"$tmp/$side"; done
chmod +x "$tmp/new" "$tmp/old"
"$top/scripts/bench" --against "$tmp/old" --vm "$tmp/new" --only takl --gc marksweep -r 4 >"$tmp/out" 2>"$tmp/err"
check "order: alternates, new first in the first round" '[ "$(tr "\n" " " <"$tmp/order")" = "new old old new new old old new " ]'

"$top/scripts/bench" --against "$tmp/missing" --vm "$vm" --only takl -r 1 >"$tmp/out" 2>"$tmp/err"
check "missing binary: refused" '[ $? -ne 0 ] && grep -q "no gclab binary at" "$tmp/err"'

exit $fail
