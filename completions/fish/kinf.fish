# fish completion for kinf(1)

set -l __kinf_server_commands deltas index list serve version watch
set -l __kinf_informer_commands deltas index watch

# True when option NAME (without dashes) takes its value in the next word.
function __kinf_takes_value -a name
    contains -- $name kubeconfig context cluster user server token certificate-authority \
        tls-server-name as as-group as-uid request-timeout namespace selector field-selector \
        output chunk-size max-object-size max-depth max-list-items idle-timeout from resync \
        timeout count \
        dump-on-exit watch-timeout timestamps color by index values listen write-kubeconfig \
        window max-lag bookmark-interval label-columns sort-by
end

# The index of the first operand in TOKENS (the shared options may come
# before the command: kinf -n team list pods), or nothing.
function __kinf_operand_index
    set -l skip 0
    set -l i 1
    for t in $argv
        set i (math $i + 1)
        if test $skip -eq 1
            set skip 0
            continue
        end
        switch $t
            case '--*=*'
                continue
            case '--*'
                __kinf_takes_value (string sub -s 3 -- $t); and set skip 1
            case -n -l -o -L
                set skip 1
            case '-*'
                continue
            case '*'
                echo $i
                return 0
        end
    end
    return 1
end

# The index of the command word on the command line so far, or nothing.
function __kinf_command_index
    set -l tokens (commandline -opc)
    __kinf_operand_index $tokens[2..-1]
end

# True when the command (the first operand after kinf) is one of the arguments.
function __kinf_using
    set -l tokens (commandline -opc)
    set -l i (__kinf_command_index); or return 1
    contains -- $tokens[$i] $argv
end

# True before the command is typed.
function __kinf_no_command
    not __kinf_command_index >/dev/null
end

# The value of a long option on the command line so far ("--opt value" or "--opt=value").
function __kinf_option_value -a name
    set -l tokens (commandline -opc)
    set -l i 1
    while test $i -le (count $tokens)
        set -l t $tokens[$i]
        if test "$t" = "--$name"
            set -l j (math $i + 1)
            if test $j -le (count $tokens)
                echo $tokens[$j]
            end
        else if string match -q -- "--$name=*" $t
            string replace -- "--$name=" "" $t
        end
        set i (math $i + 1)
    end
end

# The kubeconfig files kinf would read: --kubeconfig, $KUBECONFIG or ~/.kube/config.
function __kinf_kubeconfigs
    set -l kc (__kinf_option_value kubeconfig)[-1]
    if test -n "$kc"
        echo $kc
    else if set -q KUBECONFIG; and test -n "$KUBECONFIG"
        string split : -- $KUBECONFIG | string match -v ''
    else if set -q HOME
        echo $HOME/.kube/config
    end
end

