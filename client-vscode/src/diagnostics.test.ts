import { describe, expect, it, vi } from 'vitest';
import * as vscode from 'vscode';
import { collectDiagnostics, toLspDiagnostic } from './diagnostics';

vi.mock('vscode');

function diagnostic(line: number, severity: vscode.DiagnosticSeverity, message: string,
  extra: Partial<vscode.Diagnostic> = {}): vscode.Diagnostic {
  const d = new vscode.Diagnostic(new vscode.Range(line, 2, line, 9), message, severity);
  return Object.assign(d, extra);
}

describe('diagnostics', () => {
  it('converts VS Code diagnostics to LSP shapes: 0-based range, severity 1-4, source, code', () => {
    expect([
      diagnostic(0, vscode.DiagnosticSeverity.Error, 'undefined name', { source: 'pyright', code: 'reportUndefinedVariable' }),
      diagnostic(3, vscode.DiagnosticSeverity.Warning, 'unused import', { source: 'ruff', code: { value: 'F401', target: vscode.Uri.parse('https://docs') } }),
      diagnostic(4, vscode.DiagnosticSeverity.Information, 'info', { code: 7 }),
      diagnostic(5, vscode.DiagnosticSeverity.Hint, 'hint'),
    ].map(toLspDiagnostic)).toEqual([
      { range: { start: { line: 0, character: 2 }, end: { line: 0, character: 9 } }, severity: 1, message: 'undefined name', source: 'pyright', code: 'reportUndefinedVariable' },
      { range: { start: { line: 3, character: 2 }, end: { line: 3, character: 9 } }, severity: 2, message: 'unused import', source: 'ruff', code: 'F401' },
      { range: { start: { line: 4, character: 2 }, end: { line: 4, character: 9 } }, severity: 3, message: 'info', code: 7 },
      { range: { start: { line: 5, character: 2 }, end: { line: 5, character: 9 } }, severity: 4, message: 'hint' },
    ]);
  });

  it('answers the asked uris, keyed by the strings the server sent', () => {
    const getDiagnostics = vi.mocked(vscode.languages.getDiagnostics) as unknown as ReturnType<typeof vi.fn>;
    getDiagnostics.mockImplementation((uri: vscode.Uri) =>
      uri.path === '/w/a.py' ? [diagnostic(1, vscode.DiagnosticSeverity.Error, 'boom')] : []);
    expect(collectDiagnostics({ uris: ['file:///w/a.py', 'file:///w/b.py'] })).toEqual({
      items: [
        { uri: 'file:///w/a.py', diagnostics: [{ range: { start: { line: 1, character: 2 }, end: { line: 1, character: 9 } }, severity: 1, message: 'boom' }] },
        { uri: 'file:///w/b.py', diagnostics: [] },
      ],
    });
  });

  it('answers every document with diagnostics when no uris are asked', () => {
    const getDiagnostics = vi.mocked(vscode.languages.getDiagnostics) as unknown as ReturnType<typeof vi.fn>;
    getDiagnostics.mockImplementation(() => [
      [vscode.Uri.parse('file:///w/a.py'), [diagnostic(0, vscode.DiagnosticSeverity.Warning, 'w')]],
      [vscode.Uri.parse('file:///w/clean.py'), []],
    ]);
    expect(collectDiagnostics({})).toEqual({
      items: [{ uri: 'file:///w/a.py', diagnostics: [{ range: { start: { line: 0, character: 2 }, end: { line: 0, character: 9 } }, severity: 2, message: 'w' }] }],
    });
  });
});
