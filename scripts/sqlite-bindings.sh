#!/usr/bin/env bash
# better-sqlite3's native addon (the driver under @effect/sql-sqlite-node), built once per tested Node. npm runs no
# install scripts here and no prebuilt binary can be downloaded, and one build loads on one Node ABI only, while the
# suite runs several Nodes over one node_modules. So each Node gets its own build, from a temp copy of the package,
# against that Node's own headers (`--nodedir`, nothing is downloaded), placed where the `bindings` module that
# better-sqlite3 loads through looks for the running Node's version:
#   node_modules/better-sqlite3/compiled/<node version>/<platform>/<arch>/better_sqlite3.node
# The paths `bindings` tries before that one (build/, build/Release/, …) are removed: a build for another ABI
# there would be loaded first, and fail. A Node whose build is present and loads is skipped; a build is also kept
# in a cache outside the clone (MCPW_SQLITE_CACHE, default ~/.cache/mcp-worker/better-sqlite3), keyed by the
# better-sqlite3 and Node versions, since `npm ci` removes node_modules and with it every build.
#
#   scripts/sqlite-bindings.sh                 # the machine's Node and every Node of scripts/node-runtimes.sh
#   scripts/sqlite-bindings.sh DIR…            # the Nodes in these bin directories only
#
# Prints one line per Node ("built in N s", "present", or "FAILED: why") and exits 1 if any failed: the SQLite
# tests skip on such a Node, saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
pkg="$root/node_modules/better-sqlite3"

if [ ! -f "$pkg/package.json" ]; then
  echo "sqlite-bindings: node_modules/better-sqlite3 is not installed (npm ci first)" >&2
  exit 1
fi

gyp=""
for candidate in \
  "$(dirname "$(dirname "$(command -v npm)")")/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js" \
  "$root/node_modules/node-gyp/bin/node-gyp.js"; do
  if [ -f "$candidate" ]; then
    gyp="$candidate"
    break
  fi
done
if [ -z "$gyp" ]; then
  echo "sqlite-bindings: no node-gyp (neither npm's own nor node_modules/node-gyp)" >&2
  exit 1
fi

dirs=("$@")
if [ ${#dirs[@]} -eq 0 ]; then
  mapfile -t runtimes < <(scripts/node-runtimes.sh)
  dirs=("$(dirname "$(command -v node)")" "${runtimes[@]}")
fi

# Paths `bindings` tries before compiled/<version>/<platform>/<arch>/ (bindings 1.5, in this order).
shadowing=(build build/Debug build/Release out/Debug Debug out/Release Release build/default)
for dir in "${shadowing[@]}"; do rm -f "$pkg/$dir/better_sqlite3.node"; done

loads() {
  # better-sqlite3 resolved from the repo root, as the tests and the runner processes resolve it.
  (cd "$root" && "$1" -e 'new (require("better-sqlite3"))(":memory:").prepare("select 1").get()' 2>/dev/null)
}

bs3="$(node -p 'require("./node_modules/better-sqlite3/package.json").version')"
cache="${MCPW_SQLITE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcp-worker/better-sqlite3}/$bs3"

failed=0
for dir in "${dirs[@]}"; do
  dir="$(cd "$dir" && pwd)"
  node="$dir/node"
  version="$("$node" -p 'process.versions.node')"
  platform="$("$node" -p 'process.platform')"
  arch="$("$node" -p 'process.arch')"
  target="$pkg/compiled/$version/$platform/$arch/better_sqlite3.node"
  cached="$cache/node-v$version-$platform-$arch.node"
  if [ -f "$target" ] && loads "$node"; then
    echo "sqlite-bindings: Node v$version present"
    if [ ! -f "$cached" ]; then mkdir -p "$cache" && cp "$target" "$cached.$$" && mv "$cached.$$" "$cached" || true; fi
    continue
  fi
  if [ -f "$cached" ]; then
    mkdir -p "$(dirname "$target")"
    cp "$cached" "$target"
    if loads "$node"; then
      echo "sqlite-bindings: Node v$version from the cache ($cached)"
      continue
    fi
    rm -f "$target" "$cached"
  fi
  # The Node's own prefix holds its headers (include/node) next to bin/.
  nodedir="$(dirname "$dir")"
  if [ ! -f "$nodedir/include/node/node.h" ]; then
    echo "sqlite-bindings: Node v$version FAILED: no headers at $nodedir/include/node"
    failed=1
    continue
  fi
  work="$(mktemp -d /tmp/mcpw-sqlite-XXXXXX)"
  cp -R "$pkg/binding.gyp" "$pkg/package.json" "$pkg/src" "$pkg/deps" "$work/"
  started=$(date +%s)
  if (cd "$work" && PATH="$dir:$PATH" "$node" "$gyp" rebuild --release --nodedir="$nodedir" --jobs=2 >"$work/log" 2>&1); then
    mkdir -p "$(dirname "$target")"
    cp "$work/build/Release/better_sqlite3.node" "$target"
    if loads "$node"; then
      echo "sqlite-bindings: Node v$version built in $(($(date +%s) - started)) s (better-sqlite3 $bs3)"
      mkdir -p "$cache" && cp "$target" "$cached.$$" && mv "$cached.$$" "$cached" || true
    else
      echo "sqlite-bindings: Node v$version FAILED: built in $(($(date +%s) - started)) s but does not load"
      rm -f "$target"
      failed=1
    fi
  else
    echo "sqlite-bindings: Node v$version FAILED: node-gyp exited non-zero; its last lines:"
    tail -n 15 "$work/log" | sed 's/^/  /'
    failed=1
  fi
  rm -rf "$work"
done
exit "$failed"