# Context names: kubectl when it works, else the names under "contexts:".
function __kinf_contexts
    set -l kc (__kinf_option_value kubeconfig)[-1]
    set -l out
    if command -sq kubectl
        if test -n "$kc"
            set out (kubectl --kubeconfig $kc config get-contexts -o name 2>/dev/null)
        else
            set out (kubectl config get-contexts -o name 2>/dev/null)
        end
    end
    if test (count $out) -gt 0
        printf '%s\n' $out
        return
    end
    for f in (__kinf_kubeconfigs)
        test -r $f; or continue
        awk '
            /^contexts:/ { in_ctx = 1; dash = -1; next }
            /^[^ \t#-]/ { in_ctx = 0 }
            !in_ctx { next }
            {
                match($0, /^[ \t]*/)
                ind = RLENGTH
                rest = substr($0, ind + 1)
                if (rest ~ /^- /) {
                    if (dash < 0) {
                        dash = ind
                    }
                    if (ind != dash) {
                        next
                    }
                    rest = substr(rest, 3)
                    sub(/^[ \t]*/, "", rest)
                    ind = dash + 2
                }
                if (ind == dash + 2 && rest ~ /^name:/) {
                    sub(/^name:[ \t]*/, "", rest)
                    sub(/[ \t]+#.*$/, "", rest)
                    sub(/[ \t]+$/, "", rest)
                    gsub(/^["\047]|["\047]$/, "", rest)
                    if (rest != "") {
                        print rest
                    }
                }
            }
        ' $f 2>/dev/null
    end
end

# Resource types from the discovery cache ($XDG_CACHE_HOME/kinf or ~/.cache/kinf).
function __kinf_resources
    set -l base
    if string match -q '/*' -- "$XDG_CACHE_HOME"
        set base $XDG_CACHE_HOME/kinf
    else if set -q HOME
        set base $HOME/.cache/kinf
    else
        return
    end
    for f in $base/discovery/*/discovery.json
        test -r $f; or continue
        set -l out
        if command -sq jq
            set out (jq -r '.discovery.items[]?.versions[]?.resources[]?.resource // empty' $f 2>/dev/null)
        end
        if test (count $out) -eq 0
            set out (grep -o '"resource"[[:space:]]*:[[:space:]]*"[^"]*"' $f 2>/dev/null | sed 's/.*:[[:space:]]*"\(.*\)"$/\1/')
        end
        printf '%s\n' $out
    end | sort -u
end

# Resource types: the cache's; with no cache (a new machine or cluster), the
# server's, through kinf __complete (which reads discovery and caches it).
function __kinf_resource_types
    set -l types (__kinf_resources)
    if test (count $types) -eq 0
        set -l tokens (commandline -opc)
        set types ($tokens[1] __complete $tokens[2..-1] '' </dev/null 2>/dev/null | string match -v -r '^:[0-9]*$')
    end
    printf '%s\n' $types
end

# watch and deltas take comma lists (pods,configmaps; -n a,b; --context
# a,b): the candidates on stdin become the token with its last item
# completed, those already in the list left out. Other commands take one.
function __kinf_list_items
    set -l prefix
    if __kinf_using deltas get index list serve watch
        set -l tok (commandline -ct | string replace -r -- '^--[^=]*=' '')
        set prefix (string match -r -- '^.*,' "$tok")
    end
    set -l done (string split , -- (string replace -r -- ',$' '' "$prefix"))
    while read -l c
        contains -- (string split -m1 \t -- $c)[1] $done; and continue
        printf '%s%s\n' "$prefix" $c
    end
end

# Namespaces: ask the server through kinf itself, briefly.
function __kinf_namespaces
    set -l tokens (commandline -opc)
    set -l conn
    for o in kubeconfig context cluster user server token certificate-authority tls-server-name as as-uid
        set -l v (__kinf_option_value $o)[-1]
        # Of a list of contexts, the first (kinf list takes one).
        test $o = context; and set v (string split -m1 , -- "$v")[1]
        test -n "$v"; and set conn $conn --$o $v
    end
    # --as-group repeats: every one of them.
    for g in (__kinf_option_value as-group)
        set conn $conn --as-group $g
    end
    contains -- --insecure-skip-tls-verify $tokens; and set conn $conn --insecure-skip-tls-verify
    $tokens[1] list namespaces -o name --request-timeout 3s $conn </dev/null 2>/dev/null | string replace -r -f '^namespace/' ''
end

# Index names for --by and --values, and those defined with --index.
function __kinf_index_names
    printf '%s\t%s\n' namespace metadata.namespace node spec.nodeName \
        owner 'KIND/NAME of an ownerReference' phase status.phase \
        label: 'label:KEY, the value of a label' \
        field: 'field:PATH, the value at a field path'
    for d in (__kinf_option_value index)
        printf '%s\t%s\n' (string split -m 1 = -- $d)[1] 'defined with --index'
    end
end

# What only the cluster knows (object names, label keys and values for
# --by): kinf __complete answers for the words after "kinf", the last one
# being completed, as cobra's __complete does (a ":DIRECTIVE" line last).
function __kinf_cluster
    set -l tokens (commandline -opc)
    set -l ct (commandline -ct)
    command -q $tokens[1]; or return
    set -l args $tokens[2..-1]
    if string match -q -- '--*=*' $ct
        set args $args (string split -m 1 = -- $ct)
    else
        set args $args $ct
    end
    $tokens[1] __complete $args </dev/null 2>/dev/null | string match -v -r '^:[0-9]*$'
end

# --by and --values: index names, then label keys and values from the cluster.
function __kinf_by_names
    set -l names (__kinf_index_names)
    printf '%s\n' $names
    set -l plain (string replace -r '\t.*' '' -- $names)
    for c in (__kinf_cluster)
        contains -- $c $plain; or echo $c
    end
end

# True when no operand follows the command yet (the next one is the resource type).
function __kinf_needs_resource
    set -l tokens (commandline -opc)
    set -l i (__kinf_command_index); or return 1
    not __kinf_operand_index $tokens[(math $i + 1)..-1] >/dev/null
end

complete -c kinf -f

# Commands and global options.
complete -c kinf -n __kinf_no_command -a deltas -d 'print the raw DeltaFIFO pops'
complete -c kinf -n __kinf_no_command -a help -d 'show the help of a command'
complete -c kinf -n __kinf_no_command -a index -d "answer questions from the informer's indexes"
complete -c kinf -n __kinf_no_command -a list -d 'list a resource once, consistently'
complete -c kinf -n __kinf_no_command -a serve -d "serve the informers' caches as a read-only Kubernetes API"
complete -c kinf -n __kinf_no_command -a version -d "print kinf's version and the server's"
complete -c kinf -n __kinf_no_command -a watch -d "print the informer's events as they happen"
complete -c kinf -n __kinf_no_command -l version -d 'print the version'
complete -c kinf -s h -l help -d 'show the help'
complete -c kinf -n '__kinf_using help' -a "$__kinf_server_commands"

# The resource type operand.
complete -c kinf -n '__kinf_using list get watch deltas index serve; and __kinf_needs_resource' -a '(__kinf_resource_types | __kinf_list_items)' -d 'resource type'
# Object names after it, from the cluster.
complete -c kinf -n '__kinf_using list get watch deltas; and not __kinf_needs_resource' -a '(__kinf_cluster)' -d name

# Connection options.
set -l c "__kinf_no_command; or __kinf_using get $__kinf_server_commands"
complete -c kinf -n $c -l kubeconfig -r -F -d 'use only this kubeconfig file'
complete -c kinf -n $c -l context -x -a '(__kinf_contexts | __kinf_list_items)' -d 'kubeconfig context to use'
complete -c kinf -n $c -l cluster -x -d 'kubeconfig cluster to use'
complete -c kinf -n $c -l user -x -d 'kubeconfig user to use'
complete -c kinf -n $c -l server -x -a 'unix: tcp:127.0.0.1:' -d 'API server URL, or kinf serve at unix:PATH or tcp:HOST:PORT'
complete -c kinf -n $c -l token -x -d 'bearer token'
complete -c kinf -n $c -l certificate-authority -r -F -d 'CA bundle to verify the server with'
complete -c kinf -n $c -l insecure-skip-tls-verify -d "do not verify the server's certificate"
complete -c kinf -n $c -l tls-server-name -x -d 'server name for TLS verification and SNI'
complete -c kinf -n $c -l as -x -d 'impersonate a user'
complete -c kinf -n $c -l as-group -x -d 'impersonate a group too (repeatable)'
complete -c kinf -n $c -l as-uid -x -d 'impersonate a uid too'
complete -c kinf -n $c -l request-timeout -x -d 'give up on a request after this long'
complete -c kinf -n $c -l refresh -d 'ignore the discovery cache'

# Selection and output options.
complete -c kinf -n $c -s n -l namespace -x -a '(__kinf_namespaces | __kinf_list_items)' -d namespace
complete -c kinf -n $c -s A -l all-namespaces -d 'every namespace'
complete -c kinf -n $c -s l -l selector -x -d 'label selector'
complete -c kinf -n $c -l field-selector -x -d 'field selector'
complete -c kinf -n '__kinf_using list get index watch' -s o -l output -x -a 'table wide json yaml name jsonpath= jsonpath-as-json= custom-columns=' -d 'output format'
complete -c kinf -n '__kinf_using deltas' -s o -l output -x -a 'table json' -d 'output format'
complete -c kinf -n '__kinf_using serve' -s o -l output -x -d 'refused: serve prints nothing'
complete -c kinf -n '__kinf_using version' -s o -l output -x -a 'json yaml' -d 'output format'
complete -c kinf -n $c -l no-headers -d 'no header line in table output'
complete -c kinf -n $c -l show-managed-fields -d 'keep metadata.managedFields in json and yaml'
complete -c kinf -n $c -l chunk-size -x -d 'list page size'

# Limits and diagnostics.
complete -c kinf -n $c -l max-object-size -x -d 'largest object accepted'
complete -c kinf -n $c -l max-depth -x -d 'deepest JSON nesting accepted'
complete -c kinf -n $c -l max-list-items -x -d 'most items a list may hold'
complete -c kinf -n $c -l idle-timeout -x -d 'abort a response that stalls this long'
complete -c kinf -n $c -s v -l v -l verbose -d 'log to stderr: -v LEVEL, --v=LEVEL as kubectl'

# Informer options.
set -l s "__kinf_using $__kinf_informer_commands"
complete -c kinf -n $s -l from -r -F -d 'read a recorded stream instead of a server'
complete -c kinf -n $s -l resync -x -d 'resync period'
complete -c kinf -n $s -l watch-list -d 'streaming initial list (sendInitialEvents)'
complete -c kinf -n $s -l accessible -d 'with -A: the namespaces where the type may be listed and watched'
complete -c kinf -n $s -l timeout -x -d 'stop after this long'
complete -c kinf -n $s -l count -x -d 'stop after N events'
complete -c kinf -n $s -l exit-after-sync -d 'stop once the initial list has been processed'
complete -c kinf -n $s -l stats -d 'print counters to stderr at exit'
complete -c kinf -n $s -l dump-on-exit -r -F -d 'write the cache as JSON lines at exit'

# kinf watch
set -l w '__kinf_using watch'
complete -c kinf -n $w -s w -l watch -d 'watch (it always does)'
complete -c kinf -n $w -l watch-only -d "do not print the initial list's events"
complete -c kinf -n '__kinf_using list get' -s w -l watch -d 'after the list, watch, as kubectl get -w'
complete -c kinf -n '__kinf_using list get' -l watch-only -d 'watch without printing the list first'
complete -c kinf -n '__kinf_using list get' -l accessible -d 'with -A: the namespaces where the type may be listed'
complete -c kinf -n $w -l no-resync-events -d 'leave out updates with an unchanged resourceVersion'
complete -c kinf -n $w -l old -d 'with -o json, add oldObject to updates'
complete -c kinf -n $w -l diff -d 'print the fields an update changed'
complete -c kinf -n $w -l diff-all -d '--diff including managedFields and resourceVersion'
complete -c kinf -n $w -l timestamps -x -a 'none local utc rfc3339' -d 'when to print timestamps'
complete -c kinf -n $w -l color -x -a 'auto always never' -d 'when to color'
complete -c kinf -n $w -l for -x -a 'create delete rollout condition=Ready condition= jsonpath=' -d 'wait until a condition holds'
complete -c kinf -n $w -l all -d 'with --for, every object'

# kinf serve
set -l v '__kinf_using serve'
complete -c kinf -n $v -l resync -x -d 'resync period'
complete -c kinf -n $v -l watch-list -d 'streaming initial list (sendInitialEvents)'
complete -c kinf -n $v -l timeout -x -d 'stop after this long'
complete -c kinf -n $v -l stats -d 'print counters to stderr at exit'
complete -c kinf -n $v -l listen -x -a 'unix: tcp:127.0.0.1:' -d 'listen on unix:PATH or tcp:HOST:PORT'
complete -c kinf -n $v -l write-kubeconfig -r -F -d 'write a kubeconfig for kubectl'
complete -c kinf -n $v -l window -x -d 'events kept per resource for watches'
complete -c kinf -n $v -l max-lag -x -d 'unsent events a watch client may have before it must read'
complete -c kinf -n $v -l bookmark-interval -x -d 'between BOOKMARK events'
complete -c kinf -n $v -l pass-through -d 'forward the reads serve does not cache to the upstream'

# kinf deltas
complete -c kinf -n '__kinf_using deltas' -l emit-replaced -d 'relists queue Replaced instead of Sync'

# kinf index
set -l i '__kinf_using index'
complete -c kinf -n $i -l by -x -a '(__kinf_by_names)' -d 'objects whose INDEX has VALUE'
complete -c kinf -n $i -l index -x -d 'define a named index: NAME=PATH'
complete -c kinf -n $i -l keys -d 'print the matching keys only'
complete -c kinf -n $i -l no-pushdown -d 'list every object, filter only in kinf'
complete -c kinf -n $i -l values -x -a '(__kinf_by_names)' -d "print INDEX's values with their counts"
complete -c kinf -n $i -l watch -d 'keep running and print how the answer changes'

# kubectl get's table options: list and index.
set -l t '__kinf_using list get index'
complete -c kinf -n $t -l show-labels -d 'a LABELS column last'
complete -c kinf -n $t -s L -l label-columns -x -d "a column with each label's value"
complete -c kinf -n $t -l sort-by -x -a '.metadata.name .metadata.creationTimestamp' -d 'sort by this field (JSONPath)'
complete -c kinf -n '__kinf_using list get' -l ignore-not-found -d 'a NAME that is not there is no error'
complete -c kinf -n '__kinf_using list get' -l output-watch-events -d 'with -w, the event types'

# kinf version
complete -c kinf -n '__kinf_using version' -l client -d 'do not contact a server'
