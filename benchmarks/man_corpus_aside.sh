#!/usr/bin/env bash
# The man-page corpus of the heads studies (config/heads_study*.yaml, cells man_d16) is every
# English manual page under /usr/share/man as it was when the studies' models were first trained
# (2026-12-06). `make test-cluster` installs slurm-wlm and munge (2026-12-07), whose nine Debian
# packages add 38 manual pages: the corpus then differs and a study's measurement refuses it
# ("not the one the model was trained on"). Regenerating or resuming a study on such a machine:
#   bash benchmarks/man_corpus_aside.sh aside     # move those pages to /tmp/man_aside
#   … run the study …
#   bash benchmarks/man_corpus_aside.sh back      # put them back
set -euo pipefail
PACKAGES="libhwloc15 liblua5.1-0 libmunge2 munge slurm-wlm-basic-plugins slurm-client slurmd slurmctld slurm-wlm"
STORE=/tmp/man_aside
case "${1:-}" in
  aside)
    for p in $PACKAGES; do dpkg -L "$p" 2>/dev/null || true; done | grep '^/usr/share/man/' |
      while read -r f; do
        if [ -f "$f" ] || [ -L "$f" ]; then mkdir -p "$STORE$(dirname "$f")"; mv "$f" "$STORE$f"; fi
      done
    echo "moved aside: $(find "$STORE" -type f -o -type l | wc -l) pages under $STORE" ;;
  back)
    (cd "$STORE" && find . -type f -o -type l) | while read -r f; do
      p=${f#.}; mkdir -p "$(dirname "$p")"; mv "$STORE$p" "$p"
    done
    echo "put back" ;;
  *) echo "usage: $0 aside|back" >&2; exit 2 ;;
esac
