"""Which addresses a source may reach. A server that fetches what a user names can be turned
against the network it runs in, so by default only public addresses are fetched: a private,
loopback, link-local (the cloud metadata service included), shared or reserved address is
refused after DNS resolution, and so is a ``file:`` URL. The operator's ``sources_allow``
(hosts, CIDR ranges, and ``file``) opens exactly what it lists. The address checked is the one
fetched: the caller pins it (``Target.address``), so a name cannot resolve elsewhere later."""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
SCHEMES = {"https": 443, "http": 80, "ssh": 22, "git": 9418}


class Refused(Exception):
    """A URL this server will not fetch; the message says why and what would open it."""


@dataclass(frozen=True)
class Allowlist:
    hosts: frozenset[str] = frozenset()
    networks: tuple[Network, ...] = ()
    files: bool = False

    @classmethod
    def parse(cls, text: str) -> Allowlist:
        """``sources_allow``: comma-separated host names, CIDR ranges (or addresses), and
        ``file`` for local repositories."""
        hosts: set[str] = set()
        networks: list[Network] = []
        files = False
        for item in (part.strip() for part in text.split(",")):
            if not item:
                continue
            if item == "file":
                files = True
                continue
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                hosts.add(item.lower().rstrip("."))
        return cls(frozenset(hosts), tuple(networks), files)

    def admits(self, host: str, address: Address) -> bool:
        return host in self.hosts or any(address in n for n in self.networks)


@dataclass(frozen=True)
class Target:
    """A URL cleared to fetch: its scheme, host and port, and the address checked (None for a
    local path)."""

    url: str
    scheme: str
    host: str
    port: int
    address: str | None


def check(url: str, allow: Allowlist) -> Target:
    """The URL cleared to fetch, or Refused. ``user@host:path`` (scp-like Git) is ssh."""
    parts = _parts(url)
    if parts[0] == "file":
        if not allow.files:
            raise Refused("file: URLs are not fetched unless the operator's sources_allow has file")
        return Target(url, "file", "", 0, None)
    scheme, host, port = parts
    address = resolve(host, port, allow)
    return Target(url, scheme, host, port, str(address))


def resolve(host: str, port: int, allow: Allowlist) -> Address:
    """The address to fetch ``host`` at: every address it resolves to must be public or
    admitted by ``allow`` (one bad answer refuses it: a name resolving to the metadata service
    among public addresses is a trap)."""
    try:
        answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise Refused(f"{host} does not resolve: {exc}") from exc
    addresses = [ipaddress.ip_address(str(a[4][0]).split("%")[0]) for a in answers]
    for address in addresses:
        if not (_public(address) or allow.admits(host.lower().rstrip("."), address)):
            raise Refused(
                f"{host} resolves to {address}, a private, loopback, link-local or reserved "
                "address; the operator's sources_allow setting can open it"
            )
    return addresses[0]


def _public(address: Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_global and not address.is_multicast


def _parts(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a Git or web URL; ("file", "", 0) for a local repository."""
    if "://" not in url:
        if url.startswith(("/", ".", "~")) or ":" not in url:
            return "file", "", 0
        host = url.split(":", 1)[0].rsplit("@", 1)[-1]  # scp-like: [user@]host:path
        return "ssh", _host(host, url), SCHEMES["ssh"]
    split = urlsplit(url)
    if split.password is not None:
        raise Refused("a URL with a password in it is not stored: use a deploy key")
    scheme = split.scheme.lower()
    if scheme == "file":
        return "file", "", 0
    if scheme not in SCHEMES:
        raise Refused(f"{scheme}: URLs are not fetched (https, http, ssh, git or file)")
    try:
        port = split.port or SCHEMES[scheme]
    except ValueError as exc:
        raise Refused(f"the URL's port is not valid: {exc}") from exc
    return scheme, _host(split.hostname or "", url), port


def _host(host: str, url: str) -> str:
    if not host:
        raise Refused(f"{url!r} names no host")
    return host
