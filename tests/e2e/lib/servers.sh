# shellcheck shell=bash disable=SC2034,SC2016
# (variables set here are outputs for the sourcing test script)
# tests/e2e/lib/servers.sh -- real git servers on loopback for end-to-end tests,
# plus a tiny assertion kit.  Source it from a bash test script:
#
#   set -euo pipefail
#   . "$(dirname "$0")/lib/servers.sh"
#   servers_init                      # temp dir + cleanup trap (EXIT/INT/TERM/HUP)
#   start_git_daemon "$BASE"          # -> GIT_DAEMON_URL=git://127.0.0.1:P
#   start_http_git "$BASE"            # -> HTTP_GIT_URL=http://127.0.0.1:P
#   start_http_git "$BASE" --auth U W # -> HTTP_GIT_URL, basic auth required
#   start_http_git "$BASE" --tls ...  # -> https://127.0.0.1:P, HTTP_GIT_CA (its certificate)
#   start_sshd                        # -> SSH_URL_PREFIX=ssh://USER@127.0.0.1:P ...
#   ...
#   summary                           # prints "N passed, M failed"; non-zero if M>0
#
# Every server listens on 127.0.0.1 only, on a port chosen by free_port.  Each
# one is started in its own process group (setsid) and its pid is recorded in
# $SERVERS_DIR/pids; stop_servers (called by the trap, idempotent) signals
# exactly those process groups: TERM, then KILL after a bounded wait.  A small
# watchdog process also stops them if the test shell dies without running its
# trap (SIGKILL, or a timeout that kills bash while it waits for a hung child).
#
# Needs (Debian 12): git, nginx-light, fcgiwrap, openssh-server (pulls in
# openssh-client), openssl, util-linux (setsid), coreutils (timeout, in tests).
#
# Note: servers_init installs traps on EXIT/INT/TERM/HUP.  It chains an EXIT
# trap installed *before* it; a trap installed *after* it replaces it -- use
# servers_on_exit CMD to run your own cleanup too.

# ---------------------------------------------------------------------------
# state
# ---------------------------------------------------------------------------
SERVERS_DIR=${SERVERS_DIR:-}
_SERVERS_MAIN_PID=
_SERVERS_WATCHDOG_PID=
_SERVERS_OLD_EXIT_TRAP=
_SERVERS_USER_EXIT_HOOKS=()
_SERVERS_SEQ=0
_SERVERS_STOP_TIMEOUT=${SERVERS_STOP_TIMEOUT:-5}    # seconds, TERM -> KILL
_SERVERS_START_TIMEOUT=${SERVERS_START_TIMEOUT:-10} # seconds to wait for a port
_SERVERS_CLEANED=0
_SERVERS_T0=$SECONDS # when servers_init ran: the test's clock (finished_within)

TESTS_PASSED=${TESTS_PASSED:-0}
TESTS_FAILED=${TESTS_FAILED:-0}
_TESTS_SUMMARY_DONE=0
_TESTS_LAST_PASS=

# Non-interactive git everywhere: no terminal prompts, no credential prompts.
export GIT_TERMINAL_PROMPT=0

_servers_log() { printf 'servers: %s\n' "$*" >&2; }
_servers_die() {
    _servers_log "ERROR: $*"
    exit 1
}

# ---------------------------------------------------------------------------
# init / cleanup
# ---------------------------------------------------------------------------
servers_init() {
    if [[ -n ${SERVERS_DIR} && -d ${SERVERS_DIR} && -n ${_SERVERS_MAIN_PID} ]]; then
        return 0 # already initialised in this shell
    fi
    local base=${TMPDIR:-/tmp}
    SERVERS_DIR=$(mktemp -d "${base%/}/kistore-e2e.XXXXXXXX") ||
        _servers_die "mktemp -d in $base failed"
    chmod 755 "$SERVERS_DIR" # workers/CGIs may run as another user
    : >"$SERVERS_DIR/pids"
    export SERVERS_DIR
    _SERVERS_MAIN_PID=$$
    _SERVERS_CLEANED=0
    _SERVERS_T0=$SECONDS

    # Chain an existing EXIT trap: `trap -p EXIT` prints  trap -- 'CMD' EXIT
    local old
    old=$(trap -p EXIT)
    if [[ -n $old ]]; then
        local -a parts
        eval "parts=($old)" # (trap -- CMD EXIT)
        _SERVERS_OLD_EXIT_TRAP=${parts[2]}
    fi
    trap '_servers_on_exit' EXIT
    trap '_servers_on_signal 130' INT
    trap '_servers_on_signal 143' TERM
    trap '_servers_on_signal 129' HUP

    _servers_start_watchdog
}

# Register an extra command to run at exit (before the servers are stopped).
servers_on_exit() { _SERVERS_USER_EXIT_HOOKS+=("$1"); }

_servers_on_signal() {
    _servers_log "caught signal, stopping servers"
    exit "$1" # runs the EXIT trap
}

