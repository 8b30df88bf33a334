"""The URL-safety check (`check_url`, and what `ctx.elicit_url` refuses) on any text."""

from __future__ import annotations

from baton.forms.ask_guards import check_elicit_url
from baton.forms.url_safety import check_url, format_for_display
from baton.protocol.errors import UsageError

from ..harness import Target


def one(data: bytes) -> None:
    text = data.decode("utf-8", "replace")
    for loopback in (True, False):
        format_for_display(check_url(text, allow_http_loopback=loopback))
    check_elicit_url(text, development=bool(data[:1] == b"d"))


TARGET = Target("url_safety", "the URL-safety check and elicit_url's refusals", one, (UsageError,))
