/* Generated from schemas/settings.json by scripts/gen-types.mjs — do not edit. */

export interface AgentLspSettings {
  baseUrl?: string;
  compactThreshold?: number;
  /**
   * Suggestions as you type: whether, from which model, and how much of it.
   */
  completions?: {
    /**
     * `fim` (openai only): the text before and after the cursor as `prompt` and `suffix` to {baseUrl}/completions.
     */
    api?: 'chat' | 'fim';
    /**
     * Default: the chat's `baseUrl`.
     */
    baseUrl?: string | null;
    /**
     * false: no suggestions (every request is answered with no item and no model call).
     */
    enabled?: boolean;
    /**
     * Globs of files never sent (added to .env, .env.*, *.pem, *.key, *.p12, id_rsa*, id_ed25519*, .netrc, .npmrc,
     * .pypirc).
     */
    exclude?: string[];
    /**
     * Most lines a suggestion has.
     */
    maxLines?: number;
    /**
     * Default: the chat's model when that is `demo` or `script:FILE`, else the provider's small, fast model.
     */
    model?: string | null;
    /**
     * Default: the chat's `provider`.
     */
    provider?: ('anthropic' | 'openai') | null;
    /**
     * Seconds a suggestion may wait for the model.
     */
    timeout?: number;
  };
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
