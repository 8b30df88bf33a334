"""`baton.forms.ask_guards`: no secrets in form mode, no URLs in form fields, and what a URL-mode URL may carry.

Rules: digest §5.4 (form mode MUST NOT ask for passwords, API keys, tokens or payment data; URL mode MUST
NOT carry user data or credentials, MUST NOT be pre-authenticated, SHOULD use https) and the heuristics in
the module docstring of `baton.forms.ask_guards`.
"""

from __future__ import annotations

import pytest

from baton.forms import (
    BooleanField,
    Choice,
    EnumField,
    FieldSpec,
    FormError,
    FormSpec,
    MultiSelectField,
    NumberField,
    StringField,
)
from baton.forms.ask_guards import (
    OPAQUE_MIN,
    check_elicit_url,
    check_no_url_in_form,
    check_not_secret,
    looks_opaque,
)
from baton.forms.secret_names import secret_term


def one(field: FieldSpec) -> FormSpec:
    return FormSpec([field], name="Test")


# -- secrets ---------------------------------------------------------------------------------------

SECRET_SPELLINGS = [
    # passwords
    "password", "Password", "PASSWORD", "passwd", "passphrase", "passcode", "new_password", "newPassword",
    "confirm-password", "Confirm password", "db.password", "user_passwd", "one-time password", "pass word",
    # secrets
    "secret", "client_secret", "clientSecret", "Client secret", "aws-secret-access-key", "webhookSecret",
    # API keys
    "api_key", "apiKey", "ApiKey", "APIKey", "API_KEY", "api-key", "API key", "apikey", "x-api-key", "XApiKey",
    "openai_api_key", "OPENAI_API_KEY", "stripeApiKey",
    # tokens
    "token", "access_token", "accessToken", "Access token", "refresh-token", "authToken", "bearer", "JWT",
    "github_token", "GITHUB_TOKEN", "personalAccessToken", "id token",
    # keys
    "private_key", "privateKey", "Private key", "PRIVATE-KEY", "ssh key", "signing_key", "license key",
    # payment
    "credit_card", "creditCard", "Credit card number", "card number", "cardNumber", "card_no", "cc_number",
    "CVV", "cvv", "cvc", "CVC2", "card_cvv2", "Security code", "debit card", "iban", "IBAN", "bank_account",
    "routing number",
    # identity and codes
    "ssn", "SSN", "yourSSN", "ssn_last4", "Social security number", "socialSecurityNumber", "pin", "PIN",
    "pin_code", "pinCode", "PIN number", "otp", "TOTP code", "verification code", "recovery codes",
    "credentials", "Login credentials",
]  # fmt: skip

ORDINARY_WORDS = [
    "tokenizer", "tokenize", "tokens", "max_tokens", "Tokenization",
    "pinned", "spinach", "pinpoint", "Pinyin", "opinion", "spinner", "pineapple", "pinecone", "happiness",
    "description", "passenger", "passport", "compass", "bypass", "passage", "passive", "passion",
    "keyboard", "keynote", "monkey", "turkey", "hotkey", "primary key", "sort_key", "key", "whiskey",
    "secretary", "secretariat", "secretion",
    "business", "businessname", "lessons", "classname", "assignee",
    "capital", "tapioca", "therapist", "rapid", "apiary",
    "codename", "zip code", "country_code", "postal code", "code", "promo code",
    "cardinal", "card game", "cards", "credit", "credits", "cardboard",
    "ibanez", "curve", "expiration", "account name", "username", "email", "name",
    "passwordless login", "title", "notes", "comment", "project", "city", "count", "priority",
]  # fmt: skip


@pytest.mark.parametrize("spelling", SECRET_SPELLINGS)
def test_secret_spellings_are_found(spelling: str) -> None:
    assert secret_term(spelling) is not None, spelling


@pytest.mark.parametrize("word", ORDINARY_WORDS)
def test_ordinary_words_are_not_secrets(word: str) -> None:
    assert secret_term(word) is None, (word, secret_term(word))


@pytest.mark.parametrize("word", ORDINARY_WORDS)
def test_forms_with_ordinary_fields_pass(word: str) -> None:
    check_not_secret(one(StringField(word.replace(" ", "_") or "x", title=word, description=f"Your {word}")))


def test_a_secret_field_is_refused_with_a_helpful_message() -> None:
    spec = one(StringField("api_key", title="OpenAI API key"))
    with pytest.raises(FormError) as info:
        check_not_secret(spec)
    message = str(info.value)
    assert "'api_key'" in message
    assert "API key" in message
    assert "ctx.secret(name, message)" in message
    assert "allow_secrets=True" in message
    assert "URL mode" in message


