#!/usr/bin/env bash
# A campaign of --gc=cacheaware runs over meshes, GC threads, partition
# sizes and heaps, on fibers that keep arrays near a partition's size
# (tests/cacheaware/partition_fibers.src; tests/cacheaware/README.md).
#
#   tests/cacheaware/campaign.sh [--short | --full | --smoke] [-j N]
#                                [--timeout S] [--vm PATH] [--keep DIR]
#
#   --short       every mesh, thread count and partition size with every
#                 program, the heaps taken in turn, and a verified and a
#                 stressed slice (the default; a minute or two on 2 cores)
#   --full        every program on every heap, with the verified and
#                 stressed slices on every combination and a slice under
#                 --ca-huge=sequential (several minutes on 2 cores)
#   --smoke       a dozen runs around the configuration that once spun
#                 forever in balancing (the CTest test)
#   -j N          runs at once (default 2); each run has its GC threads
#   --timeout S   seconds a run may take (default 20); one still going
#                 then is slow if it ends collections in the next 5 s, else
#                 hung: gdb prints its threads, where there is one
#   --vm PATH     the VM (default: build/release/vm, built if out of date)
#   --keep DIR    keep every run's command, output and error in DIR
#
# Each run's output must equal the program's under --gc=marksweep with a
# large heap. Running out of memory is right only where marksweep also
# runs out at the same heap. Prints progress on a terminal, then one line
# (runs, failures, hangs, slow runs) and every such command line.
# Exit 0 when every run passed, 1 when any failed or hung, 64 on misuse.
set -u

usage() { sed -n '2,/^# Exit/p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "campaign.sh: $*" >&2; exit 64; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd) || exit 64
cd "$root" || exit 64

mode=short jobs=2 limit=20 grace=5 vm='' keep=''
while [ $# -gt 0 ]; do
  case $1 in
    --short | --full | --smoke) mode=${1#--}; shift ;;
    -j) [ $# -ge 2 ] || die "-j needs a number"; jobs=$2; shift 2 ;;
    -j*) jobs=${1#-j}; shift ;;
    --timeout) [ $# -ge 2 ] || die "--timeout needs seconds"; limit=$2; shift 2 ;;
    --timeout=*) limit=${1#*=}; shift ;;
    --vm) [ $# -ge 2 ] || die "--vm needs a path"; vm=$2; shift 2 ;;
    --vm=*) vm=${1#*=}; shift ;;
    --keep) [ $# -ge 2 ] || die "--keep needs a folder"; keep=$2; shift 2 ;;
    --keep=*) keep=${1#*=}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 64 ;;
  esac
done
case $jobs in '' | *[!0-9]* | 0) die "-j wants a positive number, got '$jobs'" ;; esac
case $limit in '' | *[!0-9]* | 0) die "--timeout wants a positive number of seconds, got '$limit'" ;; esac
if [ -z "$vm" ]; then
  scripts/build release vm || exit 64
  vm=build/release/vm
fi
[ -x "$vm" ] || die "no VM at $vm"
program=tests/cacheaware/partition_fibers.src

if [ -n "$keep" ]; then
  mkdir -p "$keep" || die "cannot create $keep"
  work=$keep
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/gclab-campaign.XXXXXX") || die "mktemp failed"
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work/ref" "$work/runs"

meshes=(1x1 1x2 2x2 4x2 4x4 8x8)
threads=(1 2 4)
partitions=(16K 32K 64K)
heaps=(4M 8M 32M)
# Program arguments: FIBERS ARRAYS SLOTS ROUNDS [band], SLOTS standing for
# a partition's slots. band is the shape of the old balancing hang. The
# bigger ones run out of memory in the tight heaps (marksweep too), and
# some only just fit: 1 fiber of 64K arrays in 8M, 4 of 32K in 8M.
programs=("3 40 SLOTS 6 band" "1 40 SLOTS 6" "4 24 SLOTS 6" "8 24 SLOTS 4" "16 12 SLOTS 4")
# Under --gc-stress a collection comes every few allocations, so the
# stressed runs get small programs, and bigger partitions (more small
# arrays, each collection more to do) fewer collections: --gc-stress=25 at
# 16K, 100 at 64K.
stressed_programs=("3 10 SLOTS 2 band" "2 8 SLOTS 2")
stress_for() { echo $((25 * ${1%K} / 16)); }

# The runs: each is the cacheaware options (with --heap) and the program's
# arguments, as one line each in runs_opts and runs_args.
runs_opts=() runs_args=()
add() { runs_opts+=("$1"); runs_args+=("$2"); }
slots() { echo $((${1%K} * 1024 / 8)); }
args_for() { echo "${1/SLOTS/$(slots "$2")}"; }

