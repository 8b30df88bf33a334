"""Which names look like secrets: the one list behind the form guard, the URL checks and the terminal's hint.

`looks_secret(name)` is true when a field name, a title, a description or a query parameter name speaks of a
secret; `secret_term(name)` says which kind, in words for messages ("password", "API key", "token", ...).
The form guard refuses such a field (`baton.forms.ask_guards.check_not_secret`), the URL checks flag or refuse
such a parameter (`baton.forms.url_safety.check_url`, `baton.forms.ask_guards.check_elicit_url`) and the
terminal renderer warns the user next to such a field; all of them ask here, so they cannot disagree.

How a name is read. It is split into words at every character that is not an ASCII letter or digit (`_`,
`-`, `.`, spaces) and at camelCase boundaries, then lower-cased: `api_key`, `apiKey`, `APIKey`,
`api-key`, `API key` and `x.api.key` all hold the words `api key`. A digit run after `cvv`/`cvc` stays
with it (`cvv2`). It looks secret when
1. one word is a secret word (`SECRET_WORDS`: `password`, `token`, `secret`, `otp`, `pin`, `ssn`, ...).
   Whole words only, so `tokens`, `tokenizer`, `secretary`, `pinned` and `passport` are not secrets;
2. two adjacent words make a secret (`SECRET_PAIRS`: `api key`, `private key`, `access token`,
   `credit card`, `verification code`, ...), so a bare `key` or `code` (a sort key, a zip code) is not;
3. one word has a secret glued inside it (`SECRET_INSIDE`: `newpassword`, `xapikey`, `clientsecret`) or
   ends in one (`SECRET_ENDINGS`: `githubtoken`, `mysecret`; `tokenizer` and `secretary` only begin
   with one), unless the word is one of `NOT_SECRET` (`passwordless`: a way to sign in without one).

Query parameters (`url_param=True`) also count the names that carry a credential by convention in a URL
but are ordinary words in a form: the whole name is `code` (an OAuth authorization code), `key`,
`pwd`, `pass`, `auth`, `authorization`, `session`, `session_id`, `sid`, `sig` or `signature`
(`URL_CREDENTIAL_NAMES`), or its last word is `key` or `signature` (`access_key`, `X-Amz-Signature`).
In a form, the same names are too often a zip code, a sort key or a working directory to refuse them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from .fields import FieldSpec

__all__ = ["field_looks_secret", "looks_secret", "secret_term"]

# Whole words and what they are called in messages.
SECRET_WORDS: Final = {
    "password": "password", "passwords": "password", "passwd": "password", "passphrase": "password",
    "passcode": "password", "secret": "secret", "secrets": "secret", "token": "token", "jwt": "token",
    "bearer": "token", "apikey": "API key", "apikeys": "API key", "privatekey": "private key",
    "credential": "credentials", "credentials": "credentials", "creditcard": "payment card number",
    "cardnumber": "payment card number", "cvv": "card security code", "cvc": "card security code",
    "cvv2": "card security code", "cvc2": "card security code", "ssn": "social security number",
    "iban": "bank account number (IBAN)", "pin": "PIN", "pincode": "PIN", "otp": "one-time code",
    "totp": "one-time code",
}  # fmt: skip
# Adjacent word pairs.
SECRET_PAIRS: Final = {
    ("api", "key"): "API key", ("api", "keys"): "API key", ("private", "key"): "private key",
    ("secret", "key"): "secret", ("signing", "key"): "private key", ("encryption", "key"): "private key",
    ("ssh", "key"): "private key", ("license", "key"): "license key", ("pass", "word"): "password",
    ("credit", "card"): "payment card number", ("debit", "card"): "payment card number",
    ("card", "number"): "payment card number", ("card", "no"): "payment card number",
    ("cc", "number"): "payment card number", ("security", "code"): "card security code",
    ("social", "security"): "social security number", ("routing", "number"): "bank account number",
    ("bank", "account"): "bank account number", ("auth", "code"): "one-time code",
    ("authorization", "code"): "one-time code", ("verification", "code"): "one-time code",
    ("recovery", "code"): "one-time code", ("backup", "code"): "one-time code",
    ("recovery", "codes"): "one-time code", ("backup", "codes"): "one-time code",
}  # fmt: skip
# Spellings found glued inside a longer word (`newpassword`, `xapikey`, `stripeclientsecret`).
SECRET_INSIDE: Final = {
    "password": "password", "passwd": "password", "passphrase": "password", "apikey": "API key",
    "privatekey": "private key", "creditcard": "payment card number", "cardnumber": "payment card number",
    "accesstoken": "token", "authtoken": "token", "refreshtoken": "token", "apitoken": "token",
    "bearertoken": "token", "clientsecret": "secret", "secretkey": "secret", "apisecret": "secret",
    "appsecret": "secret",
}  # fmt: skip
SECRET_ENDINGS: Final = {"token": "token", "secret": "secret"}
NOT_SECRET: Final = frozenset({"passwordless"})
# Query parameter names (their words run together) that carry credentials by convention.
URL_CREDENTIAL_NAMES: Final = frozenset(
    {"code", "key", "pwd", "pass", "auth", "authorization", "session", "sessionid", "sid", "sig", "signature"}
)
URL_CREDENTIAL_LAST_WORDS: Final = frozenset({"key", "signature"})
_URL_CREDENTIAL_TERM = "credential"

# Words: an upper-case run before a capitalized word (`API` in `APIKey`), a word, an upper-case run, digits.
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_SEPARATORS = re.compile(r"[^A-Za-z0-9]+")


def _words(text: str) -> list[str]:
    words: list[str] = []
    for chunk in _SEPARATORS.split(text):
        for w in _WORD.findall(chunk):
            if w.isdigit() and words and words[-1] in ("cvv", "cvc"):
                words[-1] += w  # `cvv2`, `CVC2`
            else:
                words.append(w.lower())
    return words


def secret_term(name: str, *, url_param: bool = False) -> str | None:
    """What secret `name` (a name, title, description or query parameter name) is about, or None.

    With `url_param=True` the names that carry credentials by URL convention count too (as "credential").
    """
    words = _words(name)
    for i, word in enumerate(words):
        if word in NOT_SECRET:
            continue
        term = SECRET_WORDS.get(word)
        if term is None and i + 1 < len(words):
            term = SECRET_PAIRS.get((word, words[i + 1]))
        if term is None:
            term = next((t for inside, t in SECRET_INSIDE.items() if inside in word), None)
        if term is None:
            term = next((t for end, t in SECRET_ENDINGS.items() if word.endswith(end)), None)
        if term is not None:
            return term
    if url_param and words and ("".join(words) in URL_CREDENTIAL_NAMES or words[-1] in URL_CREDENTIAL_LAST_WORDS):
        return _URL_CREDENTIAL_TERM
    return None


def looks_secret(name: str, *, url_param: bool = False) -> bool:
    """Whether `name` looks like it names a secret (see the module docstring for what counts)."""
    return secret_term(name, url_param=url_param) is not None


def field_looks_secret(field: FieldSpec) -> bool:
    """Whether a form field's name, title or description looks like it names a secret."""
    return any(looks_secret(text) for text in (field.name, field.title, field.description) if text)
