"""Golden cases of what a model's answer becomes before it is offered (agent_lsp/completions/postprocess.py): each
case is the buffer around the cursor, the raw answer, and the exact text inserted at the cursor (None: no item)."""

from __future__ import annotations

import pytest

from agent_lsp.completions.place import place_at
from agent_lsp.completions.postprocess import Surroundings, finish, indent_unit, opening, unwrap


def at(before: str, after: str = "", *following: str, indent: str = "    ", max_lines: int = 8) -> Surroundings:
    return Surroundings(line_before=before, line_after=after, lines_after=following, indent=indent,
                        max_lines=max_lines)


GOLDEN = [
    # (name, surroundings, raw answer, inserted text)
    ("plain", at("x = "), "compute()", "compute()"),
    ("empty is no item", at("x = "), "", None),
    ("whitespace is no item", at("x = "), "  \n\n  ", None),
    ("fenced", at("def f(a):"), "```python\n\n    return a\n```", "\n    return a"),
    ("fence with text after it", at("x = "), "```\n1\n```\nThis sets x.", "1"),
    ("completion wrapper", at("x = "), "<completion>1 + 2</completion>", "1 + 2"),
    ("completion wrapper, upper case and newline", at("x = "), "\n<COMPLETION>y</COMPLETION>\n", "y"),
    ("a closing bracket after the cursor is not typed twice", at("print(name", ")"), "[0])", "[0]"),
    ("nor a closing bracket and a colon", at("def greet(name", "):"), ", greeting):", ", greeting"),
    ("part of the rest of the line", at("if f(x", "):"), ")", ""),
    ("a bracket the suggestion opens itself stays", at("print(", ")"), "f(x)", "f(x)"),
    ("a quote and a bracket", at('print("', '")'), 'hello")', "hello"),
    ("one line when the line goes on", at("foo(", ")"), "a,\n    b)", "a,"),
    ("trailing whitespace is dropped", at("x = "), "1   \n\n", "1"),
    ("the space before the cursor is not typed twice", at("x = "), " 1", "1"),
    ("nor the indentation of a blank line", at("    ", "", "    return y"), "    y = 2", "y = 2"),
    ("nor a tab-indented line's indentation retyped with spaces",
     at("\t", indent="\t"), "    if x:\n        return 1", "if x:\n\t\treturn 1"),
    ("max lines", at("def f():", max_lines=2), "\n    a = 1\n    b = 2\n    c = 3", "\n    a = 1"),
    ("the block's end when text follows",
     at("    if x:", "", "    return y", "", "def g():"), "\n        y = 1\n    return y\n\ndef g():\n", "\n        y = 1"),
    ("a dedent leaves the block",
     at("        a = 1", "", "", "z = 3"), "\n        b = 2\nz = 3", "\n        b = 2"),
    ("at the end of the file a dedent stays", at("def f():"), "\n    return 1\n\nprint(f())", "\n    return 1\n\nprint(f())"),
    ("the line that follows is not typed again",
     at("    for i in range(3):", "", "    }"), "\n        total += i\n    }", "\n        total += i"),
    ("a closing brace that follows", at("  if (x) {", "", "  }", indent="  "), "\n    y++;\n  }", "\n    y++;"),
    ("tabs in a buffer indented with tabs", at("\tdef f(self):", indent="\t"),
     "\n        return 1\n        # done", "\n\t\treturn 1\n\t\t# done"),
    ("spaces in a buffer of spaces, from tabs", at("def f():"), "\n\treturn 1", "\n    return 1"),
    ("two-space buffer, four-space answer", at("  if x:", indent="  "),
     "\n      y = 1\n      z = 2", "\n    y = 1\n    z = 2"),
    ("four-space buffer, two-space answer", at("def f():"), "\n  if x:\n    y = 1", "\n    if x:\n        y = 1"),
    ("tabs stay tabs", at("\tif x:", indent="\t"), "\n\t\ty = 1", "\n\t\ty = 1"),
    ("right indentation is left alone", at("    if x:"), "\n        y = 1\n    z = 2", "\n        y = 1\n    z = 2"),
    ("at column 0, the first line's own indentation is where its block starts",
     at("", "", "        return x"), "        finally:\n            told(None)", "        finally:\n            told(None)"),
    ("and a line below it leaves its block when text follows",
     at("", "", "def g():"), "        finally:\n            told(None)\n    return 1", "        finally:\n            told(None)"),
    ("crlf answers", at("def f():"), "\r\n    return 1\r\n", "\n    return 1"),
]


@pytest.mark.parametrize("where, raw, expected", [case[1:] for case in GOLDEN], ids=[case[0] for case in GOLDEN])
def test_golden(where, raw, expected):
    assert finish(raw, where) == (expected or None)


@pytest.mark.parametrize("lines, unit", [
    (["def f():", "    return 1"], "    "),
    (["if x {", "  y", "  if z {", "    w", "  }", "}"], "  "),
    (["func f() {", "\treturn 1", "}"], "\t"),
    (["x = 1", "y = 2"], "    "),
    (["class A:", "    def f(self,", "          a):", "        pass", "    def g(self):", "        pass"], "    "),
], ids=["four", "two", "tab", "none (default)", "a hanging indent does not count"])
def test_indent_unit(lines, unit):
    assert indent_unit(lines) == unit


@pytest.mark.parametrize("raw, seen", [
    ("", None), ("<compl", None), ("``", None), ("```py", None),
    ("```py\nret", "ret"), ("<completion>ret", "ret"), ("<completion>x</completion> and more", "x"),
    ("return x", "return x"), ("\nreturn", "\nreturn"),
])
def test_what_a_streaming_answer_offers_so_far(raw, seen):
    assert opening(raw) == seen


def test_unwrap_leaves_plain_text_alone():
    assert unwrap("a\n```\nb") == "a\n```\nb"  # a fence inside the answer is the answer's own


@pytest.mark.parametrize("buffer, hint, unit", [
    ("def f(x):\n\t", None, "\t"),  # the cursor's line, only its indentation so far, is the only indented one
    ("x = 1\ndef f(x):\n\tfor i in x:", None, "\t"),  # the cursor's line, the last of the buffer
    ("def f(x):\n  if x:\n    pass\n  ", None, "  "),
    ("def f(x):\n\t", "  ", "  "),  # the client's formattingOptions win
])
def test_the_buffer_says_how_it_indents(buffer, hint, unit):
    assert place_at("file:///a.py", 1, buffer, len(buffer), hint).indent == unit


@pytest.mark.parametrize("buffer, raw, expected", [
    ("def f(x):\n\tfor i in x:", "\n        print(i)\n    return x", "\n\t\tprint(i)\n\treturn x"),
    ("def f(x):\n\t", "if x:\n        return 1\n    return 0", "if x:\n\t\treturn 1\n\treturn 0"),
    ("def f(x):\n\t", "    if x:\n        return 1", "if x:\n\t\treturn 1"),
])
def test_a_tab_indented_buffer_gets_tabs_from_a_model_that_answers_with_spaces(buffer, raw, expected):
    """A chat model indents with spaces; the buffer's way wins, even when the cursor's line is its only indented
    line."""
    place = place_at("file:///a.py", 1, buffer, len(buffer))
    assert finish(raw, place.surroundings(8)) == expected
