#!/usr/bin/env bash
# `make test-install`: the library as a user installs it, beside the newest versions its ranges
# allow. Builds this checkout's wheel, makes a fresh venv with Python 3.11 (PY), installs the
# wheel there with the newest versions pyproject.toml's ranges allow of every dependency but
# torch (torch: the lock's version, CPU build: a local wheel if pip's find-links has one, else
# download.pytorch.org's CPU index; never PyPI's CUDA build), and pytest and hypothesis from the
# [dev] extra's ranges; then
#   1. the unit tests that need neither Snakemake nor plotting nor the dev tools
#      (`pytest -m "not extras"`: tests/conftest.py marks the others), run against the installed
#      wheel, not src/;
#   2. `entropic-bound predict` on a tiny attention file written here: exit 0, the teacher's
#      rank, the same in --json; and a NaN file refused in one line with exit 2.
# Prints the venv's `pip freeze` and the time of each step. Needs the network (PyPI).
#   bash tests/packaging/install_test.sh [python3.11]
set -euo pipefail
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
PY="$("${1:-python3.11}" -c 'import sys; print(sys.executable)')"  # past pyenv's slow shims
WORK="$(mktemp -d "${TMPDIR:-/tmp}/eb-install.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
START=$SECONDS
step() { echo "== [$((SECONDS - START)) s] $*"; }
quiet() { grep -v "^WARNING: Location 'file" || true; }  # this machine's empty local indexes

step "wheel of $REPO (its working tree, in a copy: a build writes build/ and *.egg-info)"
(cd "$REPO" && git ls-files -z --cached --others --exclude-standard |
  tar --null -T - -cf - 2>/dev/null) | (mkdir "$WORK/src" && tar -xf - -C "$WORK/src")
"$PY" -m pip wheel -q --no-deps -w "$WORK/dist" "$WORK/src" 2>&1 | quiet  # isolated build
WHEEL="$(ls "$WORK"/dist/entropic_bound-*.whl)"
echo "$(basename "$WHEEL")"

step "fresh venv ($("$PY" --version)), torch at the lock's version, CPU build"
V="$WORK/venv/bin"
"$PY" -m venv "$WORK/venv"
"$V/pip" install -q --upgrade pip 2>&1 | quiet
TORCH="$(grep -o '^torch==[^ ]*' "$REPO/requirements/lock.txt")"  # torch==2.13.0+cpu
echo "$TORCH" > "$WORK/torch.txt"
if "$V/pip" download -q --no-index --no-deps -d "$WORK/torch" "$TORCH" 2>/dev/null; then
  "$V/pip" install -q "$WORK"/torch/torch-*.whl 2>&1 | quiet  # the local wheel; its deps: PyPI
else
  "$V/pip" install -q "$TORCH" --index-url https://download.pytorch.org/whl/cpu \
    --extra-index-url https://pypi.org/simple 2>&1 | quiet
fi

step "the wheel and the newest versions within its ranges (torch held at $TORCH)"
TEST_REQS="$("$V/python" - "$REPO/pyproject.toml" <<'PY'
import sys, tomllib
dev = tomllib.load(open(sys.argv[1], "rb"))["project"]["optional-dependencies"]["dev"]
print("\n".join(r for r in dev if r.split(">")[0].split("<")[0] in ("pytest", "hypothesis")))
PY
)"
mapfile -t TEST_REQS <<< "$TEST_REQS"
"$V/pip" install -q --upgrade --upgrade-strategy eager -c "$WORK/torch.txt" "$WHEEL" \
  "${TEST_REQS[@]}" 2>&1 | quiet
"$V/pip" freeze | grep -v '^entropic-bound @' | tee "$WORK/freeze.txt"
for absent in snakemake matplotlib seaborn; do
  if "$V/python" -c "import $absent" 2>/dev/null; then echo "FAIL: $absent installed"; exit 1; fi
done

step "unit tests without the extras, against the installed wheel"
cd "$REPO"
"$V/python" -c 'import entropic_bound, sys; f = entropic_bound.__file__; print(f); sys.exit("src/ imported, not the wheel" if "site-packages" not in f else 0)'
"$V/python" -m pytest -q -p no:cacheprovider -m "not extras" tests -x | tail -4

step "entropic-bound predict on a tiny attention file"
cd "$WORK"
"$V/python" - <<'PY'
import numpy as np

rng = np.random.default_rng(0)
B, n, d, r = 512, 12, 6, 2  # linear attention with a rank-2 query-key kernel, no noise
A = rng.standard_normal((d, r)) @ rng.standard_normal((r, d))
X = rng.standard_normal((B, n, d)).astype(np.float32)
Y = (X @ A @ X.transpose(0, 2, 1) / n) @ X @ rng.standard_normal((d, d))
np.savez("tiny.npz", X=X, Y=Y.astype(np.float32))
Y[3, 0, 0] = np.nan
np.savez("nan.npz", X=X, Y=Y)
PY
"$V/entropic-bound" predict tiny.npz > predict.txt
grep -q "^Recommended minimum QK rank: 2$" predict.txt || { cat predict.txt; exit 1; }
grep "^Recommended" predict.txt
rank="$("$V/entropic-bound" predict tiny.npz --json | "$V/python" -c 'import json, sys; print(json.load(sys.stdin)["recommendation"]["min_qk_rank"])')"
[ "$rank" = 2 ] || { echo "FAIL: --json says rank $rank"; exit 1; }
rc=0
"$V/entropic-bound" predict nan.npz --no-static 2> err.txt > out.txt || rc=$?
[ "$rc" = 2 ] && [ "$(wc -l < err.txt)" = 1 ] && [ ! -s out.txt ] && grep -q "NaN or Inf" err.txt ||
  { echo "FAIL: a NaN file gave rc=$rc"; cat err.txt; exit 1; }
cat err.txt
step "passed"
