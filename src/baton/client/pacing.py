"""The pause before a URL question the host already accepted is asked again in the same request.

In URL mode an accept means only that the user agreed to open the page (protocol.md P22): a server
that checks on the retry whether the step out there is done, as the connect kit does, asks for the
same URL again while it is not. A person at a terminal says "done" when they are; a program that
accepts at once would spend the client's `max_rounds` in a fraction of a second, long before any
browser flow could finish. So before the handler is asked about a URL it already accepted in this
request, the client waits: `first_s`, doubling on each further re-ask, up to `max_s` (bounded, and
inside the request's `deadline_s`). With the defaults (0.25 s, 4 s) ten rounds give a flow about 24 s.

The same pacing applies to a 2025-11-25 server's -32042 naming a URL again (protocol.md P34). Step mode
is left alone: there the host decides when to send the next round.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

DEFAULT_URL_BACKOFF_S = (0.25, 4.0)


def check_backoff(backoff: tuple[float, float]) -> tuple[float, float]:
    """`(first_s, max_s)` as given, or ValueError: both non-negative, the first not above the longest."""
    first, longest = backoff
    if not (0 <= first <= longest):
        raise ValueError(f"url_backoff_s is (first_s, max_s) with 0 <= first_s <= max_s, not {backoff!r}")
    return float(first), float(longest)


class UrlPacing:
    """One request's URL re-asks: which URLs were accepted, and how long to wait before asking one again."""

    __slots__ = ("_accepted", "first_s", "max_s")

    def __init__(self, backoff: tuple[float, float]) -> None:
        self.first_s, self.max_s = backoff
        self._accepted: dict[str, int] = {}

    def accepted(self, url: str | None) -> None:
        """The host accepted this URL (so asking it again is a re-ask)."""
        if url is not None:
            self._accepted[url] = self._accepted.get(url, 0) + 1

    def pause(self, urls: Iterable[str]) -> float:
        """Seconds to wait before asking these URLs: 0 unless one of them was accepted already."""
        if not self._accepted:
            return 0.0
        times = max((self._accepted.get(url, 0) for url in urls), default=0)
        return 0.0 if times == 0 else min(self.first_s * 2 ** min(times - 1, 32), self.max_s)

    async def wait(self, urls: Iterable[str]) -> None:
        pause = self.pause(urls)
        if pause > 0:
            await asyncio.sleep(pause)
