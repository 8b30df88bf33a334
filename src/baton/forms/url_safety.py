"""Check a URL before a host shows or opens it for a URL-mode elicitation (protocol.md P21).

`check_url(url)` returns a `UrlReport`: `ok` is false when the URL must not be opened at all
(`errors` says why); `warnings` are things the user should see next to the consent prompt. Every
finding has a stable machine `code` and a human `message`. The host is read the way a browser
(WHATWG URL standard) reads it, so what is shown is where the browser would actually go; where
another parser could read the same text differently, the URL is refused.

Blocking errors (`ok` is false):
- `empty`, `too-long` (over `MAX_URL_LENGTH` characters: too long to show in full, which the spec requires).
- `control-character`: any control, format (zero-width, bidi override), line/paragraph separator or
  space character anywhere, leading and trailing ones included (a URI has none); browsers silently
  drop some of them (`java\\nscript:`), so they can only hide things.
- `not-absolute`: no scheme.
- `dangerous-scheme`: `javascript:`, `data:`, `file:`, `vbscript:`, `blob:`, `filesystem:`,
  `view-source:`, `about:`. `scheme-not-allowed`: any other scheme than https/http.
- `insecure-scheme`: `http:` to anything but a loopback host (or at all with `allow_http_loopback=False`).
- `malformed`: not exactly `//` after the scheme, an empty host or label, a bad port.
- `backslash-in-authority`: a `\\` before the end of the host; browsers read it as `/`, other parsers
  do not, so `https://evil.com\\@good.com` would show one site and open another.
- `userinfo`: anything before `@` in the authority (`https://good.com@evil.com`, `https://user:pass@host`).
- `bad-host`: not a valid host name (characters outside letters/digits/`-`/`_`, invalid IDNA or
  Punycode, a label over 63 or a name over 253 characters, a percent-encoding that is not UTF-8).
- `bad-ip`: the host ends in a number (so browsers parse it as IPv4) but is not a valid address,
  or an IPv6 literal is invalid or carries a zone id.

Warnings (`ok` stays true):
- `insecure-http`: plain http (allowed only to loopback).
- `loopback` / `private-address`: the URL points at this computer or a private/link-local network
  (a way to reach local services from the browser). Loopback is `baton.protocol.hosts.is_loopback` of the
  host as the browser reads it (`http://0x7f.1` is 127.0.0.1): `localhost`, 127.0.0.0/8, ::1. Names under
  `.localhost` and `localhost.` are not (their address is up to the resolver): a `.localhost` name is a
  `private-address`, and http to either is refused.
- `ip-address`: an IP-literal host; `ip-notation`: an IPv4 address written in a non-standard form
  (decimal `2130706433`, octal `0177.0.0.1`, hex `0x7f.1`, shortened), with the address it means.
- `port`: a port other than the scheme's default.
- `idn`: an internationalized (Unicode or `xn--` Punycode) host; the message gives both forms.
- `mixed-script`: one label mixes writing systems (e.g. Latin with Cyrillic); the usual CJK
  combinations with Latin are allowed, as in browsers' IDN display policies.
- `confusable`: a label is made (partly) of characters that look like ASCII letters (Cyrillic a
  U+0430, Greek omicron, dotless i, ...) and so imitates an ASCII name; the message says which. A label in one
  non-Latin script under a top-level domain of the same script (a Cyrillic name under `.рф`) is not flagged.
- `host-normalized`: the host as written differs from what browsers use (full-width letters, an
  ideographic full stop, decomposed accents).
- `percent-encoded-host`: the host was percent-encoded; the decoded form is reported.
- `trailing-dot`: a fully qualified `example.com.` host.
- `long-url` (over `LONG_URL` characters), `long-host` (over `LONG_HOST` characters or more than
  `DEEP_SUBDOMAIN` labels before the registrable domain: pushes the real domain off-screen).
- `domain-in-subdomain`: the subdomain itself looks like a domain (`https://paypal.com.evil.com`).
- `unknown-tld`: the top-level domain is not on the Public Suffix List.
- `no-registrable-domain`: the host is a public suffix itself or a single label (intranet name).
- `at-sign-after-host`: an `@` in the path, query or fragment (`https://evil.com#@good.com`),
  which imitates the userinfo trick.
- `backslash`: a `\\` after the host (browsers turn it into `/` in the path).
- `credential-in-url`: a query or fragment parameter named like a secret
  (`baton.forms.secret_names.looks_secret(name, url_param=True)`: `token`, `password`, `code`,
  `client_secret`, `accessToken`, signed-URL signatures, ...) or a JWT-shaped value; the spec forbids
  credentials and pre-authenticated URLs. Values are never repeated in messages.

`registrable_domain` (eTLD+1) comes from the Public Suffix List bundled with the `publicsuffixlist`
package (read from the installed file, never fetched), in ASCII form; the private section counts,
so `alice.github.io` is its own site. `display_host` is the Unicode form only when the host has no
`mixed-script` or `confusable` finding, else the Punycode form. `format_for_display` splits the
URL into styled segments so renderers can highlight the registrable domain.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import unicodedata
from dataclasses import dataclass
from typing import Literal
from urllib.parse import parse_qsl, unquote_to_bytes

from publicsuffixlist import PublicSuffixList

from ..protocol.hosts import is_loopback
from .secret_names import looks_secret

__all__ = [
    "DANGEROUS_SCHEMES",
    "UrlIssue",
    "UrlReport",
    "check_url",
    "format_for_display",
]

MAX_URL_LENGTH = 8192
LONG_URL = 2048
MAX_HOST_LENGTH = 253
MAX_LABEL_LENGTH = 63
LONG_HOST = 64
DEEP_SUBDOMAIN = 4

DANGEROUS_SCHEMES = frozenset({"javascript", "data", "file", "vbscript", "blob", "filesystem", "view-source", "about"})
_DEFAULT_PORTS = {"https": 443, "http": 80}
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_ASCII_LABEL = re.compile(r"[a-z0-9_-]+")
_DIGITS = re.compile(r"[0-9]+")
_HEX = re.compile(r"0[xX][0-9a-fA-F]*")
_OCTAL = re.compile(r"0[0-7]+")
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.")
# Characters a browser refuses in a host, checked after percent-decoding.
_FORBIDDEN_HOST = frozenset(" #%/:<>?@[\\]^|")
# Top-level domains most used to make a subdomain look like a whole domain (`paypal.com.evil.net`).
_BAIT_TLDS = frozenset({"com", "net", "org", "edu", "gov", "mil", "int", "io", "co", "info", "biz"})
_LOCAL_SUFFIXES = (".local", ".localhost", ".internal", ".lan", ".home.arpa", ".intranet", ".corp")

# Characters that look like an ASCII letter or digit (a small, curated part of Unicode's confusables).
_LOOKALIKES: dict[str, str] = {
    # Cyrillic
    "\u0430": "a", "\u0435": "e", "\u04bb": "h", "\u0456": "i", "\u0458": "j", "\u043a": "k", "\u04cf": "l",
    "\u043e": "o", "\u0440": "p", "\u051b": "q", "\u0441": "c", "\u0455": "s", "\u0443": "y", "\u04af": "y",
    "\u051d": "w", "\u0445": "x", "\u0501": "d",
    # Greek
    "\u03b1": "a", "\u03b9": "i", "\u03ba": "k", "\u03bd": "v", "\u03bf": "o", "\u03c1": "p", "\u03c5": "u",
    # Armenian
    "\u0585": "o", "\u057d": "u", "\u0570": "h", "\u0578": "n", "\u0566": "q", "\u0581": "g",
    # Latin letters that read as plain ASCII ones
    "\u0131": "i", "\u0237": "j", "\u0251": "a", "\u0269": "i", "\u028f": "y", "\u1d0f": "o", "\ua781": "l",
    "\u01c0": "l", "\u0261": "g",
}  # fmt: skip
# Script sets that may share a label (Japanese, Chinese, Korean writing mixes Latin and Han).
_ALLOWED_MIXES = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)
_SCRIPT_ALIASES = {"CJK": "HAN", "IDEOGRAPHIC": "HAN", "KATAKANA-HIRAGANA": "KATAKANA", "HALFWIDTH": "KATAKANA"}


@dataclass(frozen=True, slots=True)
class UrlIssue:
    """One finding about a URL: a stable machine `code` and a message for the user."""

    code: str
    message: str


@dataclass(frozen=True, slots=True)
class UrlReport:
    """What `check_url` found. `ok` false means: do not open this URL, show `errors` instead."""

    url: str  # the URL exactly as given
    ok: bool
    scheme: str  # lower case; "" when there is none
    host: str  # ASCII (Punycode) form, as the browser will resolve it; "" when unknown
    display_host: str  # Unicode form when safe to show, else the same as `host`
    registrable_domain: str | None  # eTLD+1 in ASCII form; None for IPs, public suffixes, single labels
    port: int | None = None  # the port written in the URL, if any
    rest: str = ""  # path, query and fragment as written
    warnings: tuple[UrlIssue, ...] = ()
    errors: tuple[UrlIssue, ...] = ()

    def codes(self) -> frozenset[str]:
        """Every warning and error code, for quick membership tests."""
        return frozenset(i.code for i in (*self.warnings, *self.errors))


Style = Literal["scheme", "host", "domain", "port", "rest", "danger"]


@functools.cache
def _psl() -> PublicSuffixList:
    return PublicSuffixList()  # the list bundled with the package; no network


def _show(text: str, limit: int = 80) -> str:
    """Text safe to quote in a message: control and invisible characters escaped, long text cut."""
    out = "".join(f"\\u{ord(c):04x}" if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") else c for c in text)
    return out if len(out) <= limit else out[: limit - 1] + "…"


_CONTROL_NAMES = {"\t": "tab", "\n": "line feed", "\r": "carriage return", "\x00": "null", "\x1b": "escape"}


def _char_name(c: str) -> str:
    name = unicodedata.name(c, "") or _CONTROL_NAMES.get(c, "control character")
    return f"U+{ord(c):04X} {name.lower()}"


def _script(c: str) -> str | None:
    """A rough Unicode script of a letter or digit, from its character name; None for common characters."""
    if c.isascii():
        return "LATIN" if c.isalpha() else None
    category = unicodedata.category(c)
    if not (category.startswith("L") or category == "Nd"):
        return None
    first = unicodedata.name(c, "").split(" ")[0]
    first = _SCRIPT_ALIASES.get(first, first)
    return first.split("-")[0] or None


def _mixed(scripts: set[str]) -> bool:
    return len(scripts) > 1 and not any(scripts <= allowed for allowed in _ALLOWED_MIXES)


def _parse_ipv4(labels: list[str]) -> int | None:
    """WHATWG IPv4 parsing (decimal, octal, hex and shortened forms); None when invalid."""
    if len(labels) > 4:
        return None
    numbers: list[int] = []
    for part in labels:
        if not part:
            return None
        if _HEX.fullmatch(part):
            numbers.append(int(part[2:] or "0", 16))
        elif _OCTAL.fullmatch(part):
            numbers.append(int(part[1:], 8))
        elif _DIGITS.fullmatch(part):
            numbers.append(int(part))
        else:
            return None
    if any(n > 255 for n in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        return None
    value = numbers[-1]
    for i, n in enumerate(numbers[:-1]):
        value += n * 256 ** (3 - i)
    return value


def _ends_in_number(labels: list[str]) -> bool:
    last = labels[-1] if labels[-1] or len(labels) == 1 else labels[-2]
    return bool(_DIGITS.fullmatch(last) or _HEX.fullmatch(last))


class _Checker:
    """Accumulates findings while walking the URL the way a browser does."""

    def __init__(self, url: str, allow_http_loopback: bool) -> None:
        self.url = url
        self.allow_http_loopback = allow_http_loopback
        self.warnings: list[UrlIssue] = []
        self.errors: list[UrlIssue] = []
        self.scheme = ""
        self.host = ""
        self.display_host = ""
        self.registrable: str | None = None
        self.port: int | None = None
        self.rest = ""
        self.loopback = False

    def warn(self, code: str, message: str) -> None:
        if all(w.message != message for w in self.warnings):
            self.warnings.append(UrlIssue(code, message))

    def error(self, code: str, message: str) -> None:
        if all(e.message != message for e in self.errors):
            self.errors.append(UrlIssue(code, message))

    def report(self) -> UrlReport:
        return UrlReport(
            url=self.url,
            ok=not self.errors,
            scheme=self.scheme,
            host=self.host,
            display_host=self.display_host or self.host,
            registrable_domain=self.registrable,
            port=self.port,
            rest=self.rest,
            warnings=tuple(self.warnings),
            errors=tuple(self.errors),
        )

    def run(self) -> UrlReport:
        url = self.url
        if not url.strip():
            self.error("empty", "The address is empty.")
            return self.report()
        if len(url) > MAX_URL_LENGTH:
            self.error("too-long", f"The address is {len(url)} characters long, too long to show in full.")
        elif len(url) > LONG_URL:
            self.warn("long-url", f"The address is unusually long ({len(url)} characters); read all of it.")
        hidden = [c for c in url if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Zs")]
        if hidden:
            names = ", ".join(dict.fromkeys(_char_name(c) for c in hidden[:5]))
            self.error(
                "control-character",
                f"The address contains invisible, control or space characters ({names}); they can hide its "
                "real destination.",
            )
        # What a browser reads: leading/trailing controls and spaces stripped, tabs and newlines removed.
        text = url.strip("".join(map(chr, range(0x21)))).replace("\t", "").replace("\n", "").replace("\r", "")
        match = _SCHEME.match(text)
        if match is None:
            self.error("not-absolute", "The address has no scheme (such as https:); it is not a full URL.")
            return self.report()
        self.scheme = match.group(1).lower()
        if self.scheme in DANGEROUS_SCHEMES:
            self.error(
                "dangerous-scheme",
                f"'{self.scheme}:' addresses can run code or read local data; only https web pages may be opened.",
            )
            return self.report()
        if self.scheme not in _DEFAULT_PORTS:
            self.error(
                "scheme-not-allowed", f"'{_show(self.scheme)}:' addresses are not allowed; only https may be opened."
            )
            return self.report()
        self._authority(text[match.end() :])
        return self.report()

    def _authority(self, after: str) -> None:
        slashes = re.match(r"[/\\]*", after)
        lead = slashes.group(0) if slashes else ""
        if "\\" in lead:
            self.error("backslash-in-authority", "The address uses '\\' where '//' belongs; browsers read it as '/'.")
        elif lead != "//":
            self.error("malformed", f"After '{self.scheme}:' there must be exactly '//'.")
        remainder = after[len(lead) :]
        end = len(remainder)
        for i, c in enumerate(remainder):
            if c in "/?#\\":
                end = i
                break
        authority, self.rest = remainder[:end], remainder[end:]
        if self.rest.startswith("\\"):
            before = re.split(r"[/?#]", self.rest, maxsplit=1)[0]
            self.error(
                "backslash-in-authority",
                f"The address has a '\\' right after the host; browsers read it as '/' and go to "
                f"{_show(authority)}, while other programs may read '{_show(authority + before)}' differently.",
            )
        elif "\\" in self.rest:
            self.warn("backslash", "The address contains '\\', which browsers treat as '/' in the path.")
        if "@" in self.rest:
            self.warn(
                "at-sign-after-host",
                "The address contains '@' after the host; whatever follows it is not the site you will visit.",
            )
        if "@" in authority:
            userinfo, _, authority = authority.rpartition("@")
            shown = userinfo.split(":", 1)[0]
            what = "a user name and password" if ":" in userinfo else f"'{_show(shown)}'"
            self.error(
                "userinfo",
                f"The address puts {what} before '@'; browsers ignore that part and go to {_show(authority)}. "
                "This is a common trick to disguise where a link leads.",
            )
        self._host_port(authority)
        self._credentials()

    def _host_port(self, authority: str) -> None:
        if authority.startswith("["):
            close = authority.find("]")
            if close < 0:
                self.error("bad-ip", "The IPv6 address in the host is missing its closing ']'.")
                return
            host, port = authority[: close + 1], authority[close + 1 :]
            if port and not port.startswith(":"):
                self.error("malformed", "Unexpected text after the IPv6 address.")
                return
            port = port[1:]
        else:
            host, _, port = authority.partition(":")
        if port:
            if not _DIGITS.fullmatch(port) or int(port) > 65535:
                self.error("malformed", f"The port '{_show(port)}' is not a number from 0 to 65535.")
            else:
                self.port = int(port)
                if self.port != _DEFAULT_PORTS[self.scheme]:
                    self.warn("port", f"The address uses the unusual port {self.port}.")
        if not host:
            self.error("malformed", "The address has no host.")
            return
        if host.startswith("["):
            self._ipv6(host[1:-1])
        else:
            self._name(host)
        self._scheme_rules()

    def _ipv6(self, inner: str) -> None:
        if "%" in inner:
            self.error("bad-ip", "IPv6 zone identifiers ('%') are not allowed in web addresses.")
            return
        try:
            address = ipaddress.IPv6Address(inner)
        except ValueError:
            self.error("bad-ip", f"'{_show(inner)}' is not a valid IPv6 address.")
            return
        self.host = self.display_host = address.compressed
        self.warn("ip-address", f"The host is the raw IP address {address.compressed}, not a name.")
        self._address_kind(address.ipv4_mapped or address)

    def _name(self, written: str) -> None:
        host = written
        if "%" in host:
            try:
                host = unquote_to_bytes(host).decode("utf-8")
            except UnicodeDecodeError:
                self.error("bad-host", "The host's percent-encoding does not decode to text.")
                return
            self.warn("percent-encoded-host", f"The host is percent-encoded; it reads '{_show(host)}'.")
        bad = sorted({c for c in host if c in _FORBIDDEN_HOST or unicodedata.category(c) == "Cc"})
        if bad:
            chars = " ".join(repr(c) for c in bad)
            self.error("bad-host", f"The host contains characters that are not allowed in a host name: {chars}.")
            return
        import idna  # noqa: PLC0415 (its import compiles a regular expression: 9 ms in every server; loaded per URL checked)

        try:
            mapped = idna.uts46_remap(host, std3_rules=False, transitional=False)
        except idna.IDNAError as exc:
            self.error("bad-host", f"The host '{_show(host)}' is not a valid international domain name ({exc}).")
            return
        if not host.isascii() and unicodedata.normalize("NFC", host.lower()) != mapped:
            self.warn(
                "host-normalized", f"The host is written '{_show(host)}' but browsers read it as '{_show(mapped)}'."
            )
        labels = mapped.split(".")
        if _ends_in_number(labels):
            self._ipv4(mapped, labels)
            return
        trailing = len(labels) > 1 and labels[-1] == ""
        if trailing:
            labels.pop()
            self.warn("trailing-dot", "The host ends with a dot, which is unusual.")
        if "" in labels:
            self.error("malformed", f"The host '{_show(mapped)}' has an empty part ('..' or a leading dot).")
            return
        ascii_labels: list[str] = []
        unicode_labels: list[str] = []
        for label in labels:
            converted = self._label(label)
            if converted is None:
                return
            ascii_labels.append(converted[0])
            unicode_labels.append(converted[1])
        dot = "." if trailing else ""
        self.host = ".".join(ascii_labels) + dot
        unicode_host = ".".join(unicode_labels) + dot
        if len(self.host) > MAX_HOST_LENGTH:
            self.error("bad-host", f"The host is {len(self.host)} characters long; the limit is {MAX_HOST_LENGTH}.")
            return
        safe = self._scripts(unicode_labels)
        self.display_host = unicode_host if safe else self.host
        if unicode_host != self.host:
            if safe:
                message = f"The host uses international characters: shown as {unicode_host}, real address {self.host}."
            else:
                message = f"The host {self.host} is an international name that displays as '{_show(unicode_host)}'."
            self.warn("idn", message)
        self._domain(ascii_labels)

    def _label(self, label: str) -> tuple[str, str] | None:
        """(ASCII, Unicode) forms of one host label; None after recording an error."""
        import idna  # noqa: PLC0415 (as above)

        try:
            if label.isascii():
                if label.startswith("xn--"):
                    return label, idna.ulabel(label)
                if not _ASCII_LABEL.fullmatch(label):
                    bad = " ".join(repr(c) for c in sorted(set(re.sub(r"[a-z0-9_-]", "", label))))
                    self.error("bad-host", f"The host contains characters not allowed in a host name: {bad}.")
                    return None
                ascii_label = label
            else:
                ascii_label = idna.alabel(label).decode("ascii")
        except (idna.IDNAError, UnicodeError) as exc:
            self.error("bad-host", f"'{_show(label)}' is not a valid international host name ({exc}).")
            return None
        if len(ascii_label) > MAX_LABEL_LENGTH:
            self.error("bad-host", f"A part of the host is longer than {MAX_LABEL_LENGTH} characters.")
            return None
        return ascii_label, label

    def _scripts(self, labels: list[str]) -> bool:
        """Record mixed-script and confusable labels; True when the Unicode form is safe to display."""
        safe = True
        tld_scripts = {s for s in map(_script, labels[-1]) if s is not None}
        for label in labels:
            if label.isascii():
                continue
            scripts = {s for s in map(_script, label) if s is not None}
            native = len(scripts) == 1 and scripts == tld_scripts and "LATIN" not in scripts  # e.g. сайт.рф
            if _mixed(scripts):
                safe = False
                names = " and ".join(sorted(s.title() for s in scripts))
                self.warn("mixed-script", f"The host part '{_show(label)}' mixes writing systems ({names}).")
            skeleton = "".join(_LOOKALIKES.get(c, c) for c in label)
            if skeleton != label and skeleton.isascii() and not native:
                safe = False
                fakes = ", ".join(dict.fromkeys(_char_name(c) for c in label if c in _LOOKALIKES))
                self.warn(
                    "confusable",
                    f"The host part '{_show(label)}' imitates the plain name '{skeleton}' using look-alike "
                    f"characters ({fakes}).",
                )
        return safe

    def _ipv4(self, written: str, labels: list[str]) -> None:
        if len(labels) > 1 and labels[-1] == "":
            labels = labels[:-1]
        value = _parse_ipv4(labels)
        if value is None:
            self.error("bad-ip", f"The host '{_show(written)}' looks like a number but is not a valid IPv4 address.")
            return
        address = ipaddress.IPv4Address(value)
        self.host = self.display_host = str(address)
        self.warn("ip-address", f"The host is the raw IP address {address}, not a name.")
        if written != self.host:
            self.warn("ip-notation", f"The host '{_show(written)}' is an unusual way to write the address {address}.")
        self._address_kind(address)

    def _address_kind(self, address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
        if is_loopback(str(address)):
            self.loopback = True
            self.warn("loopback", "The address points to a program on your own computer.")
        elif address.is_private or address.is_link_local or address.is_reserved or address.is_unspecified:
            self.warn("private-address", f"The address {address} is on a private or local network.")

    def _domain(self, labels: list[str]) -> None:
        name = ".".join(labels)
        if is_loopback(self.host):
            self.loopback = True
            self.warn("loopback", "The address points to a program on your own computer.")
            return
        if name.endswith(_LOCAL_SUFFIXES):
            self.warn("private-address", f"The host {name} is a name on a private or local network.")
        psl = _psl()
        self.registrable = psl.privatesuffix(name)
        if psl.publicsuffix(name, accept_unknown=False) is None:
            self.warn("unknown-tld", f"'.{labels[-1]}' is not a known top-level domain.")
        if self.registrable is None:
            self.warn(
                "no-registrable-domain",
                f"The host {name} is not an ordinary registered domain (it is a shared suffix or a single name).",
            )
            return
        sub = labels[: len(labels) - self.registrable.count(".") - 1]
        for i in range(1, len(sub)):
            if sub[i] in _BAIT_TLDS:
                bait = ".".join(sub[: i + 1])
                self.warn(
                    "domain-in-subdomain",
                    f"The address begins with '{bait}', but the site is {self.registrable}.",
                )
                break
        if len(name) > LONG_HOST or len(sub) > DEEP_SUBDOMAIN:
            self.warn("long-host", f"The host is unusually long; the site is {self.registrable}.")

    def _scheme_rules(self) -> None:
        if self.scheme != "http" or not self.host:
            return
        if self.loopback and self.allow_http_loopback:
            self.warn("insecure-http", "The address uses unencrypted http (allowed only to this computer).")
        else:
            self.error("insecure-scheme", "The address uses unencrypted http; only https may be opened.")

    def _credentials(self) -> None:
        query, _, fragment = self.rest.partition("#")
        _, _, query = query.partition("?")
        names: list[str] = []
        for part in (query, fragment):
            for key, value in parse_qsl(part, keep_blank_values=False):
                if value and looks_secret(key, url_param=True):
                    names.append(_show(key, 40))
        if names:
            listed = ", ".join(f"'{n}'" for n in dict.fromkeys(names))
            self.warn(
                "credential-in-url",
                f"The address carries what looks like a secret ({listed}); servers must not put credentials or "
                "pre-authenticated links in URLs.",
            )
        if _JWT.search(self.rest):
            self.warn("credential-in-url", "The address carries what looks like a signed access token (JWT).")


def check_url(url: str, *, allow_http_loopback: bool = True) -> UrlReport:
    """Check a URL before showing or opening it; see the module docstring for every rule."""
    return _Checker(url, allow_http_loopback).run()


def format_for_display(report: UrlReport) -> list[tuple[str, Style]]:
    """The URL as styled segments: `domain` marks the registrable domain that renderers should highlight.

    Styles: `scheme`, `host` (the rest of the host), `domain`, `port`, `rest` (path, query, fragment)
    and `danger` (a refused URL, shown whole with its invisible characters escaped). The host is shown
    as `display_host`, i.e. where the browser goes; show `report.url` as well when it differs.
    """
    if not report.ok or not report.host:
        return [(_show(report.url, limit=MAX_URL_LENGTH + 1), "danger")]
    segments: list[tuple[str, Style]] = [(f"{report.scheme}://", "scheme")]
    host = report.display_host
    if ":" in host:
        segments.append((f"[{host}]", "domain"))
    elif report.registrable_domain is None:
        segments.append((host, "domain"))
    else:
        trailing = "." if host.endswith(".") else ""
        labels = host.removesuffix(".").split(".")
        keep = report.registrable_domain.count(".") + 1
        if len(labels) > keep:
            segments.append((".".join(labels[:-keep]) + ".", "host"))
        segments.append((".".join(labels[-keep:]), "domain"))
        if trailing:
            segments.append((trailing, "host"))
    if report.port is not None:
        segments.append((f":{report.port}", "port"))
    if report.rest:
        segments.append((_show(report.rest, limit=MAX_URL_LENGTH + 1), "rest"))
    return segments
