"""Client capabilities as declared per request, and the capability each input request needs (digest §6.3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson


@dataclass(frozen=True, slots=True)
class ClientCapabilities:
    """What the client declared in `_meta` for this one request."""

    form: bool = False
    url: bool = False
    sampling: bool = False
    sampling_tools: bool = False
    sampling_context: bool = False
    roots: bool = False
    raw: Any = None

    @classmethod
    def parse(cls, caps: dict[str, Any]) -> ClientCapabilities:
        """Read the declared capabilities; unknown keys are tolerated (digest §2.2).

        A client sends the same capabilities with every request: the parsed form is remembered by content.
        """
        try:
            key = orjson.dumps(caps)
        except TypeError:  # pragma: no cover - decoded JSON always serializes
            return cls._parse(caps)
        parsed = _PARSED.get(key)
        if parsed is None:
            parsed = cls._parse(caps)
            if len(_PARSED) >= _PARSED_MAX:
                _PARSED.clear()
            _PARSED[key] = parsed
        return parsed

    @classmethod
    def _parse(cls, caps: dict[str, Any]) -> ClientCapabilities:
        elicitation = caps.get("elicitation")
        form = url = False
        if isinstance(elicitation, dict):
            form = "form" in elicitation
            url = "url" in elicitation
            if not form and not url:
                form = True  # `elicitation: {}` means form only (ambiguity A13).
        sampling = caps.get("sampling")
        has_sampling = isinstance(sampling, dict)
        return cls(
            form=form,
            url=url,
            sampling=has_sampling,
            sampling_tools=has_sampling and "tools" in sampling,  # type: ignore[operator]
            sampling_context=has_sampling and "context" in sampling,  # type: ignore[operator]
            roots=isinstance(caps.get("roots"), dict),
            raw=caps,
        )

    @property
    def deprecated(self) -> tuple[str, ...]:
        """The deprecated capabilities (SEP-2577) this request declared."""
        return tuple(name for name, on in (("sampling", self.sampling), ("roots", self.roots)) if on)


NO_CAPABILITIES = ClientCapabilities(raw={})
_PARSED: dict[bytes, ClientCapabilities] = {}
_PARSED_MAX = 256  # distinct capability sets remembered; a flood of new ones only empties the table


def required_capability(input_request: dict[str, Any]) -> dict[str, Any]:
    """The `ClientCapabilities` object that an input request needs, as sent in -32021's data."""
    method = input_request["method"]
    params = input_request.get("params") or {}
    if method == "elicitation/create":
        return {"elicitation": {"url": {}}} if params.get("mode") == "url" else {"elicitation": {"form": {}}}
    if method == "sampling/createMessage":
        needs: dict[str, Any] = {}
        if "tools" in params or "toolChoice" in params:
            needs["tools"] = {}
        if params.get("includeContext", "none") != "none":
            needs["context"] = {}
        return {"sampling": needs}
    if method == "roots/list":
        return {"roots": {}}
    raise ValueError(f"not an input request method: {method}")


def allows(caps: ClientCapabilities, input_request: dict[str, Any]) -> bool:
    """Whether the request's declared capabilities let the server send this input request."""
    method = input_request["method"]
    params = input_request.get("params") or {}
    if method == "elicitation/create":
        # An absent mode is form mode (ambiguity A12).
        return caps.url if params.get("mode") == "url" else caps.form
    if method == "sampling/createMessage":
        if ("tools" in params or "toolChoice" in params) and not caps.sampling_tools:
            return False
        if params.get("includeContext", "none") != "none" and not caps.sampling_context:
            return False
        return caps.sampling
    if method == "roots/list":
        return caps.roots
    return False
