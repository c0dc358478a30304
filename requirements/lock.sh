#!/usr/bin/env bash
# `make lock`: regenerate requirements/lock.txt, every dependency of the [dev,workflow,cluster]
# extras (transitive ones included) at one version with its sha256 hashes, which `make venv`
# installs with `pip install --require-hashes`. pip-compile (pip-tools, in a throwaway venv)
# keeps every version the current lock pins while pyproject.toml's ranges allow it: a version
# changes only when a range does, or when a line is removed from the lock before this runs.
# torch is the CPU build (torch==<version>+cpu): PyPI's Linux x86_64 wheel is the CUDA one,
# several GB of NVIDIA libraries no result here uses. Its hashes come from TORCH_INDEX
# (default PyTorch's CPU index) or a local wheel that pip's find-links names.
# The lock is for Linux x86_64, Python 3.11, as every published result. Needs the network.
#   bash requirements/lock.sh [python3.11]
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
PY="${1:-python3.11}"
TORCH_INDEX="${TORCH_INDEX-https://download.pytorch.org/whl/cpu}"
PIP_TOOLS="pip-tools==7.5.3"
LOCK="requirements/lock.txt"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/eb-lock.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

"$PY" -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q "$PIP_TOOLS" 2>&1 | grep -v "^WARNING: Location 'file" || true
# the CPU build at the lock's torch version (a constraint: pip-compile keeps the other pins)
TORCH="$(grep -o '^torch==[0-9.]*' "$REPO/$LOCK" || echo 'torch==2.13.0')"
echo "$TORCH+cpu" > "$WORK/torch-cpu.txt"
cd "$REPO"
CUSTOM_COMPILE_COMMAND="make lock" "$WORK/venv/bin/pip-compile" --quiet --generate-hashes \
  --allow-unsafe --strip-extras --no-emit-index-url --no-emit-find-links \
  --extra dev --extra workflow --extra cluster -c "$WORK/torch-cpu.txt" \
  ${TORCH_INDEX:+--extra-index-url "$TORCH_INDEX"} -o "$LOCK" pyproject.toml
# The extras name the project itself (entropic-bound[plot]); pip-compile pins it as a file URL,
# which has no hash: make venv installs it editable, with --no-deps, after the lock.
"$WORK/venv/bin/python" - "$LOCK" <<'PY'
import re, sys
path = sys.argv[1]
text = open(path).read()
text = re.sub(r"# WARNING: pip install will require the following package to be hashed\.\n"
              r"# Consider using a hashable URL like [^\n]*\n", "", text)
text = re.sub(r"\nentropic-bound @ [^\n]*\n(?:    [^\n]*\n)*", "\n", text)
text = re.sub(r"-c \S*/torch-cpu\.txt", "-c torch's CPU build (requirements/lock.sh)", text)
HEADER = """\
# The exact versions `make venv` installs, each with its sha256 hashes (`pip install
# --require-hashes --no-deps`): the versions every published result and test was made with, on
# Linux x86_64 and Python 3.11; torch is its CPU build (+cpu). pyproject.toml states the
# compatible ranges (what `pip install entropic-bound` accepts beside a user's own stack); this
# file makes `make reproduce` exact. envs/*.yaml carry the same versions
# (tests/packaging/test_envs.py). Regenerate: `make lock` (requirements/lock.sh).
"""
text = HEADER + text
assert "entropic-bound @" not in text and re.search(r"^torch==[0-9.]+\+cpu \\$", text, re.M)
open(path, "w").write(text)
PY
echo "$LOCK: $(grep -c '^[A-Za-z]' "$LOCK") packages, $(grep -c -- '--hash=sha256:' "$LOCK") hashes"
