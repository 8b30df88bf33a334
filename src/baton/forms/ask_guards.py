"""Guards for what a server may ask (protocol.md P21): no secrets in form mode, no URLs in form fields, safe URL mode.

`check_not_secret(spec)` refuses a form whose free-text or number field looks like a secret (password, API
key, token, private key, payment card data, social security number, IBAN, PIN, one-time code,
credentials). Form mode MUST NOT ask for those: the answer passes through the client and the model. Ask in
URL mode instead (`ctx.secret(name, message)`), or compile the form with `allow_secrets=True` if the field
only *mentions* such a thing. The field's name, title and description are each judged by
`baton.forms.secret_names.looks_secret` (words in any spelling: `token` but not `tokenizer`, `pin` but not
`pinned`; `pwd` and a bare `key` or `code` are not secrets in a form: a working directory, a sort key, a
zip code). Booleans and choices are never flagged: the user cannot type a secret into them; number fields
are not flagged for "token" (`max_tokens`, `token_budget`).

`check_no_url_in_form(spec)` refuses a field whose title, description or default carries a URL (`scheme://`
or `www.`): a form must not be used to send the user somewhere, which is what URL mode (with its consent
and anti-phishing rules) is for. A field that asks *for* a URL (`format: "uri"`) may have a URL default and
example URLs in its description, and a choice field may offer URLs as its values, but none of them may have
a URL within a few words after "open", "visit", "click", "go to", "sign in", ... (a link to follow, not data).

`check_elicit_url(url)` refuses a URL-mode URL that breaks the spec's rules for servers:
- everything `baton.forms.url_safety.check_url` refuses (dangerous or unknown schemes, malformed hosts, userinfo
  such as `https://user:pass@host`, backslashes, control characters, ...);
- anything but https; http only to a loopback host (`baton.protocol.hosts.is_loopback`, judged on the host
  as the browser reads it, so `http://127.1` is loopback) and only with `development=True`;
- personal data: an email address anywhere after the host (percent-decoded), or a query/fragment
  parameter named like personal data (`email`, `phone`, `ssn`, `dob`, ...);
- credentials, i.e. a pre-authenticated URL: a parameter named like a secret (what
  `baton.forms.secret_names.looks_secret(name, url_param=True)` says: `token`, `access_token`, `password`,
  `api_key`, `secret`, `code`, `key`, `sig`, `session`, `X-Amz-Signature`, anything ending in `_key`, ...),
  a JWT anywhere, or a long opaque value in the query or fragment: at least
  `OPAQUE_MIN` characters of base64/hex alphabet, with letters and digits, that is neither a UUID nor a
  slug of short words and numbers (`my-project-2026`). OAuth's public parameters (`state`, `nonce`,
  `code_challenge`, `client_id`, `redirect_uri`, `scope`, ...) may be opaque. Put a one-time ticket in the
  *path* (`/connect/<ticket>`), where it is not taken for a credential: the page it leads to must still
  check that the user who opens it is the one who was asked.
Messages name the parameter, never its value.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from urllib.parse import parse_qsl, unquote, urlsplit

from ..protocol.errors import UsageError
from ..protocol.hosts import is_loopback
from .fields import BooleanField, EnumField, FieldSpec, FormError, FormSpec, MultiSelectField, NumberField, StringField
from .secret_names import looks_secret, secret_term
from .url_safety import check_url

__all__ = [
    "OPAQUE_MIN",
    "check_elicit_url",
    "check_no_url_in_form",
    "check_not_secret",
    "looks_opaque",
]

OPAQUE_MIN = 24

# -- secrets in form fields -------------------------------------------------------------------------

# Secrets that cannot be a number: a number field called `max_tokens` is not asking for a token.
_TEXT_ONLY = frozenset({"token"})


def check_not_secret(spec: FormSpec, *, allow: bool = False) -> None:
    """Raise `FormError` if a field of the form looks like it asks for a secret (see the module docstring)."""
    if not allow:
        _check_not_secret(spec)


@functools.lru_cache(maxsize=1024)
def _check_not_secret(spec: FormSpec) -> None:  # cached: forms are compiled once, asked many times
    for f in spec.fields:
        if isinstance(f, (BooleanField, EnumField, MultiSelectField)):
            continue
        for where, text in (("name", f.name), ("title", f.title), ("description", f.description)):
            term = secret_term(text) if text else None
            if term is None or (isinstance(f, NumberField) and term in _TEXT_ONLY):
                continue
            raise FormError(
                f"form {spec.name!r}, field {f.name!r}: its {where} suggests a {term}; form mode must not ask for "
                "secrets (passwords, API keys, tokens, payment data), because the answer passes through the client. "
                "Ask for it in URL mode with `await ctx.secret(name, message)`; if the field is not a secret, "
                "compile the form with allow_secrets=True"
            )


# -- URLs in form fields ----------------------------------------------------------------------------

_URL_IN_TEXT = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://\S|\bwww\.[A-Za-z0-9-]+\.\S", re.IGNORECASE)
_OPEN_VERB = re.compile(
    r"\b(open|opening|visit|click|tap|go|navigate|browse|follow|sign|log|login|signin)\b",
    re.IGNORECASE,
)
_VERB_REACH = 40  # how many characters before a URL an "open it" verb is looked for


def _url_to_open(text: str, *, data_field: bool) -> bool:
    for match in _URL_IN_TEXT.finditer(text):
        if not data_field or _OPEN_VERB.search(text[max(0, match.start() - _VERB_REACH) : match.start()]):
            return True
    return False


def check_no_url_in_form(spec: FormSpec, *, allow: bool = False) -> None:
    """Raise `FormError` if a field carries a URL for the user to open (see the module docstring)."""
    if not allow:
        _check_no_url(spec)


@functools.lru_cache(maxsize=1024)
def _check_no_url(spec: FormSpec) -> None:
    for f in spec.fields:
        choices = isinstance(f, (EnumField, MultiSelectField))
        data_field = choices or (isinstance(f, StringField) and f.format == "uri")
        for where, text in (("title", f.title), ("description", f.description)):
            if text and _url_to_open(text, data_field=data_field):
                raise _url_error(spec, f, where)
        if choices:
            titles: Mapping[str, str] = getattr(f, "titles", None) or {}
            if any(_url_to_open(t, data_field=True) for t in titles.values()):
                raise _url_error(spec, f, "choice titles")
        elif not data_field and _has_url_default(f):
            raise _url_error(spec, f, "default")


def _has_url_default(f: FieldSpec) -> bool:
    defaults = f.default if isinstance(f.default, list) else [f.default]
    return any(isinstance(d, str) and _URL_IN_TEXT.search(d) for d in defaults)


def _url_error(spec: FormSpec, f: FieldSpec, where: str) -> FormError:
    return FormError(
        f"form {spec.name!r}, field {f.name!r}: its {where} carries a URL; a form must not send the user to a "
        "page (the client shows forms without URL mode's consent and safety checks). Ask with "
        "`await ctx.elicit_url(message, url)` instead, or leave the URL out of the form"
    )


# -- URL mode ---------------------------------------------------------------------------------------

_PERSONAL_PARAMS = frozenset(
    {
        "email", "e_mail", "mail", "email_address", "phone", "phone_number", "tel", "mobile", "ssn", "dob",
        "date_of_birth", "birthdate", "birthday", "address", "street", "iban", "card_number",
    }
)  # fmt: skip
# OAuth/OIDC parameters that are public by design, so opaque values in them are not credentials.
_PUBLIC_OAUTH = frozenset(
    {
        "state", "nonce", "code_challenge", "code_challenge_method", "client_id", "redirect_uri", "scope",
        "response_type", "response_mode", "prompt", "resource", "audience",
    }
)  # fmt: skip
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.")
_OPAQUE = re.compile(r"[A-Za-z0-9_\-+/=.~]+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_SLUG_PIECE = re.compile(r"[A-Za-z]{1,12}|[0-9]{1,8}")


def _param_kind(name: str) -> str | None:
    key = name.strip().lower().replace("-", "_").replace(".", "_")
    if key in _PERSONAL_PARAMS:
        return "personal data"
    if looks_secret(name, url_param=True):
        return "a credential"
    return None


def looks_opaque(value: str) -> bool:
    """Whether a query value looks like a credential: long, random-looking, not a UUID or a word slug."""
    if len(value) < OPAQUE_MIN or not _OPAQUE.fullmatch(value) or _UUID.fullmatch(value):
        return False
    if not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
        return False
    pieces = [p for p in re.split(r"[-_.~]", value) if p]
    return not all(_SLUG_PIECE.fullmatch(p) for p in pieces)


def check_elicit_url(url: str, *, development: bool = False) -> None:
    """Raise `UsageError` (a `ValueError`) if a server must not ask a client to open `url` (see the module
    docstring): the author's mistake, so a tool that makes it answers an internal error, not a tool error."""
    report = check_url(url, allow_http_loopback=development)
    # The host as the browser reads it (`http://127.1` goes to 127.0.0.1), so that it is judged as opened.
    loopback = is_loopback(report.host)
    if report.scheme == "http" and loopback and not development:
        raise UsageError("ctx.elicit_url needs an https URL (http to a loopback host only with development=True)")
    if not report.ok:
        raise UsageError("ctx.elicit_url: " + "; ".join(issue.message for issue in report.errors))
    if report.scheme != "https" and not (development and loopback):
        raise UsageError("ctx.elicit_url needs an https URL (http only to a loopback host, in development)")
    parts = urlsplit(url)
    rest = unquote(f"{parts.path}?{parts.query}#{parts.fragment}")
    if _EMAIL.search(rest):
        raise UsageError("ctx.elicit_url: the URL carries an email address; URLs must not carry personal data")
    if _JWT.search(rest):
        raise UsageError("ctx.elicit_url: the URL carries what looks like an access token (a JWT)")
    for where, text in (("query", parts.query), ("fragment", parts.fragment)):
        for name, value in _params(text):
            kind = _param_kind(name) if value else None
            if kind is not None:
                raise UsageError(
                    f"ctx.elicit_url: the {where} parameter {name!r} looks like {kind}; URLs must not carry "
                    "personal data or credentials (no pre-authenticated links): keep them on the server"
                )
            if name.lower() not in _PUBLIC_OAUTH and looks_opaque(value):
                label = f"parameter {name!r}" if name else "part"
                raise UsageError(
                    f"ctx.elicit_url: the {where} {label} looks like a credential (a long opaque value); "
                    "URLs must not be pre-authenticated. Keep secrets on the server and put a one-time ticket, "
                    "bound to the user, in the path"
                )


def _params(text: str) -> list[tuple[str, str]]:
    """The `name=value` pairs of a query or fragment; a bare item is a value without a name."""
    if not text:
        return []
    out: list[tuple[str, str]] = []
    for item in re.split(r"[&;]", text):
        if "=" in item:
            out.extend(parse_qsl(item, keep_blank_values=True))
        elif item:
            out.append(("", unquote(item)))
    return out
