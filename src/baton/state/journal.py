"""The journal of a flow: what the replay engine needs from earlier rounds, carried inside `requestState`.

- `answers`: key -> (question digest, validated answer) for asks already answered;
- `pending`: key -> question digest for the asks sent in the last round;
- `once`: key -> JSON result of steps run with `ctx.once`;
- `logged`: how many `ctx.log` lines earlier rounds wrote (a count, never their text), so that a replay
  does not write them again (protocol.md P129);
- `trace`: the flow's trace context when telemetry is on, opaque here (`baton.telemetry.flowtrace`,
  protocol.md P61): a trace id and a span id, never anything the user gave.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson


@dataclass(slots=True)
class Journal:
    answers: dict[str, tuple[str, Any]] = field(default_factory=dict)
    pending: dict[str, str] = field(default_factory=dict)
    once: dict[str, Any] = field(default_factory=dict)
    trace: str = ""
    logged: int = 0

    def dumps(self) -> bytes:
        data: dict[str, Any] = {}
        if self.answers:
            data["a"] = {k: [d, v] for k, (d, v) in self.answers.items()}
        if self.pending:
            data["p"] = self.pending
        if self.once:
            data["o"] = self.once
        if self.trace:
            data["t"] = self.trace
        if self.logged:
            data["l"] = self.logged
        return orjson.dumps(data)

    @classmethod
    def loads(cls, raw: bytes) -> Journal:
        """Read a journal; only ever called on authenticated plaintext, so shape errors are bugs."""
        data = orjson.loads(raw)
        answered = data.get("a")
        answers = {k: (v[0], v[1]) for k, v in answered.items()} if answered else {}
        return cls(answers, data.get("p") or {}, data.get("o") or {}, data.get("t") or "", data.get("l") or 0)

    def answers_size(self) -> int:
        """The bytes the recorded answers take in the journal (what the client put into the state)."""
        return len(orjson.dumps({k: v for k, (_, v) in self.answers.items()})) if self.answers else 0

    def largest_answer(self) -> tuple[str, str | None, int] | None:
        """The recorded answer that takes the most room: (ask key, the form field that takes the most room in
        it, or None when it is not a form's, its bytes), or None without answers (protocol.md P102)."""
        if not self.answers:
            return None
        key, (_, value) = max(self.answers.items(), key=lambda item: len(orjson.dumps(item[1][1])))
        content = value.get("content") if isinstance(value, dict) else None
        field = (
            max(content, key=lambda name: len(orjson.dumps(content[name])))
            if isinstance(content, dict) and content
            else None
        )
        return key, field, len(orjson.dumps(value))
