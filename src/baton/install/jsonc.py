"""JSON with comments as VS Code reads its `mcp.json`: `//` and `/* */` comments wherever whitespace may
stand, and a trailing comma before any `}` or `]` (also with comments between the comma and the bracket).
A comma with no value before it (`{,}`, `[1,,2]`) is left in place, so the JSON parser reports it, as VS
Code does.

`plain(text)` turns it into plain JSON in two passes, comments first, then trailing commas, each skipping
over strings; every character removed becomes a space (a newline stays a newline), so the line and column
of a JSON error are those of the file as written. Hand-written rather than a library, because the
libraries do something else: `json-with-comments` makes the same two regular-expression passes but removes
a `//` comment's newline and the whitespace after a trailing comma, so the line numbers of an error are
wrong; `json5` parses a larger language than VS Code (single quotes, unquoted keys, hexadecimal numbers),
and would take files VS Code refuses; `commentjson` is unmaintained (last release 2020).
"""

from __future__ import annotations

import re

_STRING = r'"(?:\\.|[^"\\\n])*"'
_COMMENTS = re.compile(rf"{_STRING}|//[^\n]*|/\*.*?\*/", re.S)
# A comma after `{`, `[` or another comma has no value before it: matched whole, and kept as it is.
_TRAILING_COMMAS = re.compile(rf"{_STRING}|[\[{{,]\s*,|,(?=\s*[}}\]])")


def plain(text: str) -> tuple[str, bool]:
    """`text` as plain JSON, positions kept; and whether it held comments."""
    without_comments = _COMMENTS.sub(_blank_unless_string, text)
    return _TRAILING_COMMAS.sub(_blank_unless_kept, without_comments), without_comments != text


def _blank_unless_string(match: re.Match[str]) -> str:
    token = match.group()
    return token if token.startswith('"') else _blank(token)


def _blank_unless_kept(match: re.Match[str]) -> str:
    token = match.group()
    return token if token.startswith('"') or len(token) > 1 else _blank(token)


def _blank(token: str) -> str:
    return re.sub(r"[^\n]", " ", token)
