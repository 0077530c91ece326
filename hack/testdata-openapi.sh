#!/usr/bin/env bash
# Refreshes testdata/openapi/ from a fresh local API server.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export KAPPLY_CLUSTER_DIR=$root/.cluster/openapi
trap 'bash "$root/hack/cluster.sh" down' EXIT
eval "$(bash "$root/hack/cluster.sh" up | grep '^export ')"
for gv in api/v1 apis/apps/v1 apis/batch/v1; do
  kubectl get --raw "/openapi/v3/$gv" >"$root/testdata/openapi/${gv//\//__}.json"
done
