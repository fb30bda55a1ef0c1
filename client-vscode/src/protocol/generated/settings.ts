/* Generated from schemas/settings.json by scripts/gen-types.mjs — do not edit. */

/**
 * Everything a chat can be configured with: the settings object of initializationOptions, the `agentLsp` section of the editor's configuration and the settings files (docs/settings.md).
 */
export interface AgentLspSettings {
  /**
   * Where the provider's API is; none: the SDK's own.
   */
  baseUrl?: string;
  /**
   * Compact the conversation when a request would pass this share of the context window.
   */
  compactThreshold?: number;
  completions?: CompletionsSettings;
  /**
   * The model's context window in tokens.
   */
  contextWindow?: number;
  /**
   * Shell commands by event (PreToolUse, PostToolUse, UserPromptSubmit, Stop), in the shape Claude Code reads (docs/settings.md).
   */
  hooks?: {
    [k: string]: {
      [k: string]: unknown;
    }[];
  };
  /**
   * Language servers agent-lsp runs itself, by name (docs/language-features.md); the settings sources' servers add up.
   */
  languageServers?: {
    [k: string]: LanguageServerConfig;
  };
  /**
   * Seconds a language request (definition, references...) may take before it fails naming the server.
   */
  languageTimeout?: number;
  /**
   * The most tokens one model reply may have.
   */
  maxTokens?: number;
  /**
   * Model calls per chat; -1: up to the hard cap (100); 0 disables chat.
   */
  maxTurns?: number;
  /**
   * MCP servers whose tools the model is offered, by name; the settings sources' servers add up.
   */
  mcpServers?: {
    [k: string]: StdioServer | HttpServer;
  };
  /**
   * Where `remember` keeps facts: "agents" (AGENTS.md, section Memory) or "private" (under the data dir).
   */
  memoryFile?: 'agents' | 'private';
  /**
   * The model name ("demo": the offline demo model); none: the provider's default.
   */
  model?: string;
  nextEdits?: NextEditsSettings;
  /**
   * What runs without asking.
   */
  permissionMode?: 'default' | 'acceptEdits' | 'plan' | 'bypassPermissions';
  /**
   * Who answers; none: anthropic when ANTHROPIC_API_KEY is set, else no provider.
   */
  provider?: 'anthropic' | 'openai' | 'demo';
  /**
   * Seconds a model stream may stay silent (before its headers or between events) before the call fails.
   */
  readTimeout?: number;
  sandbox?: SandboxSettings;
  /**
   * Environment variables (names or fnmatch patterns) that run_command never passes on, besides the provider keys it always holds back (tools/run_command.py).
   */
  secretEnv?: string[];
  /**
   * Extended thinking: {"budgetTokens": N} (N >= 1024), "adaptive", or false.
   */
  thinking?: ThinkingBudget | 'adaptive' | false;
  webFetch?: WebFetchSettings;
}
/**
 * Suggestions as you type (docs/settings.md, PROTOCOL §10).
 */
export interface CompletionsSettings {
  /**
   * fim (openai only): the text before and after the cursor as `prompt` and `suffix` to {baseUrl}/completions.
   */
  api?: 'chat' | 'fim';
  /**
   * Where that model's API is; none: the chat's baseUrl when both use the same provider, else the provider's own. Never taken from a workspace's settings file.
   */
  baseUrl?: string;
  /**
   * false: no suggestions (every request is answered with no item and no model call).
   */
  enabled?: boolean;
  /**
   * Globs of files never sent, besides .env, .env.*, *.pem, *.key, *.p12, id_rsa*, id_ed25519*, .netrc, .npmrc, .pypirc.
   */
  exclude?: string[];
  /**
   * The most lines one suggestion has.
   */
  maxLines?: number;
  /**
   * The model that suggests; none: the chat's model when that is demo or script:FILE, else the provider's small, fast one (anthropic: claude-haiku-5-5; openai: the chat's model).
   */
  model?: string;
  /**
   * Who suggests; none: the chat's provider.
   */
  provider?: 'anthropic' | 'openai';
  /**
   * Seconds a suggestion may wait for the model.
   */
  timeout?: number;
}
/**
 * One language server agent-lsp may run: its argv, the languages it serves (languageIds such as "python", or file extensions such as ".py"), and what it is told at start (`initializationOptions`) and when it asks (`settings`, answered to workspace/configuration), and how long it may take to start (`startTimeout`).
 */
