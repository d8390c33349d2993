# Nodes for scripts/control-plane (sourced): one per cluster, each a kubelet with its own
# containerd (own root, state and socket), a kube-scheduler, and a bridge for its pods.
#
# Networking stays on this machine: each node's pods live on their own bridge with routes to the
# nodes' addresses and their cluster's Service range only (no default route, no masquerade,
# ip_forward untouched). Pods reach an API server at their node's IP (the bridge's address) or
# through the `kubernetes` Service IP: both are DNAT'ed to the API server on loopback, in a chain
# of our own, with route_localnet on our bridges only. The API servers reach webhook pods at their
# endpoints (--enable-aggregator-routing).
#
# Other Services, and cluster DNS, are node-proxy's (crates/node-proxy), one per node: kube-proxy
# is not used because the nodes of every cluster and plane share this network namespace, where
# kube-proxies would fight over the same iptables chains. node-proxy writes only its node's chain
# (its rules match the node's pod subnet, or its address for node ports), relays each Service
# port in userspace from loopback (so nothing is forwarded), and serves <svc>.<ns>.svc.cluster.local on the node's IP (dnsmasq,
# the kubelet's clusterDNS).

# The node's index, bridge, pod subnet and IP. Derived from the port base so that two control
# planes (tests and upstream's e2e suite) never share an address.
node_index() { case $1 in hub) echo 0 ;; managed) echo 1 ;; management) echo 2 ;; esac; }
node_net() { echo "10.$((200 + (BASE / 1000) % 50)).$(node_index "$1")"; }
node_supernet() { local n; n=$(node_net hub); echo "${n%.*}.0.0/16"; }
node_ip() { echo "$(node_net "$1").1"; }
node_bridge() { echo "cp$((BASE % 100000))-$(node_index "$1")"; }
node_name() { echo "$1-node"; }
node_dir() { echo "$CP_DIR/$1/node"; }
nat_chain() { echo "CLUSTERADM-RS-$BASE"; }
svc_chain() { echo "$(nat_chain)-SVC-$(node_index "$1")"; } # the node's own, node-proxy's
cgroup_root() { echo "clusteradm-rs-$BASE-$1"; }
containerd_sock() { echo "$(node_dir "$1")/containerd.sock"; }

# Images every node has: the pod sandbox and the workload image tests use (scripts/image).
PAUSE_IMAGE=localhost/clusteradm-rs/pause:1
NODE_CLUSTERS=(hub managed management)

node_pki() { # cluster
  local c=$1 dir=$CP_DIR/$1/pki
  gen_cert "$dir" kubelet ca "/O=system:nodes/CN=system:node:$(node_name "$c")" clientAuth
  gen_cert "$dir" kubelet-serving ca "/CN=$(node_name "$c")" serverAuth "IP:$(node_ip "$c")"
  gen_cert "$dir" scheduler ca "/CN=system:kube-scheduler" clientAuth
  local server=https://127.0.0.1:${API_PORT[$c]}
  kubeconfig "$CP_DIR/$c/kubelet.kubeconfig" "$server" "$dir/ca.crt" "$dir/kubelet.crt" "$dir/kubelet.key" "$c"
  kubeconfig "$CP_DIR/$c/scheduler.kubeconfig" "$server" "$dir/ca.crt" "$dir/scheduler.crt" "$dir/scheduler.key" "$c"
  # What a pod (or anything on the node's network) uses to reach this cluster's API server.
  kubeconfig "$CP_DIR/$c-pods.kubeconfig" "https://$(node_ip "$c"):${API_PORT[$c]}" \
    "$dir/ca.crt" "$dir/admin.crt" "$dir/admin.key" "$c"
  # The hosted cluster has no node: its pods' address is the management node's.
  if [[ $c == management && -f $CP_DIR/hosted/pki/ca.crt ]]; then
    local h=$CP_DIR/hosted/pki
    kubeconfig "$CP_DIR/hosted-pods.kubeconfig" "https://$(node_ip management):${API_PORT[hosted]}" \
      "$h/ca.crt" "$h/admin.crt" "$h/admin.key" hosted
  fi
}

