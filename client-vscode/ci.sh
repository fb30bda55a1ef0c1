#!/usr/bin/env bash
# CI for the VS Code extension, from a fresh Debian 12 machine: installs what it needs (apt, npm ci, code-server
# into a reused cache), then runs every suite and ends with one line "N passed, M failed". Exit 0 only when all
# passed; any failed install stops the run. Needs `agent-lsp` on PATH (the venv tests/run.sh makes, or
# `pip install -e .`); the end-to-end test hands its absolute path to VS Code, whose shell may not have it.
#   CODE_SERVER_DIR   where code-server 4.99.4 is installed and reused (default ~/.cache/agent-lsp-code-server)
set -euo pipefail
cd "$(dirname "$0")"
export AGENT_LSP_OFFLINE=1   # the server refuses any model API that is not on loopback
export NO_COLOR=1 FORCE_COLOR=0
export CODE_SERVER_DIR=${CODE_SERVER_DIR:-$HOME/.cache/agent-lsp-code-server}
# npm's settings are the project's (../.ci/npmrc), not the user's ~/.npmrc: a `yes=false` there cancels
# node-gyp's npx, a `nodedir` there changes the native builds. Native modules build against this very node's
# headers, offline (node-gyp would otherwise download them).
if [ -f ../.ci/npmrc ]; then export NPM_CONFIG_USERCONFIG=${NPM_CONFIG_USERCONFIG:-$(cd .. && pwd)/.ci/npmrc}
else export NPM_CONFIG_USERCONFIG=${NPM_CONFIG_USERCONFIG:-/dev/null}; fi
export npm_config_yes=true
if ! command -v node >/dev/null || [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 20 ]; then
  echo "Node 20 or later is needed (found: $(node --version 2>/dev/null || echo none))"; echo "0 passed, 1 failed"; exit 1
fi
node_prefix=$(node -p 'require("path").resolve(process.execPath, "..", "..")')
if [ -z "${npm_config_nodedir:-}" ] && [ -f "$node_prefix/include/node/node.h" ]; then export npm_config_nodedir=$node_prefix; fi
started=$SECONDS

need=()
for pkg in chromium ripgrep build-essential pkg-config libkrb5-dev libxkbfile-dev libsecret-1-dev libx11-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "== apt-get install ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! AGENT_LSP=$(command -v agent-lsp); then
  echo "agent-lsp is not on PATH: install the package first (pip install -e .)"; echo "0 passed, 1 failed"; exit 1
fi
export AGENT_LSP

# npm ci, unless the last one here installed this very lockfile.
lock_hash=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat node_modules/.ci-lock-hash 2>/dev/null || true)" != "$lock_hash" ]; then
  echo "== npm ci"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$lock_hash" > node_modules/.ci-lock-hash
fi
echo "== code-server 4.99.4 in $CODE_SERVER_DIR"
scripts/install-code-server.sh "$CODE_SERVER_DIR"

passed=0 failed=0
record() {  # record NAME PASSED FAILED EXIT
  passed=$((passed + $2)); failed=$((failed + $3))
  if [ "$4" -ne 0 ] && [ "$3" -eq 0 ]; then failed=$((failed + 1)); fi  # broke before it could count
  if [ "$4" -ne 0 ]; then echo "!! $1 failed (exit $4)"; fi
}
run() {  # run NAME PASS_REGEX FAIL_REGEX COMMAND...: run a suite under a time limit, count its passes and failures
  local name=$1 pass_re=$2 fail_re=$3 log code p f; shift 3
  log=$(mktemp)
  echo "== $name"
  code=0
  timeout 600 "$@" 2>&1 | tee "$log" || code=${PIPESTATUS[0]}
  p=$(grep -Eo "$pass_re" "$log" | tail -1 | grep -Eo '[0-9]+' | tail -1 || true)
  f=$(grep -Eo "$fail_re" "$log" | tail -1 | grep -Eo '[0-9]+' | tail -1 || true)
  record "$name" "${p:-0}" "${f:-0}" "$code"
  rm -f "$log"
}
step() {  # step NAME COMMAND...: a single check that passes or fails as a whole
  local name=$1 code=0; shift
  echo "== $name"
  "$@" || code=$?
  if [ $code -eq 0 ]; then record "$name" 1 0 0; else record "$name" 0 1 "$code"; fi
}

step "generated types match schemas/" node scripts/gen-types.mjs --check
step "typecheck" npx tsc -p .
step "build and package the .vsix" npm run --silent package
run "unit (vitest)" '[0-9]+ passed' '[0-9]+ failed' npx vitest run src
run "contract (node:test, real server)" '^# pass [0-9]+' '^# fail [0-9]+' node --test test/contract.test.mjs
run "webview (Chromium)" '^# pass [0-9]+' '^# fail [0-9]+' node --test test/webview.test.mjs
run "end to end (code-server)" 'e2e: [0-9]+ passed' 'e2e: [0-9]+ passed, [0-9]+ failed' node test/e2e.mjs
# The release .vsix files, the server inside each (python -m release; its pip downloads are cached after the first
# run), checked for their platforms; the linux-x64 one installed with no agent-lsp on PATH. AGENT_LSP_SKIP_BUNDLED=1
# skips it (five packages: several minutes on the CI machine, more the first time, while pip fills its cache).
if [ "${AGENT_LSP_SKIP_BUNDLED:-}" != 1 ]; then
  release_out=$(mktemp -d)
  step "python -m release (a .vsix per platform with the server bundled)" bash -c \
    "cd .. && python -m release --out '$release_out' && cd '$release_out' && sha256sum -c SHA256SUMS"
  run "each .vsix: its manifest and its wheels' tags" '[0-9]+ passed' '[0-9]+ failed' \
    env AGENT_LSP_RELEASE_OUT="$release_out" python -m pytest -q -p no:cacheprovider ../tests/e2e/test_release.py
  run "end to end, bundled server (code-server)" 'e2e-bundled: [0-9]+ passed' 'e2e-bundled: [0-9]+ passed, [0-9]+ failed' \
    env AGENT_LSP_VSIX="$release_out/agent-lsp-vscode-$(node -p 'require("./package.json").version')-linux-x64.vsix" \
    node test/e2e-bundled.mjs
  rm -rf "$release_out"
fi

echo "client-vscode: $((SECONDS - started)) s; .vsix $(du -k dist/agent-lsp.vsix 2>/dev/null | cut -f1) KB"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
