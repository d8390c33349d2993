# What the scripts that drive pods share (sourced): steps, timing, waiting on another process's
# progress, admin requests to a cluster of the running control plane, and pods' memory.
# Needs CP_DIR and CP_PORT_BASE (scripts/control-plane env); the clusteradm helpers also need
# `cm` (the binary) and `hub` (its hub flags, an array) set by the script.

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
ms() { echo $(($(date +%s%N) / 1000000)); }

# wait_for <seconds> <what> <command...>: re-runs a read-only check until it succeeds.
wait_for() {
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || { echo "timed out waiting for $what" >&2; exit 1; }
    sleep 0.2 # polling another process's progress through the API
  done
}

# api <cluster> <path> [curl flags]: a request as the cluster's admin (GET unless the flags say).
api() {
  local p=$CP_DIR/$1/pki offset
  case $1 in hub) offset=443 ;; managed) offset=444 ;; management) offset=445 ;; hosted) offset=446 ;; esac
  curl -A clusteradm-scripts -sSf --cacert "$p/ca.crt" --cert "$p/admin.crt" --key "$p/admin.key" "${@:3}" \
    "https://127.0.0.1:$((CP_PORT_BASE + offset))$2"
}
gone() { ! api "$@" >/dev/null 2>&1; }
deployment_available() { api "$1" "/apis/apps/v1/namespaces/$2/deployments/$3" | grep -q '"availableReplicas":[1-9]'; }

# pod_rss_list <cluster> <namespace, or "" for all> <label selector>: the RSS in MiB of each pod's
# first container matching the selector, one per line, read from its node's containerd.
pod_rss_list() {
  local id pid pods=/api/v1/pods
  [[ -n $2 ]] && pods=/api/v1/namespaces/$2/pods
  for id in $(api "$1" "$pods?labelSelector=$3" | grep -o '"containerID":"containerd://[0-9a-f]*"' | sed 's/.*containerd:\/\///; s/"//'); do
    pid=$(ctr -a "$CP_DIR/$1/node/containerd.sock" -n k8s.io tasks ls | awk -v id="$id" '$1 == id {print $2}')
    awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$pid/status" 2>/dev/null || echo "?"
  done
}

# pod_rss <cluster> <namespace> <app>: "a/b MiB" for the pods of an app (a leader and a standby).
pod_rss() {
  local out
  mapfile -t out < <(pod_rss_list "$1" "$2" "app%3D$3")
  (IFS=/; echo "${out[*]} MiB")
}

# field <name>: a string field of `init -o json`'s output, kept in $CP_DIR/join.json.
field() { sed -n "s/.*\"$1\": \"\([^\"]*\)\".*/\1/p" "$CP_DIR/join.json"; }

# available <cluster>: whether `get clusters` shows the cluster Available.
available() { "$cm" get clusters "${hub[@]}" | awk -v c="$1" '$1 == c && $4 == "True" {found=1} END {exit !found}'; }
