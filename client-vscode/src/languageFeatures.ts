/**
 * Answers the server's `agent/languageFeature {method, params}` (PROTOCOL §9) with what VS Code's *other*
 * language providers answer to that standard request — the TypeScript features built into VS Code, pyright,
 * rust-analyzer… — through VS Code's built-in `vscode.execute*Provider` commands, and converts their answers to
 * the LSP result shapes. VS Code merges the answers of every provider of a kind; the commands read the editor's
 * buffers, so unsaved text counts. Positions are UTF-16 on both sides (the encoding vscode-languageclient
 * negotiates), so they pass through unchanged.
 *
 * agent-lsp is itself one of VS Code's providers (it offers a hover). Its own answer is kept out: while a
 * request is being answered, `OwnProviders.middleware` makes the agent-lsp client's providers answer nothing
 * for that very document and position, so the commands see only the other providers.
 *
 * The conversions are written here, not taken from vscode-languageclient's code2ProtocolConverter: it has no
 * converter for Hover, DocumentSymbol, LocationLink or WorkspaceEdit. They read fields only (no instanceof), so
 * they convert VS Code's objects and plain ones alike.
 */
import * as vscode from 'vscode';
import type {
  CallHierarchyIncomingCall, CallHierarchyItem, CallHierarchyOutgoingCall, DocumentSymbol, Hover, Location,
  LocationLink, Middleware, Position, Range, SymbolInformation, SymbolKind, SymbolTag, TextEdit, WorkspaceEdit,
} from 'vscode-languageclient';
import { type CancellationToken, ResponseError } from 'vscode-jsonrpc';



const INVALID_PARAMS = -32602;
const REQUEST_FAILED = -32803;
const REQUEST_CANCELLED = -32800;

// ---- VS Code → LSP ------------------------------------------------------------------------------------------

export function toPosition(p: vscode.Position): Position {
  return { line: p.line, character: p.character };
}

export function toRange(r: vscode.Range): Range {
  return { start: toPosition(r.start), end: toPosition(r.end) };
}

export function toLocation(l: vscode.Location): Location {
  return { uri: l.uri.toString(), range: toRange(l.range) };
}

export function toLocationLink(l: vscode.LocationLink): LocationLink {
  const link: LocationLink = {
    targetUri: l.targetUri.toString(),
    targetRange: toRange(l.targetRange),
    targetSelectionRange: toRange(l.targetSelectionRange ?? l.targetRange),
  };
  if (l.originSelectionRange) link.originSelectionRange = toRange(l.originSelectionRange);
  return link;
}

function isLink(l: vscode.Location | vscode.LocationLink): l is vscode.LocationLink {
  return 'targetUri' in l;
}

const rangeKey = (r: Range) => `${r.start.line}:${r.start.character}-${r.end.line}:${r.end.character}`;

/** A definition-like answer: LocationLink[] when every provider gave links, else Location[] (a link becomes
 * its target's name: targetSelectionRange); duplicates of several providers once; null when none. */
export function toLocations(items: readonly (vscode.Location | vscode.LocationLink)[] | null | undefined):
  Location[] | LocationLink[] | null {
  if (!items?.length) return null;
  if (items.every(isLink)) {
    const links = items.map(toLocationLink);
    return links.filter((l, i) => links.findIndex((o) => o.targetUri === l.targetUri
      && rangeKey(o.targetSelectionRange) === rangeKey(l.targetSelectionRange)) === i);
  }
  const locations = items.map((l) => (isLink(l)
    ? { uri: l.targetUri.toString(), range: toRange(l.targetSelectionRange ?? l.targetRange) } : toLocation(l)));
  return locations.filter((l, i) => locations.findIndex((o) => o.uri === l.uri && rangeKey(o.range) === rangeKey(l.range)) === i);
}

/** One hover part as markdown: a MarkdownString's text, a plain string, or a `{language, value}` code block. */
function hoverPart(part: vscode.MarkdownString | vscode.MarkedString): string {
  if (typeof part === 'string') return part;
  if ('language' in part) return `\`\`\`${part.language}\n${part.value}\n\`\`\``;
  return part.value;
}

/** The hovers of every provider as one markdown Hover (providers separated by a rule, as VS Code shows them);
 * the first range given; null when none says anything. */
