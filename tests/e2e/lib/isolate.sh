# shellcheck shell=bash
# Cuts an e2e test off from the machine it runs on: a private HOME (no
# ~/.gitconfig, ~/.ssh, ~/.config), no system or global git configuration, and
# a fixed git identity for the commits the test makes with stock git. A fresh
# CI machine has no git identity at all; the developer's machine has one, and
# neither may change what a test sees. kistore itself must work without any
# identity (SPEC §2): tests that want to see that unset GIT_AUTHOR_* /
# GIT_COMMITTER_* and KISTORE_AUTHOR for the command they check.
# Source it after lib/servers.sh and servers_init (it uses $SERVERS_DIR).
: "${SERVERS_DIR:?source lib/servers.sh and call servers_init first}"
export HOME=$SERVERS_DIR/home
mkdir -p "$HOME"
unset XDG_CONFIG_HOME GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES
unset KISTORE_AUTHOR KISTORE_DATE KISTORE_DIR
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=$HOME/.gitconfig
: >"$GIT_CONFIG_GLOBAL"
export GIT_AUTHOR_NAME=e2e GIT_AUTHOR_EMAIL=e2e@example.invalid
export GIT_COMMITTER_NAME=e2e GIT_COMMITTER_EMAIL=e2e@example.invalid
