/* Generated from schemas/initialize.experimental.agent.server.json by scripts/gen-types.mjs — do not edit. */

/**
 * experimental.agent of the server's capabilities.
 */
export interface ServerAgentCapabilities {
  features: string[];
  languageMethods: string[];
  permissionModes: ('default' | 'acceptEdits' | 'plan' | 'bypassPermissions')[];
  protocolVersion: number;
  tools: string[];
}
