# The observe tests' shared set-up, sourced after `set -u`: the VM and the
# source tree from the arguments, a scratch directory removed on exit, the
# PASS/FAIL tally, and for the browser tests headless Chromium.
#   . "$(dirname "$0")/lib.sh" "$1" "$2" NAME [browser]
vm=$1
top=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gclab-$3.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { echo "PASS $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

if [ "${4:-}" = browser ]; then
  browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
  if [ -z "$browser" ]; then
    echo "SKIP: no chromium (scripts/bootstrap installs it)"
    exit 77
  fi
  dump_dom() {  # URL -> the DOM after scripts ran, on stdout
    timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
      --disable-background-networking --disable-component-update --disable-sync --disable-dev-shm-usage \
      --user-data-dir="$(mktemp -d "$tmp/profile.XXXXXX")" --virtual-time-budget=10000 --dump-dom "$1" 2>/dev/null
  }
else
  command -v jq >/dev/null || { echo "FAIL: jq is missing (scripts/bootstrap installs it)"; exit 1; }
fi
