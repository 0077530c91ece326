#!/usr/bin/env bash
# Refreshes testdata/openapi/ from a fresh local API server: every
# group-version document /openapi/v3 lists (api/v1 and apis/<group>/<version>),
# as served, gzipped without a name or timestamp (gzip -n) so that the same
# server gives the same bytes. The other paths it lists (api, apis, version,
# logs, openid, .well-known) declare no kinds and are skipped.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/testdata/openapi
export KAPPLY_CLUSTER_DIR=$root/.cluster/openapi
trap 'bash "$root/hack/cluster.sh" down' EXIT
eval "$(bash "$root/hack/cluster.sh" up | grep '^export ')"

# The keys of .paths: "api/v1": {...}, "apis/apps/v1": {...}, ...
paths=$(kubectl get --raw /openapi/v3 | grep -oE '"(api/v1|apis/[^"/]+/[^"/]+)":' | tr -d '":' | sort)
[[ -n $paths ]] || { echo "the server lists no group-version documents" >&2; exit 1; }
rm -f "$out"/*.json "$out"/*.json.gz
for gv in $paths; do
  kubectl get --raw "/openapi/v3/$gv" | gzip -9 -n >"$out/${gv//\//__}.json.gz"
done
echo "$(wc -w <<<"$paths") documents in $out"
