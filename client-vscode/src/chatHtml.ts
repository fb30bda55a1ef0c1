/** The chat webview's HTML shell, apart from chatView.ts so the Chromium test can render it without VS Code. */

// Icons as inline SVG in the theme's colour (no icon font to load, nothing the CSP has to allow).
const svg = (d: string) => `<svg width="16" height="16" viewBox="0 0 16 16" fill="none" stroke="currentColor" `
  + `stroke-width="1.3" stroke-linecap="round" aria-hidden="true"><path d="${d}"/></svg>`;
const PLUS = svg('M8 3v10M3 8h10');
const IMAGE = svg('M2.5 3.5h11v9h-11zM2.5 10.5l3-3 3 3 2-2 3 3M10 6.2a.2.2 0 1 0 0 .1');
const TRASH = svg('M3 4.5h10M6.5 4.5V3h3v1.5M4.5 4.5l.6 8.5h5.8l.6-8.5M7 7v4M9 7v4');

/** The page: no inline script or style without the nonce, nothing loaded from outside the extension. Also
 * used as is by the Chromium test, with file: URLs. */
export function chatHtml(p: { cspSource: string; nonce: string; script: string; style: string }): string {
  const csp = [
    "default-src 'none'",
    `style-src ${p.cspSource}`,
    `img-src ${p.cspSource} data:`,
    `font-src ${p.cspSource}`,
    `script-src 'nonce-${p.nonce}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${p.style}">
<title>Agent</title>
</head>
<body>
<header id="toolbar">
  <select id="sessions" title="Reopen a conversation" aria-label="Sessions" hidden></select>
  <button id="delete-session" class="icon" title="Delete this session" aria-label="Delete this session" hidden>${TRASH}</button>
  <button id="new-session" class="icon" title="New session" aria-label="New session">${PLUS}</button>
</header>
<div id="banner" role="alert" hidden></div>
<details id="plan" open hidden aria-label="The agent's plan"></details>
<main id="transcript" aria-live="polite"></main>
<footer id="composer">
  <div id="queued" hidden></div>
  <div id="mentions" aria-label="Mentions sent with the next message" hidden></div>
  <div id="attachments" aria-label="Images sent with the next message" hidden></div>
  <ul id="mention-list" role="listbox" aria-label="Mention" hidden></ul>
  <ul id="command-list" role="listbox" aria-label="Command" hidden></ul>
  <textarea id="prompt" rows="3" placeholder="Ask the agent… (@ a file, / a command, paste an image; Enter sends, Shift+Enter: new line, Esc stops)"
    aria-label="Message"></textarea>
  <div id="controls">
    <select id="mode" title="What the agent may do without asking" aria-label="Permission mode">
      <option value="default">Ask before edits</option>
      <option value="acceptEdits">Accept edits</option>
      <option value="plan">Plan (read only)</option>
      <option value="bypassPermissions">Bypass permissions</option>
    </select>
    <select id="model" title="The model of the next chat" aria-label="Model" hidden></select>
    <button id="attach" class="icon" hidden title="Attach images (PNG, JPEG, GIF, WebP; at most 5 MiB each)" aria-label="Attach images">${IMAGE}</button>
    <span id="status"></span>
    <button id="stop" class="secondary" hidden>Stop</button>
    <button id="send">Send</button>
  </div>
</footer>
<script nonce="${p.nonce}" src="${p.script}"></script>
</body>
</html>`;
}