_servers_on_exit() {
    local rc=$?
    set +e
    local h
    for h in "${_SERVERS_USER_EXIT_HOOKS[@]}"; do eval "$h"; done
    # Only the shell that called servers_init cleans up (not subshells).
    if [[ ${BASHPID:-$$} == "$_SERVERS_MAIN_PID" ]]; then
        if ((rc != 0)) && ((_TESTS_SUMMARY_DONE == 0)); then
            printf 'FAIL: script aborted with status %d%s\n' "$rc" \
                "${_TESTS_LAST_PASS:+ (after: $_TESTS_LAST_PASS)}" >&2
            ((TESTS_FAILED == 0)) && TESTS_FAILED=1
            _TESTS_SUMMARY_DONE=1
            printf '%d passed, %d failed\n' "$TESTS_PASSED" "$TESTS_FAILED"
        fi
        stop_servers
        _servers_stop_watchdog
        if [[ -n ${SERVERS_KEEP:-} ]]; then
            _servers_log "SERVERS_KEEP set, leaving $SERVERS_DIR"
        else
            [[ -n $SERVERS_DIR && -d $SERVERS_DIR ]] && rm -rf -- "$SERVERS_DIR"
        fi
        _SERVERS_CLEANED=1
    fi
    if [[ -n $_SERVERS_OLD_EXIT_TRAP ]]; then
        (exit "$rc") # let the old trap see the original $?
        eval "$_SERVERS_OLD_EXIT_TRAP"
    fi
    exit "$rc"
}

# All of this works from /proc alone (no procps needed), also inside the
# watchdog, which gets these functions through `declare -f`.

