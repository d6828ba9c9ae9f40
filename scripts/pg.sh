#!/usr/bin/env bash
# A real PostgreSQL 16 with pgvector for the registry tests, from the PyPI wheel `pgserver`
# (PostgreSQL 16.2 + pgvector 0.6.2; the wheel is cached in a venv in $SKILLET_CI_CACHE, default
# ~/.cache/skillet-ci). The server runs as an unprivileged user (initdb refuses root), listens on
# a Unix socket only, and keeps everything under one folder.
#
#   scripts/pg.sh start DIR   start a server in DIR (created); prints its URL on stdout
#   scripts/pg.sh replica DIR PRIMARY_DIR
#                             start a streaming hot standby of the server in PRIMARY_DIR in DIR
#                             (pg_basebackup from the wheel); prints its URL on stdout
#   scripts/pg.sh stop DIR    stop it and remove DIR (a replica before its primary)
#
# Fails, saying why on stderr, when Python, PyPI or the server cannot be had.
set -euo pipefail
cache=${SKILLET_CI_CACHE:-$HOME/.cache/skillet-ci}
venv="$cache/pg-venv"
user=skillet-pg

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u "$user" -- "$@"
  else
    "$@"
  fi
}

install_dir() {
  local pkg
  if ! pkg=$("$venv/bin/python" -c 'import pgserver, os; print(os.path.dirname(pgserver.__file__))' 2>/dev/null); then
    mkdir -p "$cache"
    rm -rf "$venv"
    python3 -m venv "$venv" >&2 || { echo "python3 -m venv failed" >&2; return 1; }
    "$venv/bin/pip" install -q "pgserver==0.1.4" >&2 || { echo "pip cannot install pgserver 0.1.4 from PyPI" >&2; return 1; }
    pkg=$("$venv/bin/python" -c 'import pgserver, os; print(os.path.dirname(pgserver.__file__))')
  fi
  # The site-packages folder: the binaries find their libraries in pgserver.libs beside it.
  dirname "$pkg"
}

case "${1:-}" in
  start)
    dir=${2:?usage: scripts/pg.sh start DIR}
    site=$(install_dir)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    if [ "$(id -u)" -eq 0 ]; then
      id "$user" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$user" >&2
      # The server's user must reach its binaries and data: a copy beside the data, not the
      # cache under root's home (34 MB, a second).
      chmod 755 "$dir"
    fi
    mkdir -p "$dir/site"
    cp -a "$site/pgserver" "$site/pgserver.libs" "$dir/site/"
    ln -s site/pgserver/pginstall "$dir/install"
    mkdir -p "$dir/data" "$dir/sock"
    if [ "$(id -u)" -eq 0 ]; then
      chown -R "$user" "$dir/site" "$dir/data" "$dir/sock"
    fi
    as_owner "$dir/install/bin/initdb" -D "$dir/data" --auth=trust --encoding=utf8 -U postgres >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; echo "initdb failed" >&2; exit 1; }
    # One role that must give a password (the tests of a refused password); everyone else is
    # trusted on the socket, which only this machine's users reach.
    sed -i '1i local all skillet_password_test scram-sha-256' "$dir/data/pg_hba.conf"
    as_owner "$dir/install/bin/pg_ctl" -D "$dir/data" -w -l "$dir/data/server.log" \
      -o "-c listen_addresses= -k $dir/sock -c unix_socket_permissions=0700 -c max_connections=200 -c fsync=off" start >&2 \
      || { cat "$dir/data/server.log" >&2; echo "pg_ctl start failed" >&2; exit 1; }
    echo "postgresql://postgres@/postgres?host=$dir/sock"
    ;;
  replica)
    dir=${2:?usage: scripts/pg.sh replica DIR PRIMARY_DIR}
    primary=${3:?usage: scripts/pg.sh replica DIR PRIMARY_DIR}
    primary=$(cd "$primary" && pwd)
    [ -f "$primary/data/PG_VERSION" ] || { echo "$primary is not a server folder of scripts/pg.sh" >&2; exit 1; }
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    [ "$(id -u)" -eq 0 ] && chmod 755 "$dir"
    ln -s "$primary/install" "$dir/install"
    mkdir -p "$dir/sock"
    [ "$(id -u)" -eq 0 ] && chown "$user" "$dir" "$dir/sock"
    # A base backup over the primary's socket (initdb's pg_hba.conf lets local replication in),
    # written with standby.signal and primary_conninfo (-R): the copy follows the primary.
    as_owner "$dir/install/bin/pg_basebackup" -h "$primary/sock" -U postgres -D "$dir/data" \
      -X stream -R -c fast >"$dir/basebackup.log" 2>&1 \
      || { cat "$dir/basebackup.log" >&2; echo "pg_basebackup failed" >&2; exit 1; }
    as_owner "$dir/install/bin/pg_ctl" -D "$dir/data" -w -l "$dir/data/server.log" \
      -o "-c listen_addresses= -k $dir/sock -c unix_socket_permissions=0700 -c max_connections=200 -c fsync=off -c hot_standby=on" start >&2 \
      || { cat "$dir/data/server.log" >&2; echo "pg_ctl start (replica) failed" >&2; exit 1; }
    echo "postgresql://postgres@/postgres?host=$dir/sock"
    ;;
  stop)
    dir=${2:?usage: scripts/pg.sh stop DIR}
    # Only a folder this script made is removed.
    if [ ! -f "$dir/data/PG_VERSION" ] || [ ! -e "$dir/install" ]; then
      echo "scripts/pg.sh: $dir is not a server folder of scripts/pg.sh; nothing removed" >&2
      exit 1
    fi
    as_owner "$dir/install/bin/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true
    rm -rf "$dir"
    ;;
  *)
    echo "usage: scripts/pg.sh start DIR | stop DIR" >&2
    exit 2
    ;;
esac
