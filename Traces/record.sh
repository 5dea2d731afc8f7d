#!/usr/bin/env bash
# Regenerates the Traces/ corpus from real creased runs. For each trace: start a fresh
# creased recording into a scratch directory, stream `crease gen` into its socket at the
# rig's own pace (marks name the scenario and seed), stop the daemon, keep the file.
# Usage: Traces/record.sh [NAME...]   (default: all). Binaries: $CREASE_BIN (default .build/release,
# as the daemon's batching depends on its speed: `swift build -c release` first).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${CREASE_BIN:-.build/release}
[ -x "$bin/creased" ] && [ -x "$bin/crease" ] || { echo "build first: swift build -c release" >&2; exit 2; }

# name | scenario | gen options | creased options
corpus=(
  "slow-unfold|unfold|--seed 11 --seconds 4 --rate 250|"
  "fast-flap-1khz|flap|--seed 12 --seconds 2 --rate 1000|"
  "outer-landscape-keyboard-activities|outer-landscape|--seed 13 --rate 250|"
  "split-view-left-right|split-view|--seed 14 --rate 250|--trace-layouts"
  "right-to-left|rtl|--seed 15 --rate 250|"
  "trailing-sheet-partly-folded|sheet|--seed 16 --rate 250|--trace-layouts"
  "tab-switch-browse-task|tabs|--seed 17 --rate 250|"
  "app-replaced-mid-run|app-replace|--seed 18 --rate 250|"
  "burst-coalesced|rig|--seed 19 --seconds 2 --rate 500|"
  "rig-observations|observe|--seed 20 --rate 250|"
  "noisy-fold-imu|imu|--seed 21 --seconds 4 --rate 500|"
)

record() {
  local name=$1 scenario=$2 genopts=$3 daemonopts=$4
  local dir pid
  dir=$(mktemp -d)
  # shellcheck disable=SC2086
  "$bin/creased" --socket "$dir/s.sock" --trace-dir "$dir/traces" --log-level warning $daemonopts &
  pid=$!
  for _ in $(seq 100); do [ -S "$dir/s.sock" ] && break; sleep 0.05; done
  # shellcheck disable=SC2086
  "$bin/crease" gen --scenario "$scenario" $genopts --to "$dir/s.sock"
  kill -TERM "$pid"
  wait "$pid"
  mv "$dir"/traces/*.jsonl "Traces/$name.jsonl"
  rm -rf "$dir"
  "$bin/crease" replay --verify "Traces/$name.jsonl"
}

for entry in "${corpus[@]}"; do
  IFS='|' read -r name scenario genopts daemonopts <<<"$entry"
  if [ $# -eq 0 ] || [[ " $* " == *" $name "* ]]; then
    echo "== $name ($scenario)"
    record "$name" "$scenario" "$genopts" "$daemonopts"
  fi
done
