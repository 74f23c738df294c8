#!/usr/bin/env bash
# One hostile input (tests/hostile/NAME.case) under every collector that can
# run here: the exact exit status, a pattern its message must match, a bound
# on what it may print, and a time limit past which it counts as hung (a
# guard against hangs, not a timing: limits are many times what a run takes).
#
#   tests/hostile/hostile_test.sh VM CASE
#
# A case is a bash fragment that sets
#   about          what the input is, one line
#   flags          an array of options (default: none)
#   code           the program, for -e; or a function make_program that
#                  writes the program to the file named by its argument
#   status         the exit status
#   stderr_re      an extended regex the first line of stderr must match
#                  (empty: stderr must be empty)
#   stdout         what stdout must be exactly (unset: not checked)
#   stdout_file    where stdout goes instead (e.g. /dev/full)
#   max_bytes      most bytes of stdout plus stderr (default 65536)
#   seconds        the limit (default 30)
#   per_collector  0: one run with the default collector (an option that is
#                  about collectors), else each collector (default 1)
#   needs_collection  1: the input finishes only if the heap is collected;
#                  under a collector that never collects (--list-gcs: "never
#                  collects") it must end in the out-of-memory error
#                  instead (exit 70), within the same limits (default 0)
set -u
vm=$(realpath "$1")
case_file=$2
name=$(basename "$case_file" .case)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }

flags=()
code=
stdout_file=
max_bytes=65536
seconds=30
per_collector=1
needs_collection=0
unset stdout
# shellcheck source=/dev/null
. "$case_file"
echo "$name: $about"

program=(-e "$code")
if declare -F make_program >/dev/null; then
  make_program "$tmp/program.src"
  program=("$tmp/program.src")
fi

list=$("$vm" --list-gcs)
if [ "$per_collector" = 1 ]; then
  collectors=$(awk '!/cannot run/ {print "--gc=" $1}' <<<"$list")
else
  collectors=default
fi
never_collect=" $(awk '/\(never collects\)/ {printf "--gc=%s ", $1}' <<<"$list")"
case_status=$status case_stderr_re=$stderr_re
check_stdout=${stdout+set}
for gc in $collectors; do
  status=$case_status stderr_re=$case_stderr_re stdout_checked=$check_stdout
  if [ "$needs_collection" = 1 ] && [[ $never_collect == *" $gc "* ]]; then
    status=70 stderr_re='^error: out of memory: ' stdout_checked=
  fi
  gc_flag=()
  [ "$gc" != default ] && gc_flag=("$gc")
  out=${stdout_file:-$tmp/out}
  start=$(date +%s%N)
  timeout -k 5 "$seconds" "$vm" "${gc_flag[@]}" "${flags[@]}" "${program[@]}" 2>&1 >"$out" |
    head -c $((max_bytes + 1)) >"$tmp/err"
  got=${PIPESTATUS[0]}
  ms=$((($(date +%s%N) - start) / 1000000))
  label="$name ${gc#--gc=} (${ms} ms)"
  check "$label: not hung (limit ${seconds} s)" '[ "$got" -ne 124 ] && [ "$got" -ne 137 ]'
  check "$label: exit $status" '[ "$got" -eq "$status" ]'
  if [ -n "$stderr_re" ]; then
    check "$label: stderr starts '$stderr_re'" 'head -n 1 "$tmp/err" | grep -qE -- "$stderr_re"'
  else
    check "$label: nothing on stderr" '[ ! -s "$tmp/err" ]'
  fi
  bytes=$(($(wc -c <"$tmp/err") + $( [ -z "$stdout_file" ] && wc -c <"$tmp/out" || echo 0)))
  check "$label: at most $max_bytes bytes of output" '[ "$bytes" -le "$max_bytes" ]'
  if [ -n "$stdout_checked" ]; then
    check "$label: stdout '$stdout'" '[ "$(cat "$tmp/out")" = "$stdout" ]'
  fi
  if [ "$fail" -ne 0 ]; then
    echo "  stderr (first lines):"
    head -n 3 "$tmp/err" | cut -c1-200 | sed 's/^/    /'
  fi
done
exit $fail
