/**
 * Next-edit suggestions (PROTOCOL §11) on the extension's side, as plain logic: when to ask the server
 * (`textDocument/copilotInlineEdit`, after a pause in typing, a newer change cancelling the older request), which
 * answer still fits the document (its version), what Tab does (jump to an edit away from the cursor, else apply
 * it), and the rule that keeps it apart from ghost text (never both at once: the first shown wins). The editor
 * side (decorations, keys, commands) is nextEditsEditor.ts.
 */

/** The request, the notification when an edit is shown, and the server's command an accepted edit carries. */
export const NEXT_EDIT_METHOD = 'textDocument/copilotInlineEdit';
export const DID_SHOW_METHOD = 'textDocument/didShowInlineEdit';
export const NEXT_EDIT_ACCEPTED = 'agent.nextEditAccepted';
/** The setting that holds on / off, under `agentLsp.`. */
export const NEXT_EDITS_ENABLED_KEY = 'nextEdits.enabled';
/** The extension's commands: the status bar item's toggle, Tab and Esc while an edit is shown. */
export const TOGGLE_NEXT_EDITS = 'agentLsp.toggleNextEdits';
export const JUMP_OR_APPLY = 'agentLsp.nextEdit.jumpOrApply';
export const DISMISS = 'agentLsp.nextEdit.dismiss';
/** The context key Tab and Esc are bound under (true only while an edit is shown in the active editor). */
export const SHOWN_CONTEXT = 'agentLsp.nextEditShown';
/** How long typing must pause before the server is asked: asking mid-word is noise (and a model call). */
export const PAUSE_MS = 500;

export interface LspPosition { line: number; character: number }
export interface LspRange { start: LspPosition; end: LspPosition }
/** A document as the server knows it: its URI and the version the client last sent. */
export interface DocumentAt { uri: string; version: number }
/** An edit as the server sends it (Copilot's shape: `text`, not `newText`). */
export interface NextEdit {
  range: LspRange;
  text: string;
  textDocument: DocumentAt;
  command?: { title: string; command: string; arguments?: unknown[] };
}

const isPosition = (p: unknown): p is LspPosition => typeof p === 'object' && p !== null
  && Number.isInteger((p as LspPosition).line) && Number.isInteger((p as LspPosition).character)
  && (p as LspPosition).line >= 0 && (p as LspPosition).character >= 0;

/** The edit of an answer to the request for `asked`, when it still fits the document as it is `now`: the first
 * (the server sends at most one), for the same URI and version as asked, while the document is still at that
 * version. Anything else — an empty or malformed answer, another document, a version that moved on — is none. */
export function editFor(result: unknown, asked: DocumentAt, now: DocumentAt): NextEdit | undefined {
  const edit = (result as { edits?: unknown } | null)?.edits;
  const first = Array.isArray(edit) ? edit[0] as Partial<NextEdit> | undefined : undefined;
  if (!first || typeof first.text !== 'string' || !isPosition(first.range?.start) || !isPosition(first.range?.end)) {
    return undefined;
  }
  const same = (a: DocumentAt | undefined, b: DocumentAt) => a?.uri === b.uri && a.version === b.version;
  return same(first.textDocument, asked) && same(asked, now) ? first as NextEdit : undefined;
}

/** Whether the cursor's line lies outside the lines the edit replaces: Tab then jumps there first, and the
 * gutter marks the edit's line. */
export function isAway(cursorLine: number, range: LspRange): boolean {
  return cursorLine < range.start.line || cursorLine > range.end.line;
}

/** What Tab does: jump to an edit away from the cursor, apply one at it. */
export function tabAction(cursorLine: number, range: LspRange): 'jump' | 'apply' {
  return isAway(cursorLine, range) ? 'jump' : 'apply';
}

