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
#  5. on any exit: cancels its jobs, stops the daemons it started by pid, kills by pid any
#     process left from its cluster, restores /etc/slurm/slurm.conf, removes its state.
#
# Needs root (daemons, apt-get); as another user it says so and exits 0 without testing.
# Budget: everything within TEST_BUDGET_S seconds (default 570), each step under `timeout`.
# Outputs kept for inspection: results/cluster_{local,slurm}/, with the SLURM job logs in
# results/cluster_slurm/slurm_logs/ and, after a failure, the daemon logs in
# results/cluster_slurm/daemon_logs/.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
SMK=${SMK:-$REPO/.venv/bin/snakemake}
PY=${PY:-$REPO/.venv/bin/python}
BUDGET=${TEST_BUDGET_S:-570}
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
out=$STATE/slurm.out
run_id=$(sed -n 's/^SLURM run ID: //p' "$out" | head -n1)
[ -n "$run_id" ] || fail "no 'SLURM run ID' in the Snakemake output: the slurm executor did not run"
# Jobs Snakemake ran itself print `localrule <name>:`, cluster jobs `rule <name>:`.
mapfile -t remote < <(grep -oE '^\s*rule [A-Za-z0-9_-]+:' "$out" | sed -E 's/^\s*rule //; s/:$//' | sort | uniq -c | awk '{print $2 ":" $1}')
mapfile -t localr < <(grep -oE '^\s*localrule [A-Za-z0-9_-]+:' "$out" | sed -E 's/^\s*localrule //; s/:$//' | sort -u)
((${#remote[@]})) || fail "no job of the SLURM run was a cluster job"
n_remote=0
for rc in "${remote[@]}"; do
  rule=${rc%%:*}; count=${rc#*:}
  n_remote=$((n_remote + count))
  # each SLURM log of this rule lies under rule_<rule>/ and is Snakemake's output in the job
  logs=$(grep -rlE "^\s*rule $rule:" "$SLURM_LOGS/rule_$rule" 2>/dev/null | wc -l)
  ((logs == count)) || fail "rule $rule: $count cluster jobs but $logs SLURM logs naming it under $SLURM_LOGS/rule_$rule/"
  fin=$(grep -rlE "Finished jobid: [0-9]+ \(Rule: $rule\)" "$SLURM_LOGS/rule_$rule" | wc -l)
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

"$PY" tests/cluster/compare_tables.py "results/$LOCAL_RUN" "results/$SLURM_RUN" \
  || fail "the SLURM run's tables differ from the local run's"

PASSED=1
say "PASS: local run ${local_s} s, SLURM run ${slurm_s} s, total ${SECONDS} s"
