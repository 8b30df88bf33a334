"""Table-driven tests of `baton.forms.url_safety`: tricky URLs a server could send in a URL-mode elicitation.

Rules: digest §5.4 (clients show the full URL, get consent, never open unsafe schemes) and the
rules listed in the module docstring of `baton.forms.url_safety`. Each row gives the URL, whether it may be
opened, the exact set of finding codes (warnings and errors together) and, where it matters, the
host and registrable domain a browser would use.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from typing import Any

import pytest

from baton.forms.url_safety import UrlReport, check_url, format_for_display

CYR_A = "\u0430"  # Cyrillic small a, looks like Latin a

# (id, url, ok, codes, host, registrable_domain); host/registrable None means "not checked".
CASES: list[tuple[str, str, bool, set[str], str | None, str | None]] = [
    # Ordinary good URLs: no findings at all.
    ("plain", "https://example.com", True, set(), "example.com", "example.com"),
    ("path-query", "https://mcp.example.com/connect?x=abc&state=1#top", True, set(), "mcp.example.com", "example.com"),
    ("default-port", "https://example.com:443/a", True, set(), "example.com", "example.com"),
    ("co-uk", "https://www.example.co.uk/", True, set(), "www.example.co.uk", "example.co.uk"),
    ("private-psl-section", "https://alice.github.io/x", True, set(), "alice.github.io", "alice.github.io"),
    ("uppercase-scheme-host", "HTTPS://WWW.Example.COM/Path", True, set(), "www.example.com", "example.com"),
    ("oauth-authorize", "https://auth.example.com/authorize?response_type=code&code_challenge=x&state=y", True,
     set(), None, "example.com"),
    # Fine IDN: a warning only.
    ("idn-fine", "https://münchen.de", True, {"idn"}, "xn--mnchen-3ya.de", "xn--mnchen-3ya.de"),
    ("idn-fine-punycode", "https://xn--mnchen-3ya.de/", True, {"idn"}, "xn--mnchen-3ya.de", "xn--mnchen-3ya.de"),
    ("idn-eszett", "https://straße.de", True, {"idn"}, "xn--strae-oqa.de", None),
    ("idn-japanese", "https://例え.jp", True, {"idn"}, "xn--r8jz45g.jp", None),
    ("idn-cyrillic-under-rf", "https://\u0441\u043e\u043a.\u0440\u0444", True, {"idn"}, "xn--j1ahi.xn--p1ai", None),
    # Homographs and mixed scripts.
    ("homograph-cyrillic-a", f"https://{CYR_A}pple.com", True, {"idn", "mixed-script", "confusable"},
     "xn--pple-43d.com", "xn--pple-43d.com"),
    ("homograph-punycode", "https://xn--pple-43d.com", True, {"idn", "mixed-script", "confusable"},
     "xn--pple-43d.com", "xn--pple-43d.com"),
    ("whole-script-cyrillic", "https://xn--80ak6aa92e.com", True, {"idn", "confusable"}, "xn--80ak6aa92e.com", None),
    ("mixed-greek-latin", "https://g\u03bf\u03bfgle.com", True, {"idn", "mixed-script", "confusable"}, None, None),
    ("mixed-no-lookalike", "https://paypal\u0434.com", True, {"idn", "mixed-script"}, None, None),
    ("latin-lookalike", "https://\u0261oogle.com", True, {"idn", "confusable"}, "xn--oogle-qmc.com", None),
    ("fullwidth", "https://\uff27\uff2f\uff2f\uff27\uff2c\uff25\u3002com", True, {"host-normalized"}, "google.com",
     "google.com"),
    ("bad-punycode", "https://xn--zz.com", False, {"bad-host"}, None, None),
    ("fraction-slash", "https://evil.com\u2044good.com", False, {"bad-host"}, None, None),
    # Schemes.
    ("javascript", "javascript:alert(1)", False, {"dangerous-scheme"}, "", None),
    ("javascript-upper", "JaVaScRiPt:alert(document.cookie)", False, {"dangerous-scheme"}, "", None),
    ("data", "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==", False, {"dangerous-scheme"}, "", None),
    ("file", "file:///etc/passwd", False, {"dangerous-scheme"}, "", None),
    ("vbscript", "vbscript:msgbox(1)", False, {"dangerous-scheme"}, "", None),
    ("blob", "blob:https://example.com/uuid", False, {"dangerous-scheme"}, "", None),
    ("ftp", "ftp://example.com/", False, {"scheme-not-allowed"}, "", None),
    ("custom-app", "vscode://extension/x", False, {"scheme-not-allowed"}, "", None),
    ("no-scheme", "example.com/path", False, {"not-absolute"}, "", None),
    ("empty", "", False, {"empty"}, "", None),
    ("http-remote", "http://example.com/", False, {"insecure-scheme"}, "example.com", None),
    ("http-localhost", "http://localhost:3000/cb", True, {"insecure-http", "loopback", "port"}, "localhost", None),
    ("http-loopback-127-2", "http://127.0.0.2/", True, {"insecure-http", "ip-address", "loopback"}, "127.0.0.2", None),
    # Admitted before as loopback: names whose address is up to the resolver (baton.protocol.hosts).
    ("http-localhost-subdomain", "http://app.localhost/", False, {"insecure-scheme", "private-address", "unknown-tld"},
     "app.localhost", None),
    ("http-localhost-dot", "http://localhost./", False,
     {"insecure-scheme", "trailing-dot", "unknown-tld", "no-registrable-domain"}, "localhost.", None),
    ("missing-slashes", "https:example.com", False, {"malformed"}, "example.com", None),
    ("triple-slash", "https:///example.com", False, {"malformed"}, "example.com", None),
    # Userinfo tricks.
    ("userinfo-domain", "https://good.com@evil.com", False, {"userinfo"}, "evil.com", "evil.com"),
    ("userinfo-password", "https://user:pass@host.example.com/", False, {"userinfo"}, "host.example.com", None),
    ("userinfo-empty", "https://@evil.com", False, {"userinfo"}, "evil.com", None),
    ("userinfo-double-at", "https://good.com@good.com@evil.com", False, {"userinfo"}, "evil.com", None),
    ("fragment-at", "https://evil.com#@good.com", True, {"at-sign-after-host"}, "evil.com", "evil.com"),
    ("backslash-at", "https://evil.com\\@good.com", False, {"backslash-in-authority", "at-sign-after-host"},
     "evil.com", "evil.com"),
    ("backslash-slashes", "https:\\\\evil.com/", False, {"backslash-in-authority"}, "evil.com", None),
    ("backslash-in-path", "https://example.com/a\\b", True, {"backslash"}, "example.com", None),
    # Look-alike subdomains and long hosts.
    ("domain-in-subdomain", "https://good.com.evil.com", True, {"domain-in-subdomain"}, "good.com.evil.com",
     "evil.com"),
    ("deep-bait", "https://login.bank.com.secure.evil.net/", True, {"domain-in-subdomain"}, None, "evil.net"),
    ("deep-subdomain", "https://a.b.c.d.e.example.com/", True, {"long-host"}, None, "example.com"),
    ("long-host", "https://" + "a" * 60 + ".example.com", True, {"long-host"}, None, "example.com"),
    ("label-too-long", "https://" + "a" * 64 + ".com", False, {"bad-host"}, None, None),
    ("host-too-long", "https://" + ".".join(["a" * 60] * 5) + ".com", False, {"bad-host"}, None, None),
    ("long-url", "https://example.com/" + "x" * 3000, True, {"long-url"}, "example.com", None),
    ("too-long-url", "https://example.com/" + "x" * 9000, False, {"too-long"}, "example.com", None),
    ("trailing-dot", "https://example.com./", True, {"trailing-dot"}, "example.com.", "example.com"),
    ("public-suffix-host", "https://github.io/", True, {"no-registrable-domain"}, "github.io", None),
    ("single-label", "https://intranet/", True, {"no-registrable-domain", "unknown-tld"}, "intranet", None),
    ("empty-label", "https://a..example.com", False, {"malformed"}, None, None),
    ("percent-host", "https://ex%61mple.com/", True, {"percent-encoded-host"}, "example.com", "example.com"),
    ("percent-host-slash", "https://evil.com%2fgood.com/", False, {"percent-encoded-host", "bad-host"}, None, None),
    # Ports.
    ("port", "https://example.com:8443/", True, {"port"}, "example.com", None),
    ("port-bad", "https://example.com:99999/", False, {"malformed"}, None, None),
    ("port-text", "https://example.com:http/", False, {"malformed"}, None, None),
    # IP literals in every notation.
    ("ipv4", "https://93.184.216.34/", True, {"ip-address"}, "93.184.216.34", None),
    ("ipv4-private", "https://192.168.1.1/", True, {"ip-address", "private-address"}, "192.168.1.1", None),
    ("ipv4-metadata", "https://169.254.169.254/latest", True, {"ip-address", "private-address"}, None, None),
    ("ipv4-hex-short", "http://0x7f.1", True, {"ip-address", "ip-notation", "loopback", "insecure-http"},
     "127.0.0.1", None),
    ("ipv4-decimal", "http://2130706433/", True, {"ip-address", "ip-notation", "loopback", "insecure-http"},
     "127.0.0.1", None),
    ("ipv4-octal", "https://0177.0.0.01/", True, {"ip-address", "ip-notation", "loopback"}, "127.0.0.1", None),
    ("ipv4-hex-whole", "https://0x5db8d822/", True, {"ip-address", "ip-notation"}, "93.184.216.34", None),
    ("ipv4-short", "https://127.1/", True, {"ip-address", "ip-notation", "loopback"}, "127.0.0.1", None),
    ("ipv4-trailing-dot", "https://93.184.216.34./", True, {"ip-address", "ip-notation"}, "93.184.216.34", None),
    ("ipv4-too-many", "https://1.2.3.4.5/", False, {"bad-ip"}, None, None),
    ("ipv4-overflow", "https://256.1.1.1/", False, {"bad-ip"}, None, None),
    ("ends-in-number", "https://example.123/", False, {"bad-ip"}, None, None),
    ("ipv6-loopback", "https://[::1]:8080/", True, {"ip-address", "loopback", "port"}, "::1", None),
    ("ipv6-public", "https://[2606:4700:4700::1111]/", True, {"ip-address"}, "2606:4700:4700::1111", None),
    ("ipv6-documentation", "https://[2001:db8::1]/", True, {"ip-address", "private-address"}, "2001:db8::1", None),
    ("ipv6-mapped", "http://[::ffff:127.0.0.1]/", True, {"ip-address", "loopback", "insecure-http"}, None, None),
    ("ipv6-zone", "https://[fe80::1%25eth0]/", False, {"bad-ip"}, None, None),
    ("ipv6-bad", "https://[::g]/", False, {"bad-ip"}, None, None),
    ("ipv6-unclosed", "https://[::1/", False, {"bad-ip"}, None, None),
    # Control characters, whitespace, invisible characters.
    # Browsers drop the newline, so the host is evil.com.good.com: the site is good.com, not evil.com.
    ("newline-in-host", "https://evil.com\n.good.com/", False, {"control-character", "domain-in-subdomain"},
     "evil.com.good.com", "good.com"),
    ("newline-scheme", "java\nscript:alert(1)", False, {"control-character", "dangerous-scheme"}, None, None),
    ("crlf-path", "https://example.com/\r\nSet-Cookie: x=1", False, {"control-character"}, None, None),
    ("tab", "https://exa\tmple.com", False, {"control-character"}, "example.com", None),
    ("space-inside", "https://example.com/a b", False, {"control-character"}, None, None),
    ("surrounding-space", " https://example.com ", False, {"control-character"}, "example.com", None),
    ("rtl-override", "https://example.com/\u202egpj.exe", False, {"control-character"}, None, None),
    ("zero-width", "https://exa\u200bmple.com", False, {"control-character", "host-normalized"}, "example.com", None),
    ("escape-sequence", "https://example.com/\x1b[2J", False, {"control-character"}, None, None),
    ("nul", "https://example.com\x00.evil.com", False, {"control-character", "bad-host"}, None, None),
    # Credentials in the URL.
    ("token-query", "https://example.com/cb?token=abc123", True, {"credential-in-url"}, None, None),
    ("password-query", "https://example.com/?user=a&Password=hunter2", True, {"credential-in-url"}, None, None),
    ("code-query", "https://example.com/callback?code=xyz&state=1", True, {"credential-in-url"}, None, None),
    ("fragment-token", "https://example.com/#access_token=abc&token_type=bearer", True, {"credential-in-url"},
     None, None),
    ("presigned", "https://bucket.s3.amazonaws.com/f?X-Amz-Signature=abc", True, {"credential-in-url"}, None, None),
    ("jwt-in-path", "https://example.com/login/eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.sig", True,
     {"credential-in-url"}, None, None),
    ("blank-token-ok", "https://example.com/?token=", True, set(), None, None),
    # Missed before: the URL list did not read camelCase, `.` spellings, `_key` names or what the form guard knew.
    ("camel-token", "https://example.com/cb?accessToken=abc", True, {"credential-in-url"}, None, None),
    ("camel-secret", "https://example.com/cb?clientSecret=abc", True, {"credential-in-url"}, None, None),
    ("dotted-key", "https://example.com/cb?api.key=abc", True, {"credential-in-url"}, None, None),
    ("key-query", "https://maps.example.com/js?key=abc", True, {"credential-in-url"}, None, None),
    ("suffix-key", "https://example.com/cb?secret_key=abc", True, {"credential-in-url"}, None, None),
    ("sid-query", "https://example.com/cb?sid=abc", True, {"credential-in-url"}, None, None),
    ("passphrase-query", "https://example.com/cb?passphrase=abc", True, {"credential-in-url"}, None, None),
    ("credential-query", "https://example.com/cb?credential=abc", True, {"credential-in-url"}, None, None),
    ("otp-code-query", "https://example.com/cb?verification_code=123456", True, {"credential-in-url"}, None, None),
    # Flagged before ("password" anywhere in the name): a way to sign in, not a secret.
    ("passwordless-ok", "https://example.com/login?passwordless=1", True, set(), None, None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("url", "ok", "codes", "host", "registrable"),
    [pytest.param(*row[1:], id=row[0]) for row in CASES],
)
def test_check_url(url: str, ok: bool, codes: set[str], host: str | None, registrable: str | None) -> None:
    report = check_url(url)
    found = {w.code for w in report.warnings} | {e.code for e in report.errors}
    assert report.ok is ok, report
    assert found == codes, report
    assert report.ok == (not report.errors)
    assert report.url == url
    if host is not None:
        assert report.host == host
    if registrable is not None:
        assert report.registrable_domain == registrable
    for issue in (*report.warnings, *report.errors):
        assert issue.message.endswith(".")


def test_http_loopback_can_be_forbidden() -> None:
    assert check_url("http://127.0.0.1:8080/cb").ok
    strict = check_url("http://127.0.0.1:8080/cb", allow_http_loopback=False)
    assert not strict.ok
    assert "insecure-scheme" in strict.codes()
    assert check_url("https://127.0.0.1/", allow_http_loopback=False).ok


def test_display_host_is_unicode_only_when_safe() -> None:
    assert check_url("https://xn--mnchen-3ya.de").display_host == "münchen.de"
    assert check_url("https://MÜNCHEN.de").display_host == "münchen.de"
    homograph = check_url(f"https://{CYR_A}pple.com")
    assert homograph.display_host == "xn--pple-43d.com"
    assert any("apple" in w.message for w in homograph.warnings if w.code == "confusable")
    assert check_url("https://example.com").display_host == "example.com"


def test_messages_never_repeat_secret_values() -> None:
    report = check_url("https://example.com/?access_token=s3cr3t-value#password=hunter2")
    text = " ".join(w.message for w in report.warnings)
    assert "access_token" in text and "password" in text
    assert "s3cr3t" not in text and "hunter2" not in text
    userinfo = check_url("https://admin:hunter2@example.com/")
    assert "hunter2" not in " ".join(e.message for e in userinfo.errors)


def test_messages_escape_invisible_characters() -> None:
    report = check_url("https://example.com/\u202egpj.exe")
    assert all("\u202e" not in e.message for e in report.errors)
    assert "U+202E" in report.errors[0].message


def test_userinfo_message_names_the_real_site() -> None:
    report = check_url("https://accounts.google.com@evil.example/")
    assert not report.ok
    assert "evil.example" in report.errors[0].message


def test_report_is_frozen() -> None:
    report = check_url("https://example.com")
    with pytest.raises(FrozenInstanceError):
        report.ok = False  # type: ignore[misc]


def _join(segments: list[tuple[str, Any]]) -> str:
    return "".join(text for text, _ in segments)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://example.com", [("https://", "scheme"), ("example.com", "domain")]),
        (
            "https://good.com.evil.com:8443/p?q#f",
            [
                ("https://", "scheme"),
                ("good.com.", "host"),
                ("evil.com", "domain"),
                (":8443", "port"),
                ("/p?q#f", "rest"),
            ],
        ),
        ("https://münchen.de/x", [("https://", "scheme"), ("münchen.de", "domain"), ("/x", "rest")]),
        ("https://www.example.co.uk", [("https://", "scheme"), ("www.", "host"), ("example.co.uk", "domain")]),
        ("https://[::1]/", [("https://", "scheme"), ("[::1]", "domain"), ("/", "rest")]),
        ("http://0x7f.1", [("http://", "scheme"), ("127.0.0.1", "domain")]),
        ("https://example.com./", [("https://", "scheme"), ("example.com", "domain"), (".", "host"), ("/", "rest")]),
        ("https://xn--pple-43d.com", [("https://", "scheme"), ("xn--pple-43d.com", "domain")]),
        ("https://sub.xn--mnchen-3ya.de", [("https://", "scheme"), ("sub.", "host"), ("münchen.de", "domain")]),
    ],
)
def test_format_for_display(url: str, expected: list[tuple[str, str]]) -> None:
    assert format_for_display(check_url(url)) == expected


def test_format_for_display_refused_url_is_one_escaped_danger_segment() -> None:
    segments = format_for_display(check_url("https://good.com@evil.com/\x1b[31m"))
    assert len(segments) == 1
    text, style = segments[0]
    assert style == "danger"
    assert "\x1b" not in text and "\\u001b" in text
    assert format_for_display(check_url("javascript:alert(1)")) == [("javascript:alert(1)", "danger")]


def test_works_offline_with_the_bundled_list(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Public Suffix List comes from the installed package; any socket use would fail here."""
    import socket

    from baton.forms import url_safety

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("url_safety must not use the network")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    url_safety._psl.cache_clear()
    report: UrlReport = check_url("https://a.b.example.com.au/")
    assert report.registrable_domain == "example.com.au"
