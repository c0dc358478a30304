#!/usr/bin/env bash
# Opt-in (not in `make test`: it downloads the newest versions the ranges allow, minutes):
# the torch-free parts of the library on other Pythons. For each interpreter given, a fresh venv
# gets the library's dependencies but torch (newest within pyproject.toml's ranges) and the
# wheel of this clone (--no-deps), then: the shipped configs validate, a NaN is refused, torch is
# never imported, `snakemake -n` parses the workflow, and `entropic-bound verify` runs (refusing,
# in one line, to guess where the reference is, then agreeing with --reference/--tolerances).
#   bash tests/packaging/check_torch_free.sh ~/.pyenv/versions/3.12.1/bin/python ~/.pyenv/versions/3.13.0/bin/python
# Needs a finished paper run in results/paper for the last check.
set -uo pipefail
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
WORK="$(mktemp -d)"
for py in "$@"; do
  V="$WORK/venv-$(basename "$(dirname "$(dirname "$py")")")"
  "$py" -m venv "$V" && V="$V/bin"
  "$V/pip" install -q "numpy>=2.4.6,<3" "pandas>=2.3.3,<3" "pyarrow>=22.0.0" "pyyaml>=6.0.3,<7" \
    "jsonschema>=4.26.0,<5" "tqdm>=4.67.1,<5" "snakemake>=9.27.1,<10" 2>&1 | grep -v "Location 'file"
  "$V/pip" install -q --no-deps "$REPO" 2>&1 | grep -v "Location 'file"
  echo "== $("$V/python" --version): $("$V/pip" list 2>/dev/null | grep -E '^(numpy|pandas|pyarrow|snakemake) ' | tr -s ' ' | tr '\n' ';')"
  "$V/python" - "$REPO" <<'PY'
import sys
from entropic_bound.config.load import ConfigError, load_config, load_run_config, validate_config
repo = sys.argv[1]
for f in ("config/config.yaml", "config/quick.yaml", "config/large.yaml"):
    load_run_config(f"{repo}/{f}", base=f"{repo}/config/config.yaml")
    print("valid:", f)
cfg = load_config(f"{repo}/config/quick.yaml")
cfg["task"]["beta"] = float("nan")
try:
    validate_config(cfg)
    raise SystemExit("a NaN passed")
except ConfigError as exc:
    print("refused:", exc)
assert "torch" not in sys.modules, "torch was imported"
PY
  (cd "$WORK" && "$V/snakemake" -n -s "$REPO/Snakefile" -d "$WORK/wd" --cores 2 \
    --config run_name=torchfree > "$WORK/parse.log" 2>&1)
  echo "snakemake -n: rc=$?, $(grep -c '^\(local\)\?rule' "$WORK/parse.log") jobs planned"
  "$V/entropic-bound" verify "$REPO/results/paper" 2>&1 | cut -c1-120
  "$V/entropic-bound" verify "$REPO/results/paper" --reference "$REPO/benchmarks/reference/paper" \
    --tolerances "$REPO/benchmarks/reference/tolerances.yaml" | tail -1
done
rm -rf "$WORK"
