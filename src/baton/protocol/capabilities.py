"""Client capabilities as declared per request, and the one table of what each ask needs (protocol.md P8)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from .extensions import NONE, Extensions, peer_extensions


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
    extensions: Extensions = field(default_factory=lambda: NONE)
    """The extensions the client declared (identifier -> settings), malformed entries left out (P141)."""

    @classmethod
    def parse(cls, caps: dict[str, Any]) -> ClientCapabilities:
        """Read the declared capabilities; unknown keys are tolerated (protocol.md P6).

        A client sends the same capabilities with every request: the parsed form is remembered by content.
        """
        try:
            key = orjson.dumps(caps)
        except TypeError:  # pragma: no cover - decoded JSON always serializes
            return cls._parse(caps)
        return _parsed(key)

    @classmethod
    def _parse(cls, caps: dict[str, Any]) -> ClientCapabilities:
        elicitation = caps.get("elicitation")
        form = url = False
        if isinstance(elicitation, dict):
            form = "form" in elicitation
            url = "url" in elicitation
            if not form and not url:
                form = True  # `elicitation: {}` means form only (protocol.md P6).
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
            extensions=peer_extensions(caps),
        )

    @property
    def deprecated(self) -> tuple[str, ...]:
        """The deprecated capabilities (SEP-2577) this request declared."""
        return tuple(name for name, on in (("sampling", self.sampling), ("roots", self.roots)) if on)


NO_CAPABILITIES = ClientCapabilities(raw={})


@functools.lru_cache(maxsize=256)  # distinct capability sets remembered, by their JSON
def _parsed(key: bytes) -> ClientCapabilities:
    return ClientCapabilities._parse(orjson.loads(key))


# The one table of what each kind of ask needs: the capability object a client declares to allow it
# (sent in -32021's data when it is missing). Each kind is also the `ClientCapabilities` flag that grants it.
ASK_KINDS: Final[dict[str, dict[str, Any]]] = {
    "form": {"elicitation": {"form": {}}},
    "url": {"elicitation": {"url": {}}},
    "sampling": {"sampling": {}},
    "sampling_tools": {"sampling": {"tools": {}}},
    "sampling_context": {"sampling": {"context": {}}},
    "roots": {"roots": {}},
}
_FORM: Final = ("form",)
_URL: Final = ("url",)
_ROOTS: Final = ("roots",)


def ask_kinds(input_request: dict[str, Any]) -> tuple[str, ...]:
    """The kinds (keys of `ASK_KINDS`) that one input request needs, all of them."""
    method = input_request["method"]
    params = input_request.get("params") or {}
    if method == "elicitation/create":
        # An absent mode is form mode (protocol.md P7).
        return _URL if params.get("mode") == "url" else _FORM
    if method == "sampling/createMessage":
        kinds = ["sampling"]
        if "tools" in params or "toolChoice" in params:
            kinds.append("sampling_tools")
        if params.get("includeContext", "none") != "none":
            kinds.append("sampling_context")
        return tuple(kinds)
    if method == "roots/list":
        return _ROOTS
    raise ValueError(f"not an input request method: {method}")


def capability_for(*kinds: str) -> dict[str, Any]:
    """The capability object a client declares to allow these kinds of ask (merged, one level deep)."""
    needed: dict[str, Any] = {}
    for kind in kinds:
        for name, value in ASK_KINDS[kind].items():
            needed[name] = {**needed.get(name, {}), **value}
    return needed


def granted(caps: ClientCapabilities, kind: str) -> bool:
    """Whether the declared capabilities allow one kind of ask."""
    return bool(getattr(caps, kind))


def required_capability(input_request: dict[str, Any]) -> dict[str, Any]:
    """The `ClientCapabilities` object that an input request needs, as sent in -32021's data."""
    return capability_for(*ask_kinds(input_request))


_CANNOT: Final = (  # what each missing capability keeps a person (or the model) from doing, in words a model can relay
    ("url", "the user to open a link in a browser, and this client cannot show one"),
    ("form", "the user to fill in a form, and this client cannot show one"),
    ("sampling", "the client's language model (MCP sampling), which this client does not offer"),
    ("roots", "the client's roots (MCP roots), which this client does not share"),
)


def cannot_ask(required: dict[str, Any]) -> str:
    """A sentence for a person or a model: what the missing capabilities `required` (as in -32021's data) keep
    the server from asking (protocol.md P96)."""
    elicitation = required.get("elicitation") or {}
    have = {"url": "url" in elicitation, "form": "form" in elicitation, "sampling": "sampling" in required}
    have["roots"] = "roots" in required
    needs = [text for kind, text in _CANNOT if have[kind]] or ["input this client did not declare it can give"]
    return " It also needs ".join(needs)


def allows(caps: ClientCapabilities, input_request: dict[str, Any]) -> bool:
    """Whether the request's declared capabilities let the server send this input request (never an
    unknown method)."""
    if input_request["method"] == "elicitation/create":  # the usual ask, without the call to ask_kinds
        params = input_request.get("params") or {}
        return caps.url if params.get("mode") == "url" else caps.form
    try:
        kinds = ask_kinds(input_request)
    except ValueError:
        return False
    for kind in kinds:  # noqa: SIM110 - a plain loop: no generator per ask (the hot path)
        if not getattr(caps, kind):
            return False
    return True
