# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_clusteradm_global_optspecs
    string join \n kubeconfig= context= timeout= v/verbose color= dry-run= q/quiet= h/help V/version
end

function __fish_clusteradm_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_clusteradm_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_clusteradm_using_subcommand
    set -l cmd (__fish_clusteradm_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c clusteradm -n "__fish_clusteradm_needs_command" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_needs_command" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_needs_command" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_needs_command" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_needs_command" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_needs_command" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_needs_command" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "init" -d 'Make the current cluster an OCM hub and print the command that joins clusters to it'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "clean" -d 'Remove OCM from the hub: the ClusterManager, hub components, operator and bootstrap credentials'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "join" -d 'Join the current cluster to a hub as a managed cluster'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "unjoin" -d 'Remove the current cluster\'s klusterlet (and operator) so it leaves its hub'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "accept" -d 'Accept managed clusters: approve their agents\' CSRs and set hubAcceptsClient'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "get" -d 'Show hub state: the join token, ManifestWorks'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "backup" -d 'Write the hub\'s OCM objects (clusters, sets, placements, works, add-ons) as a YAML stream, for `restore` on a hub rebuilt from scratch'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "restore" -d 'Create the objects of a `backup` again on a hub `init` set up; objects already there are left as they are'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "create" -d 'Create objects on the hub: a ManifestWork, a cluster set, a placement'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "delete" -d 'Delete objects from the hub: a ManifestWork, a cluster set, the join token'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "addon" -d 'Enable or disable add-ons on managed clusters'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "clusterset" -d 'Manage cluster sets: move clusters into one, bind one to a namespace or unbind it'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "operator" -d 'Run an operator loop in the foreground (hub: the ClusterManager operator)'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "controller" -d 'Run OCM\'s controllers in the foreground: the hub\'s, or a managed cluster\'s agents'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "version" -d 'Print the client version and the API server\'s version'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "upgrade" -d 'Move the hub or this cluster\'s klusterlet to other images (a release, a registry, or ours)'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "proxy" -d 'Reach managed clusters\' API servers through the cluster-proxy add-on'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "install" -d 'Install upstream\'s built-in hub add-ons (governance-policy-framework)'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "uninstall" -d 'Remove upstream\'s built-in hub add-ons'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "completion" -d 'Print a shell completion script (bash, zsh, fish)'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "generate" -d 'Regenerate (or check) the files derived from the code: CRDs and completions'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l token-expiration -d 'Lifetime of the service-account bootstrap token' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l hub-apiserver -d 'The hub API server URL managed clusters should use [default: the kubeconfig\'s server]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l output-join-command-file -d 'Write a script that joins a cluster (`sh FILE <cluster-name>`) to FILE (mode 0700)' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -s o -l output -d 'Output format of the join command (with --dry-run the bundle is YAML whatever this says)' -r -f -a "text\t'`clusteradm join ...`'
json\t'`{"hub-token": ..., "hub-apiserver": ..., "ca-cert-hash": ...}`'
yaml\t'The same fields as YAML'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l bundle-version -d 'OCM release of the images: default, latest, or a version such as 1.3.1' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l image-registry -d 'Registry of the OCM images' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l image-pull-credential-file -d 'A docker config JSON with credentials for the image registry' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l feature-gates -d 'Hub feature gates, e.g. `ManifestWorkReplicaSet=true,ManagedClusterAutoApproval=false`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l image -d 'Run our image (this clusteradm, as `scripts/image` builds it) for the operator and every component it deploys, instead of upstream\'s images; e.g. registry.example.com/clusteradm:v0.1.0' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l admission -d 'How the hub enforces its admission rules: `webhooks` (upstream\'s, served by upstream\'s webhook Deployments, our hub pods with --image, or this process with --in-process) or `policies` (ValidatingAdmissionPolicies the API server enforces itself, no webhook server; they refuse the same requests with 422 Invalid and their own messages)' -r -f -a "webhooks\t'Upstream\'s webhooks (the default): served by upstream\'s webhook Deployments, our hub pods, or the in-process hub'
policies\t'ValidatingAdmissionPolicies the API server enforces itself; no webhook server'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l registration-drivers -d 'How clusters register, comma-separated: `csr`, `awsirsa`, `grpc`. Our components implement `csr`: the others are refused with --in-process or --image, and written into the ClusterManager as upstream\'s init writes them for upstream\'s images' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l auto-approved-csr-identities -d 'Bootstrap identities (users) whose clusters the hub accepts and whose certificates it approves without `accept`, comma-separated; with --feature-gates ManagedClusterAutoApproval=true' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l hub-cluster-arn -d 'awsirsa: the hub\'s EKS cluster ARN [default: the kubeconfig context\'s cluster name]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l aws-resource-tags -d 'awsirsa: tags for the AWS resources the hub creates, comma-separated' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l auto-approved-arn-patterns -d 'awsirsa: managed-cluster ARN patterns approved without `accept`, comma-separated' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l auto-approved-grpc-identities -d 'grpc: identities approved without `accept`, comma-separated' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l grpc-server -d 'grpc: the gRPC server\'s address agents reach' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l grpc-endpoint-type -d 'grpc: how the server is exposed, `hostname` or `loadBalancer`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l cluster-manager-values-file -d 'Upstream\'s cluster-manager Helm chart values (YAML): they override the flags. Taken: images.registry/tag/imageCredentials, enableSyncLabels, the ClusterManager\'s featureGates and autoApproveUsers; any other key is refused' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l mode -d 'Where the hub controllers run: `default` (on the hub cluster the kubeconfig names) or `hosted` (as pods on the cluster the kubeconfig names, the management cluster, acting on the hub cluster --hub-kubeconfig names, which needs no node); with upstream\'s images, hosted needs --hosted-webhook-address' -r -f -a "default\t'The hub controllers on the hub cluster'
hosted\t'The hub controllers on a management cluster'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l hub-kubeconfig -d '--mode hosted: the hub cluster\'s kubeconfig. The operator keeps it in upstream\'s Secret cluster-manager/external-hub-kubeconfig on the management cluster; the hub pods get a token of their own ServiceAccount on the hub instead' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l hosted-webhook-address -d '--mode hosted: the address (IP or DNS name) at which the hub\'s API server reaches the hub pods\' webhooks, exposed by you (upstream\'s hosted webhook configuration) [default with --image: the hub pods\' own addresses, which the operator keeps in the hub\'s Endpoints, for a hub API server that reaches the management cluster\'s pod network]. With upstream\'s images: a management cluster node\'s address, where init exposes their two webhook servers on NodePorts 30443 and 31443' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l hosted-webhook-port -d '--mode hosted --image: the port at --hosted-webhook-address [default: 443]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l output-file -d 'Also write the objects applied to FILE, as a YAML stream (mode 0600: it may hold a credential, e.g. join\'s bootstrap token, which --dry-run\'s stdout redacts); with --dry-run, instead of applying them' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l resource-qos-class -d 'QoS class of the operator\'s and its components\' containers: Default (small requests), BestEffort (none) or ResourceRequirement (--resource-limits/--resource-requests)' -r -f -a "Default\t'Small requests (2m CPU, 16Mi memory) and generous limits (2 CPUs, 2Gi memory)'
BestEffort\t'No requests or limits'
ResourceRequirement\t'The requests and limits given'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l resource-limits -d 'Limits of those containers, e.g. cpu=800m,memory=800Mi' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l resource-requests -d 'Requests of those containers, e.g. cpu=500m,memory=500Mi' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l bundle-version-overrides -d 'A JSON file overriding the --bundle-version\'s image versions, as upstream\'s: `{"ocm": "v1.3.0"}` (upstream\'s `policy_addon` and `app_addon` are read by `install hub-addon`)' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l wait -d 'Wait until the ClusterManager is Applied and the hub components are available' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l use-bootstrap-token -d 'Use a bootstrap token (kube-system/bootstrap-token-ocmhub) instead of a service-account token' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l force -d 'Skip the preflight checks' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l in-process -d 'Run the ClusterManager operator and hub controllers in this process instead of deploying the operator image; runs in the foreground until Ctrl-C or SIGTERM' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l enable-sync-labels -d 'Copy the ClusterManager\'s labels to every hub object its operator makes (upstream\'s operator flag of the same name; `app` and `open-cluster-management.io*` keys are not copied)' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l create-namespace -d 'Create the namespaces the install needs; with =false they must exist already' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clean" -l purge-operator -d 'Also remove the cluster-manager operator (as upstream; `--purge-operator=false` keeps it)' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clean" -l name -d 'The ClusterManager to remove (a hub has one, `cluster-manager`, as upstream\'s operator requires)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clean" -l output-file -d 'Accepted for upstream\'s scripts; writes nothing, as upstream\'s `clean` does not' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clean" -l hub-kubeconfig -d 'A hosted hub (`init --mode hosted`, the kubeconfig naming the management cluster): the hub cluster\'s kubeconfig, from which the bootstrap credentials `init` made there are removed too (the operator removes the hub components from both clusters)' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clean" -s y -l yes -d 'Do not ask for confirmation' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clean" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clean" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clean" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clean" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clean" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clean" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clean" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clean" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clean" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l hub-token -d 'The bootstrap token (`clusteradm init` or `clusteradm get token` on the hub prints it)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l hub-apiserver -d 'The hub API server URL (https)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l cluster-name -d 'The name this cluster registers under (a DNS-1123 label)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l ca-file -d 'The hub\'s CA certificate (PEM); by default it is discovered and verified' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l ca-cert-hash -d 'Pin of the hub CA\'s public key, as `clusteradm init` prints it' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -s m -l mode -d 'Where the agents run: on this cluster, or (hosted) on this management cluster for the cluster of --managed-cluster-kubeconfig' -r -f -a "default\t'Agents on the managed cluster'
hosted\t'Agents on this (management) cluster, for the cluster of --managed-cluster-kubeconfig'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l managed-cluster-kubeconfig -d 'The managed cluster\'s kubeconfig (--mode hosted)' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l image -d 'Run our image (this clusteradm, as `scripts/image` builds it) for the operator and every component it deploys, instead of upstream\'s images; e.g. registry.example.com/clusteradm:v0.1.0' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l image-registry -d 'Registry of the OCM images' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l bundle-version -d 'OCM release of the images: default, latest, or a version such as 1.3.1' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l feature-gates -d 'Agent feature gates, e.g. `ClusterClaim=true,AddonManagement=true`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l proxy-url -d 'A proxy between the agents and the hub (http or https URL)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l proxy-ca-file -d 'The CA of an https proxy (PEM), trusted beside the hub CA' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l klusterlet-annotation -d 'An annotation for the ManagedCluster, key=value (repeatable; prefixed with agent.open-cluster-management.io/)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l client-cert-expiration-seconds -d 'Lifetime asked for the agent\'s hub client certificate, in seconds (at least 600; unset or 0: the hub\'s signer decides)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l addon-kubeclient-registration-auth -d 'How add-ons\' hub clients register: `csr` (a client certificate) or `token` (a token of a ServiceAccount the hub makes per add-on)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l addon-token-expiration-seconds -d 'Lifetime of each add-on token in seconds, with `--addon-kubeclient-registration-auth token` (at least 600; unset or 0: a year)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l registration-auth -d 'How this cluster registers: `csr`, or with upstream\'s images `awsirsa` (an EKS cluster\'s IAM role; our image\'s agents register by CSR only); `grpc` is refused' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l hub-cluster-arn -d 'With `--registration-auth awsirsa`: the ARN of the hub\'s EKS cluster' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l managed-cluster-arn -d 'With `--registration-auth awsirsa`: the ARN of this EKS cluster (default: the kubeconfig context\'s cluster name, which an EKS kubeconfig sets to the ARN)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l image-pull-credential-file -d 'A docker config JSON with credentials for the image registry: it goes into Secret open-cluster-management-image-pull-credentials, which the operator copies to the agents' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l klusterlet-values-file -d 'Upstream\'s klusterlet Helm chart values (YAML): they override the flags. Taken: images.registry/tag/imageCredentials, enableSyncLabels, klusterlet.mode (Default or Singleton) and the Klusterlet\'s featureGates; any other key is refused' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -s o -l output -d 'Format of what --dry-run prints: the objects as YAML (the one format; kubectl\'s spelling)' -r -f -a "yaml\t'The objects, as YAML documents'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l output-file -d 'Also write the objects applied to FILE, as a YAML stream (mode 0600: it may hold a credential, e.g. join\'s bootstrap token, which --dry-run\'s stdout redacts); with --dry-run, instead of applying them' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l resource-qos-class -d 'QoS class of the operator\'s and its components\' containers: Default (small requests), BestEffort (none) or ResourceRequirement (--resource-limits/--resource-requests)' -r -f -a "Default\t'Small requests (2m CPU, 16Mi memory) and generous limits (2 CPUs, 2Gi memory)'
BestEffort\t'No requests or limits'
ResourceRequirement\t'The requests and limits given'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l resource-limits -d 'Limits of those containers, e.g. cpu=800m,memory=800Mi' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l resource-requests -d 'Requests of those containers, e.g. cpu=500m,memory=500Mi' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l bundle-version-overrides -d 'A JSON file overriding the --bundle-version\'s image versions, as upstream\'s: `{"ocm": "v1.3.0"}` (upstream\'s `policy_addon` and `app_addon` are read by `install hub-addon`)' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l singleton -d 'Run one combined agent instead of the registration and work agents' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l wait -d 'Wait until the Klusterlet is applied (and the cluster has registered with the hub)' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l force-internal-endpoint-lookup -d 'Use the hub URL recorded in the hub\'s kube-public/cluster-info instead of --hub-apiserver' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l force-internal-endpoint-lookup-managed -d 'Hosted: the agents reach the managed cluster at the API server URL its kube-public/cluster-info names, instead of the one in --managed-cluster-kubeconfig' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l in-process -d 'Run the klusterlet operator (and the agents) in this process instead of deploying the operator image; runs in the foreground until Ctrl-C or SIGTERM' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l enable-sync-labels -d 'Copy the Klusterlet\'s labels to every agent object its operator makes (upstream\'s operator flag of the same name; `app` and `open-cluster-management.io*` keys are not copied)' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l create-namespace -d 'Create the namespaces the install needs; with =false they must exist already' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand join" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand unjoin" -l cluster-name -d 'The name the cluster joined under' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand unjoin" -l purge-operator -d 'Also remove the klusterlet operator and the Klusterlet CRD (`--purge-operator=false` keeps them)' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand unjoin" -l output-file -d 'Accepted for upstream\'s scripts; writes nothing, as upstream\'s `unjoin` does not' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand unjoin" -s y -l yes -d 'Do not ask for confirmation' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand unjoin" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand unjoin" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand unjoin" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand unjoin" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand unjoin" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand unjoin" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand unjoin" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand unjoin" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand unjoin" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand accept" -s c -l clusters -l cluster -d 'Clusters to accept, comma-separated [default: choose among pending clusters on a terminal]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand accept" -l requesters -d 'Approve only CSRs of these agents (subject common names), comma-separated' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand accept" -l wait -d 'Wait (up to --timeout) for the clusters\' CSRs to appear' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand accept" -l skip-approve-check -d 'Approve CSRs from any requester, not only bootstrap identities (subjects are still checked)' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand accept" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand accept" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand accept" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand accept" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand accept" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand accept" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand accept" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand accept" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand accept" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from addon addons clusters clustersets clusterset credentials placements placement hub-info klusterlet-info token works help" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from addon addons clusters clustersets clusterset credentials placements placement hub-info klusterlet-info token works help" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from addon addons clusters clustersets clusterset credentials placements placement hub-info klusterlet-info token works help" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from addon addons clusters clustersets clusterset credentials placements placement hub-info klusterlet-info token works help" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from addon addons clusters clustersets clusterset credentials placements placement hub-info klusterlet-info token works help" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from addon addons clusters clustersets clusterset credentials placements placement hub-info klusterlet-info token works help" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from addon addons clusters clustersets clusterset credentials placements placement hub-info klusterlet-info token works help" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from addon addons clusters clustersets clusterset credentials placements placement hub-info klusterlet-info token works help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from addon addons clusters clustersets clusterset credentials placements placement hub-info klusterlet-info token works help" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from addon addons clusters clustersets clusterset credentials placements placement hub-info klusterlet-info token works help" -f -a "addon" -d 'List add-ons per cluster: install namespace, available, degraded, progressing, identity'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from addon addons clusters clustersets clusterset credentials placements placement hub-info klusterlet-info token works help" -f -a "addons" -d 'List add-ons per cluster: install namespace, available, degraded, progressing, identity'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from addon addons clusters clustersets clusterset credentials placements placement hub-info klusterlet-info token works help" -f -a "clusters" -d 'List managed clusters: accepted, joined, available, Kubernetes version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from addon addons clusters clustersets clusterset credentials placements placement hub-info klusterlet-info token works help" -f -a "clustersets" -d 'List cluster sets: bound namespaces, status and how many clusters each selects'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from addon addons clusters clustersets clusterset credentials placements placement hub-info klusterlet-info token works help" -f -a "clusterset" -d 'List cluster sets: bound namespaces, status and how many clusters each selects'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from addon addons clusters clustersets clusterset credentials placements placement hub-info klusterlet-info token works help" -f -a "credentials" -d 'Print a token for a managed cluster as an ExecCredential (the ClusterProfile exec plugin)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from addon addons clusters clustersets clusterset credentials placements placement hub-info klusterlet-info token works help" -f -a "placements" -d 'List placements: satisfied, reason, and every cluster selected'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from addon addons clusters clustersets clusterset credentials placements placement hub-info klusterlet-info token works help" -f -a "placement" -d 'List placements: satisfied, reason, and every cluster selected'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from addon addons clusters clustersets clusterset credentials placements placement hub-info klusterlet-info token works help" -f -a "hub-info" -d 'Show the hub\'s operator and components: replicas, images, CRDs (upstream\'s layout)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from addon addons clusters clustersets clusterset credentials placements placement hub-info klusterlet-info token works help" -f -a "klusterlet-info" -d 'Show this cluster\'s Klusterlet: conditions, operator, agents, CRDs (upstream\'s layout)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from addon addons clusters clustersets clusterset credentials placements placement hub-info klusterlet-info token works help" -f -a "token" -d 'Print the join command with a bootstrap token (a fresh one when the old has expired)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from addon addons clusters clustersets clusterset credentials placements placement hub-info klusterlet-info token works help" -f -a "works" -d 'List ManifestWorks and their status, per cluster'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from addon addons clusters clustersets clusterset credentials placements placement hub-info klusterlet-info token works help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from addon" -l clusters -d 'Only these managed clusters, comma-separated' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from addon" -s c -l cluster -d 'Only this managed cluster (with `--clusters`: that one too), as upstream\'s `-c`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from addon" -s o -l output -d 'Output format' -r -f -a "table\t'A human-readable table'
yaml\t'YAML (a list is printed as a `kind: List`)'
json\t'JSON (a list is printed as a `kind: List`)'
tree\t'Upstream clusteradm\'s tree (`get clusters`; the other getters print their table)'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from addon" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from addon" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from addon" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from addon" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from addon" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from addon" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from addon" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from addon" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from addon" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from addons" -l clusters -d 'Only these managed clusters, comma-separated' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from addons" -s c -l cluster -d 'Only this managed cluster (with `--clusters`: that one too), as upstream\'s `-c`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from addons" -s o -l output -d 'Output format' -r -f -a "table\t'A human-readable table'
yaml\t'YAML (a list is printed as a `kind: List`)'
json\t'JSON (a list is printed as a `kind: List`)'
tree\t'Upstream clusteradm\'s tree (`get clusters`; the other getters print their table)'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from addons" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from addons" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from addons" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from addons" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from addons" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from addons" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from addons" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from addons" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from addons" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clusters" -l clusterset -d 'Only the clusters of this cluster set (its `cluster.open-cluster-management.io/clusterset` label)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clusters" -s o -l output -d 'Output format' -r -f -a "table\t'A human-readable table'
yaml\t'YAML (a list is printed as a `kind: List`)'
json\t'JSON (a list is printed as a `kind: List`)'
tree\t'Upstream clusteradm\'s tree (`get clusters`; the other getters print their table)'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clusters" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clusters" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clusters" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clusters" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clusters" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clusters" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clusters" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clusters" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clusters" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clustersets" -s o -l output -d 'Output format' -r -f -a "table\t'A human-readable table'
yaml\t'YAML (a list is printed as a `kind: List`)'
json\t'JSON (a list is printed as a `kind: List`)'
tree\t'Upstream clusteradm\'s tree (`get clusters`; the other getters print their table)'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clustersets" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clustersets" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clustersets" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clustersets" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clustersets" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clustersets" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clustersets" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clustersets" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clustersets" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clusterset" -s o -l output -d 'Output format' -r -f -a "table\t'A human-readable table'
yaml\t'YAML (a list is printed as a `kind: List`)'
json\t'JSON (a list is printed as a `kind: List`)'
tree\t'Upstream clusteradm\'s tree (`get clusters`; the other getters print their table)'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clusterset" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clusterset" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clusterset" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clusterset" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clusterset" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clusterset" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clusterset" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clusterset" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from clusterset" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from credentials" -l cluster-role -d 'The ClusterRole on the managed cluster the credential is bound to' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from credentials" -l token-validity -d 'How long a token of the managed-serviceaccount add-on is valid (it renews it before)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from credentials" -l timeout -d 'How long to wait for the managed cluster\'s agent to report the token' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from credentials" -l non-expiring -d 'Without the managed-serviceaccount add-on on the cluster, accept a ServiceAccount token Secret\'s token, which does not expire and passes through the work\'s status while read' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from credentials" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from credentials" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from credentials" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from credentials" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from credentials" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from credentials" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from credentials" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from credentials" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from placements" -s n -l namespace -d 'Namespace [default: every namespace, as upstream\'s]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from placements" -s o -l output -d 'Output format' -r -f -a "table\t'A human-readable table'
yaml\t'YAML (a list is printed as a `kind: List`)'
json\t'JSON (a list is printed as a `kind: List`)'
tree\t'Upstream clusteradm\'s tree (`get clusters`; the other getters print their table)'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from placements" -s A -l all-namespaces -d 'Placements of every namespace (what no --namespace means too)' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from placements" -l explain -d 'Why each cluster is or is not selected: left out (and why) or scored (each prioritizer\'s score and weight), as the hub\'s scheduler decides it now (needs NAME)' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from placements" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from placements" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from placements" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from placements" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from placements" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from placements" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from placements" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from placements" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from placements" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from placement" -s n -l namespace -d 'Namespace [default: every namespace, as upstream\'s]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from placement" -s o -l output -d 'Output format' -r -f -a "table\t'A human-readable table'
yaml\t'YAML (a list is printed as a `kind: List`)'
json\t'JSON (a list is printed as a `kind: List`)'
tree\t'Upstream clusteradm\'s tree (`get clusters`; the other getters print their table)'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from placement" -s A -l all-namespaces -d 'Placements of every namespace (what no --namespace means too)' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from placement" -l explain -d 'Why each cluster is or is not selected: left out (and why) or scored (each prioritizer\'s score and weight), as the hub\'s scheduler decides it now (needs NAME)' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from placement" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from placement" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from placement" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from placement" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from placement" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from placement" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from placement" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from placement" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from placement" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from hub-info" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from hub-info" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from hub-info" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from hub-info" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from hub-info" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from hub-info" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from hub-info" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from hub-info" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from hub-info" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from klusterlet-info" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from klusterlet-info" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from klusterlet-info" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from klusterlet-info" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from klusterlet-info" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from klusterlet-info" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from klusterlet-info" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from klusterlet-info" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from klusterlet-info" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from token" -l token-expiration -d 'Lifetime of a new service-account token' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from token" -l hub-apiserver -d 'The hub API server URL for the join command [default: kube-public/cluster-info\'s, else the kubeconfig\'s]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from token" -s o -l output -d 'Output format' -r -f -a "text\t'`clusteradm join ...`'
json\t'`{"hub-token": ..., "hub-apiserver": ..., "ca-cert-hash": ...}`'
yaml\t'The same fields as YAML'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from token" -l output-file -d 'Accepted for upstream\'s scripts; writes nothing, as upstream\'s `get token` does not' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from token" -l use-bootstrap-token -d 'Print the bootstrap token (kube-system/bootstrap-token-ocmhub) instead of a service-account token' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from token" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from token" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from token" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from token" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from token" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from token" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from token" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from token" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from token" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from works" -s c -l clusters -l cluster -d 'Only these clusters, comma-separated [default: all]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from works" -s o -l output -d 'Output format' -r -f -a "table\t'A human-readable table'
yaml\t'YAML (a list is printed as a `kind: List`)'
json\t'JSON (a list is printed as a `kind: List`)'
tree\t'Upstream clusteradm\'s tree (`get clusters`; the other getters print their table)'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from works" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from works" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from works" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from works" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from works" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from works" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from works" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from works" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from works" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from help" -f -a "addon" -d 'List add-ons per cluster: install namespace, available, degraded, progressing, identity'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from help" -f -a "clusters" -d 'List managed clusters: accepted, joined, available, Kubernetes version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from help" -f -a "clustersets" -d 'List cluster sets: bound namespaces, status and how many clusters each selects'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from help" -f -a "credentials" -d 'Print a token for a managed cluster as an ExecCredential (the ClusterProfile exec plugin)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from help" -f -a "placements" -d 'List placements: satisfied, reason, and every cluster selected'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from help" -f -a "hub-info" -d 'Show the hub\'s operator and components: replicas, images, CRDs (upstream\'s layout)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from help" -f -a "klusterlet-info" -d 'Show this cluster\'s Klusterlet: conditions, operator, agents, CRDs (upstream\'s layout)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from help" -f -a "token" -d 'Print the join command with a bootstrap token (a fresh one when the old has expired)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from help" -f -a "works" -d 'List ManifestWorks and their status, per cluster'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand backup" -l output-file -d 'Write the objects to FILE (a new 0600 file) instead of stdout' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand backup" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand backup" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand backup" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand backup" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand backup" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand backup" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand backup" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand backup" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand backup" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand restore" -s f -l filename -d 'The backup to restore, as `clusteradm backup` wrote it' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand restore" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand restore" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand restore" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand restore" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand restore" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand restore" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand restore" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand restore" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand restore" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and not __fish_seen_subcommand_from clusterset placement work help" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and not __fish_seen_subcommand_from clusterset placement work help" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and not __fish_seen_subcommand_from clusterset placement work help" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and not __fish_seen_subcommand_from clusterset placement work help" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and not __fish_seen_subcommand_from clusterset placement work help" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and not __fish_seen_subcommand_from clusterset placement work help" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and not __fish_seen_subcommand_from clusterset placement work help" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and not __fish_seen_subcommand_from clusterset placement work help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and not __fish_seen_subcommand_from clusterset placement work help" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and not __fish_seen_subcommand_from clusterset placement work help" -f -a "clusterset" -d 'Create a ManagedClusterSet (clusters join it by label: `clusterset set`)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and not __fish_seen_subcommand_from clusterset placement work help" -f -a "placement" -d 'Create a Placement: which clusters of the bound sets to choose'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and not __fish_seen_subcommand_from clusterset placement work help" -f -a "work" -d 'Wrap manifests into a ManifestWork for each target cluster'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and not __fish_seen_subcommand_from clusterset placement work help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from clusterset" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from clusterset" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from clusterset" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from clusterset" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from clusterset" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from clusterset" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from clusterset" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from clusterset" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from clusterset" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from placement" -s n -l namespace -d 'Namespace of the placement (cluster sets must be bound to it)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from placement" -l clustersets -d 'Cluster sets to choose from, comma-separated [default: every set bound to the namespace]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from placement" -l label-selectors -d 'Label requirements, comma-separated, each one predicate (ORed, as upstream): `k=v`, `k!=v`, `k`, `!k`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from placement" -l count -d 'How many clusters to select [default: all that match]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from placement" -l prioritizers -d 'Prioritizers, comma-separated: `BuiltIn:{Balance|Steady|ResourceAllocatableCPU|ResourceAllocatableMemory}:{weight}`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from placement" -l overwrite -d 'Replace the spec of an existing placement of that name' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from placement" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from placement" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from placement" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from placement" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from placement" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from placement" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from placement" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from placement" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from placement" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from work" -s f -l filename -l file -d 'A manifest file, a directory of them (*.yaml, *.yml, *.json), or - for stdin; repeatable' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from work" -s c -l clusters -l cluster -d 'The clusters to create the work in, comma-separated' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from work" -l placement -d 'Create the work in the clusters a placement has chosen' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from work" -s R -l recursive -d 'Also read the subdirectories of directories given with -f' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from work" -l overwrite -d 'Update the work\'s manifests where it already exists' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from work" -s r -l replicaset -d 'Create a ManifestWorkReplicaSet in the placement\'s namespace instead: the hub then keeps one work on every cluster the placement decides, now and as decisions change' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from work" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from work" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from work" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from work" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from work" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from work" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from work" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from work" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from work" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from help" -f -a "clusterset" -d 'Create a ManagedClusterSet (clusters join it by label: `clusterset set`)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from help" -f -a "placement" -d 'Create a Placement: which clusters of the bound sets to choose'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from help" -f -a "work" -d 'Wrap manifests into a ManifestWork for each target cluster'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand create; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and not __fish_seen_subcommand_from clusterset token work help" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and not __fish_seen_subcommand_from clusterset token work help" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and not __fish_seen_subcommand_from clusterset token work help" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and not __fish_seen_subcommand_from clusterset token work help" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and not __fish_seen_subcommand_from clusterset token work help" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and not __fish_seen_subcommand_from clusterset token work help" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and not __fish_seen_subcommand_from clusterset token work help" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and not __fish_seen_subcommand_from clusterset token work help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and not __fish_seen_subcommand_from clusterset token work help" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and not __fish_seen_subcommand_from clusterset token work help" -f -a "clusterset" -d 'Delete a ManagedClusterSet that no namespace is bound to'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and not __fish_seen_subcommand_from clusterset token work help" -f -a "token" -d 'Delete the bootstrap token: revoke the join credential `init` made, so join commands printed before stop working (clusters already joined are not affected)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and not __fish_seen_subcommand_from clusterset token work help" -f -a "work" -d 'Delete a ManifestWork from clusters and wait until its resources are removed'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and not __fish_seen_subcommand_from clusterset token work help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from clusterset" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from clusterset" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from clusterset" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from clusterset" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from clusterset" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from clusterset" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from clusterset" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from clusterset" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from clusterset" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from token" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from token" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from token" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from token" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from token" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from token" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from token" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from token" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from token" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from work" -s c -l clusters -l cluster -d 'The clusters to delete it from, comma-separated' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from work" -l force -d 'Remove the work\'s finalizer instead of waiting for the agent\'s cleanup (its resources may be left on the managed clusters)' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from work" -s y -l yes -d 'Accepted for scripts written for earlier versions: `delete work` never asks, as upstream\'s `clusteradm delete work` and `kubectl delete` do not' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from work" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from work" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from work" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from work" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from work" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from work" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from work" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from work" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from work" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from help" -f -a "clusterset" -d 'Delete a ManagedClusterSet that no namespace is bound to'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from help" -f -a "token" -d 'Delete the bootstrap token: revoke the join credential `init` made, so join commands printed before stop working (clusters already joined are not affected)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from help" -f -a "work" -d 'Delete a ManifestWork from clusters and wait until its resources are removed'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand delete; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and not __fish_seen_subcommand_from create agent enable disable help" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and not __fish_seen_subcommand_from create agent enable disable help" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and not __fish_seen_subcommand_from create agent enable disable help" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and not __fish_seen_subcommand_from create agent enable disable help" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and not __fish_seen_subcommand_from create agent enable disable help" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and not __fish_seen_subcommand_from create agent enable disable help" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and not __fish_seen_subcommand_from create agent enable disable help" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and not __fish_seen_subcommand_from create agent enable disable help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and not __fish_seen_subcommand_from create agent enable disable help" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and not __fish_seen_subcommand_from create agent enable disable help" -f -a "create" -d 'Create an add-on from its agent\'s manifests or an AddOnTemplate (a ClusterManagementAddOn and its AddOnTemplate)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and not __fish_seen_subcommand_from create agent enable disable help" -f -a "agent" -d 'Run an example add-on\'s agent (helloworld) against the add-on\'s hub identity'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and not __fish_seen_subcommand_from create agent enable disable help" -f -a "enable" -d 'Enable add-ons on clusters (a ManagedClusterAddOn in each cluster\'s namespace)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and not __fish_seen_subcommand_from create agent enable disable help" -f -a "disable" -d 'Disable add-ons on clusters (delete their ManagedClusterAddOns)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and not __fish_seen_subcommand_from create agent enable disable help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from create" -s f -l filename -d 'Files or directories with the agent\'s manifests, or with an AddOnTemplate' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from create" -l version -d 'Version of the add-on (the template is named NAME-VERSION)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from create" -l cluster-role-bind -d 'A ClusterRole the agent\'s hub identity is bound to in its cluster\'s namespace' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from create" -l labels -d 'Labels of the ClusterManagementAddOn and AddOnTemplate (key=value, comma-separated)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from create" -l placement-ref -d 'A placement whose clusters get the add-on (NAMESPACE/NAME); without it, `addon enable`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from create" -l overwrite -d 'Replace the add-on and its template if they exist' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from create" -l hub-registration -d 'Give the agent an identity on the hub (a client certificate)' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from create" -s R -l recursive -d 'Look into subdirectories of -f directories' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from create" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from create" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from create" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from create" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from create" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from create" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from create" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from create" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from agent" -l hub-kubeconfig -d 'Kubeconfig of the add-on\'s hub identity (the `<addon>-hub-kubeconfig` secret\'s)' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from agent" -l cluster-name -d 'The managed cluster\'s name on the hub' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from agent" -l addon-namespace -d 'The add-on\'s install namespace on the managed cluster' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from agent" -l addon-name -d 'The add-on\'s name (its Lease\'s)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from agent" -l managed-kubeconfig -d 'Kubeconfig of the managed cluster, for a Hosted add-on: the agent runs on the hosting cluster (`--kubeconfig` or in-cluster, where its Lease stays) and acts on this one' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from agent" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from agent" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from agent" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from agent" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from agent" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from agent" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from agent" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from agent" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from agent" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from enable" -l names -d 'Names of the add-ons to enable, comma-separated' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from enable" -s c -l clusters -l cluster -d 'The managed clusters, comma-separated' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from enable" -s n -l namespace -d 'Namespace the add-on\'s agent is installed in on the managed cluster' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from enable" -l annotate -d 'Annotations to set on the ManagedClusterAddOns (key=value, comma-separated)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from enable" -l labels -d 'Labels to set on the ManagedClusterAddOns (key=value, comma-separated)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from enable" -l output-file -d 'Also write the ManagedClusterAddOns, as YAML, to this file' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from enable" -l config-file -d 'Configs for the add-ons (e.g. AddOnDeploymentConfigs), YAML: applied to the hub and named in each ManagedClusterAddOn\'s `spec.configs`' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from enable" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from enable" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from enable" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from enable" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from enable" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from enable" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from enable" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from enable" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from enable" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from disable" -l names -d 'Names of the add-ons to disable, comma-separated' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from disable" -s c -l clusters -l cluster -d 'The managed clusters, comma-separated' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from disable" -l all-clusters -d 'Every managed cluster the hub knows' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from disable" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from disable" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from disable" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from disable" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from disable" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from disable" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from disable" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from disable" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from disable" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from help" -f -a "create" -d 'Create an add-on from its agent\'s manifests or an AddOnTemplate (a ClusterManagementAddOn and its AddOnTemplate)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from help" -f -a "agent" -d 'Run an example add-on\'s agent (helloworld) against the add-on\'s hub identity'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from help" -f -a "enable" -d 'Enable add-ons on clusters (a ManagedClusterAddOn in each cluster\'s namespace)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from help" -f -a "disable" -d 'Disable add-ons on clusters (delete their ManagedClusterAddOns)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand addon; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and not __fish_seen_subcommand_from set bind unbind help" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and not __fish_seen_subcommand_from set bind unbind help" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and not __fish_seen_subcommand_from set bind unbind help" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and not __fish_seen_subcommand_from set bind unbind help" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and not __fish_seen_subcommand_from set bind unbind help" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and not __fish_seen_subcommand_from set bind unbind help" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and not __fish_seen_subcommand_from set bind unbind help" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and not __fish_seen_subcommand_from set bind unbind help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and not __fish_seen_subcommand_from set bind unbind help" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and not __fish_seen_subcommand_from set bind unbind help" -f -a "set" -d 'Move clusters into a cluster set (sets their cluster-set label)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and not __fish_seen_subcommand_from set bind unbind help" -f -a "bind" -d 'Let placements in a namespace use a cluster set (a ManagedClusterSetBinding)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and not __fish_seen_subcommand_from set bind unbind help" -f -a "unbind" -d 'Remove a cluster set\'s binding from a namespace'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and not __fish_seen_subcommand_from set bind unbind help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from set" -l clusters -d 'The clusters to move into the set, comma-separated' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from set" -l namespaces -d 'Namespaces every cluster of the set should have (added to its `spec.managedNamespaces`; the agents create them), comma-separated' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from set" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from set" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from set" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from set" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from set" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from set" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from set" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from set" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from set" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from bind" -s n -l namespace -d 'The namespace (as upstream\'s, `default` unless given)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from bind" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from bind" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from bind" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from bind" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from bind" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from bind" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from bind" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from bind" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from bind" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from unbind" -s n -l namespace -d 'The namespace (as upstream\'s, `default` unless given)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from unbind" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from unbind" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from unbind" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from unbind" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from unbind" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from unbind" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from unbind" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from unbind" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from unbind" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from help" -f -a "set" -d 'Move clusters into a cluster set (sets their cluster-set label)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from help" -f -a "bind" -d 'Let placements in a namespace use a cluster set (a ManagedClusterSetBinding)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from help" -f -a "unbind" -d 'Remove a cluster set\'s binding from a namespace'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand clusterset; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and not __fish_seen_subcommand_from hub klusterlet help" -l probe-address -d 'Serve /healthz and /readyz over plain HTTP on this address (e.g. 0.0.0.0:8000)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and not __fish_seen_subcommand_from hub klusterlet help" -l metrics-address -d 'Serve /metrics over HTTPS on this address (e.g. 0.0.0.0:8443) to callers whose bearer token the API server authenticates and allows `get` on the non-resource URL /metrics' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and not __fish_seen_subcommand_from hub klusterlet help" -l enable-sync-labels -d 'Copy the CR\'s labels (but `app` and `open-cluster-management.io*`) to every object the operator makes and to its pods, as upstream\'s operators do with this flag' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and not __fish_seen_subcommand_from hub klusterlet help" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and not __fish_seen_subcommand_from hub klusterlet help" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and not __fish_seen_subcommand_from hub klusterlet help" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and not __fish_seen_subcommand_from hub klusterlet help" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and not __fish_seen_subcommand_from hub klusterlet help" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and not __fish_seen_subcommand_from hub klusterlet help" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and not __fish_seen_subcommand_from hub klusterlet help" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and not __fish_seen_subcommand_from hub klusterlet help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and not __fish_seen_subcommand_from hub klusterlet help" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and not __fish_seen_subcommand_from hub klusterlet help" -f -a "hub" -d 'Run the ClusterManager operator: install and keep the hub components as the ClusterManager asks'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and not __fish_seen_subcommand_from hub klusterlet help" -f -a "klusterlet" -d 'Run the Klusterlet operator: install and keep the agents as the Klusterlet asks'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and not __fish_seen_subcommand_from hub klusterlet help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from hub" -l probe-address -d 'Serve /healthz and /readyz over plain HTTP on this address (e.g. 0.0.0.0:8000)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from hub" -l metrics-address -d 'Serve /metrics over HTTPS on this address (e.g. 0.0.0.0:8443) to callers whose bearer token the API server authenticates and allows `get` on the non-resource URL /metrics' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from hub" -l enable-sync-labels -d 'Copy the CR\'s labels (but `app` and `open-cluster-management.io*`) to every object the operator makes and to its pods, as upstream\'s operators do with this flag' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from hub" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from hub" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from hub" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from hub" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from hub" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from hub" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from hub" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from hub" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from hub" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from klusterlet" -l in-process -d 'Run every Klusterlet\'s registration and work agents in this process instead of deploying them (as `join --in-process` does for its own Klusterlet)' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from klusterlet" -l probe-address -d 'Serve /healthz and /readyz over plain HTTP on this address (e.g. 0.0.0.0:8000)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from klusterlet" -l metrics-address -d 'Serve /metrics over HTTPS on this address (e.g. 0.0.0.0:8443) to callers whose bearer token the API server authenticates and allows `get` on the non-resource URL /metrics' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from klusterlet" -l enable-sync-labels -d 'Copy the CR\'s labels (but `app` and `open-cluster-management.io*`) to every object the operator makes and to its pods, as upstream\'s operators do with this flag' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from klusterlet" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from klusterlet" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from klusterlet" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from klusterlet" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from klusterlet" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from klusterlet" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from klusterlet" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from klusterlet" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from klusterlet" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from help" -f -a "hub" -d 'Run the ClusterManager operator: install and keep the hub components as the ClusterManager asks'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from help" -f -a "klusterlet" -d 'Run the Klusterlet operator: install and keep the agents as the Klusterlet asks'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand operator; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and not __fish_seen_subcommand_from hub agent grpc-server help" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and not __fish_seen_subcommand_from hub agent grpc-server help" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and not __fish_seen_subcommand_from hub agent grpc-server help" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and not __fish_seen_subcommand_from hub agent grpc-server help" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and not __fish_seen_subcommand_from hub agent grpc-server help" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and not __fish_seen_subcommand_from hub agent grpc-server help" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and not __fish_seen_subcommand_from hub agent grpc-server help" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and not __fish_seen_subcommand_from hub agent grpc-server help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and not __fish_seen_subcommand_from hub agent grpc-server help" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and not __fish_seen_subcommand_from hub agent grpc-server help" -f -a "hub" -d 'Run every hub controller: registration, cluster sets, placement, replica sets, add-ons, and the hub\'s webhooks (admission, the add-on API\'s conversion)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and not __fish_seen_subcommand_from hub agent grpc-server help" -f -a "agent" -d 'Run a managed cluster\'s agents: registration (with add-on registration) and work'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and not __fish_seen_subcommand_from hub agent grpc-server help" -f -a "grpc-server" -d 'Run the hub\'s gRPC server (upstream\'s cluster-manager-grpc-server): agents register through CloudEvents over gRPC instead of the hub\'s API server'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and not __fish_seen_subcommand_from hub agent grpc-server help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from hub" -l webhook-cert-dir -d 'Serve the hub\'s webhooks (add-on conversion, admission) on every replica, on port 9443 behind the hub\'s Service, with the tls.crt and tls.key in this directory (the operator\'s mounted serving certificate); the operator points the CRDs and webhook configurations at the Service. Without it the leader serves them on the address it reaches the API server from, and points the CRDs and configurations at itself' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from hub" -l placement-debug-address -d 'Serve upstream\'s placement debug endpoint (/debug/placements/, the PlacementDebugServer gate) over HTTPS on this address (e.g. 0.0.0.0:9444) to callers whose bearer token the API server authenticates and allows the URL and `create` on the placement\'s namespace' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from hub" -l probe-address -d 'Serve /healthz and /readyz over plain HTTP on this address (e.g. 0.0.0.0:8000)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from hub" -l metrics-address -d 'Serve /metrics over HTTPS on this address (e.g. 0.0.0.0:8443) to callers whose bearer token the API server authenticates and allows `get` on the non-resource URL /metrics' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from hub" -l cluster-manager-in-cluster -d 'A hosted hub\'s pods: read the ClusterManager (whose gates the hub follows) from the cluster this pod runs in, with its in-cluster credentials; everything else from the hub that --kubeconfig names' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from hub" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from hub" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from hub" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from hub" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from hub" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from hub" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from hub" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from hub" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from hub" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l cluster-name -d 'The name the cluster registers under (none: the name stored with the hub credential, or a generated one, as upstream\'s agent)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l agent-namespace -d 'The namespace of the bootstrap and hub kubeconfig secrets (default: the pod\'s namespace, else open-cluster-management-agent)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l components -d 'Which agents to run: all (upstream\'s Singleton agent), or one of upstream\'s Default-mode pair, registration (with add-on registration) or work, each in its own Deployment' -r -f -a "all\t'Registration (with add-on registration) and work: upstream\'s Singleton agent'
registration\t'The registration agent with add-on registration: upstream\'s `<k>-registration-agent`'
work\t'The work agent: upstream\'s `<k>-work-agent`'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l managed-kubeconfig -l spoke-kubeconfig -d 'Hosted mode: the managed cluster\'s kubeconfig (the mounted external-managed-kubeconfig secret). The agents act there, while their secrets and Lease stay on the cluster they run on' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l feature-gates -d 'The Klusterlet\'s feature gates, upstream\'s `Name=true|false` list (the operator passes them); those the agents do not act on are passed over' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l appliedmanifestwork-eviction-grace-period -d 'How long an AppliedManifestWork no work on the hub manages any more is kept before what it applied is removed (upstream\'s flag; the operator passes the Klusterlet\'s `workConfiguration.appliedManifestWorkEvictionGracePeriod`); 876000h or more: never' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l status-sync-interval -d 'How often a work with status feedback or condition rules is read again for them (upstream\'s flag; the operator passes the Klusterlet\'s `workConfiguration.statusSyncInterval`)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l bootstrap-kubeconfig-secrets -d 'MultipleHubs: the bootstrap kubeconfig secrets of the hubs to choose from, in order (at least two; the operator passes the Klusterlet\'s `bootstrapKubeConfigs`)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l hub-connection-timeout-seconds -d 'MultipleHubs: seconds without a heartbeat reaching the hub before another is selected (at least 180, the Klusterlet\'s minimum: less could leave a healthy hub between beats)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l cluster-annotations -d 'Annotations put on the ManagedCluster the agent creates, `k=v,...`; only keys under agent.open-cluster-management.io are (upstream\'s flag; the Klusterlet\'s `clusterAnnotations`)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l cluster-labels -d 'Labels put on the ManagedCluster the agent creates, `k=v,...` (the Klusterlet\'s `clusterLabels`; upstream\'s agents have no such flag)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l spoke-external-server-urls -d 'This cluster\'s API server URLs the hub is told (upstream\'s flag; the Klusterlet\'s `externalServerURLs`), each with the CA the agent trusts this cluster with' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l client-cert-expiration-seconds -d 'Requested lifetime of the hub client certificate (upstream\'s flag)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l addon-kubeclient-registration-auth -d 'How add-ons\' hub clients register: csr (a client certificate) or token (a ServiceAccount token from the hub), as upstream\'s agent flag' -r -f -a "csr\t''
token\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l addon-token-expiration-seconds -d 'The lifetime asked for each add-on token (at least 600; 0: a year), under token auth' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l max-custom-cluster-claims -d 'Custom ClusterClaims reported at most (upstream\'s flag)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l reserved-cluster-claim-suffixes -d 'ClusterClaims whose names end so are reserved: always reported (upstream\'s flag)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l kube-api-qps -d 'Requests a second to the managed cluster (upstream\'s flag; 0: unlimited unless --kube-api-burst is set)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l kube-api-burst -d 'Requests at once to the managed cluster (upstream\'s flag)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l hub-kube-api-qps -d 'Requests a second to the hub by the work agent (upstream\'s flag)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l hub-kube-api-burst -d 'Requests at once to the hub by the work agent (upstream\'s flag)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l probe-address -d 'Serve /healthz and /readyz over plain HTTP on this address (e.g. 0.0.0.0:8000)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l metrics-address -d 'Serve /metrics over HTTPS on this address (e.g. 0.0.0.0:8443) to callers whose bearer token the API server authenticates and allows `get` on the non-resource URL /metrics' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from agent" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from grpc-server" -l grpc-server-bindport -d 'The port to serve on (all addresses)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from grpc-server" -l grpc-tls-cert-file -d 'The serving certificate (PEM)' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from grpc-server" -l grpc-tls-key-file -d 'The serving certificate\'s key (PEM)' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from grpc-server" -l grpc-client-ca-file -d 'The CA that agents\' client certificates chain to; without it only bearer tokens are accepted' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from grpc-server" -l grpc-ca-file -d 'The CA that signs agents\' gRPC client certificates (upstream\'s registration hub flag): with --grpc-key-file, this server signs the approved CSRs of signer open-cluster-management.io/grpc, and the CA is the client CA unless --grpc-client-ca-file names another' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from grpc-server" -l grpc-key-file -d 'The signing CA\'s key' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from grpc-server" -l grpc-signer-duration -d 'The longest a signed client certificate lasts (a CSR may ask less)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from grpc-server" -l broker-heartbeat-interval -d 'How often each subscription is sent a heartbeat (at least 10s, as upstream\'s)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from grpc-server" -l broker-heartbeat-disabled -d 'Send no heartbeats' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from grpc-server" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from grpc-server" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from grpc-server" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from grpc-server" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from grpc-server" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from grpc-server" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from grpc-server" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from grpc-server" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from grpc-server" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from help" -f -a "hub" -d 'Run every hub controller: registration, cluster sets, placement, replica sets, add-ons, and the hub\'s webhooks (admission, the add-on API\'s conversion)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from help" -f -a "agent" -d 'Run a managed cluster\'s agents: registration (with add-on registration) and work'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from help" -f -a "grpc-server" -d 'Run the hub\'s gRPC server (upstream\'s cluster-manager-grpc-server): agents register through CloudEvents over gRPC instead of the hub\'s API server'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand controller; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand version" -s o -l output -d 'Output format' -r -f -a "table\t'A human-readable table'
yaml\t'YAML (a list is printed as a `kind: List`)'
json\t'JSON (a list is printed as a `kind: List`)'
tree\t'Upstream clusteradm\'s tree (`get clusters`; the other getters print their table)'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand version" -l client -d 'Only the client version; do not contact the cluster' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand version" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand version" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand version" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand version" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand version" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand version" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand version" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand version" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand version" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and not __fish_seen_subcommand_from clustermanager klusterlet help" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and not __fish_seen_subcommand_from clustermanager klusterlet help" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and not __fish_seen_subcommand_from clustermanager klusterlet help" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and not __fish_seen_subcommand_from clustermanager klusterlet help" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and not __fish_seen_subcommand_from clustermanager klusterlet help" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and not __fish_seen_subcommand_from clustermanager klusterlet help" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and not __fish_seen_subcommand_from clustermanager klusterlet help" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and not __fish_seen_subcommand_from clustermanager klusterlet help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and not __fish_seen_subcommand_from clustermanager klusterlet help" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and not __fish_seen_subcommand_from clustermanager klusterlet help" -f -a "clustermanager" -d 'Upgrade the hub: the cluster-manager operator and the ClusterManager\'s component images'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and not __fish_seen_subcommand_from clustermanager klusterlet help" -f -a "klusterlet" -d 'Upgrade this cluster\'s klusterlet: the klusterlet operator and every Klusterlet\'s agent images'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and not __fish_seen_subcommand_from clustermanager klusterlet help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from clustermanager" -l bundle-version -d 'OCM release of the images: default, latest, or a version such as 1.3.1' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from clustermanager" -l bundle-version-overrides -d 'A JSON file overriding the bundle\'s image versions, as upstream\'s: `{"ocm": "v1.3.0"}`' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from clustermanager" -l image-registry -d 'Registry of the OCM images' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from clustermanager" -l image -d 'Our image (this clusteradm, as `scripts/image` builds it) for the operator and every component, instead of upstream\'s' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from clustermanager" -l wait -d 'Wait until the operator has rolled out and the CR reports the new images applied' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from clustermanager" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from clustermanager" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from clustermanager" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from clustermanager" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from clustermanager" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from clustermanager" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from clustermanager" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from clustermanager" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from clustermanager" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from klusterlet" -l bundle-version -d 'OCM release of the images: default, latest, or a version such as 1.3.1' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from klusterlet" -l bundle-version-overrides -d 'A JSON file overriding the bundle\'s image versions, as upstream\'s: `{"ocm": "v1.3.0"}`' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from klusterlet" -l image-registry -d 'Registry of the OCM images' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from klusterlet" -l image -d 'Our image (this clusteradm, as `scripts/image` builds it) for the operator and every component, instead of upstream\'s' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from klusterlet" -l wait -d 'Wait until the operator has rolled out and the CR reports the new images applied' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from klusterlet" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from klusterlet" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from klusterlet" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from klusterlet" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from klusterlet" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from klusterlet" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from klusterlet" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from klusterlet" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from klusterlet" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from help" -f -a "clustermanager" -d 'Upgrade the hub: the cluster-manager operator and the ClusterManager\'s component images'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from help" -f -a "klusterlet" -d 'Upgrade this cluster\'s klusterlet: the klusterlet operator and every Klusterlet\'s agent images'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand upgrade; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and not __fish_seen_subcommand_from health kubectl help" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and not __fish_seen_subcommand_from health kubectl help" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and not __fish_seen_subcommand_from health kubectl help" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and not __fish_seen_subcommand_from health kubectl help" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and not __fish_seen_subcommand_from health kubectl help" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and not __fish_seen_subcommand_from health kubectl help" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and not __fish_seen_subcommand_from health kubectl help" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and not __fish_seen_subcommand_from health kubectl help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and not __fish_seen_subcommand_from health kubectl help" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and not __fish_seen_subcommand_from health kubectl help" -f -a "health" -d 'Probe each managed cluster\'s API server (/healthz) through cluster-proxy'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and not __fish_seen_subcommand_from health kubectl help" -f -a "kubectl" -d 'Run kubectl against a managed cluster through cluster-proxy, as a ManagedServiceAccount'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and not __fish_seen_subcommand_from health kubectl help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from health" -s c -l cluster -d 'Only this managed cluster (with --clusters: that one too)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from health" -l clusters -d 'Only these managed clusters, comma-separated [default: every one]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from health" -l proxy-ca-cert -d 'The proxy server\'s CA (PEM), with --proxy-cert and --proxy-key instead of the Secrets' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from health" -l proxy-cert -d 'A client certificate the proxy server accepts (PEM)' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from health" -l proxy-key -d 'Its key (PEM)' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from health" -l proxy-server-host -d 'The proxy server\'s host; `localhost` (without the certificate files) port-forwards to one of its pods through the hub\'s API server' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from health" -l proxy-server-port -d 'The proxy server\'s port for clients' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from health" -s o -l output -d 'Output format' -r -f -a "table\t'A human-readable table'
yaml\t'YAML (a list is printed as a `kind: List`)'
json\t'JSON (a list is printed as a `kind: List`)'
tree\t'Upstream clusteradm\'s tree (`get clusters`; the other getters print their table)'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from health" -l in-cluster-proxy-cert-lookup -d 'Read the proxy server\'s CA and the client certificate from the add-on\'s Secrets on the hub' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from health" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from health" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from health" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from health" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from health" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from health" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from health" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from health" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from health" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from kubectl" -s c -l cluster -d 'The managed cluster' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from kubectl" -l clusters -d 'The managed cluster, as upstream\'s --clusters (exactly one)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from kubectl" -l sa -d 'The ManagedServiceAccount (in the cluster\'s namespace on the hub) whose token kubectl uses' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from kubectl" -l args -d 'kubectl\'s arguments, split at spaces (e.g. "get nodes")' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from kubectl" -s i -l interactive-mode -d 'Read kubectl commands from the terminal until `exit`' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from kubectl" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from kubectl" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from kubectl" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from kubectl" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from kubectl" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from kubectl" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from kubectl" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from kubectl" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from kubectl" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from help" -f -a "health" -d 'Probe each managed cluster\'s API server (/healthz) through cluster-proxy'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from help" -f -a "kubectl" -d 'Run kubectl against a managed cluster through cluster-proxy, as a ManagedServiceAccount'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand proxy; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and not __fish_seen_subcommand_from hub-addon help" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and not __fish_seen_subcommand_from hub-addon help" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and not __fish_seen_subcommand_from hub-addon help" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and not __fish_seen_subcommand_from hub-addon help" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and not __fish_seen_subcommand_from hub-addon help" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and not __fish_seen_subcommand_from hub-addon help" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and not __fish_seen_subcommand_from hub-addon help" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and not __fish_seen_subcommand_from hub-addon help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and not __fish_seen_subcommand_from hub-addon help" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and not __fish_seen_subcommand_from hub-addon help" -f -a "hub-addon" -d 'Install built-in add-ons on the hub (governance-policy-framework, application-manager)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and not __fish_seen_subcommand_from hub-addon help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and __fish_seen_subcommand_from hub-addon" -l names -d 'The add-ons, comma-separated: governance-policy-framework, application-manager' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and __fish_seen_subcommand_from hub-addon" -l namespace -d 'The namespace of the add-ons\' controllers on the hub' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and __fish_seen_subcommand_from hub-addon" -l output-file -d 'Also write the objects applied to FILE, as a YAML stream; with --dry-run, instead of applying them' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and __fish_seen_subcommand_from hub-addon" -l bundle-version -d 'The version bundle whose add-on images to install (default, latest or an OCM version: 1.3.1 installs the policy add-on v0.18.0, as upstream\'s, and application-manager v0.16.0, its last release)' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and __fish_seen_subcommand_from hub-addon" -l bundle-version-overrides -d 'A JSON file overriding the bundle\'s versions, as upstream\'s: `{"policy_addon": "v0.18.0", "app_addon": "v0.16.0"}`' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and __fish_seen_subcommand_from hub-addon" -l create-namespace -d 'Create the namespace when it does not exist' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and __fish_seen_subcommand_from hub-addon" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and __fish_seen_subcommand_from hub-addon" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and __fish_seen_subcommand_from hub-addon" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and __fish_seen_subcommand_from hub-addon" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and __fish_seen_subcommand_from hub-addon" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and __fish_seen_subcommand_from hub-addon" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and __fish_seen_subcommand_from hub-addon" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and __fish_seen_subcommand_from hub-addon" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and __fish_seen_subcommand_from hub-addon" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and __fish_seen_subcommand_from help" -f -a "hub-addon" -d 'Install built-in add-ons on the hub (governance-policy-framework, application-manager)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand install; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand uninstall; and not __fish_seen_subcommand_from hub-addon help" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand uninstall; and not __fish_seen_subcommand_from hub-addon help" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand uninstall; and not __fish_seen_subcommand_from hub-addon help" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand uninstall; and not __fish_seen_subcommand_from hub-addon help" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand uninstall; and not __fish_seen_subcommand_from hub-addon help" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand uninstall; and not __fish_seen_subcommand_from hub-addon help" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand uninstall; and not __fish_seen_subcommand_from hub-addon help" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand uninstall; and not __fish_seen_subcommand_from hub-addon help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand uninstall; and not __fish_seen_subcommand_from hub-addon help" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand uninstall; and not __fish_seen_subcommand_from hub-addon help" -f -a "hub-addon" -d 'Remove built-in add-ons from the hub (their CRDs, policies and subscriptions stay)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand uninstall; and not __fish_seen_subcommand_from hub-addon help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand uninstall; and __fish_seen_subcommand_from hub-addon" -l names -d 'The add-ons, comma-separated: governance-policy-framework, application-manager' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand uninstall; and __fish_seen_subcommand_from hub-addon" -l namespace -d 'The namespace of the add-ons\' controllers on the hub' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand uninstall; and __fish_seen_subcommand_from hub-addon" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand uninstall; and __fish_seen_subcommand_from hub-addon" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand uninstall; and __fish_seen_subcommand_from hub-addon" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand uninstall; and __fish_seen_subcommand_from hub-addon" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand uninstall; and __fish_seen_subcommand_from hub-addon" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand uninstall; and __fish_seen_subcommand_from hub-addon" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand uninstall; and __fish_seen_subcommand_from hub-addon" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand uninstall; and __fish_seen_subcommand_from hub-addon" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand uninstall; and __fish_seen_subcommand_from hub-addon" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand uninstall; and __fish_seen_subcommand_from help" -f -a "hub-addon" -d 'Remove built-in add-ons from the hub (their CRDs, policies and subscriptions stay)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand uninstall; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand completion" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand completion" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand completion" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand completion" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand completion" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand completion" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand completion" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand completion" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand completion" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand generate" -l root -d 'The repository root' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand generate" -l check -d 'Fail if a generated file is stale instead of writing it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand generate" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand generate" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand generate" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand generate" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand generate" -l dry-run -d 'Print what would be applied instead of applying it' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand generate" -s q -l quiet -d 'Only errors and warnings on stderr' -r -f -a "true\t''
false\t''"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand generate" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace; klog\'s `-v N`/`--v=N` too)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand generate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand generate" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init clean join unjoin accept get backup restore create delete addon clusterset operator controller version upgrade proxy install uninstall completion generate help" -f -a "init" -d 'Make the current cluster an OCM hub and print the command that joins clusters to it'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init clean join unjoin accept get backup restore create delete addon clusterset operator controller version upgrade proxy install uninstall completion generate help" -f -a "clean" -d 'Remove OCM from the hub: the ClusterManager, hub components, operator and bootstrap credentials'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init clean join unjoin accept get backup restore create delete addon clusterset operator controller version upgrade proxy install uninstall completion generate help" -f -a "join" -d 'Join the current cluster to a hub as a managed cluster'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init clean join unjoin accept get backup restore create delete addon clusterset operator controller version upgrade proxy install uninstall completion generate help" -f -a "unjoin" -d 'Remove the current cluster\'s klusterlet (and operator) so it leaves its hub'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init clean join unjoin accept get backup restore create delete addon clusterset operator controller version upgrade proxy install uninstall completion generate help" -f -a "accept" -d 'Accept managed clusters: approve their agents\' CSRs and set hubAcceptsClient'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init clean join unjoin accept get backup restore create delete addon clusterset operator controller version upgrade proxy install uninstall completion generate help" -f -a "get" -d 'Show hub state: the join token, ManifestWorks'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init clean join unjoin accept get backup restore create delete addon clusterset operator controller version upgrade proxy install uninstall completion generate help" -f -a "backup" -d 'Write the hub\'s OCM objects (clusters, sets, placements, works, add-ons) as a YAML stream, for `restore` on a hub rebuilt from scratch'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init clean join unjoin accept get backup restore create delete addon clusterset operator controller version upgrade proxy install uninstall completion generate help" -f -a "restore" -d 'Create the objects of a `backup` again on a hub `init` set up; objects already there are left as they are'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init clean join unjoin accept get backup restore create delete addon clusterset operator controller version upgrade proxy install uninstall completion generate help" -f -a "create" -d 'Create objects on the hub: a ManifestWork, a cluster set, a placement'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init clean join unjoin accept get backup restore create delete addon clusterset operator controller version upgrade proxy install uninstall completion generate help" -f -a "delete" -d 'Delete objects from the hub: a ManifestWork, a cluster set, the join token'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init clean join unjoin accept get backup restore create delete addon clusterset operator controller version upgrade proxy install uninstall completion generate help" -f -a "addon" -d 'Enable or disable add-ons on managed clusters'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init clean join unjoin accept get backup restore create delete addon clusterset operator controller version upgrade proxy install uninstall completion generate help" -f -a "clusterset" -d 'Manage cluster sets: move clusters into one, bind one to a namespace or unbind it'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init clean join unjoin accept get backup restore create delete addon clusterset operator controller version upgrade proxy install uninstall completion generate help" -f -a "operator" -d 'Run an operator loop in the foreground (hub: the ClusterManager operator)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init clean join unjoin accept get backup restore create delete addon clusterset operator controller version upgrade proxy install uninstall completion generate help" -f -a "controller" -d 'Run OCM\'s controllers in the foreground: the hub\'s, or a managed cluster\'s agents'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init clean join unjoin accept get backup restore create delete addon clusterset operator controller version upgrade proxy install uninstall completion generate help" -f -a "version" -d 'Print the client version and the API server\'s version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init clean join unjoin accept get backup restore create delete addon clusterset operator controller version upgrade proxy install uninstall completion generate help" -f -a "upgrade" -d 'Move the hub or this cluster\'s klusterlet to other images (a release, a registry, or ours)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init clean join unjoin accept get backup restore create delete addon clusterset operator controller version upgrade proxy install uninstall completion generate help" -f -a "proxy" -d 'Reach managed clusters\' API servers through the cluster-proxy add-on'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init clean join unjoin accept get backup restore create delete addon clusterset operator controller version upgrade proxy install uninstall completion generate help" -f -a "install" -d 'Install upstream\'s built-in hub add-ons (governance-policy-framework)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init clean join unjoin accept get backup restore create delete addon clusterset operator controller version upgrade proxy install uninstall completion generate help" -f -a "uninstall" -d 'Remove upstream\'s built-in hub add-ons'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init clean join unjoin accept get backup restore create delete addon clusterset operator controller version upgrade proxy install uninstall completion generate help" -f -a "completion" -d 'Print a shell completion script (bash, zsh, fish)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init clean join unjoin accept get backup restore create delete addon clusterset operator controller version upgrade proxy install uninstall completion generate help" -f -a "generate" -d 'Regenerate (or check) the files derived from the code: CRDs and completions'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init clean join unjoin accept get backup restore create delete addon clusterset operator controller version upgrade proxy install uninstall completion generate help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from get" -f -a "addon" -d 'List add-ons per cluster: install namespace, available, degraded, progressing, identity'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from get" -f -a "clusters" -d 'List managed clusters: accepted, joined, available, Kubernetes version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from get" -f -a "clustersets" -d 'List cluster sets: bound namespaces, status and how many clusters each selects'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from get" -f -a "credentials" -d 'Print a token for a managed cluster as an ExecCredential (the ClusterProfile exec plugin)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from get" -f -a "placements" -d 'List placements: satisfied, reason, and every cluster selected'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from get" -f -a "hub-info" -d 'Show the hub\'s operator and components: replicas, images, CRDs (upstream\'s layout)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from get" -f -a "klusterlet-info" -d 'Show this cluster\'s Klusterlet: conditions, operator, agents, CRDs (upstream\'s layout)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from get" -f -a "token" -d 'Print the join command with a bootstrap token (a fresh one when the old has expired)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from get" -f -a "works" -d 'List ManifestWorks and their status, per cluster'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from create" -f -a "clusterset" -d 'Create a ManagedClusterSet (clusters join it by label: `clusterset set`)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from create" -f -a "placement" -d 'Create a Placement: which clusters of the bound sets to choose'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from create" -f -a "work" -d 'Wrap manifests into a ManifestWork for each target cluster'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from delete" -f -a "clusterset" -d 'Delete a ManagedClusterSet that no namespace is bound to'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from delete" -f -a "token" -d 'Delete the bootstrap token: revoke the join credential `init` made, so join commands printed before stop working (clusters already joined are not affected)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from delete" -f -a "work" -d 'Delete a ManifestWork from clusters and wait until its resources are removed'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from addon" -f -a "create" -d 'Create an add-on from its agent\'s manifests or an AddOnTemplate (a ClusterManagementAddOn and its AddOnTemplate)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from addon" -f -a "agent" -d 'Run an example add-on\'s agent (helloworld) against the add-on\'s hub identity'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from addon" -f -a "enable" -d 'Enable add-ons on clusters (a ManagedClusterAddOn in each cluster\'s namespace)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from addon" -f -a "disable" -d 'Disable add-ons on clusters (delete their ManagedClusterAddOns)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from clusterset" -f -a "set" -d 'Move clusters into a cluster set (sets their cluster-set label)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from clusterset" -f -a "bind" -d 'Let placements in a namespace use a cluster set (a ManagedClusterSetBinding)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from clusterset" -f -a "unbind" -d 'Remove a cluster set\'s binding from a namespace'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from operator" -f -a "hub" -d 'Run the ClusterManager operator: install and keep the hub components as the ClusterManager asks'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from operator" -f -a "klusterlet" -d 'Run the Klusterlet operator: install and keep the agents as the Klusterlet asks'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from controller" -f -a "hub" -d 'Run every hub controller: registration, cluster sets, placement, replica sets, add-ons, and the hub\'s webhooks (admission, the add-on API\'s conversion)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from controller" -f -a "agent" -d 'Run a managed cluster\'s agents: registration (with add-on registration) and work'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from controller" -f -a "grpc-server" -d 'Run the hub\'s gRPC server (upstream\'s cluster-manager-grpc-server): agents register through CloudEvents over gRPC instead of the hub\'s API server'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from upgrade" -f -a "clustermanager" -d 'Upgrade the hub: the cluster-manager operator and the ClusterManager\'s component images'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from upgrade" -f -a "klusterlet" -d 'Upgrade this cluster\'s klusterlet: the klusterlet operator and every Klusterlet\'s agent images'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from proxy" -f -a "health" -d 'Probe each managed cluster\'s API server (/healthz) through cluster-proxy'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from proxy" -f -a "kubectl" -d 'Run kubectl against a managed cluster through cluster-proxy, as a ManagedServiceAccount'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from install" -f -a "hub-addon" -d 'Install built-in add-ons on the hub (governance-policy-framework, application-manager)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from uninstall" -f -a "hub-addon" -d 'Remove built-in add-ons from the hub (their CRDs, policies and subscriptions stay)'
