import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CancellationTokenSource, ResponseError } from 'vscode-jsonrpc';
import * as vscode from 'vscode';
import {
  answerLanguageFeature, OwnProviders, positionKey, toCallHierarchyItem, toDocumentSymbols, toHover,
  toIncomingCalls, toLocations, toOutgoingCalls, toPrepareRename, toWorkspaceEdit, toWorkspaceSymbols,
} from './languageFeatures';

vi.mock('vscode');

const A = 'file:///w/src/a.ts';
const B = 'file:///w/src/b.ts';
const uri = (s: string) => vscode.Uri.parse(s);
const range = (l1: number, c1: number, l2: number, c2: number) => new vscode.Range(l1, c1, l2, c2);
const lsp = (l1: number, c1: number, l2: number, c2: number) => ({ start: { line: l1, character: c1 }, end: { line: l2, character: c2 } });

describe('VS Code answers → LSP shapes', () => {
  it('definitions: LocationLink[] when every provider gave links, duplicates once', () => {
    const link = { targetUri: uri(B), targetRange: range(0, 0, 2, 1), targetSelectionRange: range(0, 16, 0, 21), originSelectionRange: range(3, 9, 3, 14) };
    expect(toLocations([link, { ...link }])).toEqual([{
      targetUri: B, targetRange: lsp(0, 0, 2, 1), targetSelectionRange: lsp(0, 16, 0, 21), originSelectionRange: lsp(3, 9, 3, 14),
    }]);
  });

  it('definitions: Location[] when any provider gave Locations, a link becoming its target\'s name; null when none', () => {
    const link = { targetUri: uri(B), targetRange: range(0, 0, 2, 1), targetSelectionRange: range(0, 16, 0, 21) };
    expect(toLocations([new vscode.Location(uri(A), range(4, 2, 4, 7)), link, new vscode.Location(uri(B), range(0, 16, 0, 21))]))
      .toEqual([{ uri: A, range: lsp(4, 2, 4, 7) }, { uri: B, range: lsp(0, 16, 0, 21) }]);
    expect(toLocations([])).toBeNull();
    expect(toLocations(undefined)).toBeNull();
  });

  it('hover: every provider\'s parts as one markdown text, code blocks for {language, value}, the first range', () => {
    const hovers = [
      { contents: [new vscode.MarkdownString('```typescript\nfunction greet(name: string): string\n```'), 'Says hi.'] },
      { contents: [{ language: 'ts', value: 'let x: number' }, new vscode.MarkdownString('  ')], range: range(1, 4, 1, 9) },
      { contents: [] },
    ] as unknown as vscode.Hover[];
    expect(toHover(hovers)).toEqual({
      contents: { kind: 'markdown', value: '```typescript\nfunction greet(name: string): string\n```\n\nSays hi.\n\n---\n\n```ts\nlet x: number\n```' },
      range: lsp(1, 4, 1, 9),
    });
    expect(toHover([{ contents: [new vscode.MarkdownString('')] }] as unknown as vscode.Hover[])).toBeNull();
    expect(toHover([])).toBeNull();
  });

  it('document symbols: the outline with children, kinds counted from 1; flat SymbolInformation otherwise', () => {
    const method = new vscode.DocumentSymbol('greet', '(name)', vscode.SymbolKind.Method, range(2, 2, 4, 3), range(2, 2, 2, 7));
    const cls = new vscode.DocumentSymbol('Greeter', '', vscode.SymbolKind.Class, range(1, 0, 5, 1), range(1, 13, 1, 20));
    cls.children = [method];
    expect(toDocumentSymbols([cls])).toEqual([{
      name: 'Greeter', kind: 5, range: lsp(1, 0, 5, 1), selectionRange: lsp(1, 13, 1, 20),
      children: [{ name: 'greet', detail: '(name)', kind: 6, range: lsp(2, 2, 4, 3), selectionRange: lsp(2, 2, 2, 7) }],
    }]);
    const info = new vscode.SymbolInformation('greet', vscode.SymbolKind.Function, 'util', new vscode.Location(uri(A), range(0, 0, 2, 1)));
    expect(toDocumentSymbols([info])).toEqual([{ name: 'greet', kind: 12, containerName: 'util', location: { uri: A, range: lsp(0, 0, 2, 1) } }]);
    expect(toWorkspaceSymbols([info])).toEqual([{ name: 'greet', kind: 12, containerName: 'util', location: { uri: A, range: lsp(0, 0, 2, 1) } }]);
    expect(toDocumentSymbols([])).toBeNull();
    expect(toWorkspaceSymbols([])).toBeNull();
  });

  it('call hierarchy items and calls', () => {
    const item = new vscode.CallHierarchyItem(vscode.SymbolKind.Function, 'main', 'src/main.ts', uri(A), range(0, 0, 3, 1), range(0, 9, 0, 13));
    const expected = { name: 'main', kind: 12, detail: 'src/main.ts', uri: A, range: lsp(0, 0, 3, 1), selectionRange: lsp(0, 9, 0, 13) };
    expect(toCallHierarchyItem(item)).toEqual(expected);
    expect(toIncomingCalls([new vscode.CallHierarchyIncomingCall(item, [range(1, 2, 1, 7)])])).toEqual([{ from: expected, fromRanges: [lsp(1, 2, 1, 7)] }]);
    expect(toOutgoingCalls([new vscode.CallHierarchyOutgoingCall(item, [range(1, 2, 1, 7)])])).toEqual([{ to: expected, fromRanges: [lsp(1, 2, 1, 7)] }]);
    expect(toIncomingCalls([])).toBeNull();
  });

  it('rename: the WorkspaceEdit\'s text edits per uri; prepareRename\'s range and placeholder', () => {
    const edit = new vscode.WorkspaceEdit();
    edit.replace(uri(A), range(0, 16, 0, 21), 'welcome');
    edit.replace(uri(B), range(3, 9, 3, 14), 'welcome');
    edit.replace(uri(A), range(5, 0, 5, 5), 'welcome');
    expect(toWorkspaceEdit(edit)).toEqual({ changes: {
      [A]: [{ range: lsp(0, 16, 0, 21), newText: 'welcome' }, { range: lsp(5, 0, 5, 5), newText: 'welcome' }],
      [B]: [{ range: lsp(3, 9, 3, 14), newText: 'welcome' }],
    } });
    expect(toWorkspaceEdit(new vscode.WorkspaceEdit())).toBeNull();
    expect(toPrepareRename({ range: range(0, 16, 0, 21), placeholder: 'greet' })).toEqual({ range: lsp(0, 16, 0, 21), placeholder: 'greet' });
    expect(toPrepareRename(range(0, 16, 0, 21))).toEqual(lsp(0, 16, 0, 21));
    expect(toPrepareRename(undefined)).toBeNull();
  });
});

