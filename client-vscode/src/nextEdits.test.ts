import { describe, expect, it } from 'vitest';
import {
  type DocumentAt, editFor, endOf, hint, isAway, type NextEdit, nextEditLook, NextEdits, tabAction, type Timers,
} from './nextEdits';

const URI = 'file:///ws/rename.py';
const v = (version: number, uri = URI): DocumentAt => ({ uri, version });
const range = (l1: number, c1: number, l2: number, c2: number) => ({ start: { line: l1, character: c1 }, end: { line: l2, character: c2 } });
const edit = (version = 4, over: Partial<NextEdit> = {}): NextEdit => ({
  range: range(2, 4, 2, 9), text: 'count', textDocument: v(version),
  command: { title: 'Accept next edit', command: 'agent.nextEditAccepted', arguments: [{ id: 'n1' }] }, ...over,
});

/** Timers the test fires by hand. */
function manualTimers() {
  const pending = new Map<number, () => void>();
  let next = 0;
  const timers: Timers = {
    set: (fn) => { pending.set(++next, fn); return next; },
    clear: (handle) => { pending.delete(handle as number); },
  };
  const fire = () => { const fns = [...pending.values()]; pending.clear(); fns.forEach((fn) => fn()); };
  return { timers, fire, count: () => pending.size };
}

/** A NextEdits whose requests the test answers; the document is at `doc.version` whenever asked. */
function harness(enabled = true) {
  const { timers, fire, count } = manualTimers();
  const asked: { doc: DocumentAt; signal: AbortSignal; answer: () => void }[] = [];
  let renders = 0;
  const state = new NextEdits(enabled, (doc, signal) => new Promise<void>((resolve) => {
    asked.push({ doc, signal, answer: resolve });
  }), () => { renders++; }, timers);
  state.setAvailable(true);
  const doc = v(4);
  const change = () => state.changed(() => ({ ...doc }));
  return { state, asked, fire, pending: count, doc, change, renders: () => renders };
}

describe('next edits: which answer is shown (the version check)', () => {
  it('takes the first edit when it echoes the URI and version asked and the document is still there', () => {
    expect(editFor({ edits: [edit(), edit(4, { text: 'other' })] }, v(4), v(4))).toEqual(edit());
  });

  it('drops an edit for another version, another document, or a document that changed since', () => {
    expect(editFor({ edits: [edit(3)] }, v(4), v(4))).toBeUndefined();
    expect(editFor({ edits: [edit(4, { textDocument: v(4, 'file:///ws/other.py') })] }, v(4), v(4))).toBeUndefined();
    expect(editFor({ edits: [edit()] }, v(4), v(5))).toBeUndefined();
    expect(editFor({ edits: [edit()] }, v(4), v(4, 'file:///ws/other.py'))).toBeUndefined();
  });

  it('shows nothing for an empty, null or malformed answer', () => {
    for (const result of [{ edits: [] }, null, undefined, {}, { edits: 'x' }, { edits: [{ text: 'a' }] },
      { edits: [{ ...edit(), text: undefined }] }, { edits: [{ ...edit(), range: range(-1, 0, 0, 0) }] },
      { edits: [{ ...edit(), range: { start: { line: 1.5, character: 0 }, end: { line: 2, character: 0 } } }] }]) {
      expect(editFor(result, v(4), v(4)), JSON.stringify(result)).toBeUndefined();
    }
  });
});

describe('next edits: Tab jumps to an edit away from the cursor, then applies it', () => {
  it('jumps from a line above or below the edit, applies on its lines', () => {
    const r = range(2, 4, 3, 1);
    expect([0, 1, 2, 3, 4].map((line) => [isAway(line, r), tabAction(line, r)])).toEqual([
      [true, 'jump'], [true, 'jump'], [false, 'apply'], [false, 'apply'], [true, 'jump']]);
  });

  it('puts the cursor after the new text once applied', () => {
    expect(endOf({ line: 2, character: 4 }, 'count')).toEqual({ line: 2, character: 9 });
    expect(endOf({ line: 2, character: 4 }, '')).toEqual({ line: 2, character: 4 });
    expect(endOf({ line: 2, character: 4 }, 'a\n    bc')).toEqual({ line: 3, character: 6 });
  });

  it('shows the new text on one line beside the old, cut when long', () => {
    expect(hint('count')).toBe('count');
    expect(hint('if x:\n    y()')).toBe('if x: ⏎     y()');
    expect(hint('x'.repeat(100))).toBe(`${'x'.repeat(79)}…`);
  });
});

