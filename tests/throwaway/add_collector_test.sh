#!/usr/bin/env bash
# A collector is one folder plus its registry line (docs/architecture.md,
# "Adding a collector"): copies the source tree, drops two collectors in,
# each as one folder plus its registry entry and include (collector/ as
# gc/collectors/throwaway/, which brings its own build part,
# collector.cmake, that its source cannot build without; and the course's
# copying collector, tests/course/copying/, as gc/collectors/copying/,
# built by default), checks that nothing else changed, builds the vm once,
# and checks that --list-gcs shows them, that --help shows
# throwaway's option, that the suite's collector loop runs language tests
# under them, and that the whole language suite passes under copying,
# plain and with --gc-stress=1 --gc-verify. First it holds
# docs/course/write-a-collector.md to tests/course/copying/: the files it
# lists whole equal them, its snippets are parts of them, and its registry
# line is the one added here. One full build: minutes.
#   tests/throwaway/add_collector_test.sh SOURCE_DIR
set -u
src=$1
here=$(cd "$(dirname "$0")" && pwd)
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The guide: a ```cpp block after "<!-- final: FILE -->" is FILE whole, one
# after "<!-- part of: FILE -->" lies in FILE as it is.
guide=$src/docs/course/write-a-collector.md
course=$src/tests/course/copying
copying_entry='      {.name = "copying", .description = "the course'"'"'s copying collector (docs/course/write-a-collector.md)", .create = create_copying, .uses_gc_threads = false},'
mkdir "$tmp/guide"
awk -v dir="$tmp/guide" '
  /^<!-- (final|part of): [a-z_.]+ -->$/ { kind = ($2 == "final:") ? "final" : "part"; name = $NF == "-->" ? $(NF - 1) : $NF; next }
  kind != "" && /^```cpp$/ { file = sprintf("%s/%s-%s-%02d", dir, kind, name, ++n); inside = 1; next }
  inside && /^```$/ { inside = 0; kind = ""; close(file); next }
  inside { print > file; next }
  NF { kind = "" }
' "$guide"
for f in copying.h copying.cpp; do
  check "the guide lists $f whole, as tests/course/copying/$f is" \
    '[ "$(ls "$tmp/guide" | grep -c "^final-$f-")" -eq 1 ] && cmp -s "$tmp/guide/final-$f-"* "$course/$f"'
  file_text=$(cat "$course/$f")
  for part in "$tmp/guide/part-$f-"*; do
    [ -e "$part" ] || continue
    part_text=$(cat "$part")
    check "the guide's snippet $(basename "$part") is in tests/course/copying/$f" '[[ "$file_text" == *"$part_text"* ]]'
  done
done
check "the guide shows the registry entry added here" 'grep -qxF -- "$copying_entry" "$guide"'

git -C "$src" rev-parse --git-dir >/dev/null 2>&1 || { echo "skip: $src is not a git checkout"; [ $fail -eq 0 ] && exit 77; exit 1; }

tree=$tmp/tree
mkdir "$tree"
(cd "$src" && git ls-files -z | tar --null -T - -cf -) | tar -xf - -C "$tree" || exit 1
cp -r "$tree" "$tmp/before"
mkdir "$tree/gc/collectors/throwaway" "$tree/gc/collectors/copying"
cp "$here/collector/"* "$tree/gc/collectors/throwaway/"
cp "$course/"* "$tree/gc/collectors/copying/"
registry=$tree/gc/registry.cpp
sed -i '/^#include "gc\/collector.h"$/a #include "gc/collectors/throwaway/throwaway.h"' "$registry"
sed -i '/^#include "gc\/collector.h"$/a #include "gc/collectors/copying/copying.h"' "$registry"
sed -i '0,/^  };$/s//      {"throwaway", "test-only: never collects", create_throwaway, nullptr, throwaway_option_table},\n  };/' \
  "$registry"
awk -v entry="$copying_entry" '!done && $0 == "  };" { print entry; done = 1 } { print }' "$registry" >"$tmp/registry" &&
  cp "$tmp/registry" "$registry"
check "the registry has the entries" \
  'grep -q "create_throwaway, nullptr, throwaway_option_table" "$registry" && grep -qxF -- "$copying_entry" "$registry"'
changed=$(diff -rq "$tmp/before" "$tree" | sed "s|$tmp/||g" | sort)
check "nothing changed but the registry and the two new folders" \
  '[ "$changed" = "$(printf "Files before/gc/registry.cpp and tree/gc/registry.cpp differ\nOnly in tree/gc/collectors: copying\nOnly in tree/gc/collectors: throwaway")" ]'

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

# The suite's loop over collectors (it asks --list-gcs) picks them up with
# the others; and throwaway passes alone, plain and stressed.
for t in functions/counter functions/closures_capture_variables classes/bound_methods; do
  check "each_collector.sh runs $t" '"$tree/tests/each_collector.sh" "$vm" "$tree/tests/lang/$t.src"'
  check "$t under throwaway" '"$tree/tests/lang/run.sh" "$vm" "$tree/tests/lang/$t.src" --gc=throwaway'
  check "$t under throwaway, stressed" \
    '"$tree/tests/lang/run.sh" "$vm" "$tree/tests/lang/$t.src" --gc=throwaway --gc-stress=1 --gc-verify'
done

# The course's copying collector passes the whole language suite, plain and
# stressed, two tests at a time.
check "--list-gcs shows copying" '"$vm" --list-gcs | grep -q "^copying  the course"'
find "$tree/tests/lang" -name '*.src' | sort | while read -r t; do [ -f "${t%.src}.out" ] && echo "$t"; done \
  >"$tmp/lang-tests"
check "there are language tests" '[ -s "$tmp/lang-tests" ]'
for flags in "" "--gc-stress=1 --gc-verify"; do
  # shellcheck disable=SC2086
  xargs -P 2 -I {} "$tree/tests/lang/run.sh" "$vm" {} --gc=copying $flags <"$tmp/lang-tests" >"$tmp/lang.log" 2>&1
  check "the language suite under copying ${flags:-plain}: $(grep -c '^PASS' "$tmp/lang.log") of $(wc -l <"$tmp/lang-tests") pass" \
    '! grep -q "^FAIL" "$tmp/lang.log" && [ "$(grep -c "^PASS" "$tmp/lang.log")" -eq "$(wc -l <"$tmp/lang-tests")" ]'
  grep -A 20 "^FAIL" "$tmp/lang.log" | head -n 60
done
exit $fail
