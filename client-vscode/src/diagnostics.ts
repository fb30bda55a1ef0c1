/**
 * Answers the server's agent/diagnostics request with the editor's own diagnostics — from every language
 * server and linter VS Code runs — converted to LSP shapes (0-based positions, severity 1-4).
 */
import * as vscode from 'vscode';
import type { DiagnosticsParams, DiagnosticsResult } from './protocol';

/** An LSP Diagnostic, as much of it as the server reads. (A type alias, so it fits the schema's plain object.) */
export type LspDiagnostic = {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  severity: 1 | 2 | 3 | 4;
  message: string;
  source?: string;
  code?: string | number;
};

/** vscode.DiagnosticSeverity counts from 0 (Error); LSP counts from 1. */
export function toLspDiagnostic(d: vscode.Diagnostic): LspDiagnostic {
  const out: LspDiagnostic = {
    range: {
      start: { line: d.range.start.line, character: d.range.start.character },
      end: { line: d.range.end.line, character: d.range.end.character },
    },
    severity: (d.severity + 1) as LspDiagnostic['severity'],
    message: d.message,
  };
  if (d.source) out.source = d.source;
  const code = typeof d.code === 'object' ? d.code.value : d.code;  // {value, target} links a rule's docs
  if (code !== undefined && code !== '') out.code = code;
  return out;
}

/** The diagnostics of the asked documents (keyed by the uri strings the server sent), or of every document
 * VS Code has diagnostics for. */
export function collectDiagnostics(params: DiagnosticsParams | null | undefined): DiagnosticsResult {
  const uris = params?.uris;
  if (uris) {
    return {
      items: uris.map((uri) => ({
        uri,
        diagnostics: vscode.languages.getDiagnostics(vscode.Uri.parse(uri)).map(toLspDiagnostic),
      })),
    };
  }
  return {
    items: vscode.languages.getDiagnostics()
      .filter(([, diagnostics]) => diagnostics.length > 0)
      .map(([uri, diagnostics]) => ({ uri: uri.toString(), diagnostics: diagnostics.map(toLspDiagnostic) })),
  };
}
