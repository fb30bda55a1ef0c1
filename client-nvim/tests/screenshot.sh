#!/usr/bin/env bash
# Screenshots of the plugin for docs/, taken from a real terminal: Neovim NVIM (arg 1) in tmux, the real server,
# the scripted Messages API. docs/neovim-confirm.txt is the screen while the agent asks about an edit (its diff
# in a float, then the question); docs/neovim-chat.txt the screen after the chat (thinking and the diff folded).
# Every wait is for text on the screen; the ceiling only ends a broken run.
set -euo pipefail
NVIM=$1
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
dir=$(mktemp -d)
sock=agent-lsp-shot-$$
api=
cleanup() {
  tmux -L "$sock" kill-server 2>/dev/null || true  # nothing to kill when the session already ended
  [ -z "$api" ] || kill "$api" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

printf 'def total(items):\n    return sum(item.price for item in items)\n' >"$dir/shop.py"
cat >"$dir/script.json" <<'JSON'
[
  {"content": [{"type": "thinking", "thinking": "The user wants a docstring on total(); read the file first."},
               {"type": "text", "text": "I'll read shop.py."},
               {"type": "tool_use", "id": "toolu_read", "name": "read_file", "input": {"path": "shop.py"}}]},
  {"content": [{"type": "text", "text": "Adding the docstring."},
               {"type": "tool_use", "id": "toolu_edit", "name": "edit_file",
                "input": {"path": "shop.py", "old_string": "def total(items):\n",
                          "new_string": "def total(items):\n    \"\"\"The sum of the items' prices.\"\"\"\n"}}]},
  {"content": [{"type": "text", "text": "Added a docstring to `total()`."}]}
]
JSON
(cd "$repo" && exec python3 -m tests.fakes.messages_api "$dir/script.json") >"$dir/url" &
api=$!

wait_for() {  # wait_for WHAT TEST-COMMAND...: poll until the command succeeds
  local what=$1 end=$((SECONDS + 60))
  shift
  until "$@"; do
    if [ $SECONDS -ge $end ]; then echo "timed out waiting for $what"; screen; exit 1; fi
    sleep 0.1
  done
}
screen() { tmux -L "$sock" capture-pane -p -t shot 2>/dev/null || true; }
on_screen() { screen | grep -qF -- "$1"; }

wait_for "the fake Messages API" test -s "$dir/url"
url=$(head -1 "$dir/url")
tmux -L "$sock" -f /dev/null new-session -d -s shot -x 110 -y 30 -c "$dir" \
  env ANTHROPIC_API_KEY=test ANTHROPIC_BASE_URL="$url" PATH="$PATH" "$NVIM" -u NONE -i NONE -n \
  -c "luafile $here/screenshot.lua"
wait_for "the question" on_screen "Allow once"
wait_for "the diff" on_screen "+    \"\"\"The sum"
screen | sed -e 's/[[:space:]]*$//' >"$repo/docs/neovim-confirm.txt"
tmux -L "$sock" send-keys -t shot 1 Enter
wait_for "the end of the chat" on_screen "-- done (3 turns, 2 tool calls)"
screen | sed -e 's/[[:space:]]*$//' >"$repo/docs/neovim-chat.txt"
echo "ok - screenshots in docs/neovim-confirm.txt and docs/neovim-chat.txt"
