"""`baton.forms.secret_names`: one rule for secret-looking names, run through every check that uses it.

Each name in the table goes through all of its users: the form guard refusing a field of that name
(`check_not_secret`), the terminal renderer warning next to it, the URL checks flagging a query parameter
of that name (`check_url`'s `credential-in-url`) and the URL-mode guard refusing it (`check_elicit_url`).
Before they shared this module they kept three lists that disagreed; the table's last column says
which users gave the other answer for that name.
"""

from __future__ import annotations

import io
from typing import Literal
from urllib.parse import quote

import pytest

from baton.forms import Cancelled, FormError, FormSpec, StringField
from baton.forms.ask_guards import check_elicit_url, check_not_secret
from baton.forms.secret_names import looks_secret, secret_term
from baton.forms.url_safety import check_url
from baton.render import TerminalRenderer

Kind = Literal["secret", "url", None]
SECRET: Kind = "secret"  # a secret everywhere: refused in a form, warned about, flagged in a URL
URL: Kind = "url"  # a credential by URL convention only (flagged in a URL; an ordinary word in a form)
NO: Kind = None

# (name, kind, which users disagreed before this module: "form" the guard, "hint" the renderer,
#  "check_url" and "elicit" the two URL checks; each listed one gave the other answer)
TABLE: list[tuple[str, Kind, str]] = [
    # passwords
    ("password", SECRET, ""), ("Password", SECRET, ""), ("new_password", SECRET, ""), ("newPassword", SECRET, ""),
    ("db.password", SECRET, ""), ("passwd", SECRET, ""), ("password_hint", SECRET, ""),
    ("pass word", SECRET, "hint check_url elicit"),
    ("passphrase", SECRET, "check_url"),
    ("passcode", SECRET, "hint check_url elicit"),
    # tokens and secrets
    ("token", SECRET, ""), ("access_token", SECRET, ""), ("id_token", SECRET, ""),
    ("x-amz-security-token", SECRET, ""), ("secret", SECRET, ""), ("client_secret", SECRET, ""),
    ("accessToken", SECRET, "check_url elicit"), ("refreshToken", SECRET, "check_url elicit"),
    ("clientSecret", SECRET, "check_url elicit"),
    ("token_type", SECRET, "check_url elicit"),
    ("githubtoken", SECRET, "form check_url elicit"), ("mysecret", SECRET, "form check_url elicit"),
    ("jwt", SECRET, "hint"), ("bearer", SECRET, "hint"),
    ("credential", SECRET, "hint check_url"), ("credentials", SECRET, "hint check_url"),
    ("X-Amz-Credential", SECRET, "hint"),
    # keys
    ("api_key", SECRET, ""), ("apiKey", SECRET, ""), ("APIKey", SECRET, ""), ("x-api-key", SECRET, ""),
    ("private_key", SECRET, ""),
    ("api key", SECRET, "check_url elicit"), ("api.key", SECRET, "hint check_url"),
    ("privatekey", SECRET, "check_url elicit"), ("secret_key", SECRET, "check_url"),
    ("license_key", SECRET, "hint check_url"), ("signing_key", SECRET, "hint check_url"),
    # one-time codes, payment and identity numbers
    ("otp", SECRET, "hint"), ("totp", SECRET, "hint check_url elicit"),
    ("pin", SECRET, "hint check_url elicit"), ("pinCode", SECRET, "hint check_url elicit"),
    ("auth_code", SECRET, "hint check_url elicit"), ("authorization_code", SECRET, "hint check_url elicit"),
    ("verification code", SECRET, "hint check_url elicit"),
    ("cvv", SECRET, "check_url elicit"), ("CVC2", SECRET, "check_url elicit"),
    ("credit_card", SECRET, "check_url elicit"), ("card_number", SECRET, "check_url"),
    ("ssn", SECRET, "check_url"), ("ssn_last4", SECRET, "hint check_url elicit"), ("iban", SECRET, "hint check_url"),
    # credentials by URL convention; in a form a zip code, a sort key, a working directory
    ("code", URL, ""), ("pwd", URL, ""), ("pass", URL, ""), ("auth", URL, ""), ("authorization", URL, ""),
    ("session", URL, ""), ("session_id", URL, ""), ("sessionId", URL, ""), ("sig", URL, ""),
    ("signature", URL, ""), ("X-Amz-Signature", URL, ""), ("x_goog_signature", URL, ""),
    ("key", URL, "check_url"), ("sort_key", URL, "check_url"), ("stripe-key", URL, "check_url"),
    ("access_key", URL, "check_url"), ("primary key", URL, "check_url elicit"), ("sid", URL, "check_url"),
    # ordinary names
    ("tokens", NO, "hint"), ("max_tokens", NO, "hint"), ("tokenizer", NO, "hint"),
    ("secretary", NO, "hint"), ("secretion", NO, "hint"),
    ("passwordless", NO, "hint check_url elicit"),
    ("passport", NO, ""), ("passenger", NO, ""), ("bypass", NO, ""), ("pinned", NO, ""), ("spinner", NO, ""),
    ("keyboard", NO, ""), ("monkey", NO, ""), ("hotkey", NO, ""), ("zip code", NO, ""), ("country_code", NO, ""),
    ("code_challenge", NO, ""), ("state", NO, ""), ("client_id", NO, ""), ("redirect_uri", NO, ""),
    ("name", NO, ""), ("username", NO, ""), ("city", NO, ""), ("cards", NO, ""), ("credit", NO, ""), ("", NO, ""),
]  # fmt: skip


