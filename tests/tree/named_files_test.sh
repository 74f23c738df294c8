#!/usr/bin/env bash
# Every file a comment names exists, so a pointer to a doc or a source
# outlives no rename.
#
#   tests/tree/named_files_test.sh SOURCE_DIR
#
# It reads the comments of the tracked sources (// in C++, OpenCL, the
# language and JavaScript; # in shell and CMake; -- in Lua) and takes every
# word ending in a source or doc extension as a file name. A name with a
# slash must be a path from the top of the tree, from the commenting
# file's folder, or the tail of a tracked path (markcompact/card_scan.h);
# a bare .md, .h, .cpp, .cl, .sh or .cmake name must be some tracked
# file's name or one the build makes (named in a CMake file). Bare program
# and data names (prog.src, t.json) are examples, and so are names with a
# placeholder (NAME, FOLDER, SEED, path/to/), a shell variable, or angle
# brackets (<sysexits.h>, a system header).
set -u
src=$1
cd "$src" || exit 2
if ! tracked=$(git ls-files 2>/dev/null) || [ -z "$tracked" ]; then
  echo "named_files_test.sh: $src is not a git checkout; skipped"
  exit 77
fi
extensions='md|h|cpp|cl|sh|src|cmake|json|txt|js|lua|out|flags'
placeholder='(^|[^A-Za-z])(NAME|FOLDER|SEED|FILE|PRESET|WHAT)([^A-Za-z]|$)|(^|/)path/to/|\*'
cmake_text=$(git ls-files -- '*.cmake' '*CMakeLists.txt' | xargs cat)

# file:line:comment text, for every comment in the tracked sources.
comments() {
  git ls-files -- '*.h' '*.cpp' '*.cl' '*.src' '*.js' | while read -r f; do
    grep -n -o '//.*' "$f" | sed "s|^|$f:|"
  done
  git ls-files -- '*.sh' '*.cmake' '*CMakeLists.txt' 'scripts/*' '.ci/*' | while read -r f; do
    grep -n -oE '(^[[:space:]]*#|[[:space:]]#[[:space:]]).*' "$f" | sed "s|^|$f:|"
  done
  git ls-files -- '*.lua' | while read -r f; do
    grep -n -o -- '--.*' "$f" | sed "s|^|$f:|"
  done
}

is_tracked_tail() { grep -qE "(^|/)${1//./\\.}\$" <<<"$tracked"; }

fail=0
while IFS=: read -r file line name; do
  case $name in '<'* | *'$'* | *'{'* | *'}'*) continue ;; esac
  [[ $name =~ $placeholder ]] && continue
  name=${name#./}
  if [[ $name == */* ]]; then
    [[ -e $name || -e $(dirname "$file")/$name ]] && continue
    is_tracked_tail "$name" && continue
  else
    [[ $name =~ \.(md|h|cpp|cl|sh|cmake)$ ]] || continue
    is_tracked_tail "$name" && continue
    grep -qF -- "$name" <<<"$cmake_text" && continue
  fi
  echo "FAIL: $file:$line names $name, which does not exist"
  fail=1
done < <(comments | grep -oE "^[^:]+:[0-9]+:|<?[A-Za-z0-9_./\${}*-]*[A-Za-z0-9_]\.($extensions)\b" |
  awk '/:$/ { where = $0; next } { print where $0 }')
[ "$fail" = 0 ] && echo "ok: every file a comment names exists"
exit "$fail"
