"""Step mode: one round of a multi round-trip request as a plain, serializable value.

A host that drives rounds itself (a UI, a job queue) gets a `Round` when the server asks for
input, can show it, store it (`to_json`), resume it in another process (`Round.from_json`), and
answer it with `Client.advance`. The `requestState` is kept byte for byte and never inspected.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from .questions import Question


@dataclass(frozen=True, slots=True, kw_only=True)
class Round:
    """A request that the server answered with `input_required`, waiting for answers."""

    method: str
    params: dict[str, Any]  # the original params: every retry repeats them
    input_requests: dict[str, dict[str, Any]] = field(default_factory=dict)
    request_state: str | None = None
    number: int = 1
    server: str | None = None

    def questions(self) -> list[Question]:
        """The elicitation questions of this round, parsed (sampling and roots asks are left raw)."""
        return [
            Question.from_params(key, ask.get("params") or {}, self.server)
            for key, ask in self.input_requests.items()
            if ask.get("method") == "elicitation/create"
        ]

    def to_json(self) -> str:
        data: dict[str, Any] = {
            "method": self.method,
            "params": self.params,
            "inputRequests": self.input_requests,
            "number": self.number,
        }
        if self.request_state is not None:
            data["requestState"] = self.request_state
        if self.server is not None:
            data["server"] = self.server
        return orjson.dumps(data).decode()

    @classmethod
    def from_json(cls, text: str | bytes) -> Round:
        data = orjson.loads(text)
        return cls(
            method=data["method"],
            params=data["params"],
            input_requests=data.get("inputRequests") or {},
            request_state=data.get("requestState"),
            number=int(data.get("number", 1)),
            server=data.get("server"),
        )