def form_refuses(name: str) -> bool:
    try:
        check_not_secret(FormSpec([StringField(name or "x", title=name or None)], name="T"))
    except FormError:
        return True
    return False


def renderer_warns(name: str) -> bool:
    out = io.StringIO()
    renderer = TerminalRenderer(io.StringIO("\n"), out, color=False)  # answer, then end of input: cancelled
    form = FormSpec([StringField(name or "x", title=name or None)], name="T")
    assert renderer.ask_form("A question", form) == Cancelled()
    return "looks like a request for a secret" in out.getvalue()


def url_flags(name: str) -> bool:
    return "credential-in-url" in check_url(f"https://example.com/cb?{quote(name, safe='')}=v4lue").codes()


def elicit_refuses(name: str) -> bool:
    try:
        check_elicit_url(f"https://example.com/cb?{quote(name, safe='')}=v4lue")
    except ValueError as exc:
        assert repr(name) in str(exc)  # refused for that parameter, not for something else
        return True
    return False


@pytest.mark.parametrize(("name", "kind", "before"), TABLE, ids=[row[0] or "empty" for row in TABLE])
def test_every_user_agrees(name: str, kind: Kind, before: str) -> None:
    assert looks_secret(name) is (kind == SECRET)
    assert looks_secret(name, url_param=True) is (kind is not None)
    assert form_refuses(name) is (kind == SECRET), "form guard"
    assert renderer_warns(name) is (kind == SECRET), "terminal renderer"
    assert url_flags(name) is (kind is not None), "check_url"
    assert elicit_refuses(name) is (kind is not None), "check_elicit_url"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Your OpenAI API key", True),
        ("Paste your GitHub personal access token", True),
        ("The one-time password from your app", True),
        ("Credit card number", True),
        ("Enter the code printed on the box", False),
        ("Number of tokens to generate", False),
        ("Passwordless sign-in email", False),
    ],
)
def test_titles_and_descriptions_are_read_the_same_way(text: str, secret: bool) -> None:
    assert looks_secret(text) is secret
    for field in (StringField("value", title=text), StringField("value", description=text)):
        spec = FormSpec([field], name="T")
        with pytest.raises(FormError) if secret else _nothing():
            check_not_secret(spec)
        out = io.StringIO()
        TerminalRenderer(io.StringIO("\n"), out, color=False).ask_form("A question", spec)
        assert ("looks like a request for a secret" in out.getvalue()) is secret


def test_secret_term_names_the_kind() -> None:
    assert secret_term("apiKey") == "API key"
    assert secret_term("new-password") == "password"
    assert secret_term("card_cvv2") == "card security code"
    assert secret_term("code") is None
    assert secret_term("code", url_param=True) == "credential"


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