export function toHover(hovers: readonly vscode.Hover[] | null | undefined): Hover | null {
  const texts = (hovers ?? [])
    .map((h) => h.contents.map(hoverPart).map((t) => t.trim()).filter(Boolean).join('\n\n'))
    .filter(Boolean);
  if (!texts.length) return null;
  const hover: Hover = { contents: { kind: 'markdown', value: texts.join('\n\n---\n\n') } };
  const range = hovers?.find((h) => h.range)?.range;
  if (range) hover.range = toRange(range);
  return hover;
}

/** vscode.SymbolKind counts from 0 (File), LSP's from 1. */
export function toSymbolKind(kind: vscode.SymbolKind): SymbolKind {
  return (kind + 1) as SymbolKind;
}

/** SymbolTag.Deprecated is 1 on both sides. */
function withTags<T extends object>(out: T, tags: readonly vscode.SymbolTag[] | undefined): T {
  return tags?.length ? { ...out, tags: [...tags] as SymbolTag[] } : out;
}

export function toSymbolInformation(s: vscode.SymbolInformation): SymbolInformation {
  const out: SymbolInformation = { name: s.name, kind: toSymbolKind(s.kind), location: toLocation(s.location) };
  if (s.containerName) out.containerName = s.containerName;
  return withTags(out, s.tags);
}

export function toDocumentSymbol(s: vscode.DocumentSymbol): DocumentSymbol {
  const out: DocumentSymbol = {
    name: s.name, kind: toSymbolKind(s.kind), range: toRange(s.range), selectionRange: toRange(s.selectionRange),
  };
  if (s.detail) out.detail = s.detail;
  if (s.children?.length) out.children = s.children.map(toDocumentSymbol);
  return withTags(out, s.tags);
}

/** executeDocumentSymbolProvider answers objects that are both DocumentSymbol and SymbolInformation when a
 * provider gave an outline: the outline is kept (DocumentSymbol[]), else SymbolInformation[]; null when none. */
export function toDocumentSymbols(items: readonly (vscode.DocumentSymbol | vscode.SymbolInformation)[] | null | undefined):
  DocumentSymbol[] | SymbolInformation[] | null {
  if (!items?.length) return null;
  const outline = (s: vscode.DocumentSymbol | vscode.SymbolInformation): s is vscode.DocumentSymbol =>
    'selectionRange' in s && 'children' in s;
  if (items.every(outline)) return items.map(toDocumentSymbol);
  return (items as vscode.SymbolInformation[]).map(toSymbolInformation);
}

export function toWorkspaceSymbols(items: readonly vscode.SymbolInformation[] | null | undefined): SymbolInformation[] | null {
  return items?.length ? items.map(toSymbolInformation) : null;
}

export function toCallHierarchyItem(i: vscode.CallHierarchyItem): CallHierarchyItem {
  const out: CallHierarchyItem = {
    name: i.name, kind: toSymbolKind(i.kind), uri: i.uri.toString(), range: toRange(i.range),
    selectionRange: toRange(i.selectionRange),
  };
  if (i.detail) out.detail = i.detail;
  return withTags(out, i.tags);
}

export function toIncomingCalls(calls: readonly vscode.CallHierarchyIncomingCall[] | null | undefined): CallHierarchyIncomingCall[] | null {
  return calls?.length ? calls.map((c) => ({ from: toCallHierarchyItem(c.from), fromRanges: c.fromRanges.map(toRange) })) : null;
}

export function toOutgoingCalls(calls: readonly vscode.CallHierarchyOutgoingCall[] | null | undefined): CallHierarchyOutgoingCall[] | null {
  return calls?.length ? calls.map((c) => ({ to: toCallHierarchyItem(c.to), fromRanges: c.fromRanges.map(toRange) })) : null;
}

/** A WorkspaceEdit's text edits as LSP `changes` (uri → TextEdit[]); null when it changes nothing. */
export function toWorkspaceEdit(edit: vscode.WorkspaceEdit | null | undefined): WorkspaceEdit | null {
  const changes: Record<string, TextEdit[]> = {};
  for (const [uri, edits] of edit?.entries() ?? []) {
    const text = edits.filter((e): e is vscode.TextEdit => 'newText' in e)
      .map((e) => ({ range: toRange(e.range), newText: e.newText }));
    if (text.length) changes[uri.toString()] = [...(changes[uri.toString()] ?? []), ...text];
  }
  return Object.keys(changes).length ? { changes } : null;
}

