#!/usr/bin/env bash
# Runs one language test under every collector the VM registers, plain and
# under GC stress with verification, so a new collector is covered by the
# whole suite without new work.
#
#   tests/each_collector.sh VM_BINARY TEST.src
#
# GCLAB_STRESS overrides the stress flags (default: a collection every
# allocation, with the heap verified before and after each one; "none"
# skips the stressed run); GCLAB_PLAIN=none skips the plain run (the
# sanitizer builds run the stressed one only, which covers the same code
# and the collector besides);
# GCLAB_EXTRA_FLAGS adds flags to every run (e.g. --gc-threads=4);
# GCLAB_GC_THREADS_ONLY=1 leaves out the collectors that --list-gcs says
# use "no GC threads" (the TSan run: it has nothing to check in them).
# GCLAB_ONLY_GCS=A,B runs those collectors only (working on one of them).
#
# A collector whose correctness depends on its configuration lists more
# configurations in gc/collectors/NAME/test_variants, one set of flags per
# line (# starts a comment). The stressed run then shards them: each test
# runs under the configuration its name hashes to, the default one (no
# extra flags) included, so the suite covers every configuration at the
# cost of one. GCLAB_ALL_VARIANTS=1 runs every configuration instead.
#
# Each collector whose paper configuration is not its default (--list-gcs
# says "paper configuration: --OPTION=..."; vm --paper-config) also runs
# the test in that configuration, plain and stressed, so the whole suite
# runs in every collector's paper configuration. The collectors whose
# defaults are their paper's are left out there: their default runs above
# are already runs in the paper's configuration, and running them again
# would add time and no coverage. GCLAB_PAPER=none leaves these runs out;
# GCLAB_PAPER=shard makes the paper configuration one more of the stressed
# run's configurations instead (below), with no run of its own: the
# sanitizer runs, where the whole suite again would cost minutes, cover it
# so at the cost of none.
#
# A collector for which the stressed run's flags make no sense names its
# own in gc/collectors/NAME/test_stress (one line of flags, # starts a
# comment; "none" skips the stressed run): none, which never collects and
# refuses --gc-stress, verifies its heap at each gc() there instead. It
# replaces the stress flags, a GCLAB_STRESS given too (a collector that
# refuses them could not run it); GCLAB_STRESS=none still skips the run.
#
# A collector that cannot run every test (none: a test that needs
# collection) has a rule, gc/collectors/NAME/test_left_out, that
# tests/lang/run.sh consults when a run fails: a run the rule accepts is
# reported as LEFT OUT with the rule's reason instead of failing.
#
# With GCLAB_SCALED_STRESS=1 (the sanitizer runs), a collector whose
# collections are slow lets the default stress collect every N allocations
# instead of every one, N from gc/collectors/NAME/test_stress_interval, so
# each collector costs about the same there.
#
# It runs for every language test in three builds, so the loop over
# collectors starts no process but the runs (tests/lang/run.sh says why).
set -u
vm=$1
test_src=$2
here=$(cd "$(dirname "$0")" && pwd)
stress=${GCLAB_STRESS:---gc-stress=1 --gc-verify}
plain=${GCLAB_PLAIN:-}
extra=${GCLAB_EXTRA_FLAGS:-}

threads_only=${GCLAB_GC_THREADS_ONLY:-0}
list=$("$vm" --list-gcs)
collectors=$(awk -v threads_only="$threads_only" \
  '!/cannot run/ && !(threads_only == 1 && /\(no GC threads\)/) {print $1}' <<<"$list")
paper_runs=${GCLAB_PAPER:-}
# The collectors whose paper configuration sets options of their own,
# space-separated and between spaces (read without starting a process).
paper_differs=" "
while IFS= read -r line; do
  [[ $line == *"(paper configuration: --"* ]] && paper_differs+="${line%% *} "
done <<<"$list"
if [ -n "${GCLAB_ONLY_GCS:-}" ]; then
  collectors=$(tr ' ' '\n' <<<"$collectors" | grep -Fxf <(tr ',' '\n' <<<"$GCLAB_ONLY_GCS"))
fi
if [ -z "$collectors" ]; then
  echo "each_collector.sh: $vm lists no collectors${GCLAB_ONLY_GCS:+ named in GCLAB_ONLY_GCS ($GCLAB_ONLY_GCS)}" >&2
  exit 2
fi

all_variants=${GCLAB_ALL_VARIANTS:-0}
root=$(cd "$here/.." && pwd)

# The configurations the stressed run uses for collector $1, into the
# array `variants`: the default (empty) first.
variants_of() {
  variants=("")
  local file="$root/gc/collectors/$1/test_variants" line
  [ -f "$file" ] || return 0
  while IFS= read -r line || [ -n "$line" ]; do
    line=${line%%#*}
    [[ $line =~ ^[[:space:]]*$ ]] || variants+=("$line")
  done <"$file"
}

# The shard of this test among a collector's configurations: a hash of its
# path within the tree, the same for every collector.
shard=$(printf '%s' "${test_src#"$root"/}" | cksum)
shard=${shard%% *}

fail=0
for gc in $collectors; do
  paper=()
  [ -z "$paper_runs" ] && [[ $paper_differs == *" $gc "* ]] && paper=(--paper-config)
  left_out_rule=""
  [ -x "$root/gc/collectors/$gc/test_left_out" ] && left_out_rule="$root/gc/collectors/$gc/test_left_out"
  if [ "$plain" != none ]; then
    for config in "" "${paper[@]}"; do
      # shellcheck disable=SC2086
      GCLAB_LEFT_OUT_RULE=$left_out_rule "$here/lang/run.sh" "$vm" "$test_src" --gc="$gc" $config $extra || fail=1
    done
  fi
  [ "$stress" = none ] && continue
  gc_stress=$stress
  stress_file="$root/gc/collectors/$gc/test_stress"
  if [ -f "$stress_file" ]; then
    gc_stress=""
    while IFS= read -r line || [ -n "$line" ]; do
      line=${line%%#*}
      [[ $line =~ ^[[:space:]]*$ ]] || gc_stress=$line
    done <"$stress_file"
    [[ $gc_stress =~ ^[[:space:]]*none[[:space:]]*$ ]] && continue
  fi
  interval_file="$root/gc/collectors/$gc/test_stress_interval"
  if [ "${GCLAB_SCALED_STRESS:-0}" = 1 ] && [ "$stress" = "--gc-stress=1 --gc-verify" ] && [ -f "$interval_file" ]; then
    read -r interval <"$interval_file"
    gc_stress="--gc-stress=${interval//[^0-9]/} --gc-verify"
  fi
  variants_of "$gc"
  if [ "$paper_runs" = shard ] && [[ $paper_differs == *" $gc "* ]]; then variants+=(--paper-config); fi
  if [ "$all_variants" = 1 ]; then
    chosen=("${variants[@]}")
  else
    chosen=("${variants[$((shard % ${#variants[@]}))]}")
  fi
  for variant in "${chosen[@]}" "${paper[@]}"; do
    # shellcheck disable=SC2086
    GCLAB_LEFT_OUT_RULE=$left_out_rule "$here/lang/run.sh" "$vm" "$test_src" --gc="$gc" $extra $variant $gc_stress || fail=1
  done
done
exit $fail