@pytest.mark.parametrize(
    "field",
    [
        StringField("value", title="Password"),
        StringField("value", description="Paste your GitHub personal access token"),
        StringField("stripeKey", title="Card number", format=None),
        NumberField("cvv", integer=True),
        NumberField("code", title="PIN", integer=True),
        NumberField("ssn_digits", integer=True),
    ],
)
def test_name_title_or_description_may_give_it_away(field: FieldSpec) -> None:
    with pytest.raises(FormError):
        check_not_secret(one(field))


def test_the_override() -> None:
    spec = one(StringField("password_hint", title="Password hint"))
    with pytest.raises(FormError):
        check_not_secret(spec)
    check_not_secret(spec, allow=True)


def test_fields_that_cannot_carry_a_typed_secret_are_not_flagged() -> None:
    check_not_secret(
        FormSpec(
            [
                BooleanField("remember_password", title="Remember my password"),
                EnumField("token_type", values=["bearer", "mac"]),
                MultiSelectField("api_key_scopes", values=["read", "write"]),
                NumberField("max_tokens", title="Max tokens", integer=True),
                NumberField("token_budget", title="Token budget", integer=True),
            ]
        )
    )


def test_every_field_is_checked() -> None:
    spec = FormSpec([StringField("name"), StringField("email", format="email"), StringField("pwd2", title="Passwd")])
    with pytest.raises(FormError, match="'pwd2'"):
        check_not_secret(spec)


def test_the_check_is_repeatable() -> None:
    ok, bad = one(StringField("name")), one(StringField("token"))
    for _ in range(3):
        check_not_secret(ok)
        with pytest.raises(FormError):
            check_not_secret(bad)


# -- URLs in forms ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "field",
    [
        StringField("code", description="Open https://example.com/device and type the code shown"),
        StringField("note", title="See https://evil.example/login"),
        StringField("note", description="Details at www.example.com/help"),
        StringField("code", description="Sign in at HTTPS://EXAMPLE.COM first"),
        StringField("note", default="https://example.com/click-me"),
        StringField("site", format="uri", description="Visit https://example.com/setup to find it"),
        StringField("site", format="uri", title="Click https://example.com"),
        EnumField("plan", values=[Choice("a", "Open https://example.com/plans for details"), Choice("b", "B")]),
        MultiSelectField("x", values=["a"], description="Go to https://example.com/x"),
        BooleanField("agree", description="I have read https://example.com/terms"),
    ],
)
def test_fields_carrying_a_url_are_refused(field: FieldSpec) -> None:
    with pytest.raises(FormError) as info:
        check_no_url_in_form(one(field))
    assert "ctx.elicit_url" in str(info.value)
    assert repr(field.name) in str(info.value)
    check_no_url_in_form(one(field), allow=True)


@pytest.mark.parametrize(
    "field",
    [
        StringField("homepage", format="uri", default="https://example.com"),
        StringField("webhook", format="uri", description="Where we POST events, e.g. https://hooks.example.com/x"),
        EnumField("endpoint", values=["https://eu.example.com", "https://us.example.com"]),
        EnumField("endpoint", values=["https://eu.example.com"], default="https://eu.example.com"),
        StringField("name", description="Your display name (shown on www pages)"),
        StringField("file", description="A file name such as report.pdf or data.csv"),
        StringField("ratio", description="Use a:b notation, e.g. 16:9"),
        StringField("note", default="plain text"),
    ],
)
def test_fields_with_data_urls_or_no_urls_pass(field: FieldSpec) -> None:
    check_no_url_in_form(one(field))


# -- URL mode --------------------------------------------------------------------------------------

GOOD_URLS = [
    "https://mcp.example.com/connect?x=abc",
    "https://example.com/connect/Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA",  # a one-time ticket in the path
    "https://example.com/pay?order=1234&currency=EUR",
    "https://example.com/p?project=my-very-long-project-name-2026-edition",
    "https://example.com/p?flow=550e8400-e29b-41d4-a716-446655440000",
    "https://auth.example.com/authorize?response_type=code&client_id=abc&state=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA"
    "&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256",
    "https://medium.com/@someone/post",
    "https://example.com/?code=",  # empty: nothing carried
    "https://example.com/#section-2",
]


