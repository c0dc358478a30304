#!/usr/bin/env bash
# `make test-cluster`: the quick pipeline on a real single-node SLURM cluster on localhost.
#
#  1. installs Debian's slurm-wlm and munge when they are missing (apt-get);
#  2. starts munged, slurmctld and slurmd as root from tests/cluster/slurm.conf.in, with every
#     file in a private state directory, free ports and munge's own socket and key;
#  3. runs `snakemake reproduce-all --profile profiles/slurm --configfile config/quick.yaml`
#     (run_name cluster_slurm; --slurm-status-command squeue, as there is no accounting) and the
#     same config locally (run_name cluster_local);
#  4. asserts that every non-local job went through sbatch (SLURM knows it as COMPLETED and its
#     SLURM log, under a directory named after the rule, names the rule) and that every table of
#     the two runs is equal, value for value (tests/cluster/compare_tables.py);
#  5. runs the scale study of tests/cluster/scale/scales.yaml (d = 4, and the quick config at
#     d = 8) through the profile (`snakemake scale --profile profiles/slurm`) in its own working
#     directory, results/cluster_scale/, and asserts that every job of both runs went through
#     sbatch, the d = 8 run's being those of step 3's SLURM run and its tables the local run's,
#     that the table has both d, and that the study and the quick run alone are then up to date;
#  6. on any exit: cancels its jobs, stops the daemons it started by pid, kills by pid any
#     process left from its cluster, restores /etc/slurm/slurm.conf, removes its state.
#
# Needs root (daemons, apt-get); as another user it says so and exits 0 without testing.
# Budget: everything within TEST_BUDGET_S seconds (default 1200), each step under `timeout`.
# Outputs kept for inspection: results/cluster_{local,slurm,scale}/, with the SLURM job logs in
# results/cluster_slurm/slurm_logs/ and results/cluster_scale/slurm_logs/ and, after a failure,
# the daemon logs in results/cluster_slurm/daemon_logs/.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
SMK=${SMK:-$REPO/.venv/bin/snakemake}
PY=${PY:-$REPO/.venv/bin/python}
BUDGET=${TEST_BUDGET_S:-1200}
LOCAL_RUN=cluster_local
SLURM_RUN=cluster_slurm
PARTITION=ebtest
ACCOUNT=ebtest

say() { printf '[test-cluster %3ds] %s\n' "$SECONDS" "$*"; }
fail() { say "FAIL: $*"; exit 1; }
# seconds left of the budget, at most $1
left() { local l=$((BUDGET - SECONDS)); ((l < 1)) && l=1; ((l > $1)) && l=$1; echo "$l"; }
# run_timed LIMIT OUTFILE CMD...: CMD under `timeout` (SIGINT at LIMIT, as Ctrl-C would: Snakemake
# then cancels its SLURM jobs; SIGKILL 30 s later), in the background so that a signal to this
# script is handled at once (bash runs traps only between foreground commands).
CHILD=""
run_timed() {
  local limit=$1 out=$2 rc=0
  shift 2
  timeout -s INT -k 30 "$limit" "$@" >"$out" 2>&1 9>&- &
  CHILD=$!
  wait "$CHILD" || rc=$?
  CHILD=""
  return "$rc"
}

if [ "$(id -u)" != "0" ]; then
  say "skipped: the SLURM test installs packages and starts munged, slurmctld and slurmd, which needs root"
  exit 0
fi
[ -x "$SMK" ] || fail "$SMK not found: run 'make venv' first"
# One test cluster per machine at a time: the config at /etc/slurm/slurm.conf is shared (below).
LOCK=/tmp/entropic-bound-cluster-test.lock
exec 9>"$LOCK"
flock -w "$(left 300)" 9 || fail "another 'make test-cluster' holds $LOCK; run them one after another"

# ---------------------------------------------------------------- 1. packages
need=()
for bin in munged munge slurmctld slurmd sbatch squeue scancel sinfo srun; do
  command -v "$bin" >/dev/null 2>&1 || need+=("$bin")
