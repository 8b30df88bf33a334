"""Unit tests of the protocol core: message parsing, `_meta`, versions, capabilities and standard headers.

Rules come from the MCP 2026-07-28 digest: §2 (`_meta`, JSON-RPC, version negotiation), §6.3 (capability
mapping), §7.1 (Streamable HTTP headers and their value encoding), §10 (error codes) and §13 (ambiguities).
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import orjson
import pytest

from baton.protocol import errors, messages
from baton.protocol.capabilities import NO_CAPABILITIES, ClientCapabilities, allows, required_capability
from baton.protocol.constants import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
)
from baton.protocol.errors import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_VERSION,
    McpError,
    http_status,
)
from baton.protocol.headers import (
    Headers,
    check_params,
    check_standard,
    decode_value,
    encode_value,
    header_param_specs,
    header_text,
    valid_header_name,
)
from baton.protocol.messages import (
    check_meta,
    check_version,
    error_response,
    from_object,
    notification,
    parse,
    request_id_of,
    result_response,
)

V = "2026-07-28"


def b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


def good_meta(**extra: Any) -> dict[str, Any]:
    return {
        META_PROTOCOL_VERSION: V,
        META_CLIENT_CAPABILITIES: {"elicitation": {"form": {}}},
        META_CLIENT_INFO: {"name": "t", "version": "0"},
        **extra,
    }


def expect(code: int, fn: Any, *args: Any) -> McpError:
    with pytest.raises(McpError) as info:
        fn(*args)
    assert info.value.code == code, info.value
    return info.value


# --------------------------------------------------------------------------------------------------
# Constants and error codes (digest §1, §10)
# --------------------------------------------------------------------------------------------------


def test_version_constants() -> None:
    assert PROTOCOL_VERSION == V
    assert SUPPORTED_VERSIONS == (V,)
    assert META_PROTOCOL_VERSION == "io.modelcontextprotocol/protocolVersion"
    assert META_CLIENT_CAPABILITIES == "io.modelcontextprotocol/clientCapabilities"


def test_error_code_values() -> None:
    assert (PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR) == (
        -32700,
        -32600,
        -32601,
        -32602,
        -32603,
    )
    assert (HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION) == (-32020, -32021, -32022)


@pytest.mark.parametrize(
    ("code", "status"),
    [
        (PARSE_ERROR, 400),
        (INVALID_REQUEST, 400),
        (INVALID_PARAMS, 400),
        (HEADER_MISMATCH, 400),
        (MISSING_CAPABILITY, 400),
        (UNSUPPORTED_VERSION, 400),
        (METHOD_NOT_FOUND, 404),
        (INTERNAL_ERROR, 200),
        (-32000, 200),
        (1234, 200),
        (0, 200),
    ],
)
def test_http_status(code: int, status: int) -> None:
    assert http_status(code) == status


def test_mcp_error_to_dict() -> None:
    assert McpError(-32602, "bad").to_dict() == {"code": -32602, "message": "bad"}
    assert McpError(-32602, "bad", {"uri": "x"}).to_dict() == {
        "code": -32602,
        "message": "bad",
        "data": {"uri": "x"},
    }
    # falsy but present data is still sent
    assert McpError(-32602, "bad", {}).to_dict()["data"] == {}
    assert McpError(-32602, "bad", 0).to_dict()["data"] == 0
    err = McpError(-32603, "boom")
    assert str(err) == "boom"
    assert "-32603" in repr(err)


def test_error_helpers() -> None:
    e = errors.invalid_params("nope", {"uri": "u"})
    assert (e.code, e.message, e.data) == (INVALID_PARAMS, "nope", {"uri": "u"})
    e = errors.method_not_found("ping")
    assert e.code == METHOD_NOT_FOUND
    assert "ping" in e.message
    e = errors.CapabilityMissing({"sampling": {}})
    assert e.code == MISSING_CAPABILITY
    assert e.data == {"requiredCapabilities": {"sampling": {}}}
    assert "sampling" in e.message


# --------------------------------------------------------------------------------------------------
# Parsing (digest §2.1 JSON-RPC rules, §7.1 one message per POST)
# --------------------------------------------------------------------------------------------------


def test_parse_request_bytes_and_str() -> None:
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"_meta": good_meta()}}
    for raw in (orjson.dumps(body), orjson.dumps(body).decode()):
        msg = parse(raw)
        assert msg.method == "tools/list"
        assert msg.id == 7
        assert msg.is_request is True
        assert msg.params == {"_meta": good_meta()}


@pytest.mark.parametrize("rid", [0, -1, 2**62, "", "abc", "7"])
def test_parse_accepts_string_and_integer_ids(rid: Any) -> None:
    msg = from_object({"jsonrpc": "2.0", "id": rid, "method": "m"})
    assert msg.id == rid
    assert type(msg.id) is type(rid)
    assert msg.is_request


def test_parse_absent_params_is_empty_object() -> None:
    msg = parse(b'{"jsonrpc":"2.0","id":"a","method":"server/discover"}')
    assert msg.params == {}


def test_parse_notification() -> None:
    msg = parse(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}')
    assert msg.is_request is False
    assert msg.id is None
    assert msg.method == "notifications/cancelled"
    assert msg.params == {"requestId": 3}


@pytest.mark.parametrize(
    "raw",
    [b"", b"{", b"not json", b"{'a': 1}", b'{"a":1} trailing', b"\xff\xfe{}", '{"jsonrpc":', b"[1,"],
)
def test_parse_bad_json_is_32700(raw: bytes | str) -> None:
    err = expect(PARSE_ERROR, parse, raw)
    assert http_status(err.code) == 400


@pytest.mark.parametrize(
    "data",
    [
        [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}],
        [],
        [{"jsonrpc": "2.0", "method": "notifications/cancelled"}],
    ],
)
def test_batches_are_refused(data: Any) -> None:
    err = expect(INVALID_REQUEST, parse, orjson.dumps(data))
    assert "batch" in err.message.lower()


@pytest.mark.parametrize("data", [1, 1.5, "tools/list", None, True, False])
def test_non_objects_are_refused(data: Any) -> None:
    expect(INVALID_REQUEST, parse, orjson.dumps(data))


@pytest.mark.parametrize("jsonrpc", [None, "1.0", "2", 2.0, 2, "2.0 "])
def test_bad_jsonrpc_member(jsonrpc: Any) -> None:
    data: dict[str, Any] = {"id": 1, "method": "tools/list"}
    if jsonrpc is not None:
        data["jsonrpc"] = jsonrpc
    err = expect(INVALID_REQUEST, from_object, data)
    assert "jsonrpc" in err.message


@pytest.mark.parametrize("rid", [True, False, None, 1.5, 1.0, [], {}, [1]])
def test_bad_id_types(rid: Any) -> None:
    err = expect(INVALID_REQUEST, from_object, {"jsonrpc": "2.0", "id": rid, "method": "tools/list"})
    assert "id" in err.message


def test_null_id_is_not_a_notification() -> None:
    # The id member is present, so this is a request with a forbidden id (digest §2.1: never null).
    expect(INVALID_REQUEST, parse, b'{"jsonrpc":"2.0","id":null,"method":"notifications/cancelled"}')


@pytest.mark.parametrize(
    "data",
    [
        {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "x"}},
        {"jsonrpc": "2.0", "id": 1},
        {"jsonrpc": "2.0", "id": 1, "method": 5},
        {"jsonrpc": "2.0", "id": 1, "method": None},
        {"jsonrpc": "2.0", "method": ["tools/list"]},
    ],
)
def test_responses_and_missing_method_are_refused(data: Any) -> None:
    err = expect(INVALID_REQUEST, from_object, data)
    assert "method" in err.message


@pytest.mark.parametrize("params", [[], [1, 2], "x", 5, True])
def test_params_must_be_an_object(params: Any) -> None:
    err = expect(INVALID_REQUEST, from_object, {"jsonrpc": "2.0", "id": 1, "method": "m", "params": params})
    assert "params" in err.message
    # The same for a notification
    expect(INVALID_REQUEST, from_object, {"jsonrpc": "2.0", "method": "notifications/x", "params": params})


def test_request_id_of() -> None:
    assert request_id_of(b'{"jsonrpc":"1.0","id":5,"method":"x"}') == 5
    assert request_id_of(b'{"id":"abc","params":[]}') == "abc"
    assert request_id_of(b'{"id":true}') is None
    assert request_id_of(b'{"id":null}') is None
    assert request_id_of(b'{"id":1.5}') is None
    assert request_id_of(b'[{"id":1}]') is None
    assert request_id_of(b"{") is None
    assert request_id_of(b'"x"') is None


def test_response_builders() -> None:
    assert result_response(3, {"resultType": "complete"}) == {
        "jsonrpc": "2.0",
        "id": 3,
        "result": {"resultType": "complete"},
    }
    err = error_response("a", McpError(-32601, "Method not found: x"))
    assert err == {"jsonrpc": "2.0", "id": "a", "error": {"code": -32601, "message": "Method not found: x"}}
    # An error for a message whose id could not be read carries "id": null
    err = error_response(None, McpError(-32700, "Parse error"))
    assert err["id"] is None
    assert "result" not in err
    note = notification("notifications/progress", {"progressToken": 1, "progress": 0.5})
    assert note == {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": 1, "progress": 0.5},
    }
    assert "id" not in note


def test_servers_build_envelopes_only_with_the_builders() -> None:
    """The serving side writes no JSON-RPC envelope by hand: `baton.protocol.messages` builds every one."""
    src = Path(messages.__file__).parents[1]
    for path in sorted([*(src / "serve").glob("*.py"), *(src / "server").glob("*.py")]):
        text = path.read_text()
        assert '"jsonrpc"' not in text, f"{path.relative_to(src)} builds a JSON-RPC envelope by hand"
        assert '"code": -' not in text, f"{path.relative_to(src)} spells an error code instead of protocol.errors"


# --------------------------------------------------------------------------------------------------
# check_meta (digest §2.1, §2.5 step 1)
# --------------------------------------------------------------------------------------------------


def test_check_meta_returns_version_and_caps() -> None:
    caps = {"elicitation": {}, "sampling": {"tools": {}}}
    version, got = check_meta({"_meta": good_meta(**{META_CLIENT_CAPABILITIES: caps})})
    assert version == V
    assert got == caps


def test_check_meta_client_info_is_optional_and_caps_may_be_empty() -> None:
    version, caps = check_meta({"_meta": {META_PROTOCOL_VERSION: V, META_CLIENT_CAPABILITIES: {}}})
    assert (version, caps) == (V, {})


def test_check_meta_does_not_judge_the_version() -> None:
    # An unsupported version is step 3 (-32022), not step 1.
    version, _ = check_meta({"_meta": good_meta(**{META_PROTOCOL_VERSION: "1900-01-01"})})
    assert version == "1900-01-01"


def _meta_error(params: dict[str, Any]) -> McpError:
    err = expect(INVALID_PARAMS, check_meta, params)
    assert http_status(err.code) == 400
    # legacy clients learn the supported versions only from this message (digest §2.5)
    assert V in err.message
    return err


@pytest.mark.parametrize("meta", [None, [], "x", 5, True])
def test_check_meta_missing_or_non_object_meta(meta: Any) -> None:
    params: dict[str, Any] = {} if meta is None else {"_meta": meta}
    err = _meta_error(params)
    assert "_meta" in err.message


def test_check_meta_missing_meta_with_other_params() -> None:
    _meta_error({"name": "x", "arguments": {}})


@pytest.mark.parametrize("version", ["<absent>", None, 20260728, ["2026-07-28"], {}])
def test_check_meta_missing_protocol_version(version: Any) -> None:
    meta = good_meta()
    if version == "<absent>":
        del meta[META_PROTOCOL_VERSION]
    else:
        meta[META_PROTOCOL_VERSION] = version
    err = _meta_error({"_meta": meta})
    assert META_PROTOCOL_VERSION in err.message


@pytest.mark.parametrize("caps", ["<absent>", None, [], "elicitation", True, 1])
def test_check_meta_missing_or_non_object_capabilities(caps: Any) -> None:
    meta = good_meta()
    if caps == "<absent>":
        del meta[META_CLIENT_CAPABILITIES]
    else:
        meta[META_CLIENT_CAPABILITIES] = caps
    err = _meta_error({"_meta": meta})
    assert META_CLIENT_CAPABILITIES in err.message


# --------------------------------------------------------------------------------------------------
# check_version (digest §2.5)
# --------------------------------------------------------------------------------------------------


def test_check_version_accepts_supported() -> None:
    check_version(V)


@pytest.mark.parametrize("requested", ["1900-01-01", "2025-11-25", "2025-06-18", "", "2026-07-28 ", "DRAFT"])
def test_check_version_refuses_with_data(requested: str) -> None:
    err = expect(UNSUPPORTED_VERSION, check_version, requested)
    assert err.data == {"supported": ["2026-07-28", "2025-11-25"], "requested": requested}
    assert V in err.message
    assert http_status(err.code) == 400
    assert err.to_dict()["data"]["requested"] == requested


# --------------------------------------------------------------------------------------------------
# ClientCapabilities.parse (digest §2.2, A13)
# --------------------------------------------------------------------------------------------------


def caps_of(c: ClientCapabilities) -> tuple[bool, ...]:
    return (c.form, c.url, c.sampling, c.sampling_tools, c.sampling_context, c.roots)


@pytest.mark.parametrize(
    ("declared", "expected"),
    [
        ({}, (False, False, False, False, False, False)),
        ({"elicitation": {}}, (True, False, False, False, False, False)),
        ({"elicitation": {"form": {}}}, (True, False, False, False, False, False)),
        ({"elicitation": {"url": {}}}, (False, True, False, False, False, False)),
        ({"elicitation": {"form": {}, "url": {}}}, (True, True, False, False, False, False)),
        # neither sub-key (only an unknown one) still means form only
        ({"elicitation": {"future": {}}}, (True, False, False, False, False, False)),
        ({"elicitation": True}, (False, False, False, False, False, False)),
        ({"elicitation": None}, (False, False, False, False, False, False)),
        ({"elicitation": []}, (False, False, False, False, False, False)),
        ({"sampling": {}}, (False, False, True, False, False, False)),
        ({"sampling": {"tools": {}}}, (False, False, True, True, False, False)),
        ({"sampling": {"context": {}}}, (False, False, True, False, True, False)),
        ({"sampling": {"tools": {}, "context": {}}}, (False, False, True, True, True, False)),
        ({"sampling": True}, (False, False, False, False, False, False)),
        ({"roots": {}}, (False, False, False, False, False, True)),
        ({"roots": {"listChanged": True}}, (False, False, False, False, False, True)),
        ({"roots": True}, (False, False, False, False, False, False)),
    ],
)
def test_parse_capabilities(declared: dict[str, Any], expected: tuple[bool, ...]) -> None:
    c = ClientCapabilities.parse(declared)
    assert caps_of(c) == expected
    assert c.raw == declared  # equal: a parsed set is remembered by content


def test_unknown_capability_keys_are_tolerated() -> None:
    declared = {
        "experimental": {"x": {}},
        "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}},
        "somethingNew": {"a": 1},
        "elicitation": {"url": {}, "extra": 1},
    }
    c = ClientCapabilities.parse(declared)
    assert caps_of(c) == (False, True, False, False, False, False)
    assert c.raw == declared


def test_deprecated_capabilities() -> None:
    assert ClientCapabilities.parse({}).deprecated == ()
    assert ClientCapabilities.parse({"elicitation": {}}).deprecated == ()
    assert ClientCapabilities.parse({"sampling": {}}).deprecated == ("sampling",)
    assert ClientCapabilities.parse({"roots": {}}).deprecated == ("roots",)
    assert ClientCapabilities.parse({"roots": {}, "sampling": {"tools": {}}}).deprecated == (
        "sampling",
        "roots",
    )


def test_no_capabilities_constant() -> None:
    assert caps_of(NO_CAPABILITIES) == (False,) * 6
    assert NO_CAPABILITIES.raw == {}


# --------------------------------------------------------------------------------------------------
# allows / required_capability: every row of digest §6.3
# --------------------------------------------------------------------------------------------------

FORM = {"method": "elicitation/create", "params": {"mode": "form", "message": "m", "requestedSchema": {}}}
FORM_NO_MODE = {"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {}}}
URL = {"method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": "https://x.example/"}}
MSGS = [{"role": "user", "content": {"type": "text", "text": "hi"}}]
SAMPLING = {"method": "sampling/createMessage", "params": {"messages": MSGS, "maxTokens": 10}}
SAMPLING_NONE_CTX = {
    "method": "sampling/createMessage",
    "params": {"messages": MSGS, "maxTokens": 10, "includeContext": "none"},
}
SAMPLING_TOOLS = {
    "method": "sampling/createMessage",
    "params": {
        "messages": MSGS,
        "maxTokens": 10,
        "tools": [{"name": "t", "inputSchema": {"type": "object"}}],
    },
}
SAMPLING_TOOL_CHOICE = {
    "method": "sampling/createMessage",
    "params": {"messages": MSGS, "maxTokens": 10, "toolChoice": {"mode": "auto"}},
}
SAMPLING_THIS = {
    "method": "sampling/createMessage",
    "params": {"messages": MSGS, "maxTokens": 10, "includeContext": "thisServer"},
}
SAMPLING_ALL = {
    "method": "sampling/createMessage",
    "params": {"messages": MSGS, "maxTokens": 10, "includeContext": "allServers"},
}
ROOTS = {"method": "roots/list"}
ROOTS_WITH_PARAMS = {"method": "roots/list", "params": {"_meta": {}}}

DECLARATIONS = {
    "none": {},
    "elicitation{}": {"elicitation": {}},
    "form": {"elicitation": {"form": {}}},
    "url": {"elicitation": {"url": {}}},
    "form+url": {"elicitation": {"form": {}, "url": {}}},
    "sampling": {"sampling": {}},
    "sampling.tools": {"sampling": {"tools": {}}},
    "sampling.context": {"sampling": {"context": {}}},
    "sampling.all": {"sampling": {"tools": {}, "context": {}}},
    "roots": {"roots": {}},
    "everything": {
        "elicitation": {"form": {}, "url": {}},
        "sampling": {"tools": {}, "context": {}},
        "roots": {},
    },
}

# (input request, the declarations that allow it); every other declaration must refuse it.
ROWS: list[tuple[str, dict[str, Any], set[str]]] = [
    ("form", FORM, {"elicitation{}", "form", "form+url", "everything"}),
    ("form, mode absent", FORM_NO_MODE, {"elicitation{}", "form", "form+url", "everything"}),
    ("url", URL, {"url", "form+url", "everything"}),
    ("sampling", SAMPLING, {"sampling", "sampling.tools", "sampling.context", "sampling.all", "everything"}),
    (
        "sampling, includeContext none",
        SAMPLING_NONE_CTX,
        {"sampling", "sampling.tools", "sampling.context", "sampling.all", "everything"},
    ),
    ("sampling with tools", SAMPLING_TOOLS, {"sampling.tools", "sampling.all", "everything"}),
    ("sampling with toolChoice", SAMPLING_TOOL_CHOICE, {"sampling.tools", "sampling.all", "everything"}),
    ("sampling thisServer", SAMPLING_THIS, {"sampling.context", "sampling.all", "everything"}),
    ("sampling allServers", SAMPLING_ALL, {"sampling.context", "sampling.all", "everything"}),
    ("roots", ROOTS, {"roots", "everything"}),
    ("roots with params", ROOTS_WITH_PARAMS, {"roots", "everything"}),
]


@pytest.mark.parametrize(("row", "request_", "allowed"), ROWS, ids=[r[0] for r in ROWS])
def test_allows_every_row(row: str, request_: dict[str, Any], allowed: set[str]) -> None:
    for name, declared in DECLARATIONS.items():
        got = allows(ClientCapabilities.parse(declared), request_)
        assert got is (name in allowed), f"{row} with {name}: {got}"


def test_elicitation_empty_object_does_not_allow_url() -> None:
    # Ambiguity A13: `elicitation: {}` is form only, never "both modes".
    assert not allows(ClientCapabilities.parse({"elicitation": {}}), URL)


@pytest.mark.parametrize(
    ("request_", "needed"),
    [
        (FORM, {"elicitation": {"form": {}}}),
        (FORM_NO_MODE, {"elicitation": {"form": {}}}),
        (URL, {"elicitation": {"url": {}}}),
        (SAMPLING, {"sampling": {}}),
        (SAMPLING_NONE_CTX, {"sampling": {}}),
        (SAMPLING_TOOLS, {"sampling": {"tools": {}}}),
        (SAMPLING_TOOL_CHOICE, {"sampling": {"tools": {}}}),
        (ROOTS, {"roots": {}}),
        (ROOTS_WITH_PARAMS, {"roots": {}}),
    ],
)
def test_required_capability(request_: dict[str, Any], needed: dict[str, Any]) -> None:
    assert required_capability(request_) == needed
    # What -32021 tells the client to declare is enough to be allowed.
    assert allows(ClientCapabilities.parse(needed), request_)


@pytest.mark.parametrize("request_", [SAMPLING_THIS, SAMPLING_ALL], ids=["thisServer", "allServers"])
def test_required_capability_for_include_context(request_: dict[str, Any]) -> None:
    needed = required_capability(request_)
    assert allows(ClientCapabilities.parse(needed), request_)
    assert needed == {"sampling": {"context": {}}}


def test_tools_and_include_context_need_both() -> None:
    request_ = {
        "method": "sampling/createMessage",
        "params": {**SAMPLING_TOOLS["params"], "includeContext": "thisServer"},
    }
    assert not allows(ClientCapabilities.parse({"sampling": {"tools": {}}}), request_)
    assert not allows(ClientCapabilities.parse({"sampling": {"context": {}}}), request_)
    assert allows(ClientCapabilities.parse({"sampling": {"tools": {}, "context": {}}}), request_)
    assert required_capability(request_) == {"sampling": {"tools": {}, "context": {}}}


def test_unknown_input_method() -> None:
    req = {"method": "tools/call", "params": {"name": "x"}}
    assert not allows(ClientCapabilities.parse(DECLARATIONS["everything"]), req)
    with pytest.raises(ValueError, match="tools/call"):
        required_capability(req)


# --------------------------------------------------------------------------------------------------
# Header value encoding (digest §7.1)
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    ["get_weather", "us-east-1", "x", "a b c", "file:///tmp/a.txt", "!~", "=?base6", "abc?=", "?=", "=?"],
)
def test_plain_ascii_is_kept(value: str) -> None:
    assert encode_value(value) == value
    assert decode_value(value) == value


@pytest.mark.parametrize(
    "value",
    [
        "café",
        "東京",
        "emoji 🚀",
        "a\tb",
        "a\nb",
        "\x7f",
        "a\x00b",
        " leading",
        "trailing ",
        " both ",
        " ",
        "",
        "=?base64?Zm9v?=",
        "=?base64?",
        "=?base64?not-closed",
        "=?base64??=",
    ],
)
def test_other_values_are_base64(value: str) -> None:
    enc = encode_value(value)
    assert enc.startswith("=?base64?")
    assert enc.endswith("?=")
    assert base64.b64decode(enc[len("=?base64?") : -2], validate=True).decode() == value
    assert decode_value(enc) == value


@pytest.mark.parametrize(
    "value",
    [
        "plain",
        "Zürich",
        "日本語のツール",
        "🚀🚀",
        "  padded  ",
        "tab\there",
        "=?base64?x?=",
        "",
        "?=",
        "line\r\n",
    ],
)
def test_round_trip(value: str) -> None:
    assert decode_value(encode_value(value)) == value


def test_encoded_header_is_ascii() -> None:
    enc = encode_value("ünïcödé ✓")
    enc.encode("ascii")
    assert enc == b64("ünïcödé ✓")


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("  foo  ", "foo"),
        ("\tfoo\t", "foo"),
        (" a b ", "a b"),
        ("  " + b64("héllo") + " \t", "héllo"),
    ],
)
def test_decode_trims_surrounding_whitespace(raw: str, value: str) -> None:
    assert decode_value(raw) == value


@pytest.mark.parametrize(
    "raw",
    [
        "=?base64?Zm9?=",  # bad padding
        "=?base64?Zm9vYg?=",  # missing padding
        "=?base64?Zm9vY===?=",  # too much padding
        "=?base64?Zm9v!?=",  # not in the alphabet
        "=?base64?Zm-v?=",  # urlsafe alphabet is not the header alphabet
        "=?base64?Zm_v?=",
        "=?base64?Zm 9v?=",  # inner space
        "=?base64?" + base64.b64encode(b"\xff\xfe").decode() + "?=",  # not UTF-8
    ],
)
def test_decode_rejects_bad_base64(raw: str) -> None:
    with pytest.raises(ValueError):
        decode_value(raw)


@pytest.mark.parametrize(
    "raw",
    ["=?base64?Zm9v", "Zm9v?=", "=?BASE64?Zm9v?=", "=?Base64?Zm9v?=", "=?base64?="],
)
def test_only_one_marker_or_uppercase_is_literal(raw: str) -> None:
    assert decode_value(raw) == raw


@pytest.mark.parametrize("raw", ["café", "a\x01b", "a\nb", "\x7f", "ÿ"])
def test_decode_rejects_raw_non_visible(raw: str) -> None:
    with pytest.raises(ValueError):
        decode_value(raw)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, None),
        (True, "true"),
        (False, "false"),
        (0, "0"),
        (42, "42"),
        (-7, "-7"),
        ("s", "s"),
        ("", ""),
        (1.5, None),
        ([1], None),
        ({"a": 1}, None),
    ],
)
def test_header_text(value: Any, text: str | None) -> None:
    assert header_text(value) == text


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("Region", True),
        ("X-Trace_Id.1", True),
        ("a!#$%&'*+-.^_`|~", True),
        ("", False),
        ("a b", False),
        ("a:b", False),
        ("a/b", False),
        ("(x)", False),
        ('"q"', False),
        ("é", False),
        ("a\tb", False),
        (5, False),
        (None, False),
    ],
)
def test_valid_header_name(name: Any, ok: bool) -> None:
    assert valid_header_name(name) is ok


# --------------------------------------------------------------------------------------------------
# check_standard (digest §7.1, A2)
# --------------------------------------------------------------------------------------------------


_NAMES = {"mcp_method": "Mcp-Method", "mcp_name": "Mcp-Name"}


def hdrs(**kw: str) -> dict[str, str]:
    """Standard headers spelled as clients send them (names are case-insensitive)."""
    base = {"MCP-Protocol-Version": V}
    base.update({_NAMES[k]: v for k, v in kw.items()})
    return base


def std(headers: dict[str, str], method: str, params: dict[str, Any], version: str) -> None:
    """check_standard on headers built the way the transport builds them (raw latin-1 bytes)."""
    check_standard(Headers.of(headers), method, params, version)


def cp(headers: dict[str, str], arguments: dict[str, Any], specs: dict[str, tuple[str, ...]]) -> None:
    """check_params on headers built the way the transport builds them."""
    check_params(Headers.of(headers), arguments, specs)


def test_headers_container() -> None:
    h = Headers.of({"Mcp-Method": "tools/list", "MCP-PROTOCOL-VERSION": V, "Mcp-Name": "caf\u00e9"})
    assert h.get("mcp-method") == "tools/list"
    assert h.get("mcp-protocol-version") == V
    assert h.get("mcp-name") == "caf\u00e9"  # latin-1 bytes come back as the same characters
    assert h.get("absent") is None
    assert h.get("absent", "d") == "d"
    assert "mcp-method" in h
    assert "absent" not in h
    assert h.to_dict() == {"mcp-method": "tools/list", "mcp-protocol-version": V, "mcp-name": "caf\u00e9"}


def test_header_names_are_case_insensitive() -> None:
    for names in (
        ("mcp-protocol-version", "mcp-method", "mcp-name"),
        ("MCP-PROTOCOL-VERSION", "MCP-METHOD", "MCP-NAME"),
        ("Mcp-Protocol-Version", "mcp-Method", "MCP-Name"),
    ):
        headers = dict(zip(names, (V, "tools/call", "t"), strict=True))
        std(headers, "tools/call", {"name": "t"}, V)
    cp({"MCP-PARAM-REGION": "eu"}, {"region": "eu"}, {"region": ("region",)})
    cp({"Mcp-Param-Region": "eu"}, {"region": "eu"}, {"region": ("region",)})


def mismatch(fn: Any, *args: Any) -> McpError:
    err = expect(HEADER_MISMATCH, fn, *args)
    assert err.message.startswith("Header mismatch")
    assert http_status(err.code) == 400
    return err


def test_check_standard_ok() -> None:
    std(hdrs(mcp_method="tools/list"), "tools/list", {}, V)
    std(hdrs(mcp_method="server/discover"), "server/discover", {}, V)
    std(hdrs(mcp_method="tools/call", mcp_name="get_weather"), "tools/call", {"name": "get_weather"}, V)
    std(hdrs(mcp_method="prompts/get", mcp_name="greet"), "prompts/get", {"name": "greet"}, V)
    std(
        hdrs(mcp_method="resources/read", mcp_name="file:///a/b.txt"),
        "resources/read",
        {"uri": "file:///a/b.txt"},
        V,
    )


def test_missing_protocol_version_header() -> None:
    err = mismatch(std, {"mcp-method": "tools/list"}, "tools/list", {}, V)
    assert "MCP-Protocol-Version" in err.message


@pytest.mark.parametrize("header", ["2025-11-25", "1900-01-01", "", "2026-07-29"])
def test_mismatched_protocol_version_header(header: str) -> None:
    err = mismatch(std, {"mcp-protocol-version": header, "mcp-method": "tools/list"}, "tools/list", {}, V)
    assert "MCP-Protocol-Version" in err.message


def test_protocol_version_header_whitespace_trimmed() -> None:
    std({"mcp-protocol-version": "  " + V + " ", "mcp-method": "tools/list"}, "tools/list", {}, V)


def test_body_version_is_what_the_header_is_compared_with() -> None:
    # The header names a supported version but the body another one: mismatch (A1 test 2).
    mismatch(std, hdrs(mcp_method="tools/list"), "tools/list", {}, "2025-11-25")
    # Both name the same unsupported version: no mismatch here (the version check answers -32022).
    std({"mcp-protocol-version": "1900-01-01", "mcp-method": "tools/list"}, "tools/list", {}, "1900-01-01")


def test_missing_method_header() -> None:
    err = mismatch(std, hdrs(), "tools/list", {}, V)
    assert "Mcp-Method" in err.message


@pytest.mark.parametrize("header", ["TOOLS/LIST", "Tools/List", "tools/call", "tools/list/", "tools list", ""])
def test_method_header_is_case_sensitive_and_exact(header: str) -> None:
    err = mismatch(std, hdrs(mcp_method=header), "tools/list", {}, V)
    assert "Mcp-Method" in err.message


def test_method_header_whitespace_trimmed() -> None:
    std(hdrs(mcp_method="  tools/list\t"), "tools/list", {}, V)


@pytest.mark.parametrize(
    ("method", "params"),
    [("tools/call", {"name": "t"}), ("prompts/get", {"name": "p"}), ("resources/read", {"uri": "file:///x"})],
)
def test_name_header_required(method: str, params: dict[str, Any]) -> None:
    err = mismatch(std, hdrs(mcp_method=method), method, params, V)
    assert "Mcp-Name" in err.message


def test_name_header_not_required_elsewhere() -> None:
    for method in ("tools/list", "prompts/list", "resources/list", "server/discover", "completion/complete"):
        std(hdrs(mcp_method=method), method, {"name": "anything"}, V)


def test_name_header_mismatch_message_names_both_values() -> None:
    err = mismatch(std, hdrs(mcp_method="tools/call", mcp_name="foo"), "tools/call", {"name": "bar"}, V)
    assert "'foo'" in err.message
    assert "'bar'" in err.message


@pytest.mark.parametrize("header", ["Get_Weather", "get_weather2", "get", ""])
def test_name_header_exact(header: str) -> None:
    mismatch(
        std,
        hdrs(mcp_method="tools/call", mcp_name=header),
        "tools/call",
        {"name": "get_weather"},
        V,
    )


def test_name_header_uri_member_for_resources() -> None:
    # resources/read mirrors `uri`, not `name`
    mismatch(
        std,
        hdrs(mcp_method="resources/read", mcp_name="x"),
        "resources/read",
        {"name": "x", "uri": "file:///y"},
        V,
    )


def test_name_header_missing_body_value() -> None:
    mismatch(std, hdrs(mcp_method="tools/call", mcp_name="t"), "tools/call", {}, V)


@pytest.mark.parametrize("header", ["  get_weather  ", "\tget_weather", "get_weather "])
def test_name_header_whitespace_trimmed(header: str) -> None:
    std(hdrs(mcp_method="tools/call", mcp_name=header), "tools/call", {"name": "get_weather"}, V)


def test_name_header_base64() -> None:
    for name in ("天気", "café tool", " padded ", "=?base64?x?=", "plain"):
        std(hdrs(mcp_method="tools/call", mcp_name=b64(name)), "tools/call", {"name": name}, V)
        std(hdrs(mcp_method="tools/call", mcp_name=encode_value(name)), "tools/call", {"name": name}, V)
    mismatch(std, hdrs(mcp_method="tools/call", mcp_name=b64("天気")), "tools/call", {"name": "天氣"}, V)


def test_name_header_trimmed_literal_does_not_match_padded_body() -> None:
    # A body value with surrounding spaces must be base64-encoded; a literal header loses them.
    mismatch(std, hdrs(mcp_method="tools/call", mcp_name=" x "), "tools/call", {"name": " x "}, V)


@pytest.mark.parametrize("header", ["=?base64?Zm9?=", "=?base64?Zm9v!?=", "caf\u00e9", "a\x01b"])
def test_name_header_malformed(header: str) -> None:
    err = mismatch(std, hdrs(mcp_method="tools/call", mcp_name=header), "tools/call", {"name": "foo"}, V)
    assert "Mcp-Name" in err.message


# --------------------------------------------------------------------------------------------------
# check_params (digest §7.1 custom headers)
# --------------------------------------------------------------------------------------------------

SPEC = {"region": ("region",)}


def test_param_header_ok() -> None:
    cp({"mcp-param-region": "us-west1"}, {"region": "us-west1"}, SPEC)
    cp({"mcp-param-region": "  us-west1 "}, {"region": "us-west1"}, SPEC)


def test_param_header_missing_with_body_value() -> None:
    err = mismatch(cp, {}, {"region": "us-west1"}, SPEC)
    assert "Mcp-Param-region" in err.message


@pytest.mark.parametrize("arguments", [{}, {"region": None}, {"other": "x"}])
def test_null_or_absent_argument_needs_no_header(arguments: dict[str, Any]) -> None:
    cp({}, arguments, SPEC)


def test_param_header_mismatch() -> None:
    err = mismatch(cp, {"mcp-param-region": "eu"}, {"region": "us"}, SPEC)
    assert "'eu'" in err.message
    assert "'us'" in err.message


def test_param_header_empty_string_argument() -> None:
    cp({"mcp-param-region": b64("")}, {"region": ""}, SPEC)
    mismatch(cp, {}, {"region": ""}, SPEC)


def test_param_header_is_case_sensitive() -> None:
    mismatch(cp, {"mcp-param-region": "US"}, {"region": "us"}, SPEC)


def test_param_header_base64() -> None:
    cp({"mcp-param-region": b64("Zürich")}, {"region": "Zürich"}, SPEC)
    cp({"mcp-param-region": encode_value(" x ")}, {"region": " x "}, SPEC)
    mismatch(cp, {"mcp-param-region": b64("Zurich")}, {"region": "Zürich"}, SPEC)


@pytest.mark.parametrize("raw", ["Z\u00fcrich", "=?base64?Zm9?=", "a\x02"])
def test_param_header_malformed(raw: str) -> None:
    err = mismatch(cp, {"mcp-param-region": raw}, {"region": "Zürich"}, SPEC)
    assert "Mcp-Param-region" in err.message


@pytest.mark.parametrize("header", ["42", " 42 ", "042", "0042"])
def test_integer_compared_numerically(header: str) -> None:
    cp({"mcp-param-count": header}, {"count": 42}, {"count": ("count",)})


@pytest.mark.parametrize("header", ["43", "42.0", "4.2e1", "0x2a", "forty-two", "", "true"])
def test_integer_mismatch(header: str) -> None:
    mismatch(cp, {"mcp-param-count": header}, {"count": 42}, {"count": ("count",)})


def test_negative_and_zero_integers() -> None:
    cp({"mcp-param-n": "-5"}, {"n": -5}, {"n": ("n",)})
    cp({"mcp-param-n": "0"}, {"n": 0}, {"n": ("n",)})
    mismatch(cp, {}, {"n": 0}, {"n": ("n",)})  # 0 is a value, not an absent argument


@pytest.mark.parametrize("header", ["4_2", b64("\u0664\u0662"), b64("\uff14\uff12")])
def test_integer_header_must_be_a_decimal_string(header: str) -> None:
    mismatch(cp, {"mcp-param-count": header}, {"count": 42}, {"count": ("count",)})


def test_booleans_as_true_false() -> None:
    spec = {"dry": ("dry",)}
    cp({"mcp-param-dry": "true"}, {"dry": True}, spec)
    cp({"mcp-param-dry": "false"}, {"dry": False}, spec)
    for bad in ("True", "TRUE", "1", "yes", "false"):
        mismatch(cp, {"mcp-param-dry": bad}, {"dry": True}, spec)
    for bad in ("0", "False", "true"):
        mismatch(cp, {"mcp-param-dry": bad}, {"dry": False}, spec)
    mismatch(cp, {}, {"dry": False}, spec)  # False is a value too


def test_nested_paths() -> None:
    spec = {"region": ("location", "region")}
    cp({"mcp-param-region": "eu"}, {"location": {"region": "eu"}}, spec)
    mismatch(cp, {}, {"location": {"region": "eu"}}, spec)
    mismatch(cp, {"mcp-param-region": "us"}, {"location": {"region": "eu"}}, spec)
    # a top-level argument of the same name is not the nested one
    cp({}, {"region": "eu"}, spec)
    # the parent is absent or not an object: no value, no header expected
    cp({}, {}, spec)
    cp({}, {"location": "eu"}, spec)
    cp({}, {"location": None}, spec)


def test_several_params_each_checked() -> None:
    spec = {"region": ("region",), "tenant": ("tenant",)}
    args = {"region": "eu", "tenant": "acme"}
    cp({"mcp-param-region": "eu", "mcp-param-tenant": "acme"}, args, spec)
    err = mismatch(cp, {"mcp-param-region": "eu"}, args, spec)
    assert "tenant" in err.message
    err = mismatch(cp, {"mcp-param-region": "eu", "mcp-param-tenant": "other"}, args, spec)
    assert "tenant" in err.message


# --------------------------------------------------------------------------------------------------
# header_param_specs (digest §7.1 x-mcp-header, A14)
# --------------------------------------------------------------------------------------------------


def tool_schema(**props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def test_specs_basic() -> None:
    schema = tool_schema(
        region={"type": "string", "x-mcp-header": "Region"},
        count={"type": "integer", "x-mcp-header": "Count"},
        dry={"type": "boolean", "x-mcp-header": "Dry-Run"},
        plain={"type": "string"},
    )
    assert header_param_specs(schema) == {"region": ("region",), "count": ("count",), "dry-run": ("dry",)}


def test_specs_none() -> None:
    assert header_param_specs({"type": "object"}) == {}
    assert header_param_specs(tool_schema(a={"type": "string"})) == {}
    assert header_param_specs({"type": "object", "properties": {"a": True, "b": None}}) == {}


@pytest.mark.parametrize("name", ["", "Has Space", "a:b", "Ünï", "a/b", 5, None, ["Region"]])
def test_specs_invalid_token(name: Any) -> None:
    with pytest.raises(ValueError, match="token"):
        header_param_specs(tool_schema(a={"type": "string", "x-mcp-header": name}))


@pytest.mark.parametrize("typ", ["number", "object", "array", "null", None, ["string", "null"]])
def test_specs_refuse_other_types(typ: Any) -> None:
    prop: dict[str, Any] = {"x-mcp-header": "H"}
    if typ is not None:
        prop["type"] = typ
    with pytest.raises(ValueError, match="string, integer or boolean"):
        header_param_specs(tool_schema(a=prop))


@pytest.mark.parametrize(("first", "second"), [("Region", "region"), ("REGION", "Region"), ("x", "x")])
def test_specs_duplicate_names_ignore_case(first: str, second: str) -> None:
    schema = tool_schema(a={"type": "string", "x-mcp-header": first}, b={"type": "string", "x-mcp-header": second})
    with pytest.raises(ValueError, match="twice"):
        header_param_specs(schema)


def test_specs_nested_properties() -> None:
    schema = tool_schema(
        location={
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "deep": {
                    "type": "object",
                    "properties": {"zone": {"type": "integer", "x-mcp-header": "Zone"}},
                },
            },
        },
        top={"type": "boolean", "x-mcp-header": "Top"},
    )
    assert header_param_specs(schema) == {
        "region": ("location", "region"),
        "zone": ("location", "deep", "zone"),
        "top": ("top",),
    }


def test_specs_nested_duplicate_with_top_level() -> None:
    schema = tool_schema(
        region={"type": "string", "x-mcp-header": "Region"},
        loc={"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "REGION"}}},
    )
    with pytest.raises(ValueError):
        header_param_specs(schema)


def test_specs_then_check_params_end_to_end() -> None:
    schema = tool_schema(
        loc={"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}},
        n={"type": "integer", "x-mcp-header": "N"},
    )
    specs = header_param_specs(schema)
    args = {"loc": {"region": "東京"}, "n": 3}
    cp({"mcp-param-region": encode_value("東京"), "mcp-param-n": "3"}, args, specs)
    mismatch(cp, {"mcp-param-region": encode_value("東京")}, args, specs)
