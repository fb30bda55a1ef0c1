"""Where compaction cuts, and what the model is sent afterwards."""

from __future__ import annotations

from agent_lsp.core.compaction import cut_point, transcript, view
from agent_lsp.core.messages import AssistantMessage, TextPart, ToolResult, ToolResultsMessage, ToolUsePart, UserMessage

HISTORY = [
    UserMessage(text="one"),
    AssistantMessage(parts=[TextPart(text="reading"), ToolUsePart(id="t1", name="read_file", input={"path": "a"})]),
    ToolResultsMessage(results=[ToolResult(tool_use_id="t1", content="x" * 500)]),
    AssistantMessage(parts=[TextPart(text="done " + "y" * 500)]),
    UserMessage(text="two"),
    AssistantMessage(parts=[TextPart(text="short")]),
    UserMessage(text="three"),
]


def test_cuts_only_before_user_messages_keeping_what_fits():
    assert cut_point(HISTORY, 0, keep_chars=10_000) == 4  # everything after "one" fits, but the cut is past 0
    assert cut_point(HISTORY, 0, keep_chars=300) == 4
    assert cut_point(HISTORY, 0, keep_chars=10) == 6  # nothing fits: keep only the current message
    assert cut_point(HISTORY, 6, keep_chars=10) is None


def test_the_view_is_the_summary_then_the_kept_turns():
    assert view(HISTORY, None) == HISTORY
    assert view(HISTORY, (4, "S")) == [
        UserMessage(text="<summary of the earlier conversation>\nS\n</summary>", origin="summary"), *HISTORY[4:]]


def test_transcript_of_the_older_turns():
    assert transcript(HISTORY[:3]).splitlines() == [
        "USER: one", "AGENT: reading", 'AGENT CALLED read_file {"path": "a"}', "RESULT: " + "x" * 500]


def test_an_image_counts_for_what_the_api_bills_not_its_base64():
    from agent_lsp.core.compaction import IMAGE_CHARS, size
    from agent_lsp.core.messages import ImagePart

    image = ImagePart(media_type="image/png", data="A" * 4_000_000)
    with_image = UserMessage(text="look", images=[image, image])
    assert 2 * IMAGE_CHARS < size([with_image]) < 2 * IMAGE_CHARS + 200  # not the 8 MB of base64
    assert transcript([with_image]) == "USER: look [with 2 image(s)]"