node_network() { # cluster
  local c=$1 br ip chain
  br=$(node_bridge "$c") ip=$(node_ip "$c") chain=$(nat_chain)
  if ! ip link show "$br" >/dev/null 2>&1; then
    ip link add "$br" type bridge
    ip addr add "$ip/24" dev "$br"
    ip link set "$br" up
  fi
  sysctl -qw "net.ipv4.conf.$br.route_localnet=1"
  iptables -t nat -N "$chain" 2>/dev/null || true
  # PREROUTING for pods, OUTPUT for this host's own processes (a join command naming a node IP).
  local hook
  for hook in PREROUTING OUTPUT; do
    iptables -t nat -C "$hook" -j "$chain" 2>/dev/null || iptables -t nat -A "$hook" -j "$chain"
  done
  # A node's IP leads to every API server of this plane (an agent in Hosted mode reaches the
  # managed cluster from the management cluster's node); the Service IP to the node's own.
  local rules=() x
  for x in "${CLUSTERS[@]}"; do
    rules+=("-d $ip -p tcp --dport ${API_PORT[$x]} -j DNAT --to-destination 127.0.0.1:${API_PORT[$x]}")
  done
  rules+=("-s $(node_net "$c").0/24 -d ${SVC_IP[$c]} -p tcp --dport 443 -j DNAT --to-destination 127.0.0.1:${API_PORT[$c]}")
  # Then the node's Services (after the `kubernetes` one above), node-proxy's chain: from the
  # node's pods, and for the node's address (its node ports) from every node's pods and this
  # machine.
  iptables -t nat -N "$(svc_chain "$c")" 2>/dev/null || true
  rules+=("-s $(node_net "$c").0/24 -j $(svc_chain "$c")" "-d $ip -j $(svc_chain "$c")")
  local r
  for r in "${rules[@]}"; do
    # shellcheck disable=SC2086 # a rule is words
    iptables -t nat -C "$chain" $r 2>/dev/null || iptables -t nat -A "$chain" $r
  done
  local net
  net=$(node_dir "$c")/cni
  mkdir -p "$net"
  cat >"$net/10-bridge.conflist" <<CNI
{
  "cniVersion": "0.4.0",
  "name": "$br",
  "plugins": [
    {"type": "bridge", "bridge": "$br", "isGateway": true, "ipMasq": false,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "$(node_net "$c").0/24", "gateway": "$ip"}]],
              "dataDir": "$(node_dir "$c")/cni-ipam",
              "routes": [{"dst": "$(node_supernet)"}, {"dst": "${SVC_CIDR[$c]}"}]}},
    {"type": "loopback"}
  ]
}
CNI
}

