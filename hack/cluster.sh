#!/usr/bin/env bash
# Starts (up) or stops (down) the local etcd + kube-apiserver in the background.
# State lives in $KAPPLY_CLUSTER_DIR (default .cluster/): pid, log, kubeconfig.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${KAPPLY_CLUSTER_DIR:-$root/.cluster}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

up() {
  if [[ -f $dir/pid ]] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
    echo "cluster already running (pid $(cat "$dir/pid"))"
  else
    (cd "$root" && go build -o bin/kapply-cluster ./hack/cluster)
    nohup "$root/bin/kapply-cluster" -out "$dir/kubeconfig" >"$dir/log" 2>&1 &
    echo $! >"$dir/pid"
    for _ in $(seq 1 240); do
      [[ -f $dir/kubeconfig ]] && break
      kill -0 "$(cat "$dir/pid")" 2>/dev/null || { cat "$dir/log"; exit 1; }
      sleep 0.5
    done
    [[ -f $dir/kubeconfig ]] || { echo "cluster did not come up:"; cat "$dir/log"; exit 1; }
  fi
  echo "export KUBECONFIG=$dir/kubeconfig"
}

down() {
  [[ -f $dir/pid ]] || { echo "no cluster running"; return 0; }
  pid=$(cat "$dir/pid")
  if kill "$pid" 2>/dev/null; then
    for _ in $(seq 1 120); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  fi
  rm -f "$dir/pid"
  echo "cluster stopped"
}

case ${1:-} in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
