"""The Memory section of a memory file: facts appended, listed and removed without touching the rest."""

from agent_lsp.tools.memory import entries, with_fact, without_fact


def test_a_fact_goes_into_a_new_section_at_the_end_or_the_existing_one():
    assert with_fact("", "Use tabs.") == "## Memory\n\n- Use tabs.\n"
    assert with_fact("# Notes\n", "Use tabs.") == "# Notes\n\n## Memory\n\n- Use tabs.\n"
    text = "# Notes\n\n## Memory\n\n- one\n\n## Other\n\nkept\n"
    assert with_fact(text, "two") == "# Notes\n\n## Memory\n\n- one\n- two\n\n## Other\n\nkept\n"
    assert entries(with_fact(text, "two")) == ["one", "two"]


def test_a_fact_is_removed_by_its_text_and_a_missing_one_is_none():
    text = "## Memory\n\n- one\n- two  words\n\n## Other\n- not memory\n"
    assert without_fact(text, "two words") == "## Memory\n\n- one\n\n## Other\n- not memory\n"
    assert without_fact(text, "not memory") is None
    assert without_fact("no section\n", "one") is None
