# The control plane a script runs against (sourced): the clusters of HUB_KUBECONFIG and
# MANAGED_KUBECONFIG when both are set, else the local one of scripts/control-plane, started if
# needed and then stopped again on exit (unless KEEP_CONTROL_PLANE is set). Needs `repo`.
use_control_plane() {
  local started=""
  if [[ -z ${HUB_KUBECONFIG:-} || -z ${MANAGED_KUBECONFIG:-} ]]; then
    if ! "$repo/scripts/control-plane" status >/dev/null 2>&1; then
      "$repo/scripts/control-plane" start >/dev/null
      started=1
    fi
    eval "$("$repo/scripts/control-plane" env)"
  else
    # Real clusters: only the tools the plane's build made (kubectl, helm, Konnectivity's server
    # and agent), unless they are named already.
    local line
    while read -r line; do
      local var=${line#export }
      var=${var%%=*}
      [[ -n ${!var:-} ]] || eval "$line"
    done < <("$repo/scripts/control-plane" env | grep -E '^export (KUBECTL|HELM|KONNECTIVITY_[A-Z]+)=')
  fi
  if [[ -n $started && -z ${KEEP_CONTROL_PLANE:-} ]]; then
    trap '"$repo/scripts/control-plane" stop' EXIT
  fi
}
