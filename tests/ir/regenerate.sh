#!/usr/bin/env bash
# Rewrites the expected output of golden IR tests (tests/ir/*.tir) from what tessera-opt prints now:
# everything after a file's '// EXPECT:' line becomes the output of
#   tessera-opt --no-loc [--target NAME] --pass <p1> --pass <p2> ... <the file's input>
# for the target and passes on its '// RUN:' line (as tests/ir/golden_test.cpp runs them). The RUN line, the
# comments and the input are kept as they are. Review what changed with `git diff tests/ir`, and
# update a file's comment when the change is meant: a golden file pins what its comment says.
#
#   tests/ir/regenerate.sh [TESSERA_OPT] [FILE.tir ...]
#
# TESSERA_OPT: the tessera-opt binary (or $TESSERA_OPT; default: build/tessera-opt, then the newest
# build*/tessera-opt of this checkout). Without files, every tests/ir/*.tir.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

opt=${TESSERA_OPT:-}
if [ $# -gt 0 ] && [ "${1%.tir}" = "$1" ]; then opt=$1; shift; fi
if [ -z "$opt" ]; then
  if [ -x "$root/build/tessera-opt" ]; then opt=$root/build/tessera-opt
  else opt=$(ls -t "$root"/build*/tessera-opt 2>/dev/null | head -1 || true); fi
fi
if [ -z "$opt" ] || [ ! -x "$opt" ]; then
  echo "regenerate.sh: no tessera-opt found (build the tessera-opt target, or pass its path)" >&2
  exit 2
fi

files=("$@")
[ ${#files[@]} -gt 0 ] || files=("$here"/*.tir)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
changed=0
for f in "${files[@]}"; do
  first=$(head -n 1 "$f")
  case "$first" in
    "// RUN:"*) ;;
    *) echo "$f: the first line must be '// RUN: [--target NAME] <passes>'" >&2; exit 1 ;;
  esac
  args=()
  target_next=0
  for p in ${first#// RUN:}; do
    if [ "$p" = --target ]; then target_next=1; continue; fi
    if [ $target_next = 1 ]; then args+=(--target "$p"); target_next=0; else args+=(--pass "$p"); fi
  done
  n=$(grep -n -x -m 1 '// EXPECT:' "$f" | cut -d: -f1 || true)
  if [ -z "$n" ]; then echo "$f: no '// EXPECT:' line" >&2; exit 1; fi
  sed -n "2,$((n - 1))p" "$f" > "$tmp/input.tir"
  if ! "$opt" --no-loc "${args[@]}" "$tmp/input.tir" > "$tmp/output" 2>&1; then
    echo "$f: tessera-opt failed:" >&2
    cat "$tmp/output" >&2
    exit 1
  fi
  { head -n "$n" "$f"; cat "$tmp/output"; } > "$tmp/new.tir"
  if ! cmp -s "$tmp/new.tir" "$f"; then
    cat "$tmp/new.tir" > "$f"
    echo "rewrote $f"
    changed=$((changed + 1))
  fi
done
echo "$changed of ${#files[@]} golden file(s) changed (tessera-opt: $opt); review with: git diff tests/ir"
