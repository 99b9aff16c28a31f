#!/usr/bin/env bash
# Postgres for the cluster tests. The tests start a private server of their own (test/cluster/postgres.ts:
# initdb and pg_ctl in a temp dir on 127.0.0.1, stopped and removed afterwards); this script makes sure a fresh
# Debian machine has the binaries (`apt-get install postgresql`), stops any server the package started, and proves
# the binaries work with one such private start and stop. Run by .ci/run before the tests.
set -euo pipefail

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi

# Debian's versioned directory first (it holds psql next to initdb), then PATH.
bindir() {
  local dir
  dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
  if [ -n "$dir" ] && [ -x "$dir/initdb" ]; then
    echo "$dir"
  elif command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
    dirname "$(command -v initdb)"
  fi
}

bin="$(bindir)"
if [ -z "$bin" ]; then
  echo "postgres: installing Debian's postgresql package"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >/dev/null
  # The package may start a cluster of its own; the tests start theirs.
  if command -v pg_lsclusters >/dev/null 2>&1; then
    pg_lsclusters --no-header 2>/dev/null | while read -r version name _; do
      $sudo pg_ctlcluster "$version" "$name" stop >/dev/null 2>&1 || true
    done
  fi
  bin="$(bindir)"
fi
if [ -z "$bin" ]; then
  echo "postgres: no initdb/pg_ctl after install" >&2
  exit 1
fi

# One private start and stop, as the tests do it.
dir="$(mktemp -d /tmp/mcpw-pg-check-XXXXXX)"
as=()
if [ "$(id -u)" -eq 0 ]; then
  chown postgres:postgres "$dir"
  as=(runuser -u postgres --)
fi
cleanup() {
  "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
"${as[@]}" "$bin/initdb" -D "$dir/data" -A trust -U postgres --no-sync -E UTF8 >/dev/null
port="$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
"${as[@]}" "$bin/pg_ctl" -D "$dir/data" -o "-p $port -k $dir -c listen_addresses=127.0.0.1" -l "$dir/log" -w -t 30 start >/dev/null
psql="$bin/psql"
if [ ! -x "$psql" ]; then psql="$(command -v psql)"; fi
answer="$("${as[@]}" "$psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -tAc "select 1")"
"${as[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop >/dev/null
if [ "$answer" != "1" ]; then
  echo "postgres: the private server did not answer" >&2
  exit 1
fi
echo "postgres: $("$bin/postgres" --version) starts and stops in a temp dir ($bin)"
