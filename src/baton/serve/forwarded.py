"""Who sent a request that came through a reverse proxy: the `X-Forwarded-For` rule (protocol.md P228).

A request's client (`RequestInfo.client`, what principal hooks and the server span's `client.address` read) is
the TCP peer, unless that peer is a trusted proxy and the request carries `X-Forwarded-For`: then it is the
right-most address in that header which is not a trusted proxy itself (each proxy appends the peer it saw), or
the left-most when every one is trusted. The trusted proxies are `$FORWARDED_ALLOW_IPS` when it is set (a comma
list of addresses, networks such as `10.0.0.0/8`, other names taken literally, or `*` for any peer), else the
loopback peers (`baton.protocol.hosts.is_loopback`): an nginx on the same machine.

uvicorn has the same rule in a middleware of its own (`proxy_headers`), which Baton's launcher turns off
(`baton.web`): it is one more coroutine per request and a pass over every header of every request from a
loopback peer, paid by the requests that carry no such header too. The HTTP transport holds the headers as a
dict already, so here a request without `X-Forwarded-For` costs one dict lookup. `X-Forwarded-Proto` is not
read: nothing Baton serves builds a URL from the request's scheme (public URLs come from `public_url`).
"""

from __future__ import annotations

import functools
import ipaddress
import os
from collections.abc import Iterable

from ..protocol.hosts import is_loopback

__all__ = ["ENV_TRUSTED", "FORWARDED_FOR", "Proxies"]

ENV_TRUSTED = "FORWARDED_ALLOW_IPS"  # uvicorn's name for it, so a deployment that set it keeps its meaning
FORWARDED_FOR = b"x-forwarded-for"
Address = tuple[str, int]
_Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class Proxies:
    """The peers whose `X-Forwarded-For` is believed; `client` resolves a request's client address."""

    def __init__(self, trusted: Iterable[str] | None = None) -> None:
        """`trusted`: the entries of `$FORWARDED_ALLOW_IPS`; None: the loopback peers."""
        self._anyone = False
        self._literals: set[str] = set()
        self._networks: list[_Network] = []
        self._loopback = trusted is None
        for entry in (item.strip() for item in trusted or ()):
            if entry == "*":
                self._anyone = True
            elif entry:
                try:
                    self._networks.append(ipaddress.ip_network(entry, strict=False))
                except ValueError:
                    self._literals.add(entry)  # a name, or a Unix socket's path, compared as it is
        self.trusts = functools.lru_cache(maxsize=1024)(self._trusts)

    @classmethod
    def from_environment(cls) -> Proxies:
        value = os.environ.get(ENV_TRUSTED)
        return cls(None if value is None else value.split(","))

    def _trusts(self, host: str) -> bool:
        if self._anyone:
            return True
        if self._loopback:
            return is_loopback(host)
        if host in self._literals:
            return True
        try:
            address = ipaddress.ip_address(host.strip("[]"))
        except ValueError:
            return False
        return any(address in network for network in self._networks)

    def client(self, peer: Address | None, forwarded: Iterable[bytes]) -> Address | None:
        """The client of a request from `peer` that carries these `X-Forwarded-For` values (in order)."""
        if peer is None or not self.trusts(peer[0]):
            return peer
        hops = [hop.strip() for value in forwarded for hop in value.decode("latin-1").split(",")]
        addresses = [_host_port(hop) for hop in hops if hop]
        if not addresses:
            return peer
        for address in reversed(addresses):
            if not self.trusts(address[0]):
                break
        else:
            address = addresses[0]  # every hop a trusted proxy: the left-most
        return address if address[0] else peer  # `[]` names no host: the peer stays the client


def _host_port(hop: str) -> Address:
    """An `X-Forwarded-For` entry as (host, port): `1.2.3.4`, `1.2.3.4:5`, `[::1]:5` or a bare IPv6 address;
    the port is 0 when the entry gives none (or an unreadable one)."""
    if hop.startswith("["):
        host, _, rest = hop[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif hop.count(":") == 1:
        host, _, port = hop.partition(":")
    else:
        host, port = hop, ""
    # ASCII digits only: `str.isdigit` takes "²" (a Latin-1 byte of the header), which `int` refuses.
    return host, int(port) if port.isascii() and port.isdigit() and len(port) <= 5 and int(port) <= 65535 else 0
