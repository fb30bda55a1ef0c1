#!/usr/bin/env bash
# Installs code-server 4.99.4 (VS Code 1.99.3 with a Node extension host, the newest that runs on Node 20) into
# $1 from the npm registry alone, for the end-to-end test. Its postinstall would download ripgrep from GitHub,
# so scripts are skipped and Debian's rg is linked in their place; the rest mirrors code-server's postinstall.sh.
# A finished install leaves $1/.complete and is reused as is.
set -euo pipefail
DEST=$1
[ -f "$DEST/.complete" ] && exit 0
rm -rf "$DEST" && mkdir -p "$DEST" && cd "$DEST"
echo '{"private":true}' > package.json
export npm_config_yes=true   # node-pty's build runs `npx node-gyp`, which a `yes=false` npmrc would cancel
npm install --loglevel=error --no-audit --no-fund --ignore-scripts code-server@4.99.4
npm rebuild --loglevel=error argon2  # native module of code-server's own CLI
cd node_modules/code-server/lib/vscode
npm install --loglevel=error --no-audit --no-fund --omit=dev --ignore-scripts
mkdir -p node_modules/@vscode/ripgrep/bin && ln -sf "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
npm rebuild --loglevel=error         # node-pty, spdlog, watcher, kerberos… through node-gyp
ln -sfn node_modules node_modules.asar
(cd bin/remote-cli && ln -sf code-linux.sh code-server)
(cd bin/helpers && ln -sf browser-linux.sh browser.sh)
(cd extensions && npm install --loglevel=error --no-audit --no-fund --omit=dev)
touch "$DEST/.complete"