describe('next edits: when the server is asked', () => {
  it('once after a pause in typing, for the document as it is then; nothing while typing goes on', () => {
    const h = harness();
    const renders = h.renders();
    h.change();
    h.change();
    h.change();
    expect(h.asked).toEqual([]);
    expect(h.pending()).toBe(1);
    expect(h.renders(), 'typing with nothing shown redraws nothing').toBe(renders);
    h.doc.version = 7;
    h.fire();
    expect(h.asked.map((a) => a.doc)).toEqual([v(7)]);
    expect(h.state.state).toBe('working');
  });

  it('a change cancels the request in flight and what is shown', async () => {
    const h = harness();
    h.change();
    h.fire();
    const first = h.asked[0];
    h.change();
    expect(first.signal.aborted).toBe(true);
    expect(h.state.answered({ edits: [edit()] }, v(4), v(4), first.signal)).toBeUndefined();
    expect(h.state.shown).toBeUndefined();
    h.fire();
    const second = h.asked[1];
    expect(h.state.answered({ edits: [edit()] }, v(4), v(4), second.signal)).toEqual(edit());
    second.answer();
    await Promise.resolve();
    expect(h.state.state).toBe('on');
    h.change();
    expect(h.state.shown).toBeUndefined();
  });

  it('never while off or while the server does not offer next edits; turning off cancels', () => {
    const off = harness(false);
    off.change();
    expect(off.pending()).toBe(0);
    expect(off.state.state).toBe('off');
    const h = harness();
    h.change();
    h.fire();
    h.state.setEnabled(false);
    expect(h.asked[0].signal.aborted).toBe(true);
    h.state.setAvailable(false);
    expect(h.state.visible).toBe(false);
    h.state.setEnabled(true);
    h.change();
    expect(h.pending()).toBe(0);
  });
});

describe('next edits beside ghost text: never both, the first shown wins', () => {
  it('ghost text shown at a version keeps the server from being asked for it, until the text changes', () => {
    const h = harness();
    h.change();
    h.state.ghostAnswered(v(4), 1);
    h.fire();
    expect(h.asked).toEqual([]);
    h.doc.version = 5;
    h.change();
    h.fire();
    expect(h.asked.map((a) => a.doc)).toEqual([v(5)]);
  });

  it('an edit answered after ghost text showed is dropped; an empty ghost answer does not block', () => {
    const h = harness();
    h.change();
    h.fire();
    h.state.ghostAnswered(v(4), 0);
    h.state.ghostAnswered(v(4), 2);
    expect(h.state.answered({ edits: [edit()] }, v(4), v(4), h.asked[0].signal)).toBeUndefined();
    h.state.ghostAnswered(v(4), 0);  // the provider answered nothing there now
    expect(h.state.answered({ edits: [edit()] }, v(4), v(4), h.asked[0].signal)).toEqual(edit());
  });

  it('an edit shown keeps ghost text out of its document (not out of others) until it is gone', () => {
    const h = harness();
    h.change();
    h.fire();
    h.state.answered({ edits: [edit()] }, v(4), v(4), h.asked[0].signal);
    expect(h.state.ghostAllowed(v(4))).toBe(false);
    expect(h.state.ghostAllowed(v(1, 'file:///ws/other.py'))).toBe(true);
    h.state.stop();  // Esc
    expect(h.state.ghostAllowed(v(4))).toBe(true);
  });
});

describe('next edits: the status bar item', () => {
  it('looks on, working and off, each with its own icon, tooltip and label', () => {
    expect(nextEditLook('on')).toEqual({ text: '$(arrow-swap) Next edit', label: 'Agent next edits: on',
      tooltip: 'Agent next-edit suggestions: on. Click to turn them off.' });
    expect(nextEditLook('working').label).toBe('Agent next edits: working');
    expect(nextEditLook('off')).toEqual({ text: '$(circle-slash) Next edit', label: 'Agent next edits: off',
      tooltip: 'Agent next-edit suggestions: off. Click to turn them on.' });
  });
});
