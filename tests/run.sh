#!/usr/bin/env bash
# Every test of agent-lsp, from a fresh clone: installs what the tests need, runs each suite, and ends with
# one line "N passed, M failed" over all of them. Exit code 0 only when every suite passed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export AGENT_LSP_OFFLINE=1  # the server refuses any model API that is not on loopback

need_apt=()
for pkg in neovim ripgrep chromium emacs-nox elpa-eglot; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ] && command -v apt-get >/dev/null; then
  echo "== apt-get install ${need_apt[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
echo "== pip install -e .[test]"
python3 -m pip install -q -e ".[test]" 2>&1 | grep -v "Running pip as the 'root' user" || true

passed=0 failed=0 status=0
count() {  # count NAME LOGFILE EXITCODE: add a suite's "N passed" / "M failed" to the totals
  local p f
  p=$(grep -Eo '[0-9]+ passed' "$2" | tail -1 | grep -Eo '[0-9]+' || true)
  f=$(grep -Eo '[0-9]+ failed' "$2" | tail -1 | grep -Eo '[0-9]+' || true)
  passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0}))
  if [ "$3" -ne 0 ]; then
    status=1
    [ "${f:-0}" -gt 0 ] || failed=$((failed + 1))  # a suite that broke before counting counts as one failure
    echo "!! $1 failed (exit $3)"
  fi
}
run() {  # run NAME COMMAND...: run a suite, show its output, count it
  local name=$1 log; shift
  log=$(mktemp)
  echo "== $name"
  "$@" 2>&1 | tee "$log"
  count "$name" "$log" "${PIPESTATUS[0]}"
}

run "python (unit + e2e)" python3 -m pytest -q -p no:cacheprovider tests
[ -x client-nvim/tests/run.sh ] && run "client-nvim" client-nvim/tests/run.sh
[ -x client-vscode/ci.sh ] && run "client-vscode" client-vscode/ci.sh
run "demo" bash -c 'out=$(agent-lsp demo) && echo "$out" && grep -q "stopReason=end_turn" <<<"$out" \
  && grep -q "defines .total_value., .restock., .low_stock." <<<"$out" && echo "1 passed"'

echo "$passed passed, $failed failed"
exit $status
