#!/usr/bin/env bash
# Hostile values for every option (tests/hostile/README.md): each option
# --help lists, under its own collector, with values that are empty,
# negative, zero, huge, non-numeric, out of range or otherwise odd. Every
# run must end in 0, 64 (a bad command line), 66 (a file it cannot read)
# or 73 (an output file it cannot write), with a one-line message, and the
# hint after it for 64 and 66, and
# never in a crash (a status of 128 or more, or 70 and 71: the VM itself
# failing on a trivial program). The one 70 allowed is --heap-snapshot's
# and --gc-animate's when the run made no collection they could write
# (docs/snapshot.md, docs/observability.md).
#
#   tests/cli/option_fuzz.sh VM              every option with a value of each kind
#   tests/cli/option_fuzz.sh VM SECONDS      then random combinations of 1 to
#                                            4 options for SECONDS (a campaign)
set -u
vm=$(realpath "$1")
seconds=${2:-0}
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$tmp" || exit 1

# "--NAME" or "--NAME=" with the collector that owns it ("" for the VM's).
options=()
owner=
while IFS= read -r line; do
  case $line in
    --gc=*) owner=${line#--gc=}; owner=${owner%% *} ;;
    "  --"*)
      spec=${line#  }
      spec=${spec%% *}
      name=${spec%%[=[]*}
      [[ $spec == *=* ]] && name="$name="
      options+=("$owner $name")
      ;;
  esac
done < <("$vm" --help)
check "--help lists options" '[ ${#options[@]} -gt 20 ]'

# One value of each kind for the sweep (what CI runs); the campaign draws
# from all of them.
sweep_values=("" "-1" "0" "1" "4294967297" "99999999999999999999999" "abc" "2T" "1e3" " 1" "%s%n"
  "/nonexistent/x" "x@99")
values=("${sweep_values[@]}" "2" "7" "64" "1023" "65536" "18446744073709551616" "1K" "1M" "1G" "0x10"
  "-0" "1 " "on" "off" "none" "dram" "top" "8x8" "0x0" "99x99" "../x" "@1" "semispace,semispace" ",")

runs=0
crashes=0
# run OPTION...: the VM with those options on a trivial program.
run() {
  runs=$((runs + 1))
  timeout -k 5 60 "$vm" "$@" -e 'print(1);' >out 2>err </dev/null
  local status=$?
  local ok=1
  case $status in
    0) ;;
    73) [ "$(wc -l <err)" -eq 1 ] && grep -q "^vm: cannot write the " err || ok=0 ;;
    64 | 66) [ "$(wc -l <err)" -eq 2 ] && [ "$(tail -n 1 err)" = "Try 'vm --help' for more information." ] || ok=0 ;;
    70) grep -Eq '^vm: (--heap-snapshot: no snapshot written|--gc-animate: no page written): ' err || ok=0 ;;
    *) ok=0 ;;
  esac
  if [ "$ok" = 0 ]; then
    crashes=$((crashes + 1))
    echo "FAIL: vm $* -e 'print(1);': exit $status"
    head -n 3 err | sed 's/^/    /'
    fail=1
  fi
}

for entry in "${options[@]}"; do
  owner=${entry%% *}
  name=${entry#* }
  gc=()
  [ -n "$owner" ] && gc=(--gc="$owner")
  # Actions print and leave; --compare runs every collector: once each.
  case $name in
    --list-gcs | --version | --man | --cl-list | --disasm) run "${gc[@]}" "$name"; continue ;;
  esac
  if [[ $name == *= ]]; then
    for v in "${sweep_values[@]}"; do
      [ "$name" = "--compare=" ] && [ -z "$v" ] && continue
      run "${gc[@]}" "$name$v"
    done
  else
    run "${gc[@]}" "$name"
    run "${gc[@]}" "$name=1"
  fi
done
echo "every option with a value of each kind: $runs runs, $crashes failures"

# A campaign: random options (of one collector, or the VM's) and values.
if [ "$seconds" -gt 0 ]; then
  end=$((SECONDS + seconds))
  sweep=$runs
  while [ "$SECONDS" -lt "$end" ]; do
    args=()
    for _ in $(seq 1 $((RANDOM % 4 + 1))); do
      entry=${options[RANDOM % ${#options[@]}]}
      owner=${entry%% *}
      name=${entry#* }
      case $name in --compare= | --list-gcs | --version | --man | --cl-list | --replay=) continue ;; esac
      [ -n "$owner" ] && args+=(--gc="$owner")
      if [[ $name == *= ]]; then args+=("$name${values[RANDOM % ${#values[@]}]}"); else args+=("$name"); fi
    done
    run "${args[@]}"
  done
  echo "campaign: $((runs - sweep)) runs in $seconds s, $crashes failures in all"
fi
exit $fail