describe('agent/languageFeature', () => {
  const executeCommand = vi.mocked(vscode.commands.executeCommand) as unknown as ReturnType<typeof vi.fn>;
  let calls: unknown[][];
  let own: OwnProviders;
  /** The commands' answers, by command name. */
  const answer = (answers: Record<string, (...args: any[]) => unknown>) => executeCommand.mockImplementation(
    async (command: string, ...args: unknown[]) => {
      calls.push([command, ...args]);
      const a = answers[command];
      if (!a) throw new Error(`no answer for ${command}`);
      return a(...args);
    });
  const at = (u: string, line: number, character: number) => ({ textDocument: { uri: u }, position: { line, character } });

  beforeEach(() => {
    calls = [];
    own = new OwnProviders();
    vi.spyOn(vscode.workspace, 'openTextDocument').mockImplementation((async () => ({})) as never);
  });
  afterEach(() => vi.restoreAllMocks());

  it('definition: asks VS Code\'s definition providers at the LSP position, answers LSP locations', async () => {
    answer({ 'vscode.executeDefinitionProvider': () => [new vscode.Location(uri(B), range(0, 16, 0, 21))] });
    expect(await answerLanguageFeature({ method: 'textDocument/definition', params: at(A, 3, 10) }, own))
      .toEqual([{ uri: B, range: lsp(0, 16, 0, 21) }]);
    const [[command, u, p]] = calls as [[string, vscode.Uri, vscode.Position]];
    expect([command, u.toString(), p.line, p.character]).toEqual(['vscode.executeDefinitionProvider', A, 3, 10]);
    expect(vscode.workspace.openTextDocument).toHaveBeenCalledWith(expect.objectContaining({ path: '/w/src/a.ts' }));
  });

  it('typeDefinition and implementation use their own commands; nothing found is null', async () => {
    answer({ 'vscode.executeTypeDefinitionProvider': () => [], 'vscode.executeImplementationProvider': () => undefined });
    expect(await answerLanguageFeature({ method: 'textDocument/typeDefinition', params: at(A, 0, 0) }, own)).toBeNull();
    expect(await answerLanguageFeature({ method: 'textDocument/implementation', params: at(A, 0, 0) }, own)).toBeNull();
    expect(calls.map(([c]) => c)).toEqual(['vscode.executeTypeDefinitionProvider', 'vscode.executeImplementationProvider']);
  });

  it('references without the declaration leave out what the definition names', async () => {
    answer({
      'vscode.executeReferenceProvider': () => [
        new vscode.Location(uri(B), range(0, 16, 0, 21)),  // the declaration
        new vscode.Location(uri(A), range(3, 9, 3, 14)),
        new vscode.Location(uri(A), range(7, 2, 7, 7)),
      ],
      'vscode.executeDefinitionProvider': () => [{ targetUri: uri(B), targetRange: range(0, 0, 2, 1), targetSelectionRange: range(0, 16, 0, 21) }],
    });
    const refs = (includeDeclaration: boolean) => answerLanguageFeature(
      { method: 'textDocument/references', params: { ...at(A, 3, 10), context: { includeDeclaration } } }, own);
    expect(await refs(false)).toEqual([{ uri: A, range: lsp(3, 9, 3, 14) }, { uri: A, range: lsp(7, 2, 7, 7) }]);
    expect(await refs(true)).toHaveLength(3);
  });

  it('hover, document symbols, workspace symbols, prepareCallHierarchy, prepareRename, rename', async () => {
    const item = new vscode.CallHierarchyItem(vscode.SymbolKind.Function, 'greet', '', uri(B), range(0, 0, 2, 1), range(0, 16, 0, 21));
    const edit = new vscode.WorkspaceEdit();
    edit.replace(uri(B), range(0, 16, 0, 21), 'welcome');
    answer({
      'vscode.executeHoverProvider': () => [{ contents: [new vscode.MarkdownString('greet(name)')] }],
      'vscode.executeDocumentSymbolProvider': () => [new vscode.DocumentSymbol('greet', '', vscode.SymbolKind.Function, range(0, 0, 2, 1), range(0, 16, 0, 21))],
      'vscode.executeWorkspaceSymbolProvider': (query: string) => (query === 'gre'
        ? [new vscode.SymbolInformation('greet', vscode.SymbolKind.Function, '', new vscode.Location(uri(B), range(0, 0, 2, 1)))] : []),
      'vscode.prepareCallHierarchy': () => [item],
      'vscode.prepareRename': () => ({ range: range(0, 16, 0, 21), placeholder: 'greet' }),
      'vscode.executeDocumentRenameProvider': () => edit,
    });
    const ask = (method: string, params: unknown) => answerLanguageFeature({ method, params }, own);
    expect(await ask('textDocument/hover', at(B, 0, 17))).toEqual({ contents: { kind: 'markdown', value: 'greet(name)' } });
    expect(await ask('textDocument/documentSymbol', { textDocument: { uri: B } })).toEqual(
      [{ name: 'greet', kind: 12, range: lsp(0, 0, 2, 1), selectionRange: lsp(0, 16, 0, 21) }]);
    expect(await ask('workspace/symbol', { query: 'gre' })).toEqual(
      [{ name: 'greet', kind: 12, location: { uri: B, range: lsp(0, 0, 2, 1) } }]);
    expect(await ask('workspace/symbol', { query: 'zzz' })).toBeNull();
    expect(await ask('textDocument/prepareCallHierarchy', at(B, 0, 17))).toEqual(
      [{ name: 'greet', kind: 12, uri: B, range: lsp(0, 0, 2, 1), selectionRange: lsp(0, 16, 0, 21) }]);
    expect(await ask('textDocument/prepareRename', at(B, 0, 17))).toEqual({ range: lsp(0, 16, 0, 21), placeholder: 'greet' });
    expect(await ask('textDocument/rename', { ...at(B, 0, 17), newName: 'welcome' })).toEqual(
      { changes: { [B]: [{ range: lsp(0, 16, 0, 21), newText: 'welcome' }] } });
    expect(calls.at(-1)?.at(-1)).toBe('welcome');
  });

  it('incoming and outgoing calls: the item is prepared again at its selectionRange start, matched by name and range', async () => {
    const other = new vscode.CallHierarchyItem(vscode.SymbolKind.Variable, 'greeting', '', uri(B), range(0, 0, 0, 30), range(0, 4, 0, 12));
    const item = new vscode.CallHierarchyItem(vscode.SymbolKind.Function, 'greet', '', uri(B), range(0, 0, 2, 1), range(0, 16, 0, 21));
    const caller = new vscode.CallHierarchyItem(vscode.SymbolKind.Function, 'main', '', uri(A), range(2, 0, 5, 1), range(2, 9, 2, 13));
    answer({
      'vscode.prepareCallHierarchy': () => [other, item],
      'vscode.provideIncomingCalls': (i: unknown) => (i === item ? [new vscode.CallHierarchyIncomingCall(caller, [range(3, 2, 3, 7)])] : []),
      'vscode.provideOutgoingCalls': (i: unknown) => (i === item ? [new vscode.CallHierarchyOutgoingCall(caller, [range(1, 2, 1, 6)])] : []),
    });
    const lspItem = { name: 'greet', kind: 12, uri: B, range: lsp(0, 0, 2, 1), selectionRange: lsp(0, 16, 0, 21), data: { opaque: 1 } };
    const main = { name: 'main', kind: 12, uri: A, range: lsp(2, 0, 5, 1), selectionRange: lsp(2, 9, 2, 13) };
    expect(await answerLanguageFeature({ method: 'callHierarchy/incomingCalls', params: { item: lspItem } }, own))
      .toEqual([{ from: main, fromRanges: [lsp(3, 2, 3, 7)] }]);
    expect(await answerLanguageFeature({ method: 'callHierarchy/outgoingCalls', params: { item: lspItem } }, own))
      .toEqual([{ to: main, fromRanges: [lsp(1, 2, 1, 6)] }]);
    const prepared = calls.filter(([c]) => c === 'vscode.prepareCallHierarchy') as [string, vscode.Uri, vscode.Position][];
    expect(prepared.map(([, u, p]) => [u.toString(), p.line, p.character])).toEqual([[B, 0, 16], [B, 0, 16]]);
  });

  it('an item no provider prepares again answers null', async () => {
    answer({ 'vscode.prepareCallHierarchy': () => [] });
    const lspItem = { name: 'gone', kind: 12, uri: B, range: lsp(0, 0, 2, 1), selectionRange: lsp(0, 16, 0, 21) };
    expect(await answerLanguageFeature({ method: 'callHierarchy/incomingCalls', params: { item: lspItem } }, own)).toBeNull();
  });

  it('agent-lsp\'s own providers answer nothing to the question being answered, and only to it', async () => {
    const middleware = own.middleware();
    const doc = { uri: uri(A) } as vscode.TextDocument;
    const next = vi.fn(() => 'agent-lsp\'s hover');
    const token = new CancellationTokenSource().token as unknown as vscode.CancellationToken;
    const ownHover = (line: number, character: number) =>
      middleware.provideHover!(doc, new vscode.Position(line, character), token, next as never);
    answer({
      // what VS Code does: ask every hover provider, agent-lsp's among them
      'vscode.executeHoverProvider': () => [ownHover(3, 10), ownHover(4, 0)]
        .filter(Boolean).map((text) => ({ contents: [new vscode.MarkdownString(text as unknown as string)] })),
    });
    expect(await answerLanguageFeature({ method: 'textDocument/hover', params: at(A, 3, 10) }, own))
      .toEqual({ contents: { kind: 'markdown', value: 'agent-lsp\'s hover' } });  // the one at 4:0, a user's
    expect(next).toHaveBeenCalledTimes(1);
    expect(own.quiet(positionKey(A, { line: 3, character: 10 }))).toBe(false);
    expect(ownHover(3, 10)).toBe('agent-lsp\'s hover');
  });

  it('bad params are -32602 naming the field; an unknown method too', async () => {
    answer({});
    const code = async (request: unknown) => {
      const e = await answerLanguageFeature(request, own).then(() => undefined, (err: unknown) => err);
      expect(e).toBeInstanceOf(ResponseError);
      return [(e as ResponseError<void>).code, (e as ResponseError<void>).message.split(':')[0]];
    };
    expect(await code(null)).toEqual([-32602, 'params']);
    expect(await code({ params: {} })).toEqual([-32602, 'method']);
    expect(await code({ method: 'textDocument/completion', params: at(A, 0, 0) })).toEqual([-32602, 'method']);
    expect(await code({ method: 'textDocument/hover', params: { position: { line: 0, character: 0 } } })).toEqual([-32602, 'params.textDocument']);
    expect(await code({ method: 'textDocument/hover', params: { textDocument: { uri: 'no-scheme' }, position: { line: 0, character: 0 } } }))
      .toEqual([-32602, 'params.textDocument.uri']);
    expect(await code({ method: 'textDocument/hover', params: at(A, -1, 0) })).toEqual([-32602, 'params.position.line']);
    expect(await code({ method: 'textDocument/rename', params: at(A, 0, 0) })).toEqual([-32602, 'params.newName']);
    expect(await code({ method: 'workspace/symbol', params: {} })).toEqual([-32602, 'params.query']);
    expect(await code({ method: 'callHierarchy/incomingCalls', params: { item: { uri: A, name: 'x' } } })).toEqual([-32602, 'params.item.selectionRange']);
    expect(await code({ method: 'textDocument/references', params: { ...at(A, 0, 0), context: { includeDeclaration: 'no' } } }))
      .toEqual([-32602, 'params.context.includeDeclaration']);
    expect(calls).toEqual([]);
  });

  it('a provider\'s refusal is -32803 with its reason', async () => {
    answer({ 'vscode.prepareRename': () => { throw new Error('You cannot rename this element.'); } });
    await expect(answerLanguageFeature({ method: 'textDocument/prepareRename', params: at(A, 0, 0) }, own))
      .rejects.toMatchObject({ code: -32803, message: 'You cannot rename this element.' });
  });

  it('a cancel answers -32800 at once, while VS Code is still asking', async () => {
    let release!: (v: unknown) => void;
    answer({ 'vscode.executeReferenceProvider': () => new Promise((r) => { release = r; }) });
    const source = new CancellationTokenSource();
    const pending = answerLanguageFeature({ method: 'textDocument/references', params: at(A, 0, 0) }, own, source.token);
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    source.cancel();
    await expect(pending).rejects.toMatchObject({ code: -32800 });
    release([]);
  });
});