case $mode in
  smoke)
    # The old hang: one thread hosting the four cores of a 2x2 mesh.
    for t in 1 2; do
      for m in 2x2 4x2 8x8; do
        add "--gc-threads=$t --ca-mesh=$m --ca-partition-size=16K --heap=4M" "$(args_for "${programs[0]}" 16K)"
      done
    done
    add "--gc-threads=1 --ca-mesh=4x4 --ca-partition-size=32K --heap=16M" "$(args_for "${programs[4]}" 32K)"
    add "--gc-threads=4 --ca-mesh=8x8 --ca-partition-size=64K --heap=32M" "$(args_for "${programs[4]}" 64K)"
    add "--gc-threads=2 --ca-mesh=1x1 --ca-partition-size=16K --heap=4M" "$(args_for "${programs[1]}" 16K)"
    add "--gc-threads=1 --ca-mesh=2x2 --ca-partition-size=16K --heap=8M --gc-verify --gc-stress=$(stress_for 16K)" \
      "$(args_for "${stressed_programs[0]}" 16K)"
    add "--gc-threads=2 --ca-mesh=4x2 --ca-partition-size=16K --heap=8M --gc-verify --gc-stress=$(stress_for 16K)" \
      "$(args_for "${stressed_programs[1]}" 16K)"
    ;;
  short | full)
    i=0
    for m in "${meshes[@]}"; do
      for t in "${threads[@]}"; do
        for p in "${partitions[@]}"; do
          base="--gc-threads=$t --ca-mesh=$m --ca-partition-size=$p"
          for prog in "${programs[@]}"; do
            if [ "$mode" = full ]; then
              for h in "${heaps[@]}"; do add "$base --heap=$h" "$(args_for "$prog" "$p")"; done
            else
              add "$base --heap=${heaps[i % ${#heaps[@]}]}" "$(args_for "$prog" "$p")"
              i=$((i + 1))
            fi
          done
          # The verified and stressed slices: in short mode only 16K.
          [ "$mode" = short ] && [ "$p" != 16K ] && continue
          add "$base --heap=8M --gc-verify" "$(args_for "${programs[0]}" "$p")"
          add "$base --heap=8M --gc-verify" "$(args_for "${programs[2]}" "$p")"
          for prog in "${stressed_programs[@]}"; do
            add "$base --heap=8M --gc-verify --gc-stress=$(stress_for "$p")" "$(args_for "$prog" "$p")"
          done
          [ "$mode" = full ] &&
            add "$base --heap=32M --ca-huge=sequential" "$(args_for "${programs[4]}" "$p")"
        done
      done
    done
    ;;