/** vscode.prepareRename's `{range, placeholder}` (or a bare Range) as LSP's; null when there is none. */
export function toPrepareRename(value: vscode.Range | { range: vscode.Range; placeholder: string } | null | undefined):
  { range: Range; placeholder: string } | Range | null {
  if (!value) return null;
  if ('placeholder' in value) return { range: toRange(value.range), placeholder: value.placeholder };
  return toRange(value);
}

// ---- LSP params → VS Code -----------------------------------------------------------------------------------

function invalid(field: string, why: string): ResponseError<void> {
  return new ResponseError(INVALID_PARAMS, `${field}: ${why}`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function uriAt(value: unknown, field: string): vscode.Uri {
  if (typeof value !== 'string' || !value) throw invalid(field, 'a document URI is required');
  try {
    return vscode.Uri.parse(value, true);
  } catch {
    throw invalid(field, `not a URI: ${value}`);
  }
}

function positionAt(value: unknown, field: string): vscode.Position {
  if (!isObject(value)) throw invalid(field, 'a position {line, character} is required');
  for (const key of ['line', 'character'] as const) {
    const n = value[key];
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw invalid(`${field}.${key}`, 'a non-negative integer is required');
  }
  return new vscode.Position(value.line as number, value.character as number);
}

function objectAt(value: unknown, field: string): Record<string, unknown> {
  if (!isObject(value)) throw invalid(field, 'an object is required');
  return value;
}

/** `{textDocument: {uri}, position}` of a positional request. */
export function documentPosition(params: unknown): { uri: vscode.Uri; position: vscode.Position } {
  const p = objectAt(params, 'params');
  return {
    uri: uriAt(objectAt(p.textDocument, 'params.textDocument').uri, 'params.textDocument.uri'),
    position: positionAt(p.position, 'params.position'),
  };
}

// ---- agent-lsp's own providers ------------------------------------------------------------------------------

/** The key of one question: what a provider is asked about. */
export const positionKey = (uri: string, p: { line: number; character: number }) => `${uri}@${p.line}:${p.character}`;
const documentKey = (uri: string) => `${uri}@outline`;
const queryKey = (query: string) => `workspace/symbol?${query}`;

/**
 * The questions being answered for the server right now. While one is, the agent-lsp client's own providers
 * answer nothing to exactly that question (same document and position, same query), so the server's hover
 * never comes back to it as if another language server had said it; the user's own hovers elsewhere are
 * unaffected.
 */
export class OwnProviders {
  private readonly asking = new Map<string, number>();

  /** Runs `ask` with agent-lsp's providers quiet for `key`. */
  async around<T>(key: string, ask: () => Thenable<T>): Promise<T> {
    this.asking.set(key, (this.asking.get(key) ?? 0) + 1);
    try {
      return await ask();
    } finally {
      const n = (this.asking.get(key) ?? 1) - 1;
      if (n > 0) this.asking.set(key, n); else this.asking.delete(key);
    }
  }

  quiet(key: string): boolean {
    return this.asking.has(key);
  }

  /** The client middleware that keeps agent-lsp's providers out of the questions being answered. */
  middleware(): Middleware {
    const at = (d: vscode.TextDocument, p: vscode.Position) => this.quiet(positionKey(d.uri.toString(), p));
    return {
      provideHover: (d, p, t, next) => (at(d, p) ? undefined : next(d, p, t)),
      provideDefinition: (d, p, t, next) => (at(d, p) ? undefined : next(d, p, t)),
      provideTypeDefinition: (d, p, t, next) => (at(d, p) ? undefined : next(d, p, t)),
      provideImplementation: (d, p, t, next) => (at(d, p) ? undefined : next(d, p, t)),
      provideReferences: (d, p, o, t, next) => (at(d, p) ? undefined : next(d, p, o, t)),
      prepareCallHierarchy: (d, p, t, next) => (at(d, p) ? undefined : next(d, p, t)),
      prepareRename: (d, p, t, next) => (at(d, p) ? undefined : next(d, p, t)),
      provideRenameEdits: (d, p, n, t, next) => (at(d, p) ? undefined : next(d, p, n, t)),
      provideDocumentSymbols: (d, t, next) => (this.quiet(documentKey(d.uri.toString())) ? undefined : next(d, t)),
      provideWorkspaceSymbols: (q, t, next) => (this.quiet(queryKey(q)) ? undefined : next(q, t)),
    };
  }
}

// ---- the answer ---------------------------------------------------------------------------------------------

async function run<T>(command: string, ...args: unknown[]): Promise<T | undefined> {
  try {
    return await vscode.commands.executeCommand<T>(command, ...args);
  } catch (e) {
    // A provider's refusal ("You cannot rename this element.") is what the model should read.
    throw new ResponseError(REQUEST_FAILED, e instanceof Error ? e.message : String(e));
  }
}

/** Loads the document (the open buffer when there is one) so its language's providers are active. */
async function open(uri: vscode.Uri): Promise<void> {
  try {
    await vscode.workspace.openTextDocument(uri);
  } catch (e) {
    throw new ResponseError(REQUEST_FAILED, `cannot open ${uri.toString()}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Runs a command about a position, with agent-lsp's own providers quiet there. */
async function atPosition<T>(own: OwnProviders, command: string, uri: vscode.Uri, position: vscode.Position,
  ...more: unknown[]): Promise<T | undefined> {
  await open(uri);
  return own.around(positionKey(uri.toString(), position), () => run<T>(command, uri, position, ...more));
}

const sameStart = (a: Range, b: Range) => a.start.line === b.start.line && a.start.character === b.start.character;

/** The vscode CallHierarchyItem for an LSP one: VS Code's incoming/outgoing commands take only items its own
 * prepareCallHierarchy made, so it is prepared again at the item's selectionRange start and matched by name
 * and range. */
async function preparedItem(own: OwnProviders, params: unknown): Promise<vscode.CallHierarchyItem | undefined> {
  const item = objectAt(objectAt(params, 'params').item, 'params.item');
  const uri = uriAt(item.uri, 'params.item.uri');
  if (typeof item.name !== 'string') throw invalid('params.item.name', 'a string is required');
  const selection = objectAt(item.selectionRange, 'params.item.selectionRange');
  const start = positionAt(selection.start, 'params.item.selectionRange.start');
  const prepared = await atPosition<vscode.CallHierarchyItem | vscode.CallHierarchyItem[]>(
    own, 'vscode.prepareCallHierarchy', uri, start);
  const items = prepared === undefined ? [] : Array.isArray(prepared) ? prepared : [prepared];
  const wanted = { start: toPosition(start), end: toPosition(start) };
  return items.find((i) => i.name === item.name && sameStart(toRange(i.selectionRange), wanted))
    ?? items.find((i) => i.name === item.name)
    ?? (items.length === 1 ? items[0] : undefined);
}

/** References without the declaration: what a definition request names at that position is left out
 * (VS Code's reference command always includes it). */
async function withoutDeclaration(own: OwnProviders, uri: vscode.Uri, position: vscode.Position,
  references: Location[]): Promise<Location[]> {
  const definitions = toLocations(await atPosition<(vscode.Location | vscode.LocationLink)[]>(
    own, 'vscode.executeDefinitionProvider', uri, position)) ?? [];
  const declared = definitions.map((d) => ('targetUri' in d ? { uri: d.targetUri, range: d.targetSelectionRange } : d));
  return references.filter((r) => !declared.some((d) => d.uri === r.uri && sameStart(d.range, r.range)));
}

/** The answer to agent/languageFeature's `{method, params}` (params checked here, field by field). */
async function answer(request: { method: string; params: unknown }, own: OwnProviders): Promise<unknown> {
  const { method, params } = request;
  switch (method) {
    case 'textDocument/definition':
    case 'textDocument/typeDefinition':
    case 'textDocument/implementation': {
      const { uri, position } = documentPosition(params);
      const command = { 'textDocument/definition': 'vscode.executeDefinitionProvider',
        'textDocument/typeDefinition': 'vscode.executeTypeDefinitionProvider',
        'textDocument/implementation': 'vscode.executeImplementationProvider' }[method as string]!;
      return toLocations(await atPosition(own, command, uri, position));
    }
    case 'textDocument/references': {
      const { uri, position } = documentPosition(params);
      const context = (params as { context?: unknown }).context;
      if (context !== undefined && !isObject(context)) throw invalid('params.context', 'an object is required');
      const includeDeclaration = context?.includeDeclaration ?? true;
      if (typeof includeDeclaration !== 'boolean') throw invalid('params.context.includeDeclaration', 'a boolean is required');
      const found = toLocations(await atPosition<vscode.Location[]>(own, 'vscode.executeReferenceProvider', uri, position)) as Location[] | null;
      if (!found || includeDeclaration) return found;
      return withoutDeclaration(own, uri, position, found);
    }
    case 'textDocument/hover': {
      const { uri, position } = documentPosition(params);
      return toHover(await atPosition<vscode.Hover[]>(own, 'vscode.executeHoverProvider', uri, position));
    }
    case 'textDocument/documentSymbol': {
      const p = objectAt(params, 'params');
      const uri = uriAt(objectAt(p.textDocument, 'params.textDocument').uri, 'params.textDocument.uri');
      await open(uri);
      return toDocumentSymbols(await own.around(documentKey(uri.toString()),
        () => run<(vscode.DocumentSymbol | vscode.SymbolInformation)[]>('vscode.executeDocumentSymbolProvider', uri)));
    }
    case 'workspace/symbol': {
      const query = objectAt(params, 'params').query;
      if (typeof query !== 'string') throw invalid('params.query', 'a string is required');
      return toWorkspaceSymbols(await own.around(queryKey(query),
        () => run<vscode.SymbolInformation[]>('vscode.executeWorkspaceSymbolProvider', query)));
    }
    case 'textDocument/prepareCallHierarchy': {
      const { uri, position } = documentPosition(params);
      const items = await atPosition<vscode.CallHierarchyItem | vscode.CallHierarchyItem[]>(own, 'vscode.prepareCallHierarchy', uri, position);
      const list = items === undefined ? [] : Array.isArray(items) ? items : [items];
      return list.length ? list.map(toCallHierarchyItem) : null;
    }
    case 'callHierarchy/incomingCalls': {
      const item = await preparedItem(own, params);
      return item ? toIncomingCalls(await run<vscode.CallHierarchyIncomingCall[]>('vscode.provideIncomingCalls', item)) : null;
    }
    case 'callHierarchy/outgoingCalls': {
      const item = await preparedItem(own, params);
      return item ? toOutgoingCalls(await run<vscode.CallHierarchyOutgoingCall[]>('vscode.provideOutgoingCalls', item)) : null;
    }
    case 'textDocument/prepareRename': {
      const { uri, position } = documentPosition(params);
      return toPrepareRename(await atPosition<{ range: vscode.Range; placeholder: string }>(own, 'vscode.prepareRename', uri, position));
    }
    case 'textDocument/rename': {
      const { uri, position } = documentPosition(params);
      const newName = (params as { newName?: unknown }).newName;
      if (typeof newName !== 'string' || !newName) throw invalid('params.newName', 'a non-empty string is required');
      return toWorkspaceEdit(await atPosition<vscode.WorkspaceEdit>(own, 'vscode.executeDocumentRenameProvider', uri, position, newName));
    }
    default:
      throw invalid('method', `${String(method)} is not one this client answers`);
  }
}

/** The handler of agent/languageFeature: the answer, a -32602 naming a bad field, -32803 with a provider's
 * own reason, or -32800 as soon as the server cancels (VS Code's commands cannot be stopped; their late answer
 * is dropped). */
export async function answerLanguageFeature(request: unknown, own: OwnProviders, token?: CancellationToken): Promise<unknown> {
  if (!isObject(request)) throw invalid('params', 'an object {method, params} is required');
  if (typeof request.method !== 'string') throw invalid('method', 'a string is required');
  const answering = answer({ method: request.method, params: request.params }, own);
  if (!token) return answering;
  if (token.isCancellationRequested) throw new ResponseError(REQUEST_CANCELLED, 'cancelled');
  let listener: { dispose(): void } | undefined;
  const cancelled = new Promise<never>((_, reject) => {
    listener = token.onCancellationRequested(() => reject(new ResponseError(REQUEST_CANCELLED, 'cancelled')));
  });
  answering.catch(() => undefined);  // after a cancel its failure is no one's
  try {
    return await Promise.race([answering, cancelled]);
  } finally {
    listener?.dispose();
  }
}
