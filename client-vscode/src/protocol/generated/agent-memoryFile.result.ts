/* Generated from schemas/agent-memoryFile.result.json by scripts/gen-types.mjs — do not edit. */

/**
 * Where the project memory of the window's first workspace folder is, as the `memoryFile` setting in force
 * places it: AGENTS.md in the folder, or the private file under the data directory.
 */
export interface MemoryFileResult {
  private: boolean;
  uri?: string | null;
}
