# What scripts/addon-e2e's add-on runners (scripts/addon-e2e.d/<add-on>) share: phases and their
# times, waiting on read-only checks, a fresh plane with one node, OCM prepared as the add-ons' CI
# prepares it (init, join loopback, accept), and the requests the API server refused.
# The runner sets: repo, addon, logs, cluster, cm (clusteradm), and UPSTREAM_IMAGES/static or image.

phase='' phase_start=$SECONDS timings=()
end_phase() { [[ -z $phase ]] || timings+=("$(printf '%5d s  %s' $((SECONDS - phase_start)) "$phase")"); phase=; }
step() {
  end_phase
  phase=$1 phase_start=$SECONDS
  printf '\n\033[1m==> %s\033[0m\n' "$*" >&2
}
fail() { echo "addon-e2e: $*; logs in $logs" >&2; exit 1; }
# poll <seconds> <command...>: re-runs a read-only check until it succeeds; 1 on timeout (for
# checks that report their own failure, e.g. inside $(…), where `fail` would lose the reason).
poll() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.5 # polling a read-only check of another process's progress
  done
}
# wait_for <seconds> <what> <command...>: as poll, failing the run on timeout.
wait_for() {
  local seconds=$1 what=$2
  shift 2
  poll "$seconds" "$@" || fail "timed out waiting for $what"
}
# addon_available <add-on>: its ManagedClusterAddOn on `cluster` is Available.
addon_available() {
  k -n "$cluster" get managedclusteraddon "$1" \
    -o jsonpath='{.status.conditions[?(@.type=="Available")].status}' 2>/dev/null | grep -qx True
}
# git_dir <name>: the git directory of open-cluster-management-io/<name> under OCM_GIT (<name> or
# open-cluster-management-io+<name>/repo).
git_dir() {
  local d
  for d in "$OCM_GIT/$1" "$OCM_GIT/open-cluster-management-io+$1/repo"; do
    [[ -e $d ]] && { echo "$d"; return; }
  done
  fail "no git directory of $1 in OCM_GIT ($OCM_GIT)"
}
# extract <repository> <revision> <directory>: its tree without vendor/ (OCM's replaced modules
# need none), once.
extract() {
  [[ -f $3/go.mod ]] && return
  rm -rf "$3.tmp" && mkdir -p "$3.tmp"
  if ! git -C "$(git_dir "$1")" archive "$2" -- . ':(exclude)vendor' 2>>"$logs/extract.log" |
    tar -x -C "$3.tmp" || [[ ! -f $3.tmp/go.mod ]]; then
    fail "extracting $1 at $2 failed (see $logs/extract.log)"
  fi
  mv "$3.tmp" "$3"
}
# go_build <source> <package> <binary>: a static `go build`, OCM's modules (the runner's `modules`,
# name@revision, extracted under $cache/mod) replaced by their extracted trees; the Go module proxy
# serves the rest.
go_build() {
  [[ -x $3 ]] && return
  step "build $(basename "$3") (go build, static; log: $logs/build-$(basename "$3").log)"
  local replaces=() m
  for m in "${modules[@]}"; do replaces+=(-replace "open-cluster-management.io/${m%@*}=$cache/mod/$m"); done
  (cd "$1" && go mod edit "${replaces[@]}" &&
    GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$3.tmp" "$2") \
    >"$logs/build-$(basename "$3").log" 2>&1 || fail "building $3 failed (see $logs/build-$(basename "$3").log)"
  mv "$3.tmp" "$3"
}
field() { sed -n "s/.*\"$1\": \"\\([^\"]*\\)\".*/\\1/p" "$2"; }
print_phases() {
  end_phase
  mkdir -p "$logs"
  {
    echo
    echo "phases:"
    printf '  %s\n' "${timings[@]}"
  } | tee "$logs/phases.txt" >&2
}

# clusteradm (a release build of this checkout unless CLUSTERADM names one) into `cm`.
our_clusteradm() {
  cm=${CLUSTERADM:-}
  if [[ -z $cm ]]; then
    step "build clusteradm (cargo build --release)"
    cargo build --release --quiet
    cm=$repo/target/release/clusteradm
  fi
}

# Upstream OCM's static binaries (UPSTREAM_IMAGES=1) into `static`, or our image into `image`.
ocm_images() {
  if [[ -n ${UPSTREAM_IMAGES:-} ]]; then
    local ocm_cache=$CP_CACHE/ocm-e2e/$OCM_VERSION # scripts/upstream/e2e's
    static=${UPSTREAM_STATIC:-$CP_CACHE/upstream/$OCM_VERSION/static}
    if [[ ! -x $static/registration-operator ]]; then
      if [[ ! -d $ocm_cache/src/cmd ]]; then
        [[ -n ${UPSTREAM_OCM:-} ]] ||
          { echo "addon-e2e: set UPSTREAM_OCM to a checkout or git directory of open-cluster-management-io/ocm" >&2; exit 2; }
        step "extract upstream OCM's source at $OCM_VERSION into $ocm_cache/src"
        rm -rf "$ocm_cache/src.tmp" && mkdir -p "$ocm_cache/src.tmp"
        git -C "$UPSTREAM_OCM" archive "$OCM_VERSION" | tar -x -C "$ocm_cache/src.tmp"
        mv "$ocm_cache/src.tmp" "$ocm_cache/src"
      fi
      step "build upstream OCM's binaries ($OCM_VERSION, static, offline from its vendor/)"
      mkdir -p "$static"
      (cd "$ocm_cache/src" && GOFLAGS=-mod=vendor CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$static/" \
        ./cmd/registration-operator ./cmd/registration ./cmd/work ./cmd/placement ./cmd/addon)
    fi
  else
    step "build our image (scripts/image)"
    image=$(scripts/image | tail -n 1)
  fi
}

# A fresh plane with one node (the suites' specs assume a hub that has seen nothing before), its
# env in this shell, `kc` the API server as pods reach it and `k` kubectl on it; stopped on exit
# unless KEEP is set, with the processes in `pids`.
pids=()
stop_all() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  scripts/control-plane stop >/dev/null 2>&1 || true
}
fresh_plane() {
  export CP_DIR CP_PORT_BASE CP_NODES=1
  scripts/control-plane stop >/dev/null 2>&1 || true
  rm -rf "$CP_DIR"
  if [[ -z ${KEEP:-} ]]; then trap stop_all EXIT; fi
  step "control plane with a node ($CP_DIR, ports from $CP_PORT_BASE)"
  scripts/control-plane start >/dev/null 2>"$logs/control-plane.log" || fail "the control plane did not start"
  eval "$(scripts/control-plane env)"
  kc=$HUB_PODS_KUBECONFIG
  if [[ -n ${UPSTREAM_IMAGES:-} ]]; then
    OCM_VERSION=$OCM_VERSION scripts/image upstream "$static" >/dev/null 2>>"$logs/image.log"
  fi
}
k() { "$KUBECTL" --kubeconfig "$kc" "$@"; }

# scripts/registry serving ARCHIVE... on CP_PORT_BASE+500, as the nodes' mirror of each REGISTRY
# given before `--`: registry_for quay.io docker.io -- a.tar b.tar
registry_for() {
  local mirrors=() registry_port=$((CP_PORT_BASE + 500))
  while [[ $1 != -- ]]; do mirrors+=("$1"); shift; done
  shift
  scripts/registry "$registry_port" "$@" 2>"$logs/registry.log" &
  pids+=($!)
  echo $! >"$logs/registry.pid"
  wait_for 10 "the registry" curl -sf "http://127.0.0.1:$registry_port/v2/"
  local mirror
  for mirror in "${mirrors[@]}"; do
    scripts/control-plane registry-mirror "$mirror" "http://127.0.0.1:$registry_port"
  done
}

# OCM as the add-ons' CI prepares it: init --wait; join the hub itself as `cluster` with
# --force-internal-endpoint-lookup; accept --wait; the ManagedCluster Available. Our image unless
# UPSTREAM_IMAGES.
ocm_loopback() {
  local ours=()
  [[ -z ${UPSTREAM_IMAGES:-} ]] && ours=(--image "$image")
  step "init ${ours[*]} --wait (log: $logs/init.log)"
  "$cm" init "${ours[@]}" --wait -o json --kubeconfig "$kc" >"$logs/join.json" 2>"$logs/init.log" ||
    fail "init failed"
  step "join ... $cluster --force-internal-endpoint-lookup ${ours[*]} (log: $logs/join.log)"
  "$cm" join "${ours[@]}" --wait --kubeconfig "$kc" --cluster-name "$cluster" --force-internal-endpoint-lookup \
    --hub-token "$(field hub-token "$logs/join.json")" \
    --hub-apiserver "$(field hub-apiserver "$logs/join.json")" \
    --ca-cert-hash "$(field ca-cert-hash "$logs/join.json")" >"$logs/join.log" 2>&1 ||
    fail "join failed"
  step "accept --clusters $cluster --wait (log: $logs/accept.log)"
  "$cm" accept --clusters "$cluster" --wait --kubeconfig "$kc" >"$logs/accept.log" 2>&1 || fail "accept failed"
  k wait --for=condition=ManagedClusterConditionAvailable "managedcluster/$cluster" --timeout 120s \
    >>"$logs/accept.log" 2>&1 || fail "ManagedCluster $cluster is not Available"
}

# The requests the hub's API server refused, by whom and how often (our hub's pods log nothing
# unless RUST_LOG is set: the audit log is where its failed writes show, e.g. a 403 on a
# RoleBinding).
refused_requests() {
  python3 - "$CP_DIR/logs/hub-audit.log" 2>&1 <<'PY' || true
import collections, json, sys
seen = collections.Counter()
for line in open(sys.argv[1]):
    e = json.loads(line)
    status = e.get("responseStatus") or {}
    if e.get("stage") != "ResponseComplete" or status.get("code", 0) < 400 or status.get("code") in (404, 409, 429):
        continue
    o = e.get("objectRef") or {}
    seen[(e["user"]["username"], e["verb"], o.get("resource"), o.get("namespace"), o.get("name"), status["code"],
          (status.get("message") or "").replace("\n", " "))] += 1
for (user, verb, resource, namespace, name, code, message), n in seen.most_common():
    print(f"{n:5}x {code} {user} {verb} {resource} {namespace or ''}/{name or ''}: {message}")
PY
}

# rights_used <service account>...: the distinct rights each of those ServiceAccounts of hub_ns
# used on the hub (audit log): `<account> <verb> <group>/<resource>[/<subresource>] <namespace or
# *> <name or *>`, to derive a role from (LEARN_RIGHTS) or count.
rights_used() {
  python3 - "$CP_DIR/logs/hub-audit.log" "$hub_ns" "$@" 2>&1 <<'PY' || true
import json, sys
log, namespace, accounts = sys.argv[1], sys.argv[2], set(sys.argv[3:])
seen = set()
for line in open(log):
    e = json.loads(line)
    user = e["user"]["username"]
    prefix = f"system:serviceaccount:{namespace}:"
    if e.get("stage") != "ResponseComplete" or not user.startswith(prefix) or user[len(prefix):] not in accounts:
        continue
    o = e.get("objectRef") or {}
    resource = f'{o.get("apiGroup", "")}/{o.get("resource", e.get("requestURI"))}' + (f'/{o["subresource"]}' if o.get("subresource") else "")
    named = e["verb"] in ("get", "update", "patch", "delete") or o.get("resource") == "leases"
    seen.add((user[len(prefix):], e["verb"], resource, o.get("namespace") or "*", (o.get("name") if named else None) or "*"))
for row in sorted(seen):
    print(" ".join(row))
PY
}

# Every Deployment's logs in the namespaces given, into $logs/diag/<ns>.<deployment>.log.
deployment_logs() {
  local ns deploy
  for ns in "$@"; do
    for deploy in $(k -n "$ns" get deployments -o name 2>/dev/null); do
      k -n "$ns" logs "$deploy" --all-containers --tail=2000 >"$logs/diag/$ns.${deploy#*/}.log" 2>&1 || true
    done
  done
}
