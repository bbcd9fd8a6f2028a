#!/usr/bin/env bash
# README is checked like code (issue 36):
#   1. every ```cpp block compiles: all of them, in README's order, go into one translation unit
#      (a block sees the declarations of the blocks before it, as a reader does), each at file
#      scope or in a function of its own. The line just before a block may say how:
#        <!-- snippet: main | Tensor x = randn({2, 4}); -->     (the default: in a function, after
#                                                               the context code)
#        <!-- snippet: file | include: a.h b.h | context -->    (at file scope, after the context,
#                                                               with these headers included first)
#      #include lines inside a block are moved to the top. Errors point to README.md's lines.
#   2. every project path README cites (`examples/x.cpp`, docs/y.png, scripts/z.sh, ...: a path
#      whose first part is a folder of the project) exists; another repository's paths are
#      written `owner/repo:path` and left alone;
#   3. every program README runs from the build (build/examples/X, build/bench/X, build/tests/X)
#      is one the build defines, and every scripts/ command exists.
# Usage: check_readme.sh SOURCE_DIR CXX CXXFLAGS...   (the flags give the include directories)
set -u
src=$1
cxx=$2
shift 2
readme=$src/README.md
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bad=0

# ---- 1. the C++ blocks
awk -v inc="$work/includes.h" -v body="$work/body.cpp" '
  function flush_context() {}
  /^```cpp/ {
    inblock = 1; n++; scope = "main"; ctx = ""
    if (prev ~ /^<!-- snippet:/) {
      d = prev; sub(/^<!-- snippet:[ ]*/, "", d); sub(/[ ]*-->[ ]*$/, "", d)
      k = split(d, part, / \| /)
      for (i = 1; i <= k; i++) {
        p = part[i]; gsub(/^[ ]+|[ ]+$/, "", p)
        if (i == 1 && (p == "main" || p == "file")) scope = p
        else if (p ~ /^include:/) {
          sub(/^include:[ ]*/, "", p); m = split(p, hs, / +/)
          for (j = 1; j <= m; j++) print "#include \"" hs[j] "\"" >> inc
        } else ctx = ctx p "\n"
      }
    }
    if (scope == "main") print "void snippet_" n "() {" >> body
    printf "%s", ctx >> body
    printf "#line %d \"README.md\"\n", NR + 1 >> body
    next
  }
  inblock && /^```/ {
    inblock = 0
    if (scope == "main") print "}" >> body
    next
  }
  inblock {
    if ($0 ~ /^#include /) { print $0 >> inc; print "" >> body }
    else print $0 >> body
    next
  }
  { prev = $0 }
  END { print n > "/dev/stderr" }
' "$readme" 2>"$work/count"
blocks=$(cat "$work/count")
{
  echo '#include <ember/ember.h>'
  echo '#include <iostream>'
  echo '#include <memory>'
  echo '#include <vector>'
  cat "$work/includes.h" 2>/dev/null
  echo 'namespace readme {'
  echo 'using namespace ember;'
  cat "$work/body.cpp"
  echo '}  // namespace readme'
  echo 'int main() { return 0; }'
} >"$work/readme_snippets.cpp"
if "$cxx" -std=c++17 -fsyntax-only -Wall -Wextra -Wno-unused-variable -Wno-unused-but-set-variable "$@" \
    "$work/readme_snippets.cpp" 2>"$work/errors"; then
  echo "ok: README's $blocks C++ blocks compile"
else
  echo "FAIL: README's C++ blocks do not compile:"
  head -40 "$work/errors"
  bad=1
fi

# ---- 2. the project's paths README cites
tops=$(cd "$src" && git ls-files 2>/dev/null | cut -d/ -f1 | sort -u | grep -v '\.' || ls -d */ | tr -d /)
missing=0
# (a path of another repository is written with it, `owner/repo:path`, and is not checked)
for p in $(grep -oE '(^|[^:A-Za-z0-9_./-])[A-Za-z0-9_.-]+(/[A-Za-z0-9_.*<>-]+)+/?' "$readme" | sed -E 's/^[^A-Za-z0-9_.-]//' | sort -u); do
  top=${p%%/*}
  printf '%s\n' $tops | grep -qx "$top" || continue
  case "$p" in *'<'*|*'>'*) continue ;; esac   # a placeholder: examples/<name>
  p=${p%.}                                   # the end of a sentence
  if ! compgen -G "$src/$p" >/dev/null; then
    echo "FAIL: README cites $p, which is not in the project"
    missing=1
  fi
done
[ $missing -eq 0 ] && echo "ok: every project path README cites exists"
bad=$((bad | missing))

# ---- 3. the programs and scripts README runs
unknown=0
for p in $(grep -oE 'build/(examples|bench|tests)/[A-Za-z0-9_/]+' "$readme" | sort -u); do
  name=${p##*/}
  [ -z "$name" ] && continue                 # a folder: build/examples/ascendc/
  if ! grep -rqE "add_executable\\(${name}[ )]|(foreach|ember_mpi_program)\\([^)]*\\b${name#libtorch_}\\b|ascendc_library\\(${name}\\b" \
      "$src/CMakeLists.txt" "$src/examples" "$src/bench" "$src/tests" --include=CMakeLists.txt; then
    echo "FAIL: README runs $p, which the build does not define"
    unknown=1
  fi
done
for p in $(grep -oE '(^|[ `(])scripts/[A-Za-z0-9_.-]+' "$readme" | sed -E 's/^[ `(]//' | sort -u); do
  [ -e "$src/$p" ] || { echo "FAIL: README runs $p, which is not in the project"; unknown=1; }
done
[ $unknown -eq 0 ] && echo "ok: every program and script README runs exists"
bad=$((bad | unknown))
exit $bad
