#!/usr/bin/env bash
# Runs kubectl's own command tests (k8s.io/kubernetes test/cmd, the version
# pinned in this folder's go.mod) for apply, diff and --save-config with
# kapply in kubectl's place, on a fresh etcd + kube-apiserver +
# kube-controller-manager:
#
#   hack/kubectlcmd/run.sh [SUITE...]     (default: every suite below)
#
# The suites are read from the Go module cache, never copied into this
# repository: they are copied into a temporary KUBE_ROOT for the run, since
# they run from its root and some write next to it. `kubectl` on PATH is the
# shim next to this script (kapply for apply and diff, kubectl for the rest).
# It does what hack/make-rules/test-cmd.sh and test/cmd/legacy-script.sh do
# before their tests (API server flags, kubeconfig, kube_flags, the field
# variables), and nothing else. Prints PASS/FAIL per suite, with the
# file:line of the first failed assertion, and exits 1 if any failed.
# Environment: KAPPLY (a kapply binary to test instead of bin/kapply),
# KUBECTLCMD_KEEP=1 (keep the work folder and its logs), KUBECTLCMD_RESULTS
# (a file to write the PASS/FAIL lines to).
set -euo pipefail

suites_default=(
  run_kubectl_apply_tests
  run_kubectl_server_side_apply_tests
  run_kubectl_apply_deployments_tests
  run_kubectl_diff_tests
  run_kubectl_diff_same_names
  run_save_config_tests
)
suites=("$@")
((${#suites[@]})) || suites=("${suites_default[@]}")

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=$root/bin
start_time=$SECONDS

# Binaries: kapply, kube-apiserver and etcd (hack/k8sbin), kubectl and
# kube-controller-manager (build.sh); each is a no-op once built.
if [[ -z ${KAPPLY:-} ]]; then
  (cd "$root" && go build -o "$bin/kapply" ./cmd/kapply)
  KAPPLY=$bin/kapply
fi
# The first build takes minutes; later runs print one line each.
bash "$root/hack/k8sbin/build.sh" "$bin" >&2
bash "$here/build.sh" "$bin/kubectlcmd" >&2
kube_src=$(cd "$here" && go mod download -json k8s.io/kubernetes | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[[ -d $kube_src/test/cmd ]] || { echo "kubectlcmd: no test/cmd in '$kube_src'" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/kubectlcmd.XXXXXX")
pids=()
# stop ends what this script started, last started first: kube-apiserver
# stopped after etcd waits on it for minutes.
stop() {
  local i pid n
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    pid=${pids[$i]}
    kill "$pid" 2>/dev/null || continue
    for ((n = 0; n < 100; n++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [[ ${KUBECTLCMD_KEEP:-} == 1 ]]; then
    echo "kubectlcmd: work folder kept: $work"
  else
    rm -rf "$work"
  fi
}
trap stop EXIT

kube_root=$work/kube
mkdir -p "$kube_root/test" "$kube_root/third_party/forked"
cp -r "$kube_src/hack" "$kube_root/hack"
cp -r "$kube_src/test/cmd" "$kube_src/test/fixtures" "$kube_root/test/"
cp -r "$kube_src/third_party/forked/shell2junit" "$kube_root/third_party/forked/"
chmod -R u+w "$kube_root"

# free_port prints a loopback TCP port nothing listens on; other clusters
# (tests, other checkouts) may hold the suites' default ports.
free_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 30000))
    if [[ -z $(ss -Hltn "sport = :$p") ]]; then echo "$p"; return; fi
  done
}
etcd_port=$(free_port)
etcd_peer_port=$(free_port)
api_port=$(free_port)
cm_port=$(free_port)
logs=$work/logs
mkdir -p "$logs"

"$bin/etcd" --data-dir "$work/etcd" --name kubectlcmd \
  --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
  --listen-peer-urls "http://127.0.0.1:$etcd_peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer_port" \
  --initial-cluster "kubectlcmd=http://127.0.0.1:$etcd_peer_port" >"$logs/etcd.log" 2>&1 &
pids+=($!)

sa_key=$work/sa.key
openssl genrsa -out "$sa_key" 2048 2>/dev/null

# The API server as test-cmd.sh's run_kube_apiserver starts it (admission,
# authorization, token file, client CA), on our ports.
(cd "$kube_root" && exec "$bin/kube-apiserver" \
  --bind-address=127.0.0.1 \
  --authorization-mode=RBAC,AlwaysAllow \
  --secure-port="$api_port" \
  --enable-admission-plugins=LimitRanger,ResourceQuota \
  --disable-admission-plugins=ServiceAccount,DefaultStorageClass,DefaultTolerationSeconds,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,StorageObjectInUseProtection \
  --etcd-servers="http://127.0.0.1:$etcd_port" \
  --runtime-config=api/v1 \
  --service-account-key-file="$sa_key" \
  --service-account-lookup=true \
  --service-account-issuer=https://kubernetes.default.svc \
  --service-account-signing-key-file="$sa_key" \
  --cert-dir="$work/certs" \
  --service-cluster-ip-range=10.0.0.0/24 \
  --client-ca-file=hack/testdata/ca/ca.crt \
  --token-auth-file=hack/testdata/auth-tokens.csv) >"$logs/kube-apiserver.log" 2>&1 &
pids+=($!)

wait_healthy() { # url name [curl args...]
  local url=$1 name=$2 i
  shift 2
  for ((i = 0; i < 240; i++)); do
    if curl -fsk "$@" "$url" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  echo "kubectlcmd: $name not healthy after 120s; logs in $logs" >&2
  KUBECTLCMD_KEEP=1
  exit 1
}
wait_healthy "https://127.0.0.1:$api_port/healthz" kube-apiserver -H "Authorization: Bearer admin-token"

cat >"$work/controller-manager.kubeconfig" <<EOF
kind: Config
users:
- name: controller-manager
  user:
    token: admin-token
clusters:
- cluster:
    server: https://127.0.0.1:$api_port
    insecure-skip-tls-verify: true
  name: local
contexts:
- context:
    cluster: local
    user: controller-manager
  name: local-context
current-context: local-context
EOF
(cd "$kube_root" && exec "$bin/kubectlcmd/kube-controller-manager" \
  --kubeconfig="$work/controller-manager.kubeconfig" \
  --secure-port="$cm_port" \
  --leader-elect=false \
  --cluster-signing-cert-file=hack/testdata/ca/ca.crt \
  --cluster-signing-key-file=hack/testdata/ca/ca.key) >"$logs/kube-controller-manager.log" 2>&1 &
pids+=($!)
wait_healthy "https://127.0.0.1:$cm_port/healthz" kube-controller-manager

# `kubectl` on PATH is the shim; it finds kapply and the real kubectl here.
mkdir -p "$work/path"
cp "$here/kubectl" "$work/path/kubectl"
export KUBECTLCMD_KAPPLY=$KAPPLY
export KUBECTLCMD_REAL_KUBECTL=$bin/kubectlcmd/kubectl
export KUBECTLCMD_LOG=$logs/kapply-calls.log

echo "kubectlcmd: cluster up in $((SECONDS - start_time))s (API server on port $api_port); logs in $logs"

# What test-cmd.sh and legacy-script.sh set up, in the harness's own shell so
# its helpers see it. The suites run inside record_command, as in runTests.
cd "$kube_root"
export ETCD_PORT=$etcd_port SECURE_API_PORT=$api_port SECURE_CTLRMGR_PORT=$cm_port
export KUBE_JUNIT_REPORT_DIR=$work/junit
set +o nounset # hack/lib's scripts run under their own settings
source hack/lib/init.sh
source hack/lib/test.sh
kube::util::ensure-gnu-sed # SED: record_command's junit writer needs it, also while sourcing
source test/cmd/legacy-script.sh
set -o nounset
PATH=$work/path:$PATH
kube::util::ensure-temp-dir
HOME=$KUBE_TEMP # setup(): ~/.kube/config of the user is never read
CONTEXT=test
kubectl config set-credentials test-admin --token admin-token >/dev/null
kubectl config set-cluster local --insecure-skip-tls-verify --server "https://127.0.0.1:${SECURE_API_PORT}" >/dev/null
kubectl config set-context "${CONTEXT}" --user test-admin --cluster local >/dev/null
kubectl config use-context "${CONTEXT}" >/dev/null
SUPPORTED_RESOURCES=("*")

# runTests, up to its first test.
kube_flags=('-s' "https://127.0.0.1:${SECURE_API_PORT}" '--insecure-skip-tls-verify')
kube_flags_without_token=("${kube_flags[@]}")
kube_flags_with_token=("${kube_flags_without_token[@]}" '--token=admin-token')
if [[ -z ${ALLOW_SKEW:-} ]]; then
  kube_flags+=('--match-server-version')
  kube_flags_with_token+=('--match-server-version')
fi
# shellcheck disable=SC1090 # the field variables runTests exports, taken from it
source <(declare -f runTests | sed -n 's/^ *export \([a-z_0-9]*=.*\);$/export \1/p')

# The harness's ERR trap names the suite function, not the failing line;
# this one first notes the innermost test/cmd/*.sh frame of the first
# failure of a suite (the assertion, also when it fails inside a
# kube::test:: helper), then runs the harness's.
failure_file=$work/failure
note_failure() {
  local line=$1 i src
  [[ -s $failure_file ]] && return 0
  # Frame 0 is this function; frame 1 is where the trap fired, at $1.
  for ((i = 1; i < ${#BASH_SOURCE[@]}; i++)); do
    src=${BASH_SOURCE[$i]}
    if [[ $src == */test/cmd/*.sh && $src != */legacy-script.sh ]]; then
      ((i == 1)) || line=${BASH_LINENO[$((i - 1))]}
      echo "${src##*/}:$line" >"$failure_file"
      return 0
    fi
  done
}
trap 'note_failure "$LINENO"; kube::log::errexit' ERR
# An assertion written "... || exit 1" fails without an ERR; note the exit.
set -o functrace
trap '[[ $BASH_COMMAND != exit* ]] || note_failure "$LINENO"' DEBUG

results=()
failed=0
# The loop variable is not "suite": the junit writer sets that one.
for kubectlcmd_suite in "${suites[@]}"; do
  before=$SECONDS
  foundError=""
  : >"$failure_file"
  record_command "$kubectlcmd_suite"
  if [[ -n $foundError ]]; then
    results+=("FAIL $kubectlcmd_suite ($((SECONDS - before))s) at $(cat "$failure_file")")
    failed=$((failed + 1))
    KUBECTLCMD_KEEP=1
  else
    results+=("PASS $kubectlcmd_suite ($((SECONDS - before))s)")
  fi
done

echo
echo "kubectlcmd: kubectl test/cmd suites with kapply as apply and diff ($((SECONDS - start_time))s in all):"
printf '  %s\n' "${results[@]}"
echo "kubectlcmd: $((${#suites[@]} - failed)) passed, $failed failed"
if [[ -n ${KUBECTLCMD_RESULTS:-} ]]; then
  printf '%s\n' "${results[@]}" >"$KUBECTLCMD_RESULTS"
fi
((failed == 0))
