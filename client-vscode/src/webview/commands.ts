/**
 * The input's slash commands: `/` at the start of the message opens the list of agent/commands and the skills
 * (name, argument hint or `skill`, description; typing filters by name, arrows and Enter or Tab pick, Escape
 * closes); a pick puts `/name ` in the input, ready for its arguments. The server runs the command (or the skill)
 * when the message is sent.
 */
import type { FromWebview, SlashChoice } from '../messages';
import { el } from './render';

export class CommandInput {
  /** The commands as the extension last sent them; `null`: the server has none (no list opens). */
  private commands: SlashChoice[] | null = [];
  /** The name being typed after the `/`, and the highlighted choice; undefined while the list is closed. */
  private picking?: { query: string; active: number };

  constructor(private readonly prompt: HTMLTextAreaElement, private readonly list: HTMLElement,
    private readonly post: (m: FromWebview) => void) {
    prompt.addEventListener('input', () => this.onInput());
    prompt.addEventListener('blur', () => this.close());
  }

  setCommands(commands: SlashChoice[] | null): void {
    this.commands = commands;
    this.draw();
  }

  close(): void {
    this.picking = undefined;
    this.draw();
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
      this.draw();
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
    const p = this.prompt;
    const m = p.selectionStart === p.selectionEnd ? /^\/([^\s/]*)$/.exec(p.value.slice(0, p.selectionStart)) : null;
    if (!m || this.commands === null) return this.close();
    if (!this.picking) this.post({ type: 'listCommands' });  // a fresh list each time it opens (command files change)
    this.picking = { query: m[1], active: this.picking?.query === m[1] ? this.picking.active : 0 };
    this.draw();
  }

  /** The commands whose name starts with what follows the `/` (then those that contain it). */
  private matching(): SlashChoice[] {
    const q = this.picking?.query.toLowerCase() ?? '';
    const all = this.commands ?? [];
    return [...all.filter((c) => c.name.toLowerCase().startsWith(q)),
      ...all.filter((c) => !c.name.toLowerCase().startsWith(q) && c.name.toLowerCase().includes(q))];
  }

  /** Replaces the `/word` with `/name ` (what follows it in the input stays). */
  private pick(c: SlashChoice): void {
    const p = this.prompt;
    const rest = p.value.slice(p.selectionStart).replace(/^\S*/, '').replace(/^ /, '');
    const head = `/${c.name} `;
    p.value = head + rest;
    p.setSelectionRange(head.length, head.length);
    this.close();
    p.dispatchEvent(new Event('input'));  // the page saves its draft
  }

  private draw(): void {
    const picking = this.picking;
    const shown = picking ? this.matching() : [];
    this.list.hidden = shown.length === 0;
    if (!picking) return void this.list.replaceChildren();
    picking.active = Math.min(picking.active, Math.max(shown.length - 1, 0));
    this.list.replaceChildren(...shown.map((c, i) => {
      const item = el('li', 'command-choice');
      item.setAttribute('role', 'option');
      item.setAttribute('aria-selected', String(i === picking.active));
      item.title = `${c.description} (${c.skill ? `${c.source} skill` : c.source})`;
      item.append(el('span', 'command-name', `/${c.name}`));
      if (c.argumentHint) item.append(el('span', 'command-hint', c.argumentHint));
      if (c.skill) item.append(el('span', 'command-hint', 'skill'));
      item.append(el('span', 'command-description', c.description));
      item.addEventListener('mousedown', (e) => { e.preventDefault(); this.pick(c); });  // keeps the focus in the input
      return item;
    }));
    this.list.querySelector('[aria-selected="true"]')?.scrollIntoView({ block: 'nearest' });
  }
}
