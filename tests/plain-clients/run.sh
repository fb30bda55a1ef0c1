#!/usr/bin/env bash
# agent-lsp through a plain LSP client nobody here wrote: Emacs with lsp-mode 8 (Debian's elpa-lsp-mode), set up as
# docs/plain-clients.md says (init.el) and driven by its own keys in tmux (drive.py) against the scripted fake
# Messages API. Installs what it needs (an install that fails stops the run); expects agent-lsp on PATH
# (`pip install -e .`). Ends with "N passed, M failed"; exit code 0 only when every case passed.
set -euo pipefail
cd "$(dirname "$0")/../.."

missing=()
for pkg in emacs-nox elpa-lsp-mode tmux; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=(); [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  echo "== apt-get install ${missing[*]}"
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi
command -v agent-lsp >/dev/null || { echo "agent-lsp is not on PATH: pip install -e . first"; echo "0 passed, 1 failed"; exit 1; }
echo "== $(emacs --version | head -1), lsp-mode $(dpkg-query -W -f '${Version}' elpa-lsp-mode), $(agent-lsp --version)"
python=$(dirname "$(command -v agent-lsp)")/python  # agent-lsp's own venv (the fake API needs nothing more)
[ -x "$python" ] || python=python3
timeout 300 "$python" tests/plain-clients/drive.py </dev/null