@pytest.mark.parametrize("url", GOOD_URLS)
def test_good_urls_pass(url: str) -> None:
    check_elicit_url(url)


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http://example.com/connect", "https"),
        ("http://localhost:8000/connect", "development=True"),
        ("ftp://example.com/x", ""),
        ("javascript:alert(1)", ""),
        ("data:text/html,hi", ""),
        ("file:///etc/passwd", ""),
        ("https://user:pass@example.com/", "before '@'"),
        ("https://token@example.com/", "before '@'"),
        ("https://example.com\\@evil.com/", ""),
        ("https://exa mple.com/", ""),
        ("https://example.com/connect?token=abc123", "'token'"),
        ("https://example.com/connect?access_token=abc", "'access_token'"),
        ("https://example.com/connect?Password=hunter2", "'Password'"),
        ("https://example.com/connect?key=abc", "'key'"),
        ("https://example.com/connect?stripe-key=abc", "'stripe-key'"),
        ("https://example.com/connect?secret=abc", "'secret'"),
        ("https://example.com/callback?code=abc", "'code'"),
        ("https://example.com/connect#access_token=abc&type=bearer", "fragment"),
        ("https://example.com/connect?X-Amz-Signature=abc", "'X-Amz-Signature'"),
        # Let through before: the URL list did not read camelCase or know these words the form guard knew.
        ("https://example.com/connect?accessToken=abc", "'accessToken'"),
        ("https://example.com/connect?clientSecret=abc", "'clientSecret'"),
        ("https://example.com/callback?auth_code=abc", "'auth_code'"),
        ("https://example.com/connect?passcode=1234", "'passcode'"),
        ("https://example.com/connect?pin=1234", "'pin'"),
        ("https://example.com/connect?githubtoken=abc", "'githubtoken'"),
        ("https://example.com/connect?email=alice", "personal data"),
        ("https://example.com/connect?u=alice%40example.com", "email address"),
        ("https://example.com/connect?u=alice@example.com", "email address"),
        ("https://example.com/users/alice@example.com/connect", "email address"),
        ("https://example.com/connect?phone=%2B15551234567", "personal data"),
        ("https://example.com/x?t=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2ln", "JWT"),
        ("https://example.com/x/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2ln", "JWT"),
        ("https://example.com/x?t=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA", "long opaque value"),
        ("https://example.com/x?t=d41d8cd98f00b204e9800998ecf8427e", "long opaque value"),  # hex
        ("https://example.com/x?Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA", "long opaque value"),  # a bare value
        ("https://example.com/x#Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA", "fragment"),
    ],
)
def test_bad_urls_are_refused(url: str, words: str) -> None:
    with pytest.raises(ValueError) as info:
        check_elicit_url(url)
    assert words in str(info.value)


def test_messages_never_repeat_the_secret() -> None:
    for url in (
        "https://example.com/c?token=hunter2secret",
        "https://example.com/c?t=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA",
        "https://hunter2:pw@example.com/",
    ):
        with pytest.raises(ValueError) as info:
            check_elicit_url(url)
        assert "hunter2" not in str(info.value)
        assert "Zm9vYmFy" not in str(info.value)


def test_development_allows_http_to_loopback_only() -> None:
    for url in ("http://localhost:8000/connect", "http://127.0.0.1/connect", "http://[::1]:3000/c"):
        with pytest.raises(ValueError):
            check_elicit_url(url)
        check_elicit_url(url, development=True)
    with pytest.raises(ValueError):
        check_elicit_url("http://example.com/connect", development=True)
    for url in ("http://app.localhost/c", "http://localhost./c", "http://[::2]/c", "http://0.0.0.0/c"):
        with pytest.raises(ValueError):
            check_elicit_url(url, development=True)
    with pytest.raises(ValueError):
        check_elicit_url("http://localhost:8000/connect?token=x", development=True)


@pytest.mark.parametrize(
    "url",
    [
        "http://[0:0:0:0:0:0:0:1]:3000/c",
        "http://[::ffff:127.0.0.1]/c",
        "http://127.0.0.2/c",
        "http://127.1/c",  # a browser opens 127.0.0.1
    ],
)
def test_development_allows_every_loopback_spelling(url: str) -> None:
    """Refused before: the guard kept its own list ("localhost", "127.0.0.1", "::1"), not the checked host."""
    with pytest.raises(ValueError, match="development=True"):
        check_elicit_url(url)
    check_elicit_url(url, development=True)


def test_opaque_heuristic() -> None:
    assert looks_opaque("A" * 8 + "1" * 8 + "b" * (OPAQUE_MIN - 16))
    assert looks_opaque("sk-proj-4f9Qm2xZ7pL0vR8tY3wB6nK1")
    assert not looks_opaque("Zm9vYmFyYmF6cXV4MTIz")  # shorter than OPAQUE_MIN
    assert not looks_opaque("a" * 40)  # no digits: a word, not a key
    assert not looks_opaque("1" * 40)  # a number
    assert not looks_opaque("release-2026-07-28-final-build-42")
    assert not looks_opaque("550E8400-E29B-41D4-A716-446655440000")
    assert not looks_opaque("2026-07-28T10:00:00Z-and-more-text")  # ':' is not in a token alphabet
