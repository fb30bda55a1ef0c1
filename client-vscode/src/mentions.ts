/**
 * The choices of the panel's `@` list, read from VS Code: the active editor's selection (when not empty) and
 * diagnostics, then the open editors' files, then the workspace's files (at most 200, node_modules left out).
 */
import * as vscode from 'vscode';
import type { MentionChoice } from './messages';

const MAX_FILES = 200;

export async function mentionChoices(): Promise<MentionChoice[]> {
  const choices: MentionChoice[] = [];
  const editor = vscode.window.activeTextEditor;
  if (editor) {
    const uri = editor.document.uri;
    const name = vscode.workspace.asRelativePath(uri);
    const s = editor.selection;
    if (!s.isEmpty) {
      choices.push({
        kind: 'selection', uri: uri.toString(), label: `${name}:${s.start.line + 1}-${s.end.line + 1}`,
        range: { start: { line: s.start.line, character: s.start.character }, end: { line: s.end.line, character: s.end.character } },
      });
    }
    choices.push({ kind: 'diagnostics', uri: uri.toString(), label: name });
  }
  const seen = new Set<string>();
  const file = (uri: vscode.Uri) => {
    const key = uri.toString();
    if (seen.has(key)) return;
    seen.add(key);
    choices.push({ kind: 'file', uri: key, label: vscode.workspace.asRelativePath(uri) });
  };
  // Open editors first (the active one leading), in tab order; only documents backed by a file.
  if (editor?.document.uri.scheme === 'file') file(editor.document.uri);
  for (const tab of vscode.window.tabGroups.all.flatMap((g) => g.tabs)) {
    if (tab.input instanceof vscode.TabInputText && tab.input.uri.scheme === 'file') file(tab.input.uri);
  }
  const found = await vscode.workspace.findFiles('**/*', '**/node_modules/**', MAX_FILES);
  found.sort((a, b) => vscode.workspace.asRelativePath(a).localeCompare(vscode.workspace.asRelativePath(b)));
  found.forEach(file);
  return choices;
}
