"""Interop peer: the official `mcp` SDK's (mcp==2.3.0) OAuth client logs in to a protected Baton server.

Usage: `python mcp_oauth_client.py URL USER`. The SDK's `OAuthClientProvider` does everything a host
does: it gets the 401, reads the Protected Resource Metadata named in `WWW-Authenticate`, discovers the
authorization server, registers itself (RFC 7591), and sends the user to `/authorize` with PKCE and the
`resource` parameter. The redirect handler plays the browser with a plain HTTP client: it opens the
test AS's login page, posts its form as USER with "Allow", and hands the redirect's `code`, `state` and
`iss` to the SDK's callback handler. Then it calls `whoami` (the server-wide scope) and `write_file`,
which needs one more scope: the server answers 403 `insufficient_scope` and the SDK steps up (a second
login) before the call succeeds. Prints both results; exits 0 only if both name USER and the step-up
happened (two logins). Runs in its own venv (`.cache/interop/mcp`), never in Baton's.
"""

from __future__ import annotations

import asyncio
import re
import sys
from html import unescape
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp.types import TextContent

REDIRECT_URI = "http://127.0.0.1:9/callback"  # never contacted: the browser stand-in reads the redirect
logins: list[str] = []  # the scopes asked for at each login


class Memory(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Browser:
    """Follows the authorization URL like a person would: the login page, the form, "Allow"."""

    def __init__(self, user: str) -> None:
        self.user = user
        self.result: AuthorizationCodeResult | None = None

    async def redirect(self, authorization_url: str) -> None:
        logins.append(parse_qs(urlsplit(authorization_url).query).get("scope", [""])[0])
        async with httpx2.AsyncClient(timeout=10) as http:
            page = await http.get(authorization_url)
            if page.status_code != 200 or "<form" not in page.text:
                raise RuntimeError(f"no login page at the authorization URL: {page.status_code} {page.text[:300]}")
            fields = {
                unescape(name): unescape(value)
                for name, value in re.findall(r'<input type="hidden" name="([^"]*)" value="([^"]*)">', page.text)
            }
            fields |= {"username": self.user, "action": "allow"}
            action = re.search(r'<form method="post" action="([^"]*)"', page.text)
            target = urljoin(authorization_url, unescape(action.group(1)) if action else "")
            answer = await http.post(target, data=fields)
        if answer.status_code != 302:
            raise RuntimeError(f"the login form was not accepted: {answer.status_code} {answer.text[:300]}")
        query = parse_qs(urlsplit(answer.headers["location"]).query)
        if "code" not in query:
            raise RuntimeError(f"the authorization server refused: {query}")
        print(f"logged in; redirected with {sorted(query)}", file=sys.stderr)
        self.result = AuthorizationCodeResult(
            code=query["code"][0], state=query.get("state", [None])[0], iss=query.get("iss", [None])[0]
        )

    async def callback(self) -> AuthorizationCodeResult:
        assert self.result is not None
        result, self.result = self.result, None
        return result


async def run(url: str, user: str) -> list[str]:
    browser = Browser(user)
    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="mcp interop peer",
            redirect_uris=[REDIRECT_URI],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=Memory(),
        redirect_handler=browser.redirect,
        callback_handler=browser.callback,
    )
    texts: list[str] = []
    http = httpx2.AsyncClient(auth=provider, timeout=30)
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        print(f"protocol: {client.protocol_version}", file=sys.stderr)
        for name, arguments in (("whoami", {}), ("write_file", {"name": "interop.txt"})):
            result = await client.call_tool(name, arguments)
            text = "".join(block.text for block in result.content if isinstance(block, TextContent))
            print(f"{name}: {text} (error={result.is_error})", file=sys.stderr)
            texts.append(text)
    return texts


def main() -> int:
    url, user = sys.argv[1], sys.argv[2]
    texts = asyncio.run(run(url, user))
    print("\n".join(texts))
    print(f"logins: {logins}", file=sys.stderr)
    ok = (
        len(texts) == 2
        and f"|{user} " in texts[0]
        and texts[1] == "wrote interop.txt"
        and len(logins) == 2
        and "files:write" in logins[1].split()
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
