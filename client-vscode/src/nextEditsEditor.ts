/**
 * Next-edit suggestions in the editor: the server's edit drawn with decorations (the text it replaces marked and
 * struck through, the new text beside it, a gutter arrow when it is away from the cursor), Tab to jump there and
 * Tab again to apply it (then its `agent.nextEditAccepted` command goes to the server), Esc to dismiss; the
 * `agentLsp.nextEditShown` context key binds those keys only while an edit is shown. Stable API only: VS Code's
 * own inline edits are proposed API, which a published extension may not use.
 */
import * as vscode from 'vscode';
import {
  DID_SHOW_METHOD, type DocumentAt, endOf, hint, isAway, NEXT_EDIT_METHOD, type NextEdit, NextEdits, SHOWN_CONTEXT,
  tabAction,
} from './nextEdits';

/** What the editor needs of the language client. */
export interface NextEditServer {
  request(method: string, params: unknown, token: vscode.CancellationToken): Promise<unknown>;
  notify(method: string, params: unknown): void;
}

const toRange = (r: NextEdit['range']) => new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
const at = (doc: vscode.TextDocument): DocumentAt => ({ uri: doc.uri.toString(), version: doc.version });

export class NextEditsEditor implements vscode.Disposable {
  readonly state: NextEdits;
  private server?: NextEditServer;
  /** The value SHOWN_CONTEXT was last set to (set only when it changes: render runs at every keystroke). */
  private context?: boolean;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly removed = vscode.window.createTextEditorDecorationType({
    backgroundColor: new vscode.ThemeColor('diffEditor.removedTextBackground'),
    textDecoration: 'line-through',
    overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.modifiedForeground'),
    overviewRulerLane: vscode.OverviewRulerLane.Center,
  });
  private readonly inserted = vscode.window.createTextEditorDecorationType({
    after: {
      backgroundColor: new vscode.ThemeColor('diffEditor.insertedTextBackground'),
      color: new vscode.ThemeColor('editor.foreground'),
      margin: '0 0 0 0.3em',
    },
  });
  private readonly gutter: vscode.TextEditorDecorationType;

  constructor(enabled: boolean, extensionUri: vscode.Uri, private readonly renderStatus: (n: NextEdits) => void) {
    this.gutter = vscode.window.createTextEditorDecorationType({
      gutterIconPath: vscode.Uri.joinPath(extensionUri, 'media/next-edit.svg'), gutterIconSize: 'contain',
    });
    this.state = new NextEdits(enabled, (doc, signal) => this.ask(doc, signal), () => this.render());
    this.disposables.push(
      this.removed, this.inserted, this.gutter,
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.contentChanges.length && e.document === vscode.window.activeTextEditor?.document) {
          this.state.changed(() => this.activeDocument());
        }
      }),
      vscode.window.onDidChangeActiveTextEditor(() => this.state.stop()),
      vscode.window.onDidChangeTextEditorSelection((e) => {
        if (this.state.shown && e.textEditor === vscode.window.activeTextEditor) this.draw(e.textEditor);
      }),
    );
  }

  /** The client to ask, or none (no server, or one without next edits). */
  connect(server: NextEditServer | undefined): void {
    this.server = server;
    this.state.setAvailable(server !== undefined);
  }

  private activeDocument(): DocumentAt | undefined {
    const doc = vscode.window.activeTextEditor?.document;
    return doc && (doc.uri.scheme === 'file' || doc.uri.scheme === 'untitled') ? at(doc) : undefined;
  }

  private async ask(doc: DocumentAt, signal: AbortSignal): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const server = this.server;
    if (!server || !editor || editor.document.uri.toString() !== doc.uri) return;
    const cancel = new vscode.CancellationTokenSource();
    signal.addEventListener('abort', () => cancel.cancel());
    const { line, character } = editor.selection.active;
    try {
      const result = await server.request(NEXT_EDIT_METHOD,
        { textDocument: doc, position: { line, character } }, cancel.token).catch(() => undefined);
      const edit = this.state.answered(result, doc, this.activeDocument(), signal);
      if (edit) server.notify(DID_SHOW_METHOD, { item: edit });
    } finally {
      cancel.dispose();
    }
  }

  /** The language client's inline completion middleware, around the one that counts requests: no ghost text
   * while an edit is shown in the document, and ghost text shown keeps next edits away for that version. */
  wrapInlineCompletions<T>(document: vscode.TextDocument, provide: () => vscode.ProviderResult<T>): vscode.ProviderResult<T> {
    if (!this.state.ghostAllowed(at(document))) return undefined;
    return Promise.resolve(provide()).then((result) => {
      if (!this.state.ghostAllowed(at(document))) return undefined;  // an edit was shown meanwhile: it was first
      const items = Array.isArray(result) ? result : (result as { items?: unknown[] } | null | undefined)?.items;
      this.state.ghostAnswered(at(document), items?.length ?? 0);
      return result;
    });
  }

  /** Tab: jump to the edit when it is away from the cursor, else apply it and tell the server. */
  async jumpOrApply(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const edit = this.state.shown;
    if (!editor || !edit) return;
    const range = toRange(edit.range);
    if (editor.document.uri.toString() !== edit.textDocument.uri || editor.document.version !== edit.textDocument.version) {
      return this.state.stop();  // the text moved on: the edit no longer fits
    }
    if (tabAction(editor.selection.active.line, edit.range) === 'jump') {
      editor.selection = new vscode.Selection(range.start, range.start);
      editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
      return;
    }
    this.state.stop();
    const done = await editor.edit((b) => b.replace(range, edit.text));
    if (!done) return;
    const end = endOf(edit.range.start, edit.text);
    editor.selection = new vscode.Selection(end.line, end.character, end.line, end.character);
    if (edit.command && this.server) {
      void this.server.request('workspace/executeCommand',
        { command: edit.command.command, arguments: edit.command.arguments ?? [] },
        new vscode.CancellationTokenSource().token).catch(() => undefined);
    }
  }

  /** Esc: the edit is dismissed (the server counts a suggestion shown and not accepted). */
  dismiss(): void {
    this.state.stop();
  }

  private render(): void {
    this.renderStatus(this.state);
    const shown = this.state.shown !== undefined;
    if (shown !== this.context) {
      this.context = shown;
      void vscode.commands.executeCommand('setContext', SHOWN_CONTEXT, shown);
    }
    for (const editor of vscode.window.visibleTextEditors) this.draw(editor);
  }

  private draw(editor: vscode.TextEditor): void {
    const edit = this.state.shown;
    if (!edit || editor.document.uri.toString() !== edit.textDocument.uri) {
      for (const type of [this.removed, this.inserted, this.gutter]) editor.setDecorations(type, []);
      return;
    }
    const range = toRange(edit.range);
    const away = isAway(editor.selection.active.line, edit.range);
    const hover = new vscode.MarkdownString(`**Next edit** — ${away ? 'Tab jumps to it' : 'Tab applies it'}, Esc dismisses`);
    editor.setDecorations(this.removed, range.isEmpty ? [] : [{ range, hoverMessage: hover }]);
    editor.setDecorations(this.inserted, edit.text ? [{
      range: new vscode.Range(range.end, range.end), hoverMessage: hover,
      renderOptions: { after: { contentText: hint(edit.text) } },
    }] : []);
    editor.setDecorations(this.gutter, away ? [{ range: new vscode.Range(range.start, range.start), hoverMessage: hover }] : []);
  }

  dispose(): void {
    this.state.stop();
    for (const d of this.disposables) d.dispose();
  }
}