node_cgroups() { # cluster: the kubelet's cgroup root must exist in every hierarchy
  local root d
  root=$(cgroup_root "$1")
  for d in /sys/fs/cgroup/*/; do
    [[ -d $d/$root ]] && continue
    mkdir -p "$d/$root"
    if [[ -f $d/cpuset.cpus ]]; then
      cat "$d/cpuset.cpus" >"$d/$root/cpuset.cpus"
      cat "$d/cpuset.mems" >"$d/$root/cpuset.mems"
    fi
  done
}

start_containerd() { # cluster
  local c=$1 d
  d=$(node_dir "$c")
  mkdir -p "$d/containerd/root" "$d/containerd/state"
  cat >"$d/containerd.toml" <<TOML
version = 2
root = "$d/containerd/root"
state = "$d/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.internal.v1.opt", "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$(containerd_sock "$c")"
[ttrpc]
  address = "$(containerd_sock "$c").ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  netns_mounts_under_state_dir = true
  # Lowering oom_score_adj needs CAP_SYS_RESOURCE, which these machines do not grant.
  restrict_oom_score_adj = true
  enable_selinux = false
  # Registry mirrors: REGISTRY/hosts.toml files, read at each pull (see registry-mirror).
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$d/registries"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$d/cni"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
TOML
  spawn "$c-containerd" containerd --config "$d/containerd.toml"
  local deadline=$((SECONDS + 30))
  until ctr -a "$(containerd_sock "$c")" version >/dev/null 2>&1; do
    running "$c-containerd" || die "containerd ($c) exited; see $CP_DIR/logs/$c-containerd.log"
    ((SECONDS < deadline)) || die "containerd ($c) not answering after 30 s"
    sleep 0.2 # polling a starting process: there is no event to wait on
  done
}

# Points the node's pulls from <registry> (e.g. quay.io) at a mirror on this machine (an
# http://127.0.0.1:PORT scripts/registry): the node reaches no registry outside.
node_mirror() { # cluster registry url
  local dir
  dir=$(node_dir "$1")/registries/$2
  mkdir -p "$dir"
  printf 'server = "https://%s"\n\n[host."%s"]\n  capabilities = ["pull", "resolve"]\n' "$2" "$3" >"$dir/hosts.toml"
}

# Loads an OCI archive into a node's containerd, for the kubelet (namespace k8s.io).
node_import() { # cluster archive
  ctr -a "$(containerd_sock "$1")" -n k8s.io images import --no-unpack=false "$2" >/dev/null
}

start_kubelet() { # cluster
  local c=$1 d pki ip
  d=$(node_dir "$c") pki=$CP_DIR/$c/pki ip=$(node_ip "$c")
  mkdir -p "$d/kubelet"
  cat >"$d/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $ip
port: 10250
readOnlyPort: 0
healthzBindAddress: $ip
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $pki/ca.crt}
authorization: {mode: Webhook}
tlsCertFile: $pki/kubelet-serving.crt
tlsPrivateKeyFile: $pki/kubelet-serving.key
containerRuntimeEndpoint: unix://$(containerd_sock "$c")
cgroupDriver: cgroupfs
cgroupRoot: /$(cgroup_root "$c")
failCgroupV1: false
failSwapOn: false
clusterDomain: cluster.local
clusterDNS: [$ip]
resolvConf: /etc/resolv.conf
podLogsDir: $d/pod-logs
maxPods: 60
evictionHard: {memory.available: "1Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
nodeStatusUpdateFrequency: 5s
serializeImagePulls: false
YAML
  spawn "$c-kubelet" "$BIN_DIR/kubelet" --config "$d/kubelet.yaml" \
    --kubeconfig "$CP_DIR/$c/kubelet.kubeconfig" --root-dir "$d/kubelet" \
    --hostname-override "$(node_name "$c")" --node-ip "$ip"
}

# The node's Service proxy and cluster DNS (see the top of this file).
start_node_proxy() { # cluster
  local c=$1
  spawn "$c-proxy" "$NODE_PROXY" --kubeconfig "$CP_DIR/$c.kubeconfig" --source "$(node_net "$c").0/24" \
    --chain "$(svc_chain "$c")" --dns-address "$(node_ip "$c")" --state-dir "$(node_dir "$c")/proxy"
}

start_scheduler() { # cluster
  local c=$1
  spawn "$c-scheduler" "$BIN_DIR/kube-scheduler" --kubeconfig "$CP_DIR/$c/scheduler.kubeconfig" \
    --authentication-kubeconfig "$CP_DIR/$c/scheduler.kubeconfig" \
    --authorization-kubeconfig "$CP_DIR/$c/scheduler.kubeconfig" \
    --leader-elect=false --bind-address 127.0.0.1 --secure-port 0
}

# The API server's kubelet client may read logs and exec (what kubeadm grants it).
kubelet_api_access() { # cluster
  local c=$1 pki=$CP_DIR/$1/pki
  curl -A control-plane -sS --max-time 10 -o /dev/null --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" \
    -H 'Content-Type: application/json' -X POST \
    "https://127.0.0.1:${API_PORT[$c]}/apis/rbac.authorization.k8s.io/v1/clusterrolebindings" \
    -d '{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"kubeadm:apiserver-kubelet-api-admin"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"system:kubelet-api-admin"},"subjects":[{"kind":"User","name":"kube-apiserver-kubelet-client"}]}'
}

# Each kubelet and containerd takes inotify instances (cAdvisor, file watches), and so does every
# API server; the kernel's default of 128 per user runs out with a few clusters on one machine and
# the kubelet then exits ("inotify_init: too many open files"). Raised, never lowered.
inotify_room() {
  local want=1024 have
  have=$(cat /proc/sys/fs/inotify/max_user_instances)
  if ((have < want)); then sysctl -qw "fs.inotify.max_user_instances=$want"; fi
}

start_node() { # cluster
  inotify_room
  local c=$1
  [[ -x $BIN_DIR/kubelet ]] || die "kubelet not built: run scripts/control-plane build"
  command -v containerd >/dev/null || die "containerd not installed: run scripts/install-deps"
  node_pki "$c"
  node_network "$c"
  node_cgroups "$c"
  start_containerd "$c"
  local image
  for image in "${NODE_IMAGES[@]}"; do node_import "$c" "$image"; done
  start_node_proxy "$c"
  start_kubelet "$c"
  start_scheduler "$c"
  kubelet_api_access "$c"
}

# Ready, NotReady or absent: the node's Ready condition.
node_ready() { # cluster
  local c=$1 pki=$CP_DIR/$1/pki body
  body=$(curl -A control-plane -fsS --max-time 5 --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" \
    "https://127.0.0.1:${API_PORT[$c]}/api/v1/nodes/$(node_name "$c")" 2>/dev/null) || { echo absent; return; }
  if grep -q '"type":"Ready","status":"True"' <<<"$body"; then echo Ready; else echo NotReady; fi
}

# Waits for a node to be Ready.
wait_node() { # cluster timeout
  local c=$1 deadline=$((SECONDS + $2))
  until [[ $(node_ready "$c") == Ready ]]; do
    running "$c-kubelet" || die "kubelet ($c) exited; see $CP_DIR/logs/$c-kubelet.log"
    ((SECONDS < deadline)) || die "node $(node_name "$c") not Ready after $2 s; see $CP_DIR/logs/$c-kubelet.log"
    sleep 0.5 # the kubelet registers on its own schedule: poll its Node
  done
}

# Removes everything a node made: containers (by killing what lives in its cgroups), shims,
# mounts under the state directory, cgroups, the bridge and the NAT rules.
stop_node() { # cluster
  local c=$1 d root sock
  d=$(node_dir "$c") root=$(cgroup_root "$c") sock=$(containerd_sock "$c")
  stop_one "$c-scheduler"
  stop_one "$c-proxy"
  # Its dnsmasq goes with it; this one only if node-proxy was killed outright.
  pkill -f -- "--pid-file=$d/proxy/dnsmasq.pid" 2>/dev/null || true
  # A node a test stopped (tests/pods node_down) is running again before it is taken down: a
  # frozen process takes no signal, and a stopped kubelet no SIGTERM.
  [[ -f /sys/fs/cgroup/freezer/$root/freezer.state ]] && echo THAWED >"/sys/fs/cgroup/freezer/$root/freezer.state" || true
  [[ -f $(pidfile "$c-kubelet") ]] && kill -CONT "$(cat "$(pidfile "$c-kubelet")")" 2>/dev/null || true
  stop_one "$c-kubelet"
  local h pid
  for h in /sys/fs/cgroup/*/"$root"; do
    [[ -d $h ]] || continue
    while read -r pid; do kill -9 "$pid" 2>/dev/null || true; done < <(find "$h" -name cgroup.procs -exec cat {} + 2>/dev/null)
  done
  pkill -9 -f -- "-address $sock" 2>/dev/null || true
  stop_one "$c-containerd"
  local m
  if [[ -d $d ]]; then
    while read -r m; do umount -l "$m" 2>/dev/null || true; done < <(awk -v p="$d" 'index($2, p) == 1 {print $2}' /proc/self/mounts | sort -r)
  fi
  for h in /sys/fs/cgroup/*/"$root"; do
    [[ -d $h ]] || continue
    find "$h" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
  local br
  br=$(node_bridge "$c")
  ip link show "$br" >/dev/null 2>&1 && ip link del "$br"
  # The NAT chain is shared by this plane's nodes: flushed with the last of them.
  :
}

stop_nat() {
  local chain
  chain=$(nat_chain)
  if iptables -t nat -L "$chain" -n >/dev/null 2>&1; then
    while iptables -t nat -D PREROUTING -j "$chain" 2>/dev/null; do :; done
    while iptables -t nat -D OUTPUT -j "$chain" 2>/dev/null; do :; done
    iptables -t nat -F "$chain"
    iptables -t nat -X "$chain"
  fi
  local c
  for c in "${NODE_CLUSTERS[@]}"; do
    iptables -t nat -F "$(svc_chain "$c")" 2>/dev/null && iptables -t nat -X "$(svc_chain "$c")" || true
  done
}
