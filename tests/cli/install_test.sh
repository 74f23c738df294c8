#!/usr/bin/env bash
# cmake --install (what scripts/install runs) into a scratch prefix: vm runs
# from PREFIX/bin; its manual page is the one `vm --man` prints, is roff
# that groff reads without a warning, and has every option --help lists,
# every collector --list-gcs lists and every exit status; the docs and the
# labs' programs are installed.
#   tests/cli/install_test.sh BUILD_DIR SOURCE_DIR
set -u
build=$1
top=$2
# shellcheck source=tests/cli/lib.sh
. "$top/tests/cli/lib.sh"
prefix=$tmp/prefix

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1
status=$?
check "cmake --install: exit 0" '[ "$status" -eq 0 ]'
[ "$status" -eq 0 ] || sed 's/^/    ! /' "$tmp/install.log"
vm=$prefix/bin/vm
check "bin/vm --version" '[ "$("$vm" --version)" = "$("$build/vm" --version)" ]'
out=$("$vm" "$prefix/share/gclab/samples/hello.src")
check "bin/vm runs an installed sample" '[ "$out" = "$(cat "$top/samples/hello.expected")" ]'

page=$prefix/share/man/man1/vm.1
check "share/man/man1/vm.1" '[ -s "$page" ]'
check "vm.1 is what vm --man prints" '"$vm" --man | cmp -s - "$page"'
groff -man -Tutf8 -ww -z "$page" >"$tmp/groff.err" 2>&1
check "groff reads vm.1 without a warning" '[ $? -eq 0 ] && [ ! -s "$tmp/groff.err" ]'
sed 's/^/    ! /' "$tmp/groff.err"
# Plain text, as man shows it on an ASCII terminal.
groff -man -Tascii -P-cbou "$page" >"$tmp/page"
section() { awk -v s="$1" '/^[A-Z]/ { inside = $0 == s } inside' "$tmp/page"; }

# An option's spelling as --help gives it ("--gc-log[=debug|FILE|debug:FILE]",
# "-e", "-h, --help") is a tag: alone on its line, or its line's start.
is_tag() { awk -v t="$1" '{ sub(/^ +/, "") } index($0, t) == 1 { found = 1 } END { exit !found }'; }
"$vm" --help >"$tmp/help"
n=0
while read -r first second _; do
  spelling=$first
  [[ $first == *, ]] && spelling="$first $second"
  n=$((n + 1))
  check "vm.1 has $spelling" 'section OPTIONS | is_tag "$spelling"'
done < <(grep -E '^  -' "$tmp/help")
check "--help lists options" '[ "$n" -gt 20 ]'

for gc in $("$vm" --list-gcs | awk '{print $1}'); do
  check "vm.1 has the collector $gc" 'section COLLECTORS | grep -qE "^       $gc( |\$)"'
  check "vm.1 has --gc=$gc's options, if any" \
    '! grep -q "^--gc=$gc " "$tmp/help" || grep -qx "   Options of --gc=$gc" "$tmp/page"'
done

# The exit statuses: "exit status: 0 success, 64 bad command line, ...".
statuses=$(sed -n '/^exit status:/,$p' "$tmp/help" | tr '\n' ' ' | grep -oE '(: |, )[0-9]+ ' | tr -dc '0-9\n')
check "--help lists exit statuses" '[ "$(echo "$statuses" | wc -w)" -ge 6 ]'
for status in $statuses; do
  check "vm.1 has exit status $status" 'section "EXIT STATUS" | grep -qE "^       $status( |\$)"'
done

# The docs as in the tree, and the programs the labs run.
doc=$prefix/share/doc/gclab
check "share/doc/gclab/README.md" 'cmp -s "$top/README.md" "$doc/README.md"'
check "share/doc/gclab/docs is docs/" 'diff -r "$top/docs" "$doc/docs" >/dev/null'
shopt -s nullglob
for lab in "$top"/gc/collectors/*/lab*.md; do
  rel=${lab#"$top"/}
  check "share/doc/gclab/$rel" 'cmp -s "$lab" "$doc/$rel"'
done
for src in "$top"/samples/*.src "$top"/bench/*.src "$top"/bench/*/*.src; do
  rel=${src#"$top"/}
  [[ $rel == bench/lua/* ]] && continue
  check "share/gclab/$rel" 'cmp -s "$src" "$prefix/share/gclab/$rel"'
done
check "share/gclab: programs only" '[ -z "$(find "$prefix/share/gclab" ! -type d ! -name "*.src")" ]'
exit $fail
