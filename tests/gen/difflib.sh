# Differential checking of one gclab program under every collector.
# Sourced by scripts/fuzz-diff and tests/gen/differential.sh (README.md here).
#
# Set before use:
#   DL_VM       the vm binary
#   DL_TMP      a scratch folder of this process's own
# Optional:
#   DL_TIMEOUT      seconds per run (default 60)
#   DL_VERIFY_GCS   collections aimed at in the --gc-verify run (default 200)
#   DL_STRESS_GCS   collections aimed at in the plain stress run (default 1000)
#   DL_COLLECTORS   the collectors to check, by name (default every one the
#                   VM lists; the reference is always the first it lists)
#   DL_ALL_VARIANTS 1: every collector in each of its variants (below)
#
# dl_check PROGRAM [SHARD] runs the program under the reference configuration
# (the first collector listed, default flags) and then, for every collector
# in one of its variants (the configurations the suite's stressed runs shard
# over, gc/collectors/NAME/test_variants, the default first: variant SHARD
# mod their number, so that a campaign passing each seed as SHARD covers
# every barrier, mesh and device layout at no more runs per program; every
# variant with DL_ALL_VARIANTS=1):
#   plain;
#   --gc-stress=SV --gc-verify, SV chosen so about DL_VERIFY_GCS collections
#     happen (1 for small programs: a collection at every allocation);
#   --gc-stress=SS, about DL_STRESS_GCS collections (skipped when SS == SV);
#   --heap=H, the smallest power of two from 512K that the reference
#     collector runs the program in (a collector that runs out of memory
#     there is run again in 2H; a variant that refuses H, exit 64, runs in
#     the smallest power of two above it that it takes).
# Every run's stdout and exit status must equal the reference run's. It sets
#   DL_RESULT   ok | disagree | reffail (the reference run itself failed)
#   DL_RUNS     runs done
#   DL_BAD      the flags of the first disagreeing run
#   DL_REF      the reference flags
#   DL_CONFIGS  every configuration's flags (array)
# and leaves each run's stdout, stderr and status in $DL_TMP/run.K.{out,err,status}
# (K: index in DL_CONFIGS; the reference is run.ref.*).

: "${DL_TIMEOUT:=60}"
: "${DL_VERIFY_GCS:=200}"
: "${DL_STRESS_GCS:=1000}"

DL_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

dl_collectors() {
  "$DL_VM" --list-gcs | awk '!/cannot run/ {print $1}'
}

# dl_unknown_collectors: the names in DL_COLLECTORS the VM does not list
# (a typo would otherwise show as every run of it disagreeing)
dl_unknown_collectors() {
  local listed name
  listed=" $(dl_collectors | tr '\n' ' ')"
  for name in ${DL_COLLECTORS:-}; do
    [[ $listed == *" $name "* ]] || printf '%s ' "$name"
  done
}

# dl_variants GC: the array DL_VARIANTS, GC's test configurations with the
# default ("") first (the format tests/each_collector.sh reads)
dl_variants() {
  DL_VARIANTS=("")
  local file="$DL_ROOT/gc/collectors/$1/test_variants" line
  [ -f "$file" ] || return 0
  while IFS= read -r line; do
    line=${line%%#*}
    [[ $line =~ ^[[:space:]]*$ ]] || DL_VARIANTS+=("$line")
  done < "$file"
}

# dl_run TAG PROGRAM FLAGS...: one run, results in $DL_TMP/run.TAG.*
dl_run() {
  local tag=$1 prog=$2
  shift 2
  # shellcheck disable=SC2086
  timeout "$DL_TIMEOUT" "$DL_VM" "$@" "$prog" < /dev/null \
    > "$DL_TMP/run.$tag.out" 2> "$DL_TMP/run.$tag.err"
  echo $? > "$DL_TMP/run.$tag.status"
}

# dl_same TAG1 TAG2: same stdout and status
dl_same() {
  cmp -s "$DL_TMP/run.$1.out" "$DL_TMP/run.$2.out" &&
    cmp -s "$DL_TMP/run.$1.status" "$DL_TMP/run.$2.status"
}

# dl_describe TAG [REFTAG]: one line on how run TAG differs from run REFTAG
# (default: the reference run)
dl_describe() {
  local tag=$1 ref=${2:-ref} st ref_st
  st=$(cat "$DL_TMP/run.$tag.status")
  ref_st=$(cat "$DL_TMP/run.$ref.status")
  local msg="exit status $st (reference $ref_st)"
  if ! cmp -s "$DL_TMP/run.$tag.out" "$DL_TMP/run.$ref.out"; then
    local n
    n=$(cmp "$DL_TMP/run.$tag.out" "$DL_TMP/run.$ref.out" 2>&1 | grep -v EOF | sed -n 's/.*line \([0-9]*\).*/\1/p')
    if [ -n "$n" ]; then
      msg="$msg; stdout line $n: '$(sed -n "${n}p" "$DL_TMP/run.$tag.out" | head -c 80)' vs '$(sed -n "${n}p" "$DL_TMP/run.$ref.out" | head -c 80)'"
    else
      msg="$msg; stdout: one is a prefix of the other ($(wc -l < "$DL_TMP/run.$tag.out") vs $(wc -l < "$DL_TMP/run.$ref.out") lines)"
    fi
  fi
  if [ -s "$DL_TMP/run.$tag.err" ]; then
    msg="$msg; stderr: $(head -c 300 "$DL_TMP/run.$tag.err" | head -3 | tr '\n' '|')"
  fi
  printf '%s\n' "$msg"
}

# dl_double_heap SIZE: 512K -> 1M, 1M -> 2M, ...
dl_double_heap() {
  case $1 in
    512K) echo 1M ;;
    *M) echo "$((${1%M} * 2))M" ;;
  esac
}

