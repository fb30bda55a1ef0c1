"""Checkpoints: what each chat changed in which file, so that `agent/revert` can undo a whole turn without
clobbering what the user typed since, and a hover can say which chat changed a line.

A chat's tools see the editor through a `RecordingEditor`, which notes the text of every file before the chat
first touched it and after its last edit. Reverting checks that each file still reads exactly as the agent left
it; a file the user changed since is refused by name, the others are restored through the editor.

Checkpoints are committed to the session store with their chat (sessions/store.py), so a revert works after a
restart or from another window. A file over MAX_KEPT_BYTES is recorded by hash only and refused on revert.
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from agent_lsp.core.ports import EditOutcome, FileEdit, TextEdit
from agent_lsp.sessions.store import CheckpointRow
from agent_lsp.tools.editing import minimal_edit

MAX_KEPT_BYTES = 2 * 1024 * 1024
"""A file whose text before or after a chat is larger than this is recorded by its hash only."""
TOO_LARGE = "it is over 2 MB, so only its hash was kept and its earlier text cannot be restored"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def apply_text_edits(text: str, edits: list[TextEdit]) -> str:
    """`text` with character-offset edits applied (edits do not overlap)."""
    for e in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[: e.start] + e.new_text + text[e.end :]
    return text


@dataclass
class FileChange:
    """One file as one chat changed it."""

    path: Path
    before: Optional[str]
    """The text before the chat's first edit; None when the chat created the file."""
    after: str
    """The text after the chat's last edit."""
    label: str
    """The last edit's label (e.g. "agent-lsp: edit app.py"), shown on hover."""
    hashes_only: bool = False
    """The file was over MAX_KEPT_BYTES: `before` and `after` are their sha256 (hex), not their text."""

    def changed_lines(self) -> set[int]:
        """0-based lines of `after` that the chat wrote or rewrote."""
        if self.hashes_only:
            return set()
        old = (self.before or "").splitlines()
        new = self.after.splitlines()
        lines: set[int] = set()
        for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
            if tag in ("replace", "insert"):
                lines.update(range(j1, j2))
        return lines


@dataclass
class Checkpoint:
    """The files one chat of a session changed; `chat` is its 0-based number in the session."""

    chat: int
    message: str
    """The user's message that started the chat."""
    files: dict[Path, FileChange] = field(default_factory=dict)


def to_rows(checkpoint: Checkpoint) -> tuple[CheckpointRow, ...]:
    """The store's rows of a checkpoint, one per file."""
    return tuple(CheckpointRow(checkpoint.chat, str(c.path), checkpoint.message, c.label, c.before, c.after,
                               c.hashes_only) for c in checkpoint.files.values())


def from_rows(rows: list[CheckpointRow]) -> list[Checkpoint]:
    """The checkpoints of a session as the store has them, oldest chat first."""
    checkpoints: dict[int, Checkpoint] = {}
    for row in rows:
        checkpoint = checkpoints.setdefault(row.chat, Checkpoint(chat=row.chat, message=row.message))
        checkpoint.files[Path(row.path)] = FileChange(Path(row.path), row.before, row.after, row.label,
                                                      row.hashes_only)
    return sorted(checkpoints.values(), key=lambda c: c.chat)


class RecordingEditor:
    """An Editor port that forwards to the real one and records every applied edit into a checkpoint."""

    def __init__(self, editor: Any, checkpoint: Checkpoint) -> None:
        self._editor = editor
        self.checkpoint = checkpoint

    def __getattr__(self, name: str) -> Any:
        return getattr(self._editor, name)

    @property
    def roots(self) -> list[Path]:
        return self._editor.roots

    async def apply_edit(self, edit: FileEdit) -> EditOutcome:
        outcome = await self._editor.apply_edit(edit)
        if outcome.applied:
            after = apply_text_edits(edit.base_text, edit.edits)
            known = self.checkpoint.files.get(edit.path)
            if known is None:
                known = self.checkpoint.files[edit.path] = FileChange(
                    edit.path, None if edit.create else edit.base_text, after, edit.label)
            elif known.hashes_only:
                known.after, known.label = digest(after), edit.label
            else:
                known.after, known.label = after, edit.label
            if not known.hashes_only and max(len(known.before or ""), len(known.after)) * 4 > MAX_KEPT_BYTES \
                    and max(len((known.before or "").encode()), len(known.after.encode())) > MAX_KEPT_BYTES:
                known.hashes_only = True  # a guess by length first: encoding 2 MB per edit is not free
                known.before = None if known.before is None else digest(known.before)
                known.after = digest(known.after)
        return outcome


