#!/usr/bin/env bash
# The docs' figures that state a named constant agree with the code. A doc
# marks such a figure with an HTML comment right after it, on its line:
#   from-space is cut into 128 KB<!-- constant: 1 << kChunkShift --> chunks
# The comment holds an integer expression over constants (C operators and
# literals); the figure is the last number before the comment on that line,
# scaled by its unit if it has one (KB and KiB are 1024, MB and MiB 1024^2,
# GB and GiB 1024^3, as the docs write sizes; any other word is a count).
# Each constant is found as `constexpr ... kName = value;` under gc/, vm/
# and compiler/, its value evaluated with the constants it names.
#   tests/docs/constants_test.sh SOURCE_DIR
set -euo pipefail
top=$1
failures=0
checked=0

fail() {
  echo "FAIL $*"
  failures=$((failures + 1))
}

# Prints the value of constant $1, or fails with why not.
declare -A memo
constant_value() {
  local name=$1 defs def value values=()
  if [[ -n ${memo[$name]:-} ]]; then
    echo "${memo[$name]}"
    return
  fi
  # Scope::kName is the one defined in the files that define Scope.
  local files=("$top/gc" "$top/vm" "$top/compiler") bare=${name##*::}
  if [[ $name == *::* ]]; then
    mapfile -t files < <(grep -rlE "(class|struct) ${name%::*}\b" "${files[@]}")
  fi
  defs=$(grep -rhoE "constexpr [^;=(]*\b$bare = [^;]+;" "${files[@]}" || true)
  if [[ -z $defs ]]; then
    echo "no definition of $name" >&2
    return 1
  fi
  # The same name in two files must mean one value, whatever it is written as.
  while IFS= read -r def; do
    value=$(evaluate "$def") || return 1
    values+=("$value")
  done < <(sed -E 's/^[^=]*= //; s/;$//' <<<"$defs" | sort -u)
  if [[ $(printf '%s\n' "${values[@]}" | sort -u | wc -l) -ne 1 ]]; then
    echo "$name is defined with different values: ${values[*]}" >&2
    return 1
  fi
  memo[$name]=${values[0]}
  echo "${memo[$name]}"
}

# Evaluates a C integer expression whose names are constants.
evaluate() {
  local expr=$1 name value
  # uint64_t{1} is 1; digit separators and integer suffixes go.
  expr=$(sed -E "s/u?int[0-9]+_t\{([^}]*)\}/(\1)/g; s/([0-9])'([0-9])/\1\2/g; s/\b([0-9]+)(ull|ul|u|l)\b/\1/gI" <<<"$expr")
  for name in $(grep -oE '\b([A-Z][A-Za-z0-9]*::)?k[A-Z][A-Za-z0-9]*' <<<"$expr" | sort -u); do
    value=$(constant_value "$name") || return 1
    expr=$(sed -E "s/(^|[^:A-Za-z0-9])$name\b/\1($value)/g" <<<"$expr")
  done
  if ! grep -qE '^[][0-9 ()+*/%<>&|^~-]+$' <<<"$expr"; then
    echo "cannot evaluate '$1' (only integer constants and operators)" >&2
    return 1
  fi
  echo $((expr))
}

# One line per marked figure: file, line, figure as written, expression.
marks=$(cd "$top" && find docs -name '*.md' -print0 | sort -z | xargs -0 awk '
  {
    rest = $0
    while ((at = index(rest, "<!-- constant:")) > 0) {
      before = substr(rest, 1, at - 1)
      rest = substr(rest, at + 14)
      end = index(rest, "-->")
      expr = substr(rest, 1, end - 1)
      rest = substr(rest, end + 3)
      gsub(/^ +| +$/, "", expr)
      figure = ""
      while (match(before, /[0-9][0-9,]*( ?(KiB|KB|MiB|MB|GiB|GB))?/)) {
        figure = substr(before, RSTART, RLENGTH)
        before = substr(before, RSTART + RLENGTH)
      }
      printf "%s\t%d\t%s\t%s\n", FILENAME, FNR, figure, expr
    }
  }')

while IFS=$'\t' read -r file line figure expr; do
  [[ -n $file ]] || continue
  checked=$((checked + 1))
  if [[ -z $figure ]]; then
    fail "$file:$line: no figure before <!-- constant: $expr -->"
    continue
  fi
  number=${figure%%[ KMG]*}
  number=${number//,/}
  case $figure in
    *KiB | *KB) stated=$((number << 10)) ;;
    *MiB | *MB) stated=$((number << 20)) ;;
    *GiB | *GB) stated=$((number << 30)) ;;
    *) stated=$number ;;
  esac
  if ! actual=$(evaluate "$expr" 2>&1); then
    fail "$file:$line: $actual"
  elif [[ $stated -ne $actual ]]; then
    fail "$file:$line: the doc says $figure ($stated) but the code's $expr is $actual"
  fi
done <<<"$marks"

# A marker that does not parse would check nothing, and neither would none.
if [[ $checked -lt 12 ]]; then
  fail "only $checked marked figures in docs/; the markers may have been lost"
fi
echo "$checked marked figures checked, $failures wrong"
[[ $failures -eq 0 ]]