dl_check() {
  local prog=$1 shard=${2:-0}
  local gcs
  gcs=$(dl_collectors)
  DL_RUNS=0
  DL_BAD=
  DL_CONFIGS=()
  local first=${gcs%%[[:space:]]*}
  DL_REF="--gc=$first"
  dl_run ref "$prog" $DL_REF
  DL_RUNS=$((DL_RUNS + 1))
  if [ "$(cat "$DL_TMP/run.ref.status")" != 0 ]; then
    DL_RESULT=reffail
    DL_BAD=$DL_REF
    return
  fi

  # Allocation estimate: bytes allocated over a typical small object.
  { cat "$prog"; echo; echo 'print(gc_stats()["bytes_allocated"]);'; } > "$DL_TMP/probe.src"
  dl_run probe "$DL_TMP/probe.src" $DL_REF
  DL_RUNS=$((DL_RUNS + 1))
  local bytes allocs sv ss
  bytes=$(tail -1 "$DL_TMP/run.probe.out")
  case $bytes in ''|*[!0-9]*) bytes=1000000 ;; esac
  allocs=$((bytes / 48 + 1))
  sv=$((allocs / DL_VERIFY_GCS)); [ $sv -lt 1 ] && sv=1
  ss=$((allocs / DL_STRESS_GCS)); [ $ss -lt 1 ] && ss=1

  # The smallest heap the reference collector runs the program in.
  local heap=64M h
  for h in 512K 1M 2M 4M 8M 16M 32M 64M; do
    dl_run heapprobe "$prog" $DL_REF "--heap=$h"
    DL_RUNS=$((DL_RUNS + 1))
    if dl_same heapprobe ref; then heap=$h; break; fi
  done

  local gc never_collect variant chosen
  never_collect=" $("$DL_VM" --list-gcs | awk '/\(never collects\)/ {printf "%s ", $1}')"
  for gc in ${DL_COLLECTORS:-$gcs}; do
    dl_variants "$gc"
    if [ "${DL_ALL_VARIANTS:-0}" = 1 ]; then
      chosen=("${DL_VARIANTS[@]}")
    else
      chosen=("${DL_VARIANTS[$((shard % ${#DL_VARIANTS[@]}))]}")
    fi
    for variant in "${chosen[@]}"; do
      local run="--gc=$gc${variant:+ $variant}"
      DL_CONFIGS+=("$run")
      # A collector that never collects refuses --gc-stress, and the
      # reference's smallest heap is no bound on what it allocates.
      [[ $never_collect == *" $gc "* ]] && continue
      DL_CONFIGS+=("$run --gc-stress=$sv --gc-verify")
      [ "$ss" != "$sv" ] && DL_CONFIGS+=("$run --gc-stress=$ss")
      DL_CONFIGS+=("$run --heap=$heap")
    done
  done
  local k
  DL_RESULT=ok
  for k in "${!DL_CONFIGS[@]}"; do
    # shellcheck disable=SC2086
    dl_run "$k" "$prog" ${DL_CONFIGS[$k]}
    DL_RUNS=$((DL_RUNS + 1))
    # A variant may need more heap than the reference's smallest (a mesh of
    # 64 cores needs a partition each): a heap it refuses (exit 64) is
    # doubled until it takes one, as the plain run of it already did.
    local tries=0
    while [[ ${DL_CONFIGS[$k]} == *--heap=* ]] && [ "$(cat "$DL_TMP/run.$k.status")" = 64 ] && [ $tries -lt 8 ]; do
      DL_CONFIGS[$k]="${DL_CONFIGS[$k]%--heap=*}--heap=$(dl_double_heap "${DL_CONFIGS[$k]##*--heap=}")"
      # shellcheck disable=SC2086
      dl_run "$k" "$prog" ${DL_CONFIGS[$k]}
      DL_RUNS=$((DL_RUNS + 1))
      tries=$((tries + 1))
    done
    # Near a full heap a collector may need more room than the reference (a
    # non-moving one keeps a partly used block per size class): out of
    # memory in the reference's smallest heap is retried once in twice it.
    if [[ ${DL_CONFIGS[$k]} == *--heap=* ]] && ! dl_same "$k" ref && grep -q "out of memory" "$DL_TMP/run.$k.err"; then
      DL_CONFIGS[$k]="${DL_CONFIGS[$k]%--heap=*}--heap=$(dl_double_heap "${DL_CONFIGS[$k]##*--heap=}")"
      # shellcheck disable=SC2086
      dl_run "$k" "$prog" ${DL_CONFIGS[$k]}
      DL_RUNS=$((DL_RUNS + 1))
    fi
    if ! dl_same "$k" ref && [ "$DL_RESULT" = ok ]; then
      DL_RESULT=disagree
      DL_BAD=${DL_CONFIGS[$k]}
      DL_BAD_TAG=$k
    fi
  done
}