@dataclass
class FilePlan:
    """What reverting does to one file: expect `now`, restore `before` (None: delete the file)."""

    path: Path
    now: str
    before: Optional[str]
    problem: Optional[str] = None
    """Why the file cannot be reverted, found while planning."""


def plan_revert(checkpoints: list[Checkpoint]) -> list[FilePlan]:
    """Per file, oldest chat first: the text the last chat left and the text before the first chat touched it.

    Chats that touched a file must chain (one's `after` is the next one's `before`); if the user changed the file
    between them, restoring the older text would undo the user's work too, so that file is refused."""
    plans: dict[Path, FilePlan] = {}
    for checkpoint in sorted(checkpoints, key=lambda c: c.chat):
        for path, change in checkpoint.files.items():
            plan = plans.get(path)
            if plan is None:
                plan = plans[path] = FilePlan(path, change.after, change.before)
                if change.hashes_only:
                    plan.problem = TOO_LARGE
                continue
            if change.hashes_only:
                plan.problem = TOO_LARGE
            elif change.before != plan.now:
                plan.problem = "it was changed between the chats being reverted"
            plan.now = change.after
    return list(plans.values())


def _current(editor: Any, path: Path) -> tuple[Optional[str], Optional[int]]:
    """The text the user sees now (the open buffer, else the disk; None when the file is gone) and its version."""
    doc = editor.open_document(path)
    if doc is not None:
        return doc.text, doc.version
    try:
        return path.read_bytes().decode("utf-8", errors="replace"), None
    except FileNotFoundError:
        return None, None
    except OSError:
        return "", None


async def revert_files(editor: Any, plans: list[FilePlan]) -> tuple[list[Path], list[tuple[Path, str]]]:
    """Restore each planned file through the editor, version-checked; answers (reverted, refused with reason)."""
    reverted: list[Path] = []
    refused: list[tuple[Path, str]] = []
    for plan in plans:
        text, version = _current(editor, plan.path)
        if plan.problem:
            refused.append((plan.path, plan.problem))
            continue
        if text is None and plan.before is None:  # created by the agent and already gone
            reverted.append(plan.path)
            continue
        if text != plan.now:
            refused.append((plan.path, "it was changed since the agent edited it, so it was left as it is"))
            continue
        if plan.before is None:
            outcome = await editor.delete_file(plan.path)
        else:
            edit = FileEdit(path=plan.path, base_text=text, version=version, edits=[minimal_edit(text, plan.before)],
                            label=f"agent-lsp: revert {plan.path.name}")
            outcome = await editor.apply_edit(edit)
        if outcome.applied:
            reverted.append(plan.path)
        else:
            refused.append((plan.path, f"the editor did not apply the revert ({outcome.message or 'refused'})"))
    return reverted, refused


def revert_note(chats: list[int], reverted: list[str], refused: list[tuple[str, str]]) -> str:
    """What the model is told in the history after a revert, so it does not build on edits that are gone."""
    which = f"chat {chats[0] + 1}" if len(chats) == 1 else f"chats {chats[0] + 1} to {chats[-1] + 1}"
    lines = [f"[agent-lsp] The user reverted the edits you made in {which} of this session."]
    if reverted:
        lines.append("Restored to their earlier text (or deleted if you created them): " + ", ".join(reverted) + ".")
    if refused:
        lines.append("Left as they are: " + "; ".join(f"{name} ({why})" for name, why in refused) + ".")
    lines.append("Read files again before editing them.")
    return "\n".join(lines)
