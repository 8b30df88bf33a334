"""Logging in from the command line: the OAuth setup of `baton tools|call|...` for an HTTP server.

The browser part is `LoopbackRedirect`: a listener on 127.0.0.1 (a port the system picks) and the
system browser. Before anything opens, the full authorization address is shown on stderr with the
same checks as a URL-mode question (`forms.url_safety`): its site, every warning, and a refusal for
an address that must not be opened. Tokens go to the file store only the user can read
(`FileStore()`, in Baton's data directory), or nowhere with `--no-token-store`. A login happens only
if the server answers 401; a server that needs none never sees any of this (protocol.md P58). With
`--login client-credentials|workload-identity|enterprise` the command logs in as a program instead, with no
browser, configured from the environment (`program`, P195, P196).
"""

from __future__ import annotations

import sys
import webbrowser
from typing import TextIO

from ...client.oauth import (
    AuthError,
    ClientCredentials,
    EnterpriseLogin,
    FileStore,
    LoopbackRedirect,
    MemoryStore,
    OAuth,
    ProgramLogin,
    WorkloadIdentity,
)
from ...forms.url_safety import check_url, format_for_display
from .args import OneLineError

CLIENT_NAME = "Baton command line"


def show(url: str, out: TextIO | None = None) -> None:
    """Print the authorization address for the person (stderr); AuthError for an address not to open."""
    out = out or sys.stderr
    report = check_url(url, allow_http_loopback=True)
    segments = format_for_display(report)
    out.write("\nThe server asks you to sign in. This page opens in your web browser:\n")
    out.write("  Address: " + "".join(text for text, _ in segments) + "\n")
    if report.ok:
        site = next((text for text, style in segments if style == "domain"), report.display_host)
        out.write(f"  Site:    {site}\n")
    for error in report.errors:
        out.write(f"  X {error.message}\n")
    for warning in report.warnings:
        out.write(f"  ! {warning.message}\n")
    out.flush()
    if not report.ok:
        raise AuthError("the sign-in address was refused and was not opened")


def open_page(url: str) -> None:
    if webbrowser.open(url) is False:
        sys.stderr.write("Could not start a web browser; open the address above yourself.\n")
    sys.stderr.write("Waiting for the sign-in to finish in the browser...\n")
    sys.stderr.flush()


def oauth(*, store: bool) -> tuple[OAuth, LoopbackRedirect]:
    """The OAuth setup of one command, and its redirect listener (close it when the command ends)."""
    browser = LoopbackRedirect(show=show, opener=open_page)
    auth = OAuth(
        redirect_uri=browser.redirect_uri,
        open_browser=browser,
        store=FileStore() if store else MemoryStore(),
        client_name=CLIENT_NAME,
    )
    return auth, browser


PROGRAM_LOGINS: dict[str, type[ClientCredentials | WorkloadIdentity | EnterpriseLogin]] = {
    "client-credentials": ClientCredentials,
    "workload-identity": WorkloadIdentity,
    "enterprise": EnterpriseLogin,
}
"""`--login KIND`: the logins with no person, each configured from the environment (docs/client.md)."""


def program(kind: str, *, store: bool) -> ProgramLogin:
    """`--login KIND` (not "browser"): the program's own login, from the environment (never from the command
    line, where other users of the computer could read a secret); a missing setting is one line, exit 2."""
    try:
        return PROGRAM_LOGINS[kind].from_environment(store=FileStore() if store else MemoryStore())
    except ValueError as exc:
        raise OneLineError(f"--login {kind}: {exc}") from None
