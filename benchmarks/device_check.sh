#!/usr/bin/env bash
# The GPU check, as one script (about 8 minutes on one data-centre GPU): what the CUDA path is
# asked to do, run where a GPU is available for a few minutes. Usage: benchmarks/device_check.sh OUTDIR
#
#   env.txt                 GPU, driver, torch/numpy/pandas versions, CPU cores
#   pytest.txt              the CUDA tests (tests/train/test_engine.py -k cuda: training on the GPU
#                           agrees with the CPU)
#   large.json, large.log   bench_gpu.py on config/large_one_seed.yaml (d = n = 64): task files, then the
#                           training stage on the GPU at 128 students per pass (the config's 8
#                           is sized for CPU caches), for at most GPU_DEADLINE seconds; no CPU
#                           jobs (the CPU's large run is the comparison: its own tables)
#   large_gpu_metrics.csv   every GPU student's metrics, to compare the knees with a CPU run:
#                           python benchmarks/compare_knees.py large_gpu_metrics.csv results/large_one_seed
#   paper.json, paper.log   bench_gpu.py at paper scale (GPU stage, CPU ratio, knee agreement)
#   heads.json, heads/      wherever CUDA is present (or HEADS_CONFIG is set): benchmarks/heads_check.py
#                           on config/heads_gpu.yaml (the anchor's head size, d_head 64, GPT-2-small
#                           shapes): HEADS_STEPS steps (300) and the first HEADS_MEASURE heads (2),
#                           timed, with the full run's hours extrapolated (full_run_h)
#
# Where the Python there lacks jsonschema, put its wheels in .whl/ (see the README, "On a GPU").
# A dry run of the plumbing on a CPU, in about a minute:
#   DEVICE=cpu LARGE_CONFIG=config/quick.yaml PAPER_CONFIG=config/quick.yaml benchmarks/device_check.sh /tmp/dc
set -uo pipefail
out=${1:?usage: benchmarks/device_check.sh OUTDIR}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
py=${PYTHON:-python3}
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  $py -c "import torch, numpy, pandas; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'numpy', numpy.__version__, 'pandas', pandas.__version__)"
  echo "cpu cores: $(nproc)"
} >"$out/env.txt" 2>&1
timeout 90 $py -m pytest -q -p no:cacheprovider tests/train/test_engine.py -k cuda >"$out/pytest.txt" 2>&1
echo "pytest exit $?" >>"$out/pytest.txt"
device=${DEVICE:-cuda}
timeout "${LARGE_TIMEOUT:-270}" $py benchmarks/bench_gpu.py --config "${LARGE_CONFIG:-config/large_one_seed.yaml}" \
  --device "$device" \
  --gpu-chunk 128 --task-threads "$(nproc)" --gpu-deadline "${GPU_DEADLINE:-180}" --cpu-budget 0 \
  --metrics-out "$out/large_gpu_metrics.csv" >"$out/large.json" 2>"$out/large.log"
echo "exit $?" >>"$out/large.log"
timeout "${PAPER_TIMEOUT:-200}" $py benchmarks/bench_gpu.py --config "${PAPER_CONFIG:-config/config.yaml}" \
  --device "$device" --cpu-budget 60 --deadline 170 \
  >"$out/paper.json" 2>"$out/paper.log"
echo "exit $?" >>"$out/paper.log"
# The heads measurement at the anchor's head size (docs/method.md §9, exploratory) wherever CUDA
# is present, or on any device when HEADS_CONFIG is set (a CPU dry run: HEADS_CONFIG=
# config/heads_tiny.yaml HEADS_STEPS=40 HEADS_MEASURE=0). The whole of heads_gpu.yaml is hours
# on one GPU (full_run_h): `python benchmarks/heads_check.py --config config/heads_gpu.yaml --out D`.
if [ -n "${HEADS_CONFIG:-}" ] || $py -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  timeout "${HEADS_TIMEOUT:-420}" $py benchmarks/heads_check.py --config "${HEADS_CONFIG:-config/heads_gpu.yaml}" \
    --steps "${HEADS_STEPS:-300}" --measure-heads "${HEADS_MEASURE:-2}" \
    --out "$out/heads" >"$out/heads.json" 2>"$out/heads.log"
  echo "exit $?" >>"$out/heads.log"
fi
