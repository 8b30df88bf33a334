"""What counts as a loopback host (this computer), and the host part of a `Host` header or authority.

`is_loopback(host)` is the one answer for the HTTP app's Host and Origin checks (DNS rebinding
protection), the URL checks (http is allowed only to loopback), the URL-mode guard and the command
line. A loopback host is
- the name `localhost`, in any letter case: every hosts file maps it to this computer. Not
  `localhost.` with a trailing dot and not subdomains such as `app.localhost`: common resolvers (glibc
  with only /etc/hosts) send those to the network's DNS server, which may answer with any address,
  and a name whose address someone else chooses is what a DNS rebinding attack needs;
- an IPv4 address in 127.0.0.0/8, written as a plain dotted quad (`127.0.0.1`, `127.0.0.2`);
- the IPv6 address ::1 in any spelling (`::1`, `0:0:0:0:0:0:0:1`), bracketed (`[::1]`, as in a Host
  header or URL) or not (as from `urllib.parse.urlsplit(...).hostname`), and an IPv4-mapped loopback
  address (`::ffff:127.0.0.1`). A zone id (`::1%lo`) is not accepted.
The host must come without a port; `host_without_port` takes it off a `Host` header or an authority.
Other spellings of an address (`127.1`, `2130706433`, `0x7f.0.0.1`) are not loopback here: a caller
that reads hosts the way a browser does (`baton.forms.url_safety`) normalises them first.
`origin_host(origin)` reads an `Origin` header strictly as `scheme://host[:port]` (protocol.md P101).
"""

from __future__ import annotations

import ipaddress
import re

__all__ = ["host_without_port", "is_loopback", "origin_host"]

_ORIGIN = re.compile(r"[a-z][a-z0-9+.-]*://(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::[0-9]{1,5})?", re.ASCII)
"""An `Origin` as browsers send it (RFC 6454), lower-cased: a scheme, `://`, a name, IPv4 or bracketed IPv6
host, an optional port; nothing else (no userinfo, path, query, fragment or space)."""


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an IP address, IPv6 bracketed or not, no port) is this computer."""
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        if ":" not in host:  # brackets hold only IPv6 addresses
            return False
    elif host.isascii() and host.lower() == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address):
        if address.scope_id is not None:
            return False
        return (address.ipv4_mapped or address).is_loopback
    return address.is_loopback


def host_without_port(authority: str) -> str:
    """The host of a `Host` header value or a URL authority (`host[:port]`, `[v6][:port]`), brackets kept.

    Returns "" when a bracket is not closed. An unbracketed value with more than one `:` is returned whole
    (it cannot carry a port).
    """
    if authority.startswith("["):
        return authority[: authority.find("]") + 1]
    return authority.rsplit(":", 1)[0] if authority.count(":") == 1 else authority


def origin_host(origin: str) -> str | None:
    """The host of an `Origin` header value (`scheme://host[:port]`, brackets kept, lower-cased), or None when
    it is anything else: `http://localhost:80@other.example` names other.example, not localhost, and is
    refused rather than read loosely (protocol.md P101). A trailing `/` is tolerated."""
    value = origin.strip().lower()
    match = _ORIGIN.fullmatch(value[:-1] if value.endswith("/") else value)
    return match.group(1) if match else None