export interface LanguageServerConfig {
  /**
   * Its argv.
   *
   * @minItems 1
   */
  command: [string, ...string[]];
  /**
   * What it is told at start (initialize's initializationOptions).
   */
  initializationOptions?: {
    [k: string]: unknown;
  };
  /**
   * The languages it serves: languageIds ("python") or file extensions (".py").
   *
   * @minItems 1
   */
  languages: [string, ...string[]];
  /**
   * What it is answered when it asks for its configuration (workspace/configuration).
   */
  settings?: {
    [k: string]: unknown;
  };
  /**
   * Seconds it may take to start and answer initialize before it counts as failed.
   */
  startTimeout?: number;
}
/**
 * A server agent-lsp starts as a process, speaking MCP on its standard input and output.
 */
export interface StdioServer {
  /**
   * Its arguments.
   */
  args?: string[];
  /**
   * The program.
   */
  command: string;
  /**
   * Environment variables set for it, besides agent-lsp's own.
   */
  env?: {
    [k: string]: string;
  };
  /**
   * Seconds it may take to start and list its tools before it counts as failed.
   */
  startTimeout?: number;
  /**
   * stdio: the default without a `url`.
   */
  type?: 'stdio';
}
/**
 * A server agent-lsp reaches over streamable HTTP.
 */
export interface HttpServer {
  /**
   * HTTP headers sent with every request (an Authorization header, say).
   */
  headers?: {
    [k: string]: string;
  };
  /**
   * Seconds it may take to start and list its tools before it counts as failed.
   */
  startTimeout?: number;
  /**
   * http: the default with a `url` and no `command`.
   */
  type?: 'http' | 'streamable-http' | 'streamableHttp';
  /**
   * Its endpoint.
   */
  url: string;
}
/**
 * Next-edit suggestions, the edit after the one you just made (docs/next-edits.md, PROTOCOL §11).
 */
export interface NextEditsSettings {
  /**
   * fim (openai only): the raw prompt with Zeta's markers to {baseUrl}/completions (an open next-edit model); none: `completions.api`.
   */
  api?: 'chat' | 'fim';
  /**
   * Where that model's API is; none: `completions.baseUrl`. Never taken from a workspace's settings file.
   */
  baseUrl?: string;
  /**
   * false: no next edits (every request is answered {edits: []} with no model call).
   */
  enabled?: boolean;
  /**
   * Lines above the cursor's line that a suggestion may change.
   */
  linesAbove?: number;
  /**
   * Lines below the cursor's line that a suggestion may change.
   */
  linesBelow?: number;
  /**
   * The most lines one suggestion may replace or add.
   */
  maxLines?: number;
  /**
   * The model that suggests; none: `completions.model` (else the provider's small, fast one).
   */
  model?: string;
  /**
   * Who suggests; none: `completions.provider`.
   */
  provider?: 'anthropic' | 'openai';
  /**
   * Seconds a suggestion may wait for the model.
   */
  timeout?: number;
}
/**
 * Commands in an OS sandbox (docs/sandbox.md); stacked key by key across the sources; none: no source set it.
 */
export interface SandboxSettings {
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
}
/**
 * Extended thinking with a budget.
 */
export interface ThinkingBudget {
  /**
   * Tokens the model may think for.
   */
  budgetTokens: number;
}
/**
 * Where web_fetch may go (docs/web-fetch-and-images.md).
 */
export interface WebFetchSettings {
  /**
   * Let it reach loopback, link-local and private addresses.
   */
  allowPrivate?: boolean;
  /**
   * Only these hosts and their subdomains (none: every public host).
   */
  allowedDomains?: string[];
  /**
   * Seconds a whole fetch may take, redirects included.
   */
  timeout?: number;
}