/** The new text as shown beside what it replaces (one line: a line break as ⏎, at most `max` characters). */
export function hint(text: string, max = 80): string {
  const flat = text.replace(/\r?\n/g, ' ⏎ ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Where the cursor goes once `text` replaced the range starting at `start`: after the new text. */
export function endOf(start: LspPosition, text: string): LspPosition {
  const lines = text.split(/\r?\n/);
  const last = lines[lines.length - 1];
  return lines.length === 1 ? { line: start.line, character: start.character + last.length }
    : { line: start.line + lines.length - 1, character: last.length };
}

/** On / off / working, as the status bar item shows it. */
export type NextEditState = 'on' | 'off' | 'working';

export function nextEditLook(state: NextEditState): { text: string; tooltip: string; label: string } {
  const [icon, tooltip] = {
    on: ['$(arrow-swap)', 'Agent next-edit suggestions: on. Click to turn them off.'],
    working: ['$(loading~spin)', 'Agent next-edit suggestions: asking the model… Click to turn them off.'],
    off: ['$(circle-slash)', 'Agent next-edit suggestions: off. Click to turn them on.'],
  }[state];
  return { text: `${icon} Next edit`, tooltip, label: `Agent next edits: ${state}` };
}

/** Timers, replaceable in tests. */
export interface Timers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}
const realTimers: Timers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * The state of next edits in one window: whether they are on and offered, the edit shown (and for which
 * document), the ghost text shown (the clash rule), and the pause before asking, with the request in flight.
 * `ask(doc, signal)` sends the request for the active document as it is now; a newer change aborts `signal`.
 * `render` is told when the status look or the shown edit changed.
 */
export class NextEdits {
  private enabled: boolean;
  private available = false;
  private timer: unknown;
  private inFlight?: AbortController;
  private ghost?: DocumentAt;
  /** The edit on screen, or none. */
  shown?: NextEdit;

  constructor(enabled: boolean, private readonly ask: (doc: DocumentAt, signal: AbortSignal) => Promise<void>,
    private readonly render: () => void, private readonly timers: Timers = realTimers, private readonly pauseMs = PAUSE_MS) {
    this.enabled = enabled;
  }

  get state(): NextEditState {
    return !this.enabled ? 'off' : this.inFlight ? 'working' : 'on';
  }

  /** Whether the status bar item shows: only while a server that offers next edits runs. */
  get visible(): boolean {
    return this.available;
  }

  setEnabled(enabled: boolean): void {
    this.enabled = enabled;
    if (!enabled) this.stop();
    this.render();
  }

  setAvailable(available: boolean): void {
    this.available = available;
    if (!available) this.stop();
    this.render();
  }

  /** The active document changed (typed, undone, pasted…): what was shown is gone, the older request is
   * cancelled, and the server is asked after the pause, for the document as it is then. */
  changed(current: () => DocumentAt | undefined): void {
    this.stop();
    if (!this.enabled || !this.available) return;
    this.timer = this.timers.set(() => {
      this.timer = undefined;
      const doc = current();
      if (doc && !this.ghostShown(doc)) void this.send(doc);
    }, this.pauseMs);
  }

  private async send(doc: DocumentAt): Promise<void> {
    const request = new AbortController();
    this.inFlight = request;
    this.render();
    try {
      await this.ask(doc, request.signal);
    } finally {
      if (this.inFlight === request) {
        this.inFlight = undefined;
        this.render();
      }
    }
  }

  /** The answer to the request for `asked`: shown when it still fits the document `now` and no ghost text is
   * shown there (the ghost text came first). Returns the edit to show, or undefined. */
  answered(result: unknown, asked: DocumentAt, now: DocumentAt | undefined, signal: AbortSignal): NextEdit | undefined {
    if (signal.aborted || !now || this.ghostShown(now)) return undefined;
    const edit = editFor(result, asked, now);
    if (edit) {
      this.shown = edit;
      this.render();
    }
    return edit;
  }

  /** Nothing shown, nothing asked (Esc, a change, another editor, turned off). Renders only when that changes
   * what is on screen (it runs at every keystroke). */
  stop(): void {
    if (this.timer !== undefined) this.timers.clear(this.timer);
    this.timer = undefined;
    const was = this.inFlight !== undefined || this.shown !== undefined;
    this.inFlight?.abort();
    this.inFlight = undefined;
    this.shown = undefined;
    if (was) this.render();
  }

  /** Whether ghost text may show in `doc`: not while an edit is shown there (it was first). */
  ghostAllowed(doc: DocumentAt): boolean {
    return this.shown?.textDocument.uri !== doc.uri;
  }

  /** The inline completion provider answered `count` items for `doc`: ghost text is shown there (until the
   * document changes), so no next edit is asked or shown for that version. */
  ghostAnswered(doc: DocumentAt, count: number): void {
    this.ghost = count > 0 ? doc : this.ghost?.uri === doc.uri ? undefined : this.ghost;
  }

  private ghostShown(doc: DocumentAt): boolean {
    return this.ghost?.uri === doc.uri && this.ghost.version === doc.version;
  }
}
