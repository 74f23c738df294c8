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
# GCLAB_SKIP_GCS names collectors to leave out (e.g. the TSan run leaves out
# those with no parallel code, whose simulations TSan only slows down).
set -u
vm=$1
test_src=$2
here=$(cd "$(dirname "$0")" && pwd)
stress=${GCLAB_STRESS:---gc-stress=1 --gc-verify}
plain=${GCLAB_PLAIN:-}
extra=${GCLAB_EXTRA_FLAGS:-}

skip=" ${GCLAB_SKIP_GCS:-} "
collectors=$("$vm" --list-gcs | awk '!/cannot run/ {print $1}' | while read -r gc; do
  [[ $skip == *" $gc "* ]] || echo "$gc"
done)
if [ -z "$collectors" ]; then
  echo "each_collector.sh: $vm lists no collectors" >&2
  exit 2
fi

fail=0
for gc in $collectors; do
  if [ "$plain" != none ]; then
    # shellcheck disable=SC2086
    "$here/lang/run.sh" "$vm" "$test_src" --gc="$gc" $extra || fail=1
  fi
  [ "$stress" = none ] && continue
  # shellcheck disable=SC2086
  "$here/lang/run.sh" "$vm" "$test_src" --gc="$gc" $extra $stress || fail=1
done
exit $fail
