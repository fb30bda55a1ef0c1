/* Generated from schemas/agent-chat.params.json by scripts/gen-types.mjs — do not edit. */

/**
 * agent/chat params.
 */
export interface ChatParams {
  context?: ChatContext | null;
  images?: ChatImage[] | null;
  maxTurns?: number | null;
  message: string;
  model?: string | null;
  outputSchema?: {
    [k: string]: unknown;
  } | null;
  permissionMode?: ('default' | 'acceptEdits' | 'plan' | 'bypassPermissions') | null;
  sessionId?: string | null;
  workDoneToken?: number | string | null;
}
export interface ChatContext {
  activeUri?: string | null;
  mentions?: Mention[] | null;
  selection?: Range | null;
  uris?: string[] | null;
}
/**
 * An @-mention the user picked: expanded by the server into the user message, bounded (PROTOCOL §8).
 */
export interface Mention {
  kind: 'file' | 'selection' | 'diagnostics' | 'symbol';
  name?: string | null;
  range?: Range | null;
  uri?: string | null;
}
/**
 * An LSP range.
 */
export interface Range {
  end: Position;
  start: Position;
}
/**
 * Zero-based line and character, as LSP counts them.
 */
export interface Position {
  character: number;
  line: number;
}
/**
 * An image sent with the message (PROTOCOL §9 "Images"): checked by the server (type, base64, 5 MiB).
 */
export interface ChatImage {
  data: string;
  mimeType: string;
}
