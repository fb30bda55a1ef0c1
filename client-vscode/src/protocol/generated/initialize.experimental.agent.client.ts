/* Generated from schemas/initialize.experimental.agent.client.json by scripts/gen-types.mjs — do not edit. */

/**
 * capabilities.experimental.agent of initialize.
 */
export interface ClientAgentCapabilities {
  confirmTool?: boolean;
  diagnostics?: boolean;
  languageFeatures?: string[] | true;
}
