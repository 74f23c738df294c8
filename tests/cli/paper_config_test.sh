#!/usr/bin/env bash
# Which variant ran (docs/observability.md, "Which variant ran"): the
# --gc-log start line, the first line of --gc-stats, its JSON and the
# report's data name the same variant for every collector; the departures
# follow the options in force (--dense-prefix=off drops the dense prefix);
# --paper-config leaves none where a collector has a paper configuration
# and is refused, exit 64, where it has none or where an option given
# departs from it; --compare names each run's variant; --help and the
# manual page describe the option.
#   tests/cli/paper_config_test.sh VM
set -u
vm=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"

prog='let a = []; for (let i = 0; i < 20000; i += 1) { push(a, [i]); } gc(); print(len(a));'

# variant FLAGS...: the run's variant as --gc-log, the table and the JSON
# print it, each in its own file.
variant() {
  "$vm" "$@" --gc-log="$tmp/log" --gc-stats="json:$tmp/json" -e "$prog" >/dev/null 2>&1 &&
    "$vm" "$@" --gc-stats -e "$prog" 2>"$tmp/table" >/dev/null || return 1
  sed -n '1s/^\[0\.000s\]\[gc\] Using [a-z]* (\(.*\))$/\1/p' "$tmp/log" >"$tmp/from_log"
  sed -n '1s/^GC statistics: [^;]*; //p' "$tmp/table" >"$tmp/from_table"
  jq -r .variant.text "$tmp/json" >"$tmp/from_json"
}

for gc in $("$vm" --list-gcs | awk '!/cannot run/ {print $1}'); do
  check "$gc: runs" 'variant --gc=$gc --gc-threads=2'
  check "$gc: the log, the table and the JSON name one variant" \
    '[ -s "$tmp/from_log" ] && cmp -s "$tmp/from_log" "$tmp/from_table" && cmp -s "$tmp/from_log" "$tmp/from_json"'
  if "$vm" --list-gcs | grep "^$gc " | grep -q "(no paper configuration)"; then
    check "$gc: implements no paper" '[ "$(cat "$tmp/from_json")" = "implements no paper" ]'
    usage_error "--paper-config: $gc implements no paper, so it has no paper configuration" --gc=$gc --paper-config
    continue
  fi
  check "$gc --paper-config: runs" 'variant --gc=$gc --gc-threads=2 --paper-config'
  check "$gc --paper-config: the paper's configuration" \
    '[ "$(jq -r ".variant.paper_configuration, (.variant.departures | length)" "$tmp/json" | paste -sd " ")" = "true 0" ] &&
     grep -q ": the paper'"'"'s configuration$" "$tmp/from_log"'
done

# The departures are the options' values, not a fixed text.
variant --gc=markcompact --gc-threads=2
check "markcompact: its dense prefix, at 95%" 'grep -q "dense prefix and ends at 95% live (the paper.s parallel collector: none)" "$tmp/from_json"'
check "markcompact: its young generation grown" 'grep -q "young generation grown from survival (the paper: fixed)" "$tmp/from_json"'
variant --gc=markcompact --gc-threads=2 --dense-prefix=80
check "markcompact --dense-prefix=80: at 80%" 'grep -q "dense prefix and ends at 80% live" "$tmp/from_json"'
variant --gc=markcompact --gc-threads=2 --dense-prefix=off --young=2M
check "markcompact --dense-prefix=off --young=2M: the paper's" 'grep -q ": the paper.s configuration$" "$tmp/from_json"'
variant --gc=semispace --gc-threads=2 --forwarding=cas
check "semispace --forwarding=cas: the paper's" '[ "$(cat "$tmp/from_json")" = "pSemispaces: the paper'"'"'s configuration" ]'
variant --gc=semispace --gc-threads=1
check "semispace, one thread: no ownership to depart by" 'grep -q "^pSemispaces: the paper.s configuration$" "$tmp/from_json"'
variant --gc=cacheaware --gc-threads=2 --ca-trigger=full
check "cacheaware --ca-trigger=full: the paper's" '[ "$(cat "$tmp/from_json")" = "cacheaware: the paper'"'"'s configuration" ]'
variant --gc=cacheaware --gc-threads=2 --ca-homing=lines --ca-trigger=full
check "cacheaware --ca-homing=lines: the paper's dispar" 'grep -q "^dispar " "$tmp/from_json"'
variant --gc=accel --accel-memory=ideal
check "accel --accel-memory=ideal: named" 'grep -q "accel-memory=ideal (the model.s default: dram)" "$tmp/from_json"'

# Refused where an option given departs from the paper's configuration.
usage_error "--paper-config sets --forwarding=cas for semispace, and --forwarding=owner departs from it: give one or the other" \
  --paper-config --forwarding=owner
usage_error "--paper-config sets --ca-trigger=full for cacheaware, and --ca-trigger=sizing departs from it: give one or the other" \
  --gc=cacheaware --ca-trigger=sizing --paper-config
usage_error "--paper-config: template implements no paper, so it has no paper configuration" \
  --compare=semispace,template --paper-config
# A size given as the paper's, in other words, agrees with it.
check "markcompact --paper-config --young=16384K: accepted" \
  '[ "$("$vm" --gc=markcompact --heap=1G --paper-config --young=16384K -e "print(1);" 2>&1)" = 1 ]'

# --compare: a variant per run, in the table and the JSON; --paper-config
# leaves out the collectors without a paper configuration.
"$vm" --compare=semispace,markcompact --gc-threads=2 -e "$prog" >/dev/null 2>"$tmp/err"
check "compare: the variants" 'grep -q "^variants:$" "$tmp/err" && grep -Eq "^  semispace +pSemispaces: departures" "$tmp/err" &&
  grep -Eq "^  markcompact +pSemispaces young generation, pMarkcompact old generation: departures" "$tmp/err"'
"$vm" --compare --paper-config --gc-threads=2 --gc-stats=json -e "$prog" >/dev/null 2>"$tmp/err"
check "compare --paper-config: template left out" 'grep -q "^vm: --compare: leaving out template (no paper configuration)$" "$tmp/err"'
sed -n '/^{/,$p' "$tmp/err" >"$tmp/compare.json"
check "compare --paper-config: every run in its paper's configuration" \
  '[ "$(jq "[.runs[] | select(.stats.variant.paper_configuration and (.variant | endswith(\": the paper'"'"'s configuration\")))] | length" "$tmp/compare.json")" = "$(jq ".runs | length" "$tmp/compare.json")" ]'

# The report's data carries the variant its header shows.
"$vm" --gc=markcompact --gc-threads=2 --paper-config --gc-report="$tmp/r.html" -e "$prog" >/dev/null 2>&1
check "report: the variant in its data" 'grep -q "\"variant\":{\"text\":\"pSemispaces young generation, pMarkcompact old generation: the paper'"'"'s configuration\"" "$tmp/r.html"'

check "--help: --paper-config" '"$vm" --help | grep -q "^  --paper-config "'
check "--man: paper-config" '"$vm" --man | grep -q "paper\\\\-config"'
check "--list-gcs: what it sets" '"$vm" --list-gcs | grep -q "^semispace .*(paper configuration: --forwarding=cas)"'
exit $fail