esac
total=${#runs_opts[@]}

# References: each program's output under marksweep with room to spare,
# and whether marksweep runs out of memory at each heap a run uses.
declare -A ref_key=()
heap_of() {
  local h=${1##*--heap=}
  echo "${h%% *}"
}
for ((n = 0; n < total; n++)); do
  heap=$(heap_of "${runs_opts[n]}")
  ref_key["${runs_args[n]}"]=1
  ref_key["${runs_args[n]}|$heap"]=1
done
key_file() { echo "$work/ref/$(tr ' |' '_-' <<<"$1")"; }
reference() {
  local key=$1 heap=256M
  [[ $key == *'|'* ]] && heap=${key#*|}
  # shellcheck disable=SC2086 # program arguments are words
  timeout $((limit * 5)) "$vm" --gc=marksweep --heap="$heap" "$program" ${key%|*} \
    >"$(key_file "$key").out" 2>"$(key_file "$key").err"
  echo $? >"$(key_file "$key").rc"
}
out_of_memory() { [ "$(cat "$1.rc")" = 70 ] && grep -q 'out of memory' "$1.err"; }

# One run, in the background: its verdict (pass, oom, fail: WHY, hang) in
# N.verdict. A watchdog stands in for timeout(1) so that a hung VM's
# threads can be printed before it is killed.
run_one() {
  local n=$1 base=$work/runs/$1
  local heap
  heap=$(heap_of "${runs_opts[n]}")
  # shellcheck disable=SC2206 # options and arguments are words
  local opts=(--gc=cacheaware ${runs_opts[n]})
  echo "$vm ${opts[*]} $program ${runs_args[n]}" >"$base.cmd"
  # shellcheck disable=SC2086 # program arguments are words
  "$vm" "${opts[@]}" --gc-log="$base.log" "$program" ${runs_args[n]} >"$base.out" 2>"$base.err" &
  local pid=$!
  # A run past the limit that still ends collections is slow (a loaded
  # machine, a stressed run); one that ends none for $grace more seconds is
  # hung.
  (
    s=
    trap 'kill $s 2>/dev/null; exit 0' TERM
    sleep "$limit" &
    s=$!
    wait $s
    kill -0 "$pid" 2>/dev/null || exit 0
    before=$(stat -c %s "$base.log" 2>/dev/null || echo 0)
    sleep "$grace" &
    s=$!
    wait $s
    kill -0 "$pid" 2>/dev/null || exit 0
    if [ "$(stat -c %s "$base.log" 2>/dev/null || echo 0)" != "$before" ]; then
      : >"$base.slow"
    else
      : >"$base.hung"
      command -v gdb >/dev/null &&
        timeout 60 gdb -p "$pid" -batch -ex 'thread apply all bt' >"$base.bt" 2>&1
    fi
    kill -KILL "$pid" 2>/dev/null
  ) &
  local watchdog=$!
  # Quiet: the shell would report a hung run's kill.
  wait "$pid" 2>/dev/null
  local rc=$?
  kill "$watchdog" 2>/dev/null
  wait "$watchdog" 2>/dev/null
  local ref at_heap verdict
  ref=$(key_file "${runs_args[n]}")
  at_heap=$(key_file "${runs_args[n]}|$heap")
  if [ -e "$base.hung" ] && [ $rc = 137 ]; then
    verdict=hang
  elif [ -e "$base.slow" ] && [ $rc = 137 ]; then
    verdict=slow
  elif [ "$(cat "$ref.rc")" != 0 ]; then
    verdict="fail: marksweep with a heap of 256M exits $(cat "$ref.rc")"
  elif [ $rc = 0 ] && cmp -s "$base.out" "$ref.out"; then
    verdict=pass
  elif [ $rc = 0 ]; then
    verdict="fail: output differs from marksweep's"
  elif [ $rc = 70 ] && grep -q 'out of memory' "$base.err"; then
    if out_of_memory "$at_heap"; then verdict=oom; else verdict="fail: out of memory where marksweep fits"; fi
  else
    verdict="fail: exit $rc: $(grep -m1 . "$base.err")"
  fi
  echo "$verdict" >"$base.verdict"
}

tty=0
[ -t 1 ] && tty=1
progress() { [ $tty = 1 ] && printf '\r  %s %d/%d, %d failed, %d hung ' "$1" "$2" "$3" "$failed" "$hung"; }
failed=0 hung=0 slow=0
# Runs COUNT jobs of FUNCTION (called with 0..COUNT-1), JOBS at once.
pool() {
  local what=$1 count=$2 fn=$3 next=0 done=0 running=0 id
  declare -A index=()
  while [ $done -lt "$count" ]; do
    while [ $running -lt "$jobs" ] && [ $next -lt "$count" ]; do
      "$fn" "$next" &
      index[$!]=$next
      next=$((next + 1)) running=$((running + 1))
    done
    wait -n -p id
    running=$((running - 1)) done=$((done + 1))
    [ "$fn" = run_one ] && note "${index[$id]}"
    progress "$what" "$done" "$count"
  done
  [ $tty = 1 ] && printf '\r\033[K'
}
note() {
  local v
  v=$(cat "$work/runs/$1.verdict" 2>/dev/null || echo "fail: no verdict")
  case $v in
    pass | oom) return ;;
    slow) slow=$((slow + 1)) ;;
    hang) hung=$((hung + 1)) ;;
    *) failed=$((failed + 1)) ;;
  esac
  [ $tty = 1 ] && printf '\r\033[K'
  echo "$v: $(cat "$work/runs/$1.cmd")"
}

keys=("${!ref_key[@]}")
ref_one() { reference "${keys[$1]}"; }
echo "campaign ($mode): $total cacheaware runs, ${#keys[@]} marksweep references, $jobs at once, ${limit}s each"
start=$SECONDS
pool references "${#keys[@]}" ref_one
pool runs "$total" run_one

oom=$(cat "$work"/runs/*.verdict | grep -cx oom)
echo "campaign ($mode): $total runs in $((SECONDS - start))s, $failed failed, $hung hung, $slow slow" \
  "($oom out of memory as marksweep is)"
# A slow run is listed but fails nothing: it was still collecting, so
# nothing says it would not have ended right.
if [ $((failed + hung + slow)) -gt 0 ]; then
  echo "runs that failed, hung or were too slow (from the repository root):"
  for ((n = 0; n < total; n++)); do
    v=$(cat "$work/runs/$n.verdict" 2>/dev/null || echo "fail: no verdict")
    case $v in pass | oom) continue ;; esac
    echo "  $(cat "$work/runs/$n.cmd")    # $v"
    [ -s "$work/runs/$n.bt" ] && [ -n "$keep" ] && echo "    threads: $work/runs/$n.bt"
  done
fi
[ $((failed + hung)) = 0 ]
