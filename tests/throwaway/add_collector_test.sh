#!/usr/bin/env bash
# A collector is one folder plus its registry line (DESIGN.md): copies the
# source tree, drops collector/ in as gc/collectors/throwaway/, adds the
# registry entry and its include, checks that nothing else changed, builds
# the vm, and checks that --list-gcs shows the collector, that --help shows
# its option, and that the suite's collector loop runs language tests under
# it. One full build: minutes.
#   tests/throwaway/add_collector_test.sh SOURCE_DIR
set -u
src=$1
here=$(cd "$(dirname "$0")" && pwd)
git -C "$src" rev-parse --git-dir >/dev/null 2>&1 || { echo "skip: $src is not a git checkout"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }

tree=$tmp/tree
mkdir "$tree"
(cd "$src" && git ls-files -z | tar --null -T - -cf -) | tar -xf - -C "$tree" || exit 1
cp -r "$tree" "$tmp/before"
mkdir "$tree/gc/collectors/throwaway"
cp "$here/collector/"* "$tree/gc/collectors/throwaway/"
registry=$tree/gc/registry.cpp
sed -i '/^#include "gc\/collector.h"$/a #include "gc/collectors/throwaway/throwaway.h"' "$registry"
sed -i '0,/^  };$/s//      {"throwaway", "test-only: never collects", create_throwaway, nullptr, throwaway_option_table},\n  };/' \
  "$registry"
check "the registry has the entry" 'grep -q "create_throwaway, nullptr, throwaway_option_table" "$registry"'
changed=$(diff -rq "$tmp/before" "$tree" | sed "s|$tmp/||g" | sort)
check "nothing changed but the registry and the new folder" \
  '[ "$changed" = "$(printf "Files before/gc/registry.cpp and tree/gc/registry.cpp differ\nOnly in tree/gc/collectors: throwaway")" ]'

cmake -S "$tree" -B "$tree/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
  >"$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; exit 1; }
cmake --build "$tree/build" -j "${GCLAB_JOBS:-2}" --target vm >"$tmp/build.log" 2>&1 || { tail -n 50 "$tmp/build.log"; exit 1; }
vm=$tree/build/vm

check "--list-gcs shows it" '"$vm" --list-gcs | grep -q "^throwaway  test-only"'
check "--help --gc=throwaway shows its option" '"$vm" --help --gc=throwaway | grep -q -- "^  --throwaway-chunk=SIZE"'
check "--help --gc=markcompact does not" '! "$vm" --help --gc=markcompact | grep -q -- "--throwaway-chunk"'
"$vm" --throwaway-chunk=8K -e 'print(1);' 2>"$tmp/err"
check "its option without --gc=throwaway is refused" \
  '[ $? -eq 64 ] && [ "$(head -n 1 "$tmp/err")" = "vm: --throwaway-chunk is an option of throwaway; add --gc=throwaway" ]'
out=$("$vm" --gc=throwaway --throwaway-chunk=4K -e 'let a = []; for (let i = 0; i < 1000; i += 1) { push(a, [i]); } print(len(a));' 2>&1)
check "it runs a program with its option" '[ "$out" = 1000 ]'

# The suite's loop over collectors (it asks --list-gcs) picks it up with the
# others; and it passes alone, plain and stressed.
for t in functions/counter functions/closures_capture_variables classes/bound_methods; do
  check "each_collector.sh runs $t" '"$tree/tests/each_collector.sh" "$vm" "$tree/tests/lang/$t.src"'
  check "$t under throwaway" '"$tree/tests/lang/run.sh" "$vm" "$tree/tests/lang/$t.src" --gc=throwaway'
  check "$t under throwaway, stressed" \
    '"$tree/tests/lang/run.sh" "$vm" "$tree/tests/lang/$t.src" --gc=throwaway --gc-stress=1 --gc-verify'
done
exit $fail