done
if ((${#need[@]})); then
  say "installing slurm-wlm and munge (missing: ${need[*]})"
  export DEBIAN_FRONTEND=noninteractive
  run_timed "$(left 200)" /tmp/entropic-bound-apt.log apt-get update -qq \
    || { tail -n 20 /tmp/entropic-bound-apt.log; fail "apt-get update failed"; }
  run_timed "$(left 300)" /tmp/entropic-bound-apt.log \
    apt-get install -y -qq --no-install-recommends slurm-wlm munge \
    || { tail -n 20 /tmp/entropic-bound-apt.log; fail "apt-get install slurm-wlm munge failed"; }
  rm -f /tmp/entropic-bound-apt.log
fi

# ---------------------------------------------------------------- 2. the cluster
STATE=$(mktemp -d /tmp/entropic-bound-slurm.XXXXXX)
chmod 755 "$STATE"  # munged wants its socket directory searchable by all
export SLURM_CONF=$STATE/slurm.conf
DAEMON_PIDS=()       # started by this script, stopped in reverse order
SYS_CONF=/etc/slurm/slurm.conf
OURS_MARK="# written by entropic-bound tests/cluster/run_cluster_test.sh"
SYS_CONF_STATE=none  # none | ours | moved
PASSED=0

stop_pid() {  # stop_pid PID NAME: TERM, up to 10 s, then KILL; reap it if it is our child
  local pid=$1 name=$2 i
  kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$pid" 2>/dev/null; then
    say "$name (pid $pid) ignored SIGTERM; SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

strays() {  # pids (other than this shell) whose environment names this cluster's config
  local p
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    [ "$p" = "$$" ] && continue
    tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | grep -qx "SLURM_CONF=$SLURM_CONF" && echo "$p"
  done
  return 0
}

cleanup() {
  local rc=$? i p
  trap - EXIT INT TERM
  set +e
  if [ -n "$CHILD" ]; then  # interrupted while a step ran: stop it like Ctrl-C would
    kill -INT "$CHILD" 2>/dev/null
    wait "$CHILD" 2>/dev/null
  fi
  if ((${#DAEMON_PIDS[@]})); then
    say "cleanup: cancelling jobs, stopping daemons ${DAEMON_PIDS[*]}"
    timeout 10 scancel --user=root >/dev/null 2>&1
    for i in $(seq 1 20); do  # let slurmd finish tearing down job steps
      [ -z "$(timeout 5 squeue -h -t RUNNING,COMPLETING,PENDING 2>/dev/null)" ] && break
      sleep 0.5
    done
    if ((rc != 0)) || ((PASSED == 0)); then
      mkdir -p "results/$SLURM_RUN/daemon_logs"
      cp "$STATE"/*.log "$STATE"/*.out "$STATE"/munge/*.log "results/$SLURM_RUN/daemon_logs/" 2>/dev/null
    fi
    for ((i = ${#DAEMON_PIDS[@]} - 1; i >= 0; i--)); do
      stop_pid "${DAEMON_PIDS[i]%%:*}" "${DAEMON_PIDS[i]#*:}"
    done
    for p in $(strays); do
      say "cleanup: stray process $p from the test cluster: $(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | cut -c1-120)"
      stop_pid "$p" "stray"
    done
    left_over=$(strays)
    [ -n "$left_over" ] && { say "cleanup: processes still running: $left_over"; rc=1; }
  fi
  case $SYS_CONF_STATE in
    ours) rm -f "$SYS_CONF" ;;
    moved) mv -f "$STATE/slurm.conf.system" "$SYS_CONF" ;;
  esac
  rm -rf "$STATE"
  if ((rc == 0)); then say "cleanup: done, nothing left running"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM

free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
NODE_LINE=$(slurmd -C | head -n1)   # NodeName=<host> CPUs=.. Boards=.. ... RealMemory=..
[[ $NODE_LINE == NodeName=* ]] || fail "unexpected 'slurmd -C' output: $NODE_LINE"
NODE=${NODE_LINE#NodeName=}; NODE=${NODE%% *}
CTLD_PORT=$(free_port); SLURMD_PORT=$(free_port)
while [ "$SLURMD_PORT" = "$CTLD_PORT" ]; do SLURMD_PORT=$(free_port); done
mkdir -p "$STATE/munge" "$STATE/slurmctld" "$STATE/slurmd"
chmod 755 "$STATE/munge"
{
  echo "$OURS_MARK"
  sed -e "s|@NODE_LINE@|$NODE_LINE|" -e "s|@NODE@|$NODE|g" -e "s|@STATE@|$STATE|g" \
      -e "s|@CTLD_PORT@|$CTLD_PORT|" -e "s|@SLURMD_PORT@|$SLURMD_PORT|" \
      -e "s|@PARTITION@|$PARTITION|" tests/cluster/slurm.conf.in
} >"$SLURM_CONF"
grep -q '@[A-Z_]*@' "$SLURM_CONF" && fail "unfilled placeholder in $SLURM_CONF"

# The plugin's job step (snakemake-executor-plugin-slurm-jobstep) removes SLURM_CONF from the
# environment of the `srun` it runs inside each job, so srun only finds the compiled-in
# /etc/slurm/slurm.conf: ours goes there for the duration of the test (a system one is moved
# aside into the state directory and put back by cleanup).
mkdir -p "$(dirname "$SYS_CONF")"
if [ -e "$SYS_CONF" ] && ! head -n1 "$SYS_CONF" | grep -qxF "$OURS_MARK"; then
  mv "$SYS_CONF" "$STATE/slurm.conf.system"; SYS_CONF_STATE=moved
  say "moved the system $SYS_CONF aside; cleanup puts it back"
else
  SYS_CONF_STATE=ours
fi
cp "$SLURM_CONF" "$SYS_CONF"

dd if=/dev/urandom of="$STATE/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$STATE/munge/munge.key"
munged --foreground --socket="$STATE/munge/munge.socket" --key-file="$STATE/munge/munge.key" \
  --pid-file="$STATE/munge/munged.pid" --log-file="$STATE/munge/munged.log" \
  --seed-file="$STATE/munge/munged.seed" >"$STATE/munge/munged.out" 2>&1 9>&- &
DAEMON_PIDS+=("$!:munged")
for i in $(seq 1 40); do [ -S "$STATE/munge/munge.socket" ] && break; sleep 0.25; done
munge -n --socket="$STATE/munge/munge.socket" | unmunge --socket="$STATE/munge/munge.socket" >/dev/null \
  || fail "munged does not answer: $(cat "$STATE/munge/munged.out")"

slurmctld -D -f "$SLURM_CONF" >"$STATE/slurmctld.out" 2>&1 9>&- &
DAEMON_PIDS+=("$!:slurmctld")
slurmd -D -N "$NODE" -f "$SLURM_CONF" >"$STATE/slurmd.out" 2>&1 9>&- &
DAEMON_PIDS+=("$!:slurmd")
say "munged, slurmctld, slurmd started (pids ${DAEMON_PIDS[*]}), node $NODE, ports $CTLD_PORT/$SLURMD_PORT"

node_state=""
for i in $(seq 1 60); do
  node_state=$(timeout 5 sinfo -h -n "$NODE" -o %T 2>/dev/null || true)
  [[ $node_state == idle* || $node_state == mixed* ]] && break
  [[ $node_state == down* || $node_state == drain* ]] && timeout 5 scontrol update nodename="$NODE" state=resume >/dev/null 2>&1
  sleep 1
done
[[ $node_state == idle* || $node_state == mixed* ]] \
  || fail "node $NODE not idle after 60 s (state '${node_state}'); see $STATE/slurmctld.log"
timeout 60 srun -N1 -n1 -p "$PARTITION" true || fail "srun of a trivial job failed"
say "cluster up: $(sinfo -h -o '%P %D %c CPUs %m MB %T')"

# ---------------------------------------------------------------- 3. the two runs
QUICK=(reproduce-all --configfile config/quick.yaml)
rm -rf "results/$LOCAL_RUN" "results/$SLURM_RUN"

for run in $LOCAL_RUN $SLURM_RUN; do  # stale locks of a killed earlier test would stop the runs
  run_timed "$(left 60)" "$STATE/unlock.out" "$SMK" "${QUICK[@]}" --config run_name=$run --unlock \
    || { cat "$STATE/unlock.out"; fail "snakemake --unlock failed"; }
done

say "local run (run_name $LOCAL_RUN)"
t0=$SECONDS
run_timed "$(left 300)" "$STATE/local.out" "$SMK" "${QUICK[@]}" --cores 2 --config run_name=$LOCAL_RUN \
  || { tail -n 40 "$STATE/local.out"; fail "local run failed"; }
local_s=$((SECONDS - t0))

say "SLURM run (run_name $SLURM_RUN) with --profile profiles/slurm"
t0=$SECONDS
SLURM_LOGS=results/$SLURM_RUN/slurm_logs
# The account and partition reach the profile as they would on a real cluster; the first status
# check after 2 s (not the plugin's 40) keeps this short test short.
export SBATCH_ACCOUNT=$ACCOUNT SBATCH_PARTITION=$PARTITION
run_timed "$(left 420)" "$STATE/slurm.out" "$SMK" "${QUICK[@]}" --profile profiles/slurm \
  --config run_name=$SLURM_RUN --slurm-status-command squeue \
  --slurm-init-seconds-before-status-checks 2 --slurm-logdir "$SLURM_LOGS" \
  || { tail -n 60 "$STATE/slurm.out"; fail "SLURM run failed"; }
slurm_s=$((SECONDS - t0))
mkdir -p "results/$SLURM_RUN"
cp "$STATE/slurm.out" "results/$SLURM_RUN/snakemake_slurm.out"

# ---------------------------------------------------------------- 4. assertions
# check_cluster_jobs OUT LOGS: every job that Snakemake's output OUT ran on the cluster went
# through sbatch (its SLURM log under LOGS/rule_<rule>/ names the rule and says it finished) and
# SLURM knows each as COMPLETED. Sets run_id, remote (rule:count) and localr (local rules).
check_cluster_jobs() {
  local out=$1 logs_dir=$2 rc rule count logs fin states n_done n_all
  run_id=$(sed -n 's/^SLURM run ID: //p' "$out" | head -n1)
  [ -n "$run_id" ] || fail "no 'SLURM run ID' in $out: the slurm executor did not run"
  # Jobs Snakemake ran itself print `localrule <name>:`, cluster jobs `rule <name>:`.
  mapfile -t remote < <(grep -oE '^\s*rule [A-Za-z0-9_-]+:' "$out" | sed -E 's/^\s*rule //; s/:$//' | sort | uniq -c | awk '{print $2 ":" $1}')
  mapfile -t localr < <(grep -oE '^\s*localrule [A-Za-z0-9_-]+:' "$out" | sed -E 's/^\s*localrule //; s/:$//' | sort -u)
  ((${#remote[@]})) || fail "no job of the SLURM run was a cluster job"
  n_remote=0
  for rc in "${remote[@]}"; do
    rule=${rc%%:*}; count=${rc#*:}
    n_remote=$((n_remote + count))
    # each SLURM log of this rule lies under rule_<rule>/ and is Snakemake's output in the job
    logs=$(grep -rlE "^\s*rule $rule:" "$logs_dir/rule_$rule" 2>/dev/null | wc -l)
    ((logs == count)) || fail "rule $rule: $count cluster jobs but $logs SLURM logs naming it under $logs_dir/rule_$rule/"
    fin=$(grep -rlE "Finished jobid: [0-9]+ \(Rule: $rule\)" "$logs_dir/rule_$rule" | wc -l)
    ((fin == count)) || fail "rule $rule: only $fin of $count SLURM logs report the job finished"
  done
  # SLURM itself (squeue keeps finished jobs for MinJobAge) knows every job of this run, done.
  states=$(squeue -h --states=all --name "$run_id" -o '%T' | sort | uniq -c | xargs)
  n_done=$(squeue -h --states=all --name "$run_id" -o '%T' | grep -c '^COMPLETED$' || true)
  n_all=$(squeue -h --states=all --name "$run_id" -o '%i' | wc -l)
  ((n_done == n_remote && n_all == n_remote)) \
    || fail "SLURM knows $n_all jobs of run $run_id ($states), Snakemake ran $n_remote on the cluster"
  arrays=$(grep -c '^Submitted array job' "$out" || true)
  say "sbatch: $n_remote jobs, all COMPLETED in SLURM ($arrays job arrays): ${remote[*]}; local: ${localr[*]:-none}"
}

check_cluster_jobs "$STATE/slurm.out" "$SLURM_LOGS"
quick_remote=("${remote[@]}")
"$PY" tests/cluster/compare_tables.py "results/$LOCAL_RUN" "results/$SLURM_RUN" \
  || fail "the SLURM run's tables differ from the local run's"

# ---------------------------------------------------------------- 5. the scale study
# tests/cluster/scale/scales.yaml (d = 4, and the quick config at d = 8) through the profile, in a
# working directory of its own: the study writes results/scale/, which must not be the clone's.
# Each scale's run is a module of the workflow (workflow/rules/scale.smk), so each of its jobs is
# this Snakemake's, submitted with sbatch like those of the run above.
SCALE_WORK=$REPO/results/cluster_scale
SCALE_LOGS=$SCALE_WORK/slurm_logs
SCALE_LIST=tests/cluster/scale/scales.yaml  # found in the clone from any working directory
STUDY=(-s "$REPO/Snakefile" -d "$SCALE_WORK")
rm -rf "$SCALE_WORK"
mkdir -p "$SCALE_WORK"
say "scale study ($SCALE_LIST: d = 4 and 8) with --profile profiles/slurm in $SCALE_WORK"
t0=$SECONDS
run_timed "$(left 480)" "$STATE/scale.out" "$SMK" scale "${STUDY[@]}" --profile "$REPO/profiles/slurm" \
  --slurm-status-command squeue --slurm-init-seconds-before-status-checks 2 \
  --slurm-logdir "$SCALE_LOGS" --config scale_list=$SCALE_LIST \
  || { tail -n 60 "$STATE/scale.out"; fail "the scale study under SLURM failed"; }
scale_s=$((SECONDS - t0))
cp "$STATE/scale.out" "$SCALE_WORK/snakemake_slurm.out"
check_cluster_jobs "$STATE/scale.out" "$SCALE_LOGS"

# Every cluster job is a job of one scale's run, and the d = 8 run (the quick config) submitted
# exactly the jobs of the quick run above; the study's own rules ran locally.
d4=() d8=()
for rc in "${remote[@]}"; do
  case $rc in
    scale_d4_*) d4+=("${rc#scale_d4_}") ;;
    scale_d8_*) d8+=("${rc#scale_d8_}") ;;
    *) fail "cluster job $rc is no job of a scale's run" ;;
  esac
done
((${#d4[@]})) || fail "no job of the d = 4 run went through sbatch"
[ "${d8[*]}" = "${quick_remote[*]}" ] \
  || fail "the d = 8 run's cluster jobs (${d8[*]}) are not the quick run's (${quick_remote[*]})"
for rule in scale_table scale; do
  printf '%s\n' "${localr[@]}" | grep -qx "$rule" || fail "rule $rule did not run locally"
done
"$PY" tests/cluster/compare_tables.py "results/$LOCAL_RUN" "$SCALE_WORK/results/quick" \
  || fail "the study's d = 8 run differs from the local quick run"
"$PY" - "$SCALE_WORK/results/scale/verdict_by_scale.csv" <<'PY' || fail "the verdict-by-scale table lacks a scale"
import sys

import pandas as pd

d = sorted(pd.read_csv(sys.argv[1])["d"].unique())
assert d == [4, 8], d
PY

# Up to date afterwards, for the study and for the run alone: the modules' jobs are the run's.
planned() {  # planned OUT: the rules a dry run's output OUT plans, one line
  grep -oE '^\s*(local)?rule [A-Za-z0-9_-]+:' "$1" | sed -E 's/^\s*(local)?rule //; s/:$//' | sort -u | xargs
}
run_timed "$(left 60)" "$STATE/scale_n.out" "$SMK" -n scale "${STUDY[@]}" --config scale_list=$SCALE_LIST \
  || { tail -n 20 "$STATE/scale_n.out"; fail "snakemake -n scale failed"; }
[ "$(planned "$STATE/scale_n.out")" = "scale" ] \
  || fail "after the study, snakemake -n scale still plans: $(planned "$STATE/scale_n.out")"
run_timed "$(left 60)" "$STATE/quick_n.out" "$SMK" -n reproduce-all "${STUDY[@]}" \
  --configfile "$REPO/config/quick.yaml" \
  || { tail -n 20 "$STATE/quick_n.out"; fail "snakemake -n reproduce-all failed"; }
[ "$(planned "$STATE/quick_n.out")" = "reproduce-all" ] \
  || fail "the study's d = 8 run is not the quick run's: reproduce-all plans $(planned "$STATE/quick_n.out")"
say "scale study: ${#d4[@]} + ${#d8[@]} rules' jobs through sbatch (d = 4, d = 8), up to date afterwards"

PASSED=1
say "PASS: local run ${local_s} s, SLURM run ${slurm_s} s, scale study ${scale_s} s, total ${SECONDS} s"
