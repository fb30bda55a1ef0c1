"""The "fill the hole" prompt that asks a chat model for a suggestion (PROTOCOL §10): the file around the cursor
with a marker where the cursor is, bounded snippets of other places, and the answer asked for inside
`<completion>…</completion>` (a stop sequence ends it there). The instructions come first and never change, and
the part of the file before the cursor's line comes before what changes as the user types, so that a prompt
cache can hold."""

from __future__ import annotations

from agent_lsp.completions.prompt import CompletionPrompt

SETTING = "completions"
"""The setting whose `timeout` bounds the wait (a provider's timeout message names it)."""
HOLE = "<hole/>"
STOP = "</completion>"
SYSTEM = (
    "You complete code as the user types. You get a file with the marker " + HOLE + " where the cursor is. Answer "
    "with exactly the text to insert at " + HOLE + ", between <completion> and </completion>, and nothing else: no "
    "explanation, no Markdown fence, nothing that is already before or after the marker. Continue in the file's "
    "style and indentation. Answer <completion></completion> when nothing fits."
)


def max_tokens(prompt: CompletionPrompt) -> int:
    """Enough tokens for `max_lines` lines of code (one line when the line goes on after the cursor)."""
    return 96 if prompt.single_line else min(1024, 48 * prompt.max_lines + 32)


def context_text(prompt: CompletionPrompt) -> str:
    """The other places, each with its path and first line, then the file up to the start of the cursor's line."""
    parts = []
    for s in prompt.snippets:
        what = "open buffer" if s.kind == "buffer" else "definition"
        parts.append(f'<snippet path="{s.path}" kind="{what}" first-line="{s.first_line}">\n{s.text}\n</snippet>\n')
    parts.append(f'<file path="{prompt.path}" language="{prompt.language_id}">\n'
                 f"{prompt.prefix[: prompt.stable_prefix]}")
    return "".join(parts)


def hole_text(prompt: CompletionPrompt) -> str:
    """The cursor's line with the marker, the rest of the file's window, and what is asked."""
    ask = ("Complete the rest of the marker's line only." if prompt.single_line else
           f"Fill {HOLE} with at most {prompt.max_lines} lines.")
    end = "" if prompt.suffix.endswith("\n") else "\n"
    return f"{prompt.prefix[prompt.stable_prefix:]}{HOLE}{prompt.suffix}{end}</file>\n{ask}"


def chat_messages(prompt: CompletionPrompt) -> list[dict[str, str]]:
    """The prompt as OpenAI-compatible chat messages."""
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": context_text(prompt) + hole_text(prompt)}]


def fim_arguments(prompt: CompletionPrompt) -> dict:
    """The prompt as {baseUrl}/completions arguments: the text before and after the cursor (`prompt`, `suffix`),
    stopped at the line's end when only the line is wanted (else post-processing cuts it)."""
    return {"prompt": prompt.prefix, "suffix": prompt.suffix, **({"stop": ["\n"]} if prompt.single_line else {})}
