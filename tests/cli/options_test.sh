#!/usr/bin/env bash
# The command line built from the option tables (gc/options.h): collector
# options reach only the collector that owns them, --help shows one group
# per collector (or one with --gc=NAME), every bad value is one usage line
# and exit 64, an output file that cannot be written is one line and exit
# 73 before anything runs, and a collector's action (--cl-list) still runs.
#   tests/cli/options_test.sh VM
set -u
vm=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"

# An option of a collector that is not selected names its owners.
usage_error "--young is an option of markcompact; add --gc=markcompact" --young=1M
usage_error "--young is an option of markcompact; add --gc=markcompact" --gc=marksweep --young=1M
usage_error "--gpu-split is an option of gpu; add --gc=gpu" --gc=markcompact --gpu-split=4
usage_error "--gc-lab is an option of semispace and markcompact; add --gc=semispace or --gc=markcompact" \
  --gc=marksweep --gc-lab=32K
usage_error "--forwarding is an option of semispace; add --gc=semispace" --gc=markcompact --forwarding=cas
usage_error "bad forwarding protocol 'x' (owner or cas)" --forwarding=x

# Options come before or after --gc=; the default collector owns --gc-lab.
for args in "--young=1M --gc=markcompact" "--gc=markcompact --young=1M" "--gc-lab=64K" \
  "--forwarding=cas --gc-threads=2" "--gc=semispace --forwarding=owner"; do
  # shellcheck disable=SC2086
  out=$("$vm" $args -e 'print("ran");' 2>&1)
  check "$args: runs" '[ "$out" = ran ]'
done

# A bad value of each kind.
usage_error "bad thread count 'x'" --gc-threads=x
usage_error "bad heap size '1Q' (at least 256K, the smallest heap every collector starts the VM in; examples: 64M, 2G; or a multiple of the minimum heap, such as 2.5x)" --heap=1Q
usage_error "bad heap size '1K' (at least 256K, the smallest heap every collector starts the VM in; examples: 64M, 2G; or a multiple of the minimum heap, such as 2.5x)" --heap=1K
for gc in $("$vm" --list-gcs | awk '!/cannot run/ {print $1}'); do
  out=$("$vm" --gc="$gc" --heap=256K -e 'print(1);' 2>&1)
  check "the smallest heap, 256K, starts $gc" '[ "$out" = 1 ]'
done
usage_error "bad young generation size '1K' (at least 64K)" --gc=markcompact --young=1K
usage_error "bad card partition 'rows' (strides or blocks)" --gc=markcompact --card-partition=rows
usage_error "bad dense prefix '10' (off, or 50 to 100 percent live)" --gc=markcompact --dense-prefix=10
usage_error "bad --gpu-tail '1,x' (WIDTH[,ITERATIONS], e.g. 20,5; 0: never)" --gc=gpu --gpu-tail=1,x
usage_error "bad --gpu-launch 'x' (collection or level)" --gc=gpu --gpu-launch=x
usage_error "bad --gpu-offsets 'x' (histogram, prefix or atomic)" --gc=gpu --gpu-offsets=x
usage_error "bad --gpu-heap 'x' (direct, graph or shared)" --gc=gpu --gpu-heap=x
usage_error "bad --gpu-graph 'x' (rebuild or double-write)" --gc=gpu --gpu-heap=graph --gpu-graph=x
usage_error "--gpu-graph applies to --gpu-heap=graph only" --gc=gpu --gpu-graph=double-write
usage_error "--gpu-graph=double-write: its 32-bit entries reach 32 GiB of the heap's reservation, which holds 5 times --heap (room for large objects), so --heap must be at most 6G" \
  --gc=gpu --gpu-heap=graph --gpu-graph=double-write --heap=7G
usage_error "unknown collector 'nogc' (see --list-gcs)" --gc=nogc
usage_error "unknown option '--gc-verify=yes'" --gc-verify=yes
usage_error "unknown option '--heap'" --heap
usage_error "unknown option '--cl-list=1'" --cl-list=1

# --help: the VM's options, then one group per collector with options.
"$vm" --help >"$tmp/help"
check "--help: exit 0" '[ $? -eq 0 ]'
for flag in --gc= --heap= --gc-threads= --gc-deque= --gc-lab= --young= --gpu-heap= --cl-list; do
  check "--help lists $flag" 'grep -q -- "^  $flag" "$tmp/help"'
done
check "--help: a group per collector" \
  '[ "$(grep -c "^--gc=\(semispace\|markcompact\|gpu\) " "$tmp/help")" -eq 3 ]'
for order in "--help --gc=markcompact" "--gc=markcompact --help"; do
  # shellcheck disable=SC2086
  "$vm" $order >"$tmp/help"
  check "$order: lists --young" 'grep -q -- "^  --young=SIZE" "$tmp/help"'
  check "$order: lists --gc-lab" 'grep -q -- "^  --gc-lab=SIZE" "$tmp/help"'
  check "$order: not --gpu-heap" '! grep -q -- "--gpu-heap" "$tmp/help"'
  check "$order: still the VM's options" 'grep -q -- "^  --gc-threads=N" "$tmp/help"'
done

# Every option that writes a file, into a folder that does not exist and
# onto a folder: refused before the program runs, exit 73 (EX_CANTCREAT),
# one line naming the output and the file; --compare and --min-heap check
# theirs too.
mkdir -p "$tmp/folder"
for entry in "GC log||--gc-log=" "GC statistics||--gc-stats=json:" "GC trace||--gc-trace=" \
  "GC report||--gc-report=" "heap snapshot||--heap-snapshot=" "GC animation||--gc-animate=" \
  "GC report|--compare|--gc-report=" "GC statistics|--min-heap|--gc-stats=json:"; do
  IFS='|' read -r what mode option <<<"$entry"
  for file in /nonexistent/out "$tmp/folder"; do
    # shellcheck disable=SC2086
    "$vm" $mode "$option$file" -e 'gc(); print("ran");' >"$tmp/out" 2>"$tmp/err"
    status=$?
    check "${mode:+$mode }$option$file: exit 73, nothing runs, one line" \
      '[ "$status" -eq 73 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "^vm: cannot write the $what to '"'"'$file'"'"': " "$tmp/err"'
  done
done

# --cl-list belongs to gpu and needs no --gc=gpu; it runs where it stands.
"$vm" --cl-list >"$tmp/out" 2>"$tmp/err"
check "--cl-list: exit 0" '[ $? -eq 0 ]'
check "--cl-list: nothing on stderr" '[ ! -s "$tmp/err" ]'
"$vm" --cl-list --gc-threads=x >"$tmp/out2" 2>&1
check "--cl-list stops before later options" '[ $? -eq 0 ] && cmp -s "$tmp/out" "$tmp/out2"'

# Everything after the script is the program's, even what looks like an option.
printf 'print(args);\n' >"$tmp/args.src"
out=$("$vm" "$tmp/args.src" --young=1 -x - --help)
check "arguments after the script pass through" '[ "$out" = "[\"--young=1\", \"-x\", \"-\", \"--help\"]" ]'
out=$(printf 'print(args);\n' | "$vm" - --gc=none)
check "- reads standard input; what follows passes through" '[ "$out" = "[\"--gc=none\"]" ]'
exit $fail
