#!/usr/bin/env bash
# The course's labs (docs/course/labs/, and gc/collectors/NAME/lab.md for a
# collector that brings its own, so that a new collector still touches
# nothing outside its folder): every registered collector has a lab, every
# lab has the shape the course promises and its answers, and
# every ```sh block of every lab runs and exits 0, as a student would run
# it: the build installed as scripts/install does, `vm` on PATH, in a folder
# holding the installed samples/ and bench/, each lab's blocks in order in
# one folder. So the course cannot rot.
#
#   tests/course/labs_test.sh BUILD_DIR SOURCE_DIR
set -u
build=$1
top=$2
# shellcheck source=tests/cli/lib.sh
. "$top/tests/cli/lib.sh"
prefix=$tmp/prefix
if ! cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
  cat "$tmp/install.log"
  exit 1
fi
vm=$prefix/bin/vm

shopt -s nullglob
labs=("$top"/docs/course/labs/*.md "$top"/gc/collectors/*/lab.md)
check "there are labs" '[ ${#labs[@]} -gt 0 ]'

# Every registered collector is on some lab's Collectors line.
for gc in $("$vm" --list-gcs | awk '{print $1}'); do
  check "$gc has a lab" 'grep -qE "^Collectors: (.*, )?$gc(,|\$)" "${labs[@]}"'
done

# One ```sh block after another of a lab page, each to its own file.
extract_blocks() {
  awk -v dir="$2" '
    /^```sh$/ { n++; file = sprintf("%s/block-%02d.sh", dir, n); inside = 1; next }
    /^```/ && inside { inside = 0; close(file); next }
    inside { print > file }
  ' "$1"
}

cannot_run=$("$vm" --list-gcs | awk '/cannot run/ {print $1}')
# A lab's answers: docs/course/answers/NAME.md, or lab-answers.md beside a
# collector's own lab.
answers_of() {
  case $1 in
    */gc/collectors/*/lab.md) echo "$(dirname "$1")/lab-answers.md" ;;
    *) echo "$top/docs/course/answers/$(basename "$1")" ;;
  esac
}

for lab in "${labs[@]}"; do
  name=$(basename "$lab" .md)
  [ "$name" = lab ] && name=$(basename "$(dirname "$lab")")
  answers=$(answers_of "$lab")
  check "$name: titled '# Lab: ...'" '[ "$(head -n 1 "$lab" | cut -c1-7)" = "# Lab: " ]'
  check "$name: a Collectors line" 'grep -qE "^Collectors: [a-z]" "$lab"'
  for section in "## What you will learn" "## Steps" "## Questions"; do
    check "$name: '$section'" 'grep -qx "$section" "$lab"'
  done
  check "$name: its answers" '[ -s "$answers" ]'
  check "$name: links its answers" 'grep -qF "]($(realpath --relative-to="$(dirname "$lab")" "$answers"))" "$lab"'

  skip=
  for gc in $(grep -m1 "^Collectors: " "$lab" | cut -c13- | tr ',' ' '); do
    check "$name: $gc is a collector" '"$vm" --list-gcs | awk "{print \$1}" | grep -qx "$gc"'
    if echo "$cannot_run" | grep -qx "$gc"; then skip=$gc; fi
  done
  if [ -n "$skip" ]; then
    echo "SKIP: $name's commands ($skip cannot run here)"
    continue
  fi

  work="$tmp/$name"
  mkdir -p "$work/.blocks"
  ln -s "$prefix/share/gclab/samples" "$work/samples"
  ln -s "$prefix/share/gclab/bench" "$work/bench"
  extract_blocks "$lab" "$work/.blocks"
  blocks=("$work"/.blocks/block-*.sh)
  check "$name: has commands" '[ ${#blocks[@]} -gt 0 ]'
  for block in "${blocks[@]}"; do
    k=$(basename "$block" .sh)
    (cd "$work" && PATH="$prefix/bin:$PATH" timeout 300 bash -e "$block" >"$block.out" 2>"$block.err")
    status=$?
    check "$name: $k exits 0" '[ "$status" -eq 0 ]'
    if [ "$status" -ne 0 ]; then
      sed 's/^/    | /' "$block"
      tail -n 5 "$block.err" | sed 's/^/    ! /'
    fi
  done
done
exit $fail
