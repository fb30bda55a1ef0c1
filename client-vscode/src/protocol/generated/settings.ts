/* Generated from schemas/settings.json by scripts/gen-types.mjs — do not edit. */

export interface AgentLspSettings {
  baseUrl?: string;
  compactThreshold?: number;
  contextWindow?: number;
  /**
   * Shell hooks by event (docs/settings.md)
   */
  hooks?: {};
  /**
   * Language servers agent-lsp runs itself, by name (docs/language-features.md)
   */
  languageServers?: {
    [k: string]: {
      /**
       * @minItems 1
       */
      command: [string, ...string[]];
      initializationOptions?: unknown;
      /**
       * @minItems 1
       */
      languages: [string, ...string[]];
      settings?: {};
      startTimeout?: number;
    };
  };
  languageTimeout?: number;
  maxTokens?: number;
  maxTurns?: number;
  /**
   * MCP servers by name (docs/settings.md)
   */
  mcpServers?: {};
  memoryFile?: 'agents' | 'private';
  model?: string;
  permissionMode?: 'default' | 'acceptEdits' | 'plan' | 'bypassPermissions';
  provider?: 'anthropic' | 'openai' | 'demo';
  readTimeout?: number;
  /**
   * Commands in an OS sandbox (docs/sandbox.md)
   */
  sandbox?: {
    /**
     * Sandboxed commands run without asking (not in plan mode).
     */
    autoAllow?: boolean;
    /**
     * Run run_command and hook commands in the OS sandbox (Linux: bubblewrap).
     */
    enabled?: boolean;
    /**
     * Let sandboxed commands reach the network.
     */
    network?: boolean;
    /**
     * Absolute paths sandboxed commands may write, besides the workspace folders and a private /tmp.
     */
    writable?: string[];
  };
  secretEnv?: string[];
  thinking?:
    | {
        budgetTokens: number;
      }
    | 'adaptive'
    | false;
  /**
   * Where web_fetch may go (docs/settings.md)
   */
  webFetch?: {
    allowPrivate?: boolean;
    allowedDomains?: string[];
    timeout?: number;
  };
}
