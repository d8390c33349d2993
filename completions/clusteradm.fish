# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_clusteradm_global_optspecs
    string join \n kubeconfig= context= timeout= dry-run v/verbose q/quiet color= h/help V/version
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
complete -c clusteradm -n "__fish_clusteradm_needs_command" -l dry-run -d 'Print what would be applied instead of applying it'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace)'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -s q -l quiet -d 'Only errors and warnings on stderr'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "init" -d 'Make the current cluster an OCM hub and print the command that joins clusters to it'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "get" -d 'Show hub state: the join token'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "version" -d 'Print the client version and the API server\'s version'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "completion" -d 'Print a shell completion script (bash, zsh, fish)'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "generate" -d 'Regenerate (or check) the files derived from the code: CRDs and completions'
complete -c clusteradm -n "__fish_clusteradm_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l token-expiration -d 'Lifetime of the service-account bootstrap token' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l hub-apiserver -d 'The hub API server URL managed clusters should use [default: the kubeconfig\'s server]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l output-join-command-file -d 'Write a script that joins a cluster (`sh FILE <cluster-name>`) to FILE (mode 0700)' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -s o -l output -d 'Output format of the join command' -r -f -a "text\t'`clusteradm join ...`'
json\t'`{"hub-token": ..., "hub-apiserver": ..., "ca-cert-hash": ...}`'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l bundle-version -d 'OCM release of the images: default, latest, or a version such as 1.3.1' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l image-registry -d 'Registry of the OCM images' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l image-pull-credential-file -d 'A docker config JSON with credentials for the image registry' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l feature-gates -d 'Hub feature gates, e.g. `ManifestWorkReplicaSet=true,ManagedClusterAutoApproval=false`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l wait -d 'Wait until the ClusterManager is Applied and the hub components are available'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l use-bootstrap-token -d 'Use a bootstrap token (kube-system/bootstrap-token-ocmhub) instead of a service-account token'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l force -d 'Skip the preflight checks'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l in-process -d 'Run the ClusterManager operator and hub controllers in this process instead of deploying the operator image; runs in the foreground until Ctrl-C or SIGTERM'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -l dry-run -d 'Print what would be applied instead of applying it'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -s q -l quiet -d 'Only errors and warnings on stderr'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand init" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from token help" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from token help" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from token help" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from token help" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from token help" -l dry-run -d 'Print what would be applied instead of applying it'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from token help" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from token help" -s q -l quiet -d 'Only errors and warnings on stderr'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from token help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from token help" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from token help" -f -a "token" -d 'Print the join command with a bootstrap token (a fresh one when the old has expired)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and not __fish_seen_subcommand_from token help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from token" -l token-expiration -d 'Lifetime of a new service-account token' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from token" -l hub-apiserver -d 'The hub API server URL for the join command [default: kube-public/cluster-info\'s, else the kubeconfig\'s]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from token" -s o -l output -d 'Output format' -r -f -a "text\t'`clusteradm join ...`'
json\t'`{"hub-token": ..., "hub-apiserver": ..., "ca-cert-hash": ...}`'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from token" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from token" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from token" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from token" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from token" -l use-bootstrap-token -d 'Print the bootstrap token (kube-system/bootstrap-token-ocmhub) instead of a service-account token'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from token" -l dry-run -d 'Print what would be applied instead of applying it'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from token" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from token" -s q -l quiet -d 'Only errors and warnings on stderr'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from token" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from token" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from help" -f -a "token" -d 'Print the join command with a bootstrap token (a fresh one when the old has expired)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand get; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand version" -s o -l output -d 'Output format' -r -f -a "table\t'A human-readable table'
yaml\t'YAML (a list is printed as a `kind: List`)'
json\t'JSON (a list is printed as a `kind: List`)'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand version" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand version" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand version" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand version" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand version" -l client -d 'Only the client version; do not contact the cluster'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand version" -l dry-run -d 'Print what would be applied instead of applying it'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand version" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand version" -s q -l quiet -d 'Only errors and warnings on stderr'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand version" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand version" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand completion" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand completion" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand completion" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand completion" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand completion" -l dry-run -d 'Print what would be applied instead of applying it'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand completion" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand completion" -s q -l quiet -d 'Only errors and warnings on stderr'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand completion" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand completion" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand generate" -l root -d 'The repository root' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand generate" -l kubeconfig -d 'Path to the kubeconfig file [default: $KUBECONFIG, then ~/.kube/config]' -r -F
complete -c clusteradm -n "__fish_clusteradm_using_subcommand generate" -l context -d 'The kubeconfig context to use [default: the current context]' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand generate" -l timeout -d 'How long to wait for the cluster, e.g. `300`, `90s`, `5m`' -r
complete -c clusteradm -n "__fish_clusteradm_using_subcommand generate" -l color -d 'When to colour output' -r -f -a "auto\t'Colour when stderr is a terminal and `NO_COLOR` is unset'
always\t'Always colour'
never\t'Never colour'"
complete -c clusteradm -n "__fish_clusteradm_using_subcommand generate" -l check -d 'Fail if a generated file is stale instead of writing it'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand generate" -l dry-run -d 'Print what would be applied instead of applying it'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand generate" -s v -l verbose -d 'More log output on stderr (-v info, -vv debug, -vvv trace)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand generate" -s q -l quiet -d 'Only errors and warnings on stderr'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand generate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand generate" -s V -l version -d 'Print version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init get version completion generate help" -f -a "init" -d 'Make the current cluster an OCM hub and print the command that joins clusters to it'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init get version completion generate help" -f -a "get" -d 'Show hub state: the join token'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init get version completion generate help" -f -a "version" -d 'Print the client version and the API server\'s version'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init get version completion generate help" -f -a "completion" -d 'Print a shell completion script (bash, zsh, fish)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init get version completion generate help" -f -a "generate" -d 'Regenerate (or check) the files derived from the code: CRDs and completions'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and not __fish_seen_subcommand_from init get version completion generate help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c clusteradm -n "__fish_clusteradm_using_subcommand help; and __fish_seen_subcommand_from get" -f -a "token" -d 'Print the join command with a bootstrap token (a fresh one when the old has expired)'
