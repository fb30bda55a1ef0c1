"""The front matter parser (sessions/front_matter.py): the YAML that SKILL.md files use, and each refusal naming its
line."""

from __future__ import annotations

import pytest

from agent_lsp.sessions.front_matter import split_front_matter


def test_the_forms_skills_use():
    text = ("---\n"
            "name: pdf-tools\n"
            "description: >\n"
            "  Extract text and tables\n"
            "  from PDF files.\n"
            "\n"
            "  Use when a PDF is mentioned.\n"
            "license: 'Apache-2.0 (it''s fine)'\n"
            "allowed-tools:\n"
            "- Read\n"
            "- \"Bash(git status:*)\"\n"
            "metadata:\n"
            "  version: \"1.0\"  # a comment\n"
            "  tags: [pdf, 'text']\n"
            "  owner: {team: docs, since: 2024}\n"
            "notes: |-\n"
            "  # kept: a block scalar holds no comments\n"
            "    indented\n"
            "---\n"
            "# PDF tools\n\nBody.\n")
    fields, body = split_front_matter(text)
    assert fields == {
        "name": "pdf-tools",
        "description": "Extract text and tables from PDF files.\nUse when a PDF is mentioned.\n",
        "license": "Apache-2.0 (it's fine)",
        "allowed-tools": ["Read", "Bash(git status:*)"],
        "metadata": {"version": "1.0", "tags": ["pdf", "text"], "owner": {"team": "docs", "since": "2024"}},
        "notes": "# kept: a block scalar holds no comments\n  indented",
    }
    assert body == "# PDF tools\n\nBody.\n"


def test_plain_values_continue_on_indented_lines_and_keep_colons_and_escapes():
    fields, body = split_front_matter("\ufeff---\r\nname: x\r\ndescription: Use when: the user asks # why\r\n"
                                      "  for a review\r\nquoted: \"tab\\there \\u00e9\"\r\nempty:\r\n---\r\nbody")
    assert fields == {"name": "x", "description": "Use when: the user asks for a review", "quoted": "tab\there é",
                      "empty": None}
    assert body == "body"


def test_text_without_front_matter():
    assert split_front_matter("# Title\n---\n") == (None, "# Title\n---\n")


@pytest.mark.parametrize("text, problem", [
    ("---\nname: x\n", "its front matter has no closing `---` line"),
    ("---\nname: 'x\n---\n", "line 2: a single-quoted value is not closed"),
    ("---\nname: \"x\n---\n", "line 2: a double-quoted value is not closed"),
    ("---\ntools: [a, b\n---\n", "line 2: `[` is not closed"),
    ("---\nname: x\njust some text\n---\n", "line 3 is not `key: value`"),
    ("---\n  name: x\n---\n", "line 2 is indented where a new `key: value` was expected"),
    ("---\nname: a\nname: b\n---\n", "line 3 gives the key `name` a second time"),
    ("---\nname: &anchor x\n---\n", "line 2: YAML anchors, aliases and tags are not read here"),
    ("---\nname: \"\\q\"\n---\n", "line 2: `\\q` is not an escape of a double-quoted value"),
    ("---\nmeta:\n\tkey: 1\n---\n", "line 3 is indented with a tab"),
    ("---\nname: 'x' trailing\n---\n", "line 2: unexpected text after the value: 'trailing'"),
    ("---\ntools:\n  - a\n  b: c\n---\n", "line 4: a list holds `- item` lines only"),
    ("---\n: x\n---\n", "line 2 is not `key: value`"),
])
def test_broken_front_matter_names_its_line(text, problem):
    with pytest.raises(ValueError) as e:
        split_front_matter(text)
    assert str(e.value) == problem