# _servers_proc_table : "PID STATE PPID PGRP" for every process.
_servers_proc_table() {
    local -; set +e
    local f line pid
    for f in /proc/[0-9]*/stat; do
        { read -r line <"$f"; } 2>/dev/null || continue
        pid=${line%% *}
        line=${line##*) } # comm may contain spaces/parens; fields follow the last ')'
        # shellcheck disable=SC2086
        set -- $line
        printf '%s %s %s %s\n' "$pid" "$1" "$2" "$3"
    done
}

# _servers_group_members PGID : live (non-zombie) pids in process group PGID.
_servers_group_members() {
    local -; set +e
    _servers_proc_table | awk -v g="$1" '$4 == g && $2 != "Z" {print $1}'
}

# _servers_descendants PID : live descendants of PID (by parent pid).
_servers_descendants() {
    local -; set +e
    _servers_proc_table | awk -v root="$1" '
        { kids[$3] = kids[$3] " " $1; st[$1] = $2 }
        END {
            n = split(kids[root], q, " ")
            for (i = 1; i <= n; i++) {
                if (st[q[i]] != "Z") print q[i]
                m = split(kids[q[i]], more, " ")
                for (j = 1; j <= m; j++) q[++n] = more[j]
            }
        }'
}

# _servers_pid_live PID : exists and is not a zombie?
_servers_pid_live() {
    local -; set +e
    local line
    # (not $(<file): under set -e a failing $(<file) exits the shell even
    # in an || list)
    { read -r line <"/proc/$1/stat"; } 2>/dev/null || return 1
    line=${line##*) }
    [[ ${line%% *} != Z ]]
}

# _servers_any_alive PGID [PID...] : is any non-zombie member of the group,
# or any of the pids, still there?  (Zombies count as gone: if the leader
# died first, its children's zombies belong to pid 1 and can't be reaped by us.)
_servers_any_alive() {
    local -; set +e
    local pgid=$1 p
    shift
    [[ -n $(_servers_group_members "$pgid") ]] && return 0
    for p in "$@"; do
        _servers_pid_live "$p" && return 0
    done
    return 1
}

# Kill one recorded process group: TERM, wait, then KILL.
_servers_kill_group() {
    local -; set +e # best effort; never trip the caller's set -e
    local pgid=$1 i pids
    [[ $pgid =~ ^[0-9]+$ ]] && ((pgid > 1)) || return 0
    # Descendants that left the group (sshd puts each connection in its own
    # session) are collected by parent pid and signalled by pid as well.
    pids=$(_servers_descendants "$pgid")
    # shellcheck disable=SC2086
    _servers_any_alive "$pgid" $pids || {
        wait "$pgid" 2>/dev/null
        return 0
    }
    # First TERM only the leader (nginx master, sshd/git daemon listener,
    # fcgiwrap) and give it a moment: it then stops and reaps its own
    # children, instead of dying first and leaving them as zombies for pid 1
    # (which, in some containers, is slow or never reaps them).
    if _servers_pid_live "$pgid"; then
        kill -TERM "$pgid" 2>/dev/null
        for ((i = 0; i < 20; i++)); do
            _servers_pid_live "$pgid" || break
            sleep 0.05
        done
    fi
    kill -TERM -- "-$pgid" 2>/dev/null
    # shellcheck disable=SC2086
    [[ -n $pids ]] && kill -TERM $pids 2>/dev/null
    local deadline=$((SECONDS + ${_SERVERS_STOP_TIMEOUT:-5}))
    while ((SECONDS <= deadline)); do
        # shellcheck disable=SC2086
        _servers_any_alive "$pgid" $pids || break
        sleep 0.1
    done
    # shellcheck disable=SC2086
    if _servers_any_alive "$pgid" $pids; then
        printf 'servers: process group %s ignored TERM, sending KILL\n' "$pgid" >&2
        kill -KILL -- "-$pgid" 2>/dev/null
        # shellcheck disable=SC2086
        [[ -n $pids ]] && kill -KILL $pids 2>/dev/null
    fi
    # reap it if it is our child (avoids zombies / bash job noise)
    wait "$pgid" 2>/dev/null
    return 0
}

# _servers_stop_listed PIDFILE : stop the groups listed, in reverse order.
_servers_stop_listed() {
    local -; set +e
    local name pid list=()
    [[ -f $1 ]] || return 0
    while read -r name pid; do
        [[ $pid =~ ^[0-9]+$ ]] && list=("$pid" "${list[@]}")
    done <"$1"
    for pid in "${list[@]}"; do
        _servers_kill_group "$pid"
    done
    return 0
}

# Stop every server started since servers_init.  Idempotent.
stop_servers() {
    local -; set +e # best effort; never trip the caller's set -e
    [[ -n ${SERVERS_DIR:-} && -f $SERVERS_DIR/pids ]] || return 0
    _servers_stop_listed "$SERVERS_DIR/pids"
    : >"$SERVERS_DIR/pids"
    return 0
}

# A detached watchdog: if the test shell disappears without cleaning up
# (SIGKILL, or killed while blocked in a hung foreground command), it stops
# the recorded servers and removes the dir.
_servers_watchdog_main() {
    trap '' INT HUP
    trap 'exit 0' TERM
    while kill -0 "$_SW_MAIN" 2>/dev/null; do
        sleep 1 &
        wait $!
    done
    _servers_stop_listed "$_SW_DIR/pids"
    [[ -n ${SERVERS_KEEP:-} ]] || rm -rf -- "$_SW_DIR"
}

_servers_start_watchdog() {
    local m=0 code
    code="$(declare -f _servers_proc_table _servers_group_members \
        _servers_descendants _servers_pid_live _servers_any_alive \
        _servers_kill_group _servers_stop_listed _servers_watchdog_main)
_servers_watchdog_main"
    [[ $- == *m* ]] && { m=1; set +m; }
    # The dir goes in the environment, not argv: once the servers are
    # stopped no command line names $SERVERS_DIR (tests pgrep -f for it).
    _SW_MAIN=$_SERVERS_MAIN_PID _SW_DIR=$SERVERS_DIR \
        _SERVERS_STOP_TIMEOUT=$_SERVERS_STOP_TIMEOUT \
        setsid bash -c "$code" servers-watchdog </dev/null >/dev/null 2>&1 &
    _SERVERS_WATCHDOG_PID=$!
    ((m)) && set -m
    return 0
}

_servers_stop_watchdog() {
    local -; set +e # best effort; never trip the caller's set -e
    [[ -n $_SERVERS_WATCHDOG_PID ]] || return 0
    kill -TERM -- "-$_SERVERS_WATCHDOG_PID" 2>/dev/null
    # A test that fails at once (in its preamble) may stop the watchdog
    # before setsid made its group: then only the process itself is there,
    # and waiting for it without signalling it would wait for ever.
    kill -TERM "$_SERVERS_WATCHDOG_PID" 2>/dev/null
    wait "$_SERVERS_WATCHDOG_PID" 2>/dev/null || true
    _SERVERS_WATCHDOG_PID=
    return 0
}

_servers_require_init() {
    [[ -n ${SERVERS_DIR:-} && -d $SERVERS_DIR ]] ||
        _servers_die "call servers_init first"
}

# _servers_spawn NAME LOGFILE cmd args...
# Starts cmd in a new session/process group (so its children can be stopped
# with it), stdin from /dev/null, stdout+stderr to LOGFILE.  Records the pid
# and puts it in _SERVERS_LAST_PID.  Must not be called in a subshell.
_servers_spawn() {
    local name=$1 log=$2
    shift 2
    local m=0
    # With job control on, `&` makes the job a group leader and setsid would
    # fork, so $! would not be the server.  Turn it off around the spawn.
    [[ $- == *m* ]] && { m=1; set +m; }
    setsid "$@" </dev/null >>"$log" 2>&1 &
    _SERVERS_LAST_PID=$!
    ((m)) && set -m
    printf '%s %s\n' "$name" "$_SERVERS_LAST_PID" >>"$SERVERS_DIR/pids"
}

# ---------------------------------------------------------------------------
# ports
# ---------------------------------------------------------------------------
# Is PORT in use on TCP v4/v6 (any state, so TIME_WAIT also counts)?
_servers_port_used() {
    local -; set +e # best effort; never trip the caller's set -e
    local hex f
    printf -v hex '%04X' "$1"
    for f in /proc/net/tcp /proc/net/tcp6; do
        [[ -r $f ]] || continue
        # field 2 is local_address ADDR:PORT
        awk -v h=":$hex" 'NR>1 && substr($2, length($2)-4) == h {found=1} END {exit !found}' "$f" &&
            return 0
    done
    return 1
}

# Prints a free TCP port on 127.0.0.1.  Picks randomly below the kernel's
# ephemeral range (so outgoing connections don't grab it meanwhile) and checks
# in /proc/net/tcp{,6} that no socket (in any state) uses it.  A parallel test
# can still take it before our server binds: the start_* functions detect that
# (the server exits, or the listening socket is not ours) and retry.
free_port() {
    local -; set +e # best effort; never trip the caller's set -e
    local lo=20000 hi=32000 eph_lo p i
    if [[ -r /proc/sys/net/ipv4/ip_local_port_range ]]; then
        read -r eph_lo _ </proc/sys/net/ipv4/ip_local_port_range
        ((eph_lo > lo + 1000)) && hi=$((eph_lo - 1))
    fi
    for ((i = 0; i < 200; i++)); do
        p=$((lo + (RANDOM * 32768 + RANDOM) % (hi - lo)))
        _servers_port_used "$p" && continue
        # a connect that succeeds means something listens there
        if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then continue; fi
        printf '%s\n' "$p"
        return 0
    done
    _servers_log "free_port: no free port found"
    return 1
}

# Does process group PGID own a listening TCP socket on 127.0.0.1:PORT?
# (Proves it is *our* server on that port, not another test's.)
_servers_group_listens() {
    local -; set +e # best effort; never trip the caller's set -e
    local pgid=$1 port=$2 hex inodes pid fd link
    printf -v hex '%04X' "$port"
    inodes=$(awk -v a="0100007F:$hex" 'NR>1 && $2 == a && $4 == "0A" {print $10}' /proc/net/tcp)
    [[ -n $inodes ]] || return 1
    for pid in $(_servers_group_members "$pgid"); do
        for fd in /proc/"$pid"/fd/*; do
            link=$(readlink "$fd" 2>/dev/null) || continue
            [[ $link == socket:\[*\] ]] || continue
            link=${link#socket:[}
            link=${link%]}
            [[ $'\n'$inodes$'\n' == *$'\n'$link$'\n'* ]] && return 0
        done
    done
    return 1
}

# _servers_wait_listen PGID PORT LOG WHAT : wait until our server listens.
# Returns 1 if the server died (e.g. port taken), dies loudly on timeout.
_servers_wait_listen() {
    local -; set +e # best effort; never trip the caller's set -e
    local pgid=$1 port=$2 log=$3 what=$4
    local deadline=$((SECONDS + _SERVERS_START_TIMEOUT))
    while ((SECONDS <= deadline)); do
        if ! kill -0 "$pgid" 2>/dev/null; then
            wait "$pgid" 2>/dev/null || true
            return 1
        fi
        if _servers_group_listens "$pgid" "$port" &&
            (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            return 0
        fi
        sleep 0.05
    done
    _servers_log "$what did not listen on 127.0.0.1:$port within ${_SERVERS_START_TIMEOUT}s; log $log:"
    sed 's/^/    /' "$log" >&2 2>/dev/null
    _servers_die "$what failed to start"
}

# Port-in-use races with a parallel test: a server that died before listening
# is retried on a fresh port a few times.
_SERVERS_START_TRIES=4

# ---------------------------------------------------------------------------
# git daemon
# ---------------------------------------------------------------------------
# start_git_daemon BASE_DIR
#   sets GIT_DAEMON_URL=git://127.0.0.1:P  GIT_DAEMON_PORT=P  GIT_DAEMON_PID
start_git_daemon() {
    _servers_require_init
    local base=${1:?start_git_daemon BASE_DIR}
    [[ -d $base ]] || _servers_die "start_git_daemon: no dir $base"
    base=$(cd "$base" && pwd -P)
    local daemon_bin
    daemon_bin=$(git --exec-path)/git-daemon
    [[ -x $daemon_bin ]] || _servers_die "$daemon_bin not found"
    local n=$((++_SERVERS_SEQ)) dir port try log
    dir=$SERVERS_DIR/git-daemon.$n
    mkdir -p "$dir"
    log=$dir/daemon.log
    for ((try = 1; try <= _SERVERS_START_TRIES; try++)); do
        port=$(free_port) || _servers_die "no free port"
        : >"$log"
        # git-daemon itself, not `git daemon`: the git wrapper would fork it
        # as a child instead of exec'ing, so the recorded pid would not be
        # the daemon and stopping it would orphan the real one.
        _servers_spawn git-daemon "$log" "$daemon_bin" --export-all \
            --enable=receive-pack --base-path="$base" --listen=127.0.0.1 \
            --port="$port" --reuseaddr --informative-errors \
            --pid-file="$dir/daemon.pid"
        if _servers_wait_listen "$_SERVERS_LAST_PID" "$port" "$log" "git daemon"; then
            GIT_DAEMON_PORT=$port
            GIT_DAEMON_PID=$_SERVERS_LAST_PID
            GIT_DAEMON_URL=git://127.0.0.1:$port
            export GIT_DAEMON_URL GIT_DAEMON_PORT
            return 0
        fi
        _servers_log "git daemon on port $port exited early (try $try):"
        sed 's/^/    /' "$log" >&2
    done
    _servers_die "git daemon failed to start"
}

# ---------------------------------------------------------------------------
# TLS
# ---------------------------------------------------------------------------
# make_tls_cert DIR : DIR/key.pem and DIR/cert.pem, a new self-signed RSA
#   certificate for CN=127.0.0.1 (no subjectAltName: mbedTLS, under libgit2,
#   matches an address against the CN), valid for two days. It is its own
#   CA: trust DIR/cert.pem to trust a server that presents it.
make_tls_cert() {
    local d=$1
    mkdir -p "$d"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$d/key.pem" -out "$d/cert.pem" -days 2 \
        -subj /CN=127.0.0.1 >"$d/openssl.log" 2>&1 || { cat "$d/openssl.log" >&2; _servers_die "openssl req failed"; }
}

# ---------------------------------------------------------------------------
# smart HTTP: nginx + fcgiwrap + git http-backend
# ---------------------------------------------------------------------------
# start_http_git BASE_DIR [--tls] [--auth USER PASS]
#   sets HTTP_GIT_URL=http://127.0.0.1:P  HTTP_GIT_PORT=P  HTTP_GIT_DIR
#   (repos are $HTTP_GIT_URL/name.git).  With --auth every request needs
#   basic auth USER:PASS (else 401), and REMOTE_USER is the authenticated user.
#   With --tls it serves https (HTTP_GIT_URL=https://127.0.0.1:P) with a new
#   self-signed certificate for CN=127.0.0.1 (made by openssl), whose PEM file
#   is HTTP_GIT_CA: a client trusts the server by trusting that file
#   (kistore: KISTORE_SSL_CAINFO; git: GIT_SSL_CAINFO).
#   Each call starts a new server; the variables describe the latest one.
#   HTTP_GIT_EXTRA, when set, is written at the top of the repositories'
#   location block (nginx directives: a refusal, `if ($arg_service = ...)`).
start_http_git() {
    _servers_require_init
    local base=${1:?start_http_git BASE_DIR [--tls] [--auth USER PASS]}
    shift
    local auth_user='' auth_pass='' tls=0
    if [[ ${1:-} == --tls ]]; then tls=1; shift; fi
    if (($#)); then
        [[ $1 == --auth && $# -eq 3 ]] || _servers_die "start_http_git BASE_DIR [--tls] [--auth USER PASS]"
        auth_user=$2 auth_pass=$3
        [[ $auth_user != *:* ]] || _servers_die "auth user must not contain ':'"
    fi
    [[ -d $base ]] || _servers_die "start_http_git: no dir $base"
    base=$(cd "$base" && pwd -P)
    local backend=/usr/lib/git-core/git-http-backend
    [[ -x $backend ]] || backend=$(git --exec-path)/git-http-backend
    [[ -x $backend ]] || _servers_die "git-http-backend not found"
    command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || _servers_die "nginx not installed (apt-get install nginx-light)"
    command -v fcgiwrap >/dev/null || [[ -x /usr/sbin/fcgiwrap ]] || _servers_die "fcgiwrap not installed"
    local nginx_bin fcgi_bin
    nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
    fcgi_bin=$(command -v fcgiwrap || echo /usr/sbin/fcgiwrap)

    local n=$((++_SERVERS_SEQ)) dir sock conf port try
    dir=$SERVERS_DIR/http.$n
    mkdir -p "$dir"/tmp/{body,fastcgi,proxy,scgi,uwsgi}
    # unix socket paths are limited to 108 bytes; keep it short if TMPDIR is long
    sock=$dir/fcgi.sock
    if ((${#sock} > 100)); then
        sock=$(mktemp -u /tmp/kse2e-fcgi.XXXXXXXX).sock
        _SERVERS_USER_EXIT_HOOKS+=("rm -f -- '$sock'")
    fi

    # fcgiwrap: -f sends the CGI's stderr to nginx's error log.  No -c N:
    # one process serves requests one at a time (each git HTTP request is
    # self-contained, so concurrent clients just queue); with -c the
    # preforked children outlive the parent on stop and become zombies.
    _servers_spawn fcgiwrap "$dir/fcgiwrap.log" "$fcgi_bin" -f -s "unix:$sock"
    local fpid=$_SERVERS_LAST_PID deadline=$((SECONDS + _SERVERS_START_TIMEOUT))
    while ((SECONDS <= deadline)); do
        [[ -S $sock ]] && break
        kill -0 "$fpid" 2>/dev/null || break
        sleep 0.05
    done
    if [[ ! -S $sock ]]; then
        sed 's/^/    /' "$dir/fcgiwrap.log" >&2
        _servers_die "fcgiwrap did not create $sock"
    fi
    chmod 666 "$sock" 2>/dev/null || true

    local auth_conf='' remote_user='test'
    if [[ -n $auth_user ]]; then
        local hash
        hash=$(openssl passwd -apr1 "$auth_pass") || _servers_die "openssl passwd failed"
        printf '%s:%s\n' "$auth_user" "$hash" >"$dir/htpasswd"
        chmod 644 "$dir/htpasswd"
        auth_conf="auth_basic \"kistore-test\"; auth_basic_user_file $dir/htpasswd;"
        remote_user='$remote_user'
    fi

    # temp-path directives only for modules compiled in
    local nginx_v temp_conf="client_body_temp_path $dir/tmp/body; fastcgi_temp_path $dir/tmp/fastcgi;"
    nginx_v=$("$nginx_bin" -V 2>&1)
    local mod
    for mod in proxy scgi uwsgi; do
        [[ $nginx_v == *"--without-http_${mod}_module"* ]] ||
            temp_conf+=" ${mod}_temp_path $dir/tmp/$mod;"
    done
    local user_conf=''
    ((EUID == 0)) && user_conf='user root root;'
    local listen_tls='' tls_conf='' scheme=http
    if ((tls)); then
        make_tls_cert "$dir/tls"
        listen_tls=' ssl'
        tls_conf="ssl_certificate $dir/tls/cert.pem; ssl_certificate_key $dir/tls/key.pem;"
        scheme=https
    fi

    conf=$dir/nginx.conf
    for ((try = 1; try <= _SERVERS_START_TRIES; try++)); do
        port=$(free_port) || _servers_die "no free port"
        cat >"$conf" <<EOF
# generated by tests/e2e/lib/servers.sh
$user_conf
daemon off;
master_process on;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log info;
events { worker_connections 128; }
http {
    access_log $dir/access.log;
    $temp_conf
    sendfile off;
    server {
        listen 127.0.0.1:$port$listen_tls;
        server_name 127.0.0.1;
        $tls_conf
        client_max_body_size 0;
        location / {
            ${HTTP_GIT_EXTRA:-}
            $auth_conf
            include /etc/nginx/fastcgi_params;
            fastcgi_param SCRIPT_FILENAME $backend;
            fastcgi_param GIT_PROJECT_ROOT $base;
            fastcgi_param GIT_HTTP_EXPORT_ALL "";
            fastcgi_param PATH_INFO \$uri;
            fastcgi_param QUERY_STRING \$query_string;
            fastcgi_param REQUEST_METHOD \$request_method;
            fastcgi_param CONTENT_TYPE \$content_type;
            fastcgi_param CONTENT_LENGTH \$content_length;
            # Pushes: git http-backend allows receive-pack only when
            # REMOTE_USER is set, but fastcgi_params already sends an (empty)
            # REMOTE_USER \$remote_user and a second fastcgi_param does not
            # override it (the CGI sees the first one).  So enable it through
            # git's config environment instead; with --auth, nginx has already
            # checked the password and REMOTE_USER is the user.
            fastcgi_param REMOTE_USER $remote_user;
            fastcgi_param GIT_CONFIG_NOSYSTEM 1;
            fastcgi_param GIT_CONFIG_COUNT 1;
            fastcgi_param GIT_CONFIG_KEY_0 http.receivepack;
            fastcgi_param GIT_CONFIG_VALUE_0 true;
            fastcgi_pass unix:$sock;
            fastcgi_read_timeout 120s;
        }
    }
}
EOF
        : >"$dir/nginx.log"
        # -e: error log before the config is read (else /var/log/nginx/error.log)
        # -p: prefix, so no relative path can resolve under /usr/share/nginx
        _servers_spawn nginx "$dir/nginx.log" "$nginx_bin" -p "$dir/" -e "$dir/error.log" -c "$conf"
        if _servers_wait_listen "$_SERVERS_LAST_PID" "$port" "$dir/error.log" "nginx"; then
            HTTP_GIT_PORT=$port
            HTTP_GIT_URL=$scheme://127.0.0.1:$port
            HTTP_GIT_DIR=$dir
            HTTP_GIT_CA=
            ((tls)) && HTTP_GIT_CA=$dir/tls/cert.pem
            HTTP_GIT_PID=$_SERVERS_LAST_PID
            export HTTP_GIT_URL HTTP_GIT_PORT
            return 0
        fi
        _servers_log "nginx on port $port exited early (try $try):"
        sed 's/^/    /' "$dir/nginx.log" "$dir/error.log" >&2 2>/dev/null
    done
    _servers_die "nginx failed to start"
}

# ---------------------------------------------------------------------------
# sshd
# ---------------------------------------------------------------------------
# start_sshd
#   sets SSH_PORT, SSH_KEY (client private key), SSH_KNOWN_HOSTS,
#   SSH_URL_PREFIX=ssh://USER@127.0.0.1:P (repo: $SSH_URL_PREFIX/abs/path.git),
#   exports GIT_SSH_COMMAND (stock git) and KISTORE_SSH_KEY=$SSH_KEY.
#   USER is the current user (root in CI): sshd not running as root can only
#   log in the user it runs as.
start_sshd() {
    _servers_require_init
    local sshd=/usr/sbin/sshd
    [[ -x $sshd ]] || _servers_die "$sshd missing (apt-get install openssh-server)"
    local n=$((++_SERVERS_SEQ)) dir conf port try user
    dir=$SERVERS_DIR/sshd.$n
    mkdir -p "$dir"
    chmod 700 "$dir"
    user=$(id -un)
    ssh-keygen -q -t ed25519 -N '' -C kistore-test-host -f "$dir/host_ed25519" </dev/null >/dev/null ||
        _servers_die "ssh-keygen (host) failed"
    ssh-keygen -q -t ed25519 -N '' -C kistore-test-client -f "$dir/client_ed25519" </dev/null >/dev/null ||
        _servers_die "ssh-keygen (client) failed"
    cp "$dir/client_ed25519.pub" "$dir/authorized_keys"
    chmod 600 "$dir/authorized_keys" "$dir/host_ed25519" "$dir/client_ed25519"
    # privilege separation dir (root only; sshd refuses to start without it)
    if ((EUID == 0)); then
        mkdir -p /run/sshd && chmod 755 /run/sshd
    fi

    # With UsePAM no, sshd refuses accounts whose shadow password starts with
    # '!' (locked) even for key logins.  Use PAM then, which doesn't check it.
    local usepam=no
    if ((EUID == 0)) && [[ -r /etc/shadow ]]; then
        local pw
        pw=$(awk -F: -v u="$user" '$1 == u {print $2}' /etc/shadow)
        [[ $pw == '!'* && -f /etc/pam.d/sshd ]] && usepam=yes
    fi

    conf=$dir/sshd_config
    for ((try = 1; try <= _SERVERS_START_TRIES; try++)); do
        port=$(free_port) || _servers_die "no free port"
        cat >"$conf" <<EOF
# generated by tests/e2e/lib/servers.sh -- all paths absolute
Port $port
ListenAddress 127.0.0.1
AddressFamily inet
HostKey $dir/host_ed25519
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
AuthorizedPrincipalsFile none
StrictModes no
UsePAM $usepam
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AllowUsers $user
PermitUserEnvironment no
X11Forwarding no
AllowTcpForwarding no
AllowAgentForwarding no
PrintMotd no
UseDNS no
MaxStartups 100:30:200
MaxSessions 50
LoginGraceTime 30
LogLevel VERBOSE
Subsystem sftp internal-sftp
EOF
        "$sshd" -t -f "$conf" >"$dir/sshd.log" 2>&1 || {
            sed 's/^/    /' "$dir/sshd.log" >&2
            _servers_die "sshd -t rejected $conf"
        }
        : >"$dir/sshd.log"
        # -D: stay in foreground (so the pid is ours), -e: log to stderr (log file)
        _servers_spawn sshd "$dir/sshd.log" "$sshd" -D -e -f "$conf"
        if _servers_wait_listen "$_SERVERS_LAST_PID" "$port" "$dir/sshd.log" "sshd"; then
            SSH_PORT=$port
            SSH_KEY=$dir/client_ed25519
            SSH_PID=$_SERVERS_LAST_PID
            SSH_DIR=$dir
            SSH_KNOWN_HOSTS=$dir/known_hosts
            SSH_URL_PREFIX=ssh://$user@127.0.0.1:$port
            printf '[127.0.0.1]:%s %s\n' "$port" "$(cut -d' ' -f1,2 "$dir/host_ed25519.pub")" >"$SSH_KNOWN_HOSTS"
            local q_kh q_key
            printf -v q_kh '%q' "$SSH_KNOWN_HOSTS"
            printf -v q_key '%q' "$SSH_KEY"
            GIT_SSH_COMMAND="ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=$q_kh -o GlobalKnownHostsFile=/dev/null -i $q_key -o IdentitiesOnly=yes -o ConnectTimeout=10"
            KISTORE_SSH_KEY=$SSH_KEY
            export SSH_PORT SSH_KEY SSH_KNOWN_HOSTS SSH_URL_PREFIX GIT_SSH_COMMAND KISTORE_SSH_KEY
            return 0
        fi
        _servers_log "sshd on port $port exited early (try $try):"
        sed 's/^/    /' "$dir/sshd.log" >&2
    done
    _servers_die "sshd failed to start"
}

# ---------------------------------------------------------------------------
# assertion kit
# ---------------------------------------------------------------------------
# fail MSG : report a failure and exit 1 (prints the summary line first).
# Note: inside $(...) or a pipeline it only leaves that subshell.
fail() {
    printf 'FAIL: %s\n' "$*" >&2
    TESTS_FAILED=$((TESTS_FAILED + 1))
    _TESTS_SUMMARY_DONE=1
    printf '%d passed, %d failed\n' "$TESTS_PASSED" "$TESTS_FAILED"
    exit 1
}

# have_tool NAME : whether the program NAME is on PATH (not a shell keyword or
# builtin: `time` is both). A test skips the part that needs a missing tool,
# saying so, except where scripts/test.sh runs it: that script installed every
# package of `scripts/deps.sh test` and sets KISTORE_ALL_TOOLS=1, so a tool
# missing there is a package deps.sh lacks, and the test fails naming it.
have_tool() {
    type -P "$1" >/dev/null && return 0
    [[ ${KISTORE_ALL_TOOLS:-0} == 1 ]] &&
        fail "$1 is not on PATH ($PATH), yet scripts/deps.sh test installed every package the tests need: add $1's package to it"
    return 1
}

# pass NAME : count a passed check.
pass() {
    TESTS_PASSED=$((TESTS_PASSED + 1))
    _TESTS_LAST_PASS=$*
    printf 'ok %d - %s\n' "$TESTS_PASSED" "$*"
}

# assert_eq EXPECTED ACTUAL MSG
# fan HEX : a digest as format 2 names it below an index folder, <h0h1>/<h2h3>/<h4…h63>
fan() { printf '%s/%s/%s' "${1:0:2}" "${1:2:2}" "${1:4}"; }

assert_eq() {
    [[ $1 == "$2" ]] && return 0
    printf '  expected: %q\n  actual:   %q\n' "$1" "$2" >&2
    fail "${3:-assert_eq}"
}

# assert_contains HAYSTACK NEEDLE MSG
assert_contains() {
    [[ $1 == *"$2"* ]] && return 0
    printf '  needle:   %q\n  haystack: %s\n' "$2" "$1" >&2
    fail "${3:-assert_contains}"
}

# assert_not_contains HAYSTACK NEEDLE MSG
assert_not_contains() {
    [[ $1 != *"$2"* ]] && return 0
    printf '  unwanted: %q\n  haystack: %s\n' "$2" "$1" >&2
    fail "${3:-assert_not_contains}"
}

# assert_exit CODE cmd args...
#   Runs cmd (stdin inherited), stdout -> $OUT_FILE / $OUT, stderr -> $ERR_FILE
#   / $ERR, exit status -> $RC.  CODE is a number, or '!0' for any failure.
#   On mismatch prints both streams and fails.
assert_exit() {
    local want=$1
    shift
    local d=${SERVERS_DIR:-${TMPDIR:-/tmp}}
    OUT_FILE=$d/last.out
    ERR_FILE=$d/last.err
    RC=0
    "$@" >"$OUT_FILE" 2>"$ERR_FILE" || RC=$?
    OUT=$(cat "$OUT_FILE")
    ERR=$(cat "$ERR_FILE")
    if [[ $want == '!0' ]]; then
        ((RC != 0)) && return 0
    elif [[ $RC == "$want" ]]; then
        return 0
    fi
    {
        printf '  command: %s\n' "$*"
        printf '  exit:    %s (expected %s)\n' "$RC" "$want"
        printf '  --- stdout ---\n%s\n  --- stderr ---\n%s\n' "$OUT" "$ERR"
    } >&2
    fail "exit status of: $*"
}

# finished_within WHAT SECONDS : fails ("WHAT took Ns (limit Ls)") unless the
# test took less than SECONDS since servers_init, or less than
# KISTORE_E2E_TIME_LIMIT where that is set (scripts/test.sh's sanitized run,
# several times slower, sets it); else passes "finished in Ns". The timed
# tests end with it, just before summary.
finished_within() {
    local elapsed=$((SECONDS - _SERVERS_T0)) limit=${KISTORE_E2E_TIME_LIMIT:-$2}
    ((elapsed < limit)) || fail "$1 took ${elapsed}s (limit ${limit}s)"
    pass "finished in ${elapsed}s"
}

# summary : print "N passed, M failed"; returns 1 if anything failed.
summary() {
    _TESTS_SUMMARY_DONE=1
    printf '%d passed, %d failed\n' "$TESTS_PASSED" "$TESTS_FAILED"
    ((TESTS_FAILED == 0))
}
