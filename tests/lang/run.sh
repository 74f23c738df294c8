#!/usr/bin/env bash
# Runs one language test and compares it with its expected files.
#
#   tests/lang/run.sh VM_BINARY path/to/NAME.src [VM flags...]
#
# In NAME.src's folder it runs
#   VM_BINARY [VM flags...] [flags from NAME.flags] NAME.src [words of NAME.args]
# with standard input from NAME.in (or /dev/null) and a 300 s timeout (a
# guard against a hang, not a timing: generous enough that a sanitized run
# on a loaded 2-core machine never reaches it), then
# compares:
#   stdout with NAME.out (required, exact bytes),
#   stderr with NAME.err (exact bytes; absent means stderr must be empty),
#     or, when NAME.errre exists instead, the whole of stderr (trailing
#     newlines dropped) must match that extended regular expression
#     (file content, trailing newlines dropped, anchored with ^...$ by the
#     test itself);
#   the exit status with NAME.status (absent means 0).
# Exit 0 on pass, 1 on fail (with a diff of what differed), 2 on misuse.
# When a run fails and GCLAB_LEFT_OUT_RULE names a collector's rule
# (tests/each_collector.sh), the rule is asked, in NAME's folder, as
#   RULE NAME STATUS STDOUT_FILE STDERR_FILE
# and where it exits 0 the test prints "LEFT OUT" with the rule's reason
# and exits 0; else the failure stands.
#
# The suite runs this thousands of times (every test under every
# collector), so it starts no process it can do without: a process start
# costs about 10 ms on the 2-core machine CI runs on.
set -u

if [ $# -lt 2 ]; then
  echo "usage: $0 VM_BINARY TEST.src [VM flags...]" >&2
  exit 2
fi

vm=$1
test_src=$2
shift 2

# The runner changes directory, so make a relative VM path with a slash
# absolute.
case $vm in
  /*) ;;
  */*) vm=$PWD/$vm ;;
esac

if [ ! -f "$test_src" ]; then
  echo "run.sh: no such test: $test_src" >&2
  exit 2
fi
case $test_src in
  */*) cd "${test_src%/*}" || exit 2 ;;
esac
dir=$PWD
base=${test_src##*/}
base=${base%.src}

if [ ! -f "$base.out" ]; then
  echo "run.sh: $test_src has no $base.out" >&2
  exit 2
fi

extra_flags=()
if [ -f "$base.flags" ]; then
  read -r -a extra_flags < "$base.flags"
fi
script_args=()
if [ -f "$base.args" ]; then
  read -r -a script_args < "$base.args"
fi
stdin_file=/dev/null
if [ -f "$base.in" ]; then
  stdin_file=$base.in
fi
expected_status=0
if [ -f "$base.status" ]; then
  read -r expected_status < "$base.status"
  expected_status=${expected_status//[[:space:]]/}
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gclab-lang.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

timeout 300 "$vm" "$@" "${extra_flags[@]}" "$base.src" "${script_args[@]}" \
  < "$stdin_file" > "$tmp/stdout" 2> "$tmp/stderr"
status=$?

fail=0
label="${dir##*/}/$base"
report=$tmp/report
{

if [ "$status" -eq 124 ]; then
  echo "FAIL $label: timed out after 300 s"
  fail=1
fi

if ! cmp -s "$base.out" "$tmp/stdout"; then
  echo "FAIL $label: stdout differs"
  diff -u --label expected --label actual "$base.out" "$tmp/stdout"
  fail=1
fi

if [ -f "$base.errre" ]; then
  pattern=$(< "$base.errre")
  actual_err=$(< "$tmp/stderr")
  if ! [[ $actual_err =~ $pattern ]]; then
    echo "FAIL $label: stderr does not match $base.errre"
    echo "--- pattern"
    printf '%s\n' "$pattern"
    echo "--- actual stderr"
    printf '%s\n' "$actual_err"
    fail=1
  fi
elif [ -f "$base.err" ]; then
  if ! cmp -s "$base.err" "$tmp/stderr"; then
    echo "FAIL $label: stderr differs"
    diff -u --label expected --label actual "$base.err" "$tmp/stderr"
    fail=1
  fi
elif [ -s "$tmp/stderr" ]; then
  echo "FAIL $label: stderr differs"
  diff -u --label expected --label actual /dev/null "$tmp/stderr"
  fail=1
fi

if [ "$status" != "$expected_status" ]; then
  echo "FAIL $label: exit status $status, expected $expected_status"
  fail=1
fi

} >"$report"

if [ $fail -eq 0 ]; then
  echo "PASS $label"
  exit 0
fi
if [ -n "${GCLAB_LEFT_OUT_RULE:-}" ] &&
  why=$("$GCLAB_LEFT_OUT_RULE" "$base" "$status" "$tmp/stdout" "$tmp/stderr"); then
  echo "LEFT OUT $label ($*): $why"
  exit 0
fi
cat "$report"
exit 1
