/**
 * The input's @-mentions: typing `@` opens a list of what the extension offers (arrows and Enter or Tab pick,
 * Escape closes, typing filters); a pick replaces the `@word` with a chip above the input, which × removes.
 * The chips go with the next message.
 */
import type { FromWebview, MentionChoice } from '../messages';
import { el } from './render';

/** `@src/app.py`, `@selection app.py:3-7`, `@diagnostics app.py`. */
export const chipText = (c: MentionChoice) => (c.kind === 'file' ? `@${c.label}` : `@${c.kind} ${c.label}`);

export class MentionInput {
  /** The mentions the next message carries. */
  chips: MentionChoice[];
  /** The list's choices, as the extension last sent them. */
  private choices: MentionChoice[] = [];
  /** The `@` being completed: where it starts in the input, what follows it, and the highlighted choice. */
  private picking?: { start: number; query: string; active: number };

  /** `onChange`: the chips changed (the page saves its state). */
  constructor(private readonly prompt: HTMLTextAreaElement, private readonly chipsEl: HTMLElement,
    private readonly list: HTMLElement, private readonly post: (m: FromWebview) => void,
    private readonly onChange: () => void, chips: MentionChoice[] = []) {
    this.chips = chips;
    this.drawChips();
    prompt.addEventListener('input', () => this.onInput());
    prompt.addEventListener('blur', () => this.close());
  }

  setChoices(choices: MentionChoice[]): void {
    this.choices = choices;
    this.drawList();
  }

  setChips(chips: MentionChoice[]): void {
    this.chips = chips;
    this.drawChips();
    this.onChange();
  }

  close(): void {
    this.picking = undefined;
    this.drawList();
  }

  /** A key in the input while the list is open: true when the list used it (the page must not). */
  onKeydown(e: KeyboardEvent): boolean {
    const picking = this.picking;
    if (!picking || e.isComposing) return false;
    const n = this.matching().length;
    if (e.key === 'Escape') {
      this.close();
    } else if (n && (e.key === 'ArrowDown' || e.key === 'ArrowUp')) {
      picking.active = (picking.active + (e.key === 'ArrowDown' ? 1 : n - 1)) % n;
      this.drawList();
    } else if (n && (e.key === 'Enter' || e.key === 'Tab') && !e.shiftKey) {
      this.pick(this.matching()[picking.active]);
    } else {
      return false;
    }
    e.preventDefault();
    e.stopPropagation();  // Escape here closes the list; it does not stop the chat
    return true;
  }

  private onInput(): void {
    const at = this.atCaret();
    if (!at) return this.close();
    if (!this.picking) this.post({ type: 'listMentions' });  // a fresh list each time it opens (editors and files change)
    this.picking = { ...at, active: this.picking?.query === at.query ? this.picking.active : 0 };
    this.drawList();
  }

  /** The `@word` just before the caret, if the user is typing one. */
  private atCaret(): { start: number; query: string } | undefined {
    const p = this.prompt;
    if (p.selectionStart !== p.selectionEnd) return undefined;
    const m = /(?:^|\s)@([^\s@]*)$/.exec(p.value.slice(0, p.selectionStart));
    return m ? { start: p.selectionStart - m[1].length - 1, query: m[1] } : undefined;
  }

  /** The choices matching what follows the `@` (at most 50). */
  private matching(): MentionChoice[] {
    const q = this.picking?.query.toLowerCase() ?? '';
    return this.choices.filter((c) => `${c.kind} ${c.label}`.toLowerCase().includes(q)).slice(0, 50);
  }

  /** Replaces the `@word` with a chip (once per mention). */
  private pick(c: MentionChoice): void {
    const start = this.picking?.start ?? this.prompt.selectionStart;
    const p = this.prompt;
    p.value = p.value.slice(0, start) + p.value.slice(p.selectionStart);
    p.setSelectionRange(start, start);
    this.close();
    const same = (x: MentionChoice) => x.kind === c.kind && x.uri === c.uri && JSON.stringify(x.range) === JSON.stringify(c.range);
    this.setChips(this.chips.some(same) ? this.chips : [...this.chips, c]);
  }

  private drawList(): void {
    const picking = this.picking;
    const shown = picking ? this.matching() : [];
    this.list.hidden = shown.length === 0;
    if (!picking) return void this.list.replaceChildren();
    picking.active = Math.min(picking.active, Math.max(shown.length - 1, 0));
    this.list.replaceChildren(...shown.map((c, i) => {
      const item = el('li', 'mention-choice');
      item.setAttribute('role', 'option');
      item.setAttribute('aria-selected', String(i === picking.active));
      item.title = c.uri;
      item.append(el('span', 'mention-kind', c.kind), el('span', 'mention-label', c.label));
      item.addEventListener('mousedown', (e) => { e.preventDefault(); this.pick(c); });  // keeps the focus in the input
      return item;
    }));
    this.list.querySelector('[aria-selected="true"]')?.scrollIntoView({ block: 'nearest' });
  }

  private drawChips(): void {
    this.chipsEl.hidden = this.chips.length === 0;
    this.chipsEl.replaceChildren(...this.chips.map((c) => {
      const chip = el('span', `chip ${c.kind}`);
      chip.title = c.uri;
      const remove = el('button', 'icon chip-remove', '×');
      remove.title = `Remove ${chipText(c)}`;
      remove.setAttribute('aria-label', remove.title);
      remove.addEventListener('click', () => { this.setChips(this.chips.filter((x) => x !== c)); this.prompt.focus(); });
      chip.append(el('span', 'chip-label', chipText(c)), remove);
      return chip;
    }));
  }
}
