"""Which addresses a source may reach. A server that fetches what a user names can be turned
against the network it runs in, so by default only globally routable addresses are fetched:
a private, loopback, link-local (the cloud metadata service included), shared, site-local or
reserved address is refused after DNS resolution — and so is an IPv6 address that carries an
IPv4 one (mapped, compatible, NAT64, 6to4, Teredo) unless the address it carries is public.
The operator's ``sources_allow`` (hosts and CIDR ranges) opens exactly what it lists. A local
repository is read only under a folder the operator names in ``sources_local_roots``, never
inside the server's own data, its path resolved (``..``, links) before the check. The address
checked is the one fetched: the caller pins it (``Target.address``), so a name cannot resolve
elsewhere later. Every fetcher (web, Git over each protocol) asks this module, and only it."""

from __future__ import annotations

import ipaddress
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
SCHEMES = {"https": 443, "http": 80, "ssh": 22, "git": 9418}
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # the well-known prefix: IPv4 in the last 32 bits
_LOCAL_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")  # a network's own translator (RFC 8215)
_TEREDO = ipaddress.IPv6Network("2001::/32")


class Refused(Exception):
    """A URL this server will not fetch; the message says why and what would open it."""


@dataclass(frozen=True)
class Allowlist:
    hosts: frozenset[str] = frozenset()
    networks: tuple[Network, ...] = ()
    local_roots: tuple[Path, ...] = ()  # folders whose repositories may be sources
    private: tuple[Path, ...] = ()  # the server's own folders: never a source, under a root too

    @classmethod
    def parse(cls, text: str, local_roots: str = "", private: tuple[Path, ...] = ()) -> Allowlist:
        """``sources_allow``: comma-separated host names and CIDR ranges (or addresses);
        ``sources_local_roots``: comma-separated folders; ``private``: the data and cache
        dirs."""
        hosts: set[str] = set()
        networks: list[Network] = []
        for item in _items(text):
            if item == "file":
                raise ValueError(
                    "sources_allow no longer opens local repositories with 'file': name the "
                    "folders they may be in with sources_local_roots"
                )
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                hosts.add(item.lower().rstrip("."))
        roots = tuple(Path(os.path.realpath(Path(r).expanduser())) for r in _items(local_roots))
        if any(not root.is_absolute() or root == Path("/") for root in roots):
            raise ValueError("sources_local_roots must name absolute folders other than /")
        mine = tuple(Path(os.path.realpath(p)) for p in private)
        return cls(frozenset(hosts), tuple(networks), roots, mine)

    def admits(self, host: str, address: Address) -> bool:
        return host in self.hosts or any(address in n for n in self.networks)

    def local(self, path: str) -> str:
        """A local repository's real path, when it lies under a local root and outside the
        server's own folders; Refused otherwise."""
        if not self.local_roots:
            raise Refused(
                "local repositories are not read unless the operator names their folder in "
                "sources_local_roots"
            )
        real = Path(os.path.realpath(Path(path).expanduser()))
        if not any(real.is_relative_to(root) for root in self.local_roots):
            raise Refused("the repository is not under a folder sources_local_roots names")
        if any(real.is_relative_to(p) or p.is_relative_to(real) for p in self.private):
            raise Refused("the server's own data is never a source")
        return str(real)


@dataclass(frozen=True)
class Target:
    """A URL cleared to fetch: its scheme, host and port, and the address checked (None for a
    local path, whose ``url`` is then the real path checked)."""

    url: str
    scheme: str
    host: str
    port: int
    address: str | None


def check(url: str, allow: Allowlist) -> Target:
    """The URL cleared to fetch, or Refused. ``user@host:path`` (scp-like Git) is ssh."""
    if option_like(url):
        raise Refused("a URL may not start with '-' or hold spaces or control characters")
    parts = _parts(url)
    if parts[0] == "file":
        local = url[len("file://") :] if url.lower().startswith("file://") else url
        return Target(allow.local(local), "file", "", 0, None)
    scheme, host, port = parts
    address = resolve(host, port, allow)
    return Target(url, scheme, host, port, str(address))


def option_like(text: str) -> bool:
    """Whether a program could read ``text`` as an option or as more than one word: it starts
    with ``-`` or holds a space or a control character (a URL's, a ref's)."""
    return text.startswith("-") or any(ord(c) < 0x21 or 0x7F <= ord(c) <= 0x9F for c in text)


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
        if not (public(address) or allow.admits(host.lower().rstrip("."), address)):
            raise Refused(
                f"{host} resolves to {address}, a private, loopback, link-local or reserved "
                "address; the operator's sources_allow setting can open it"
            )
    return addresses[0]


def public(address: Address) -> bool:
    """Whether ``address`` is globally routable — for an IPv6 address carrying an IPv4 one,
    whether that IPv4 address is."""
    if isinstance(address, ipaddress.IPv6Address):
        if address in _LOCAL_NAT64 or address in _TEREDO or address.is_site_local:
            return False
        carried = _carried(address)
        if carried is not None:
            return public(carried)
    return address.is_global and not address.is_multicast and not address.is_reserved


def _carried(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 transition form carries: mapped (``::ffff:a.b.c.d``),
    translated (``::ffff:0:a.b.c.d``), compatible (``::a.b.c.d``), NAT64, 6to4."""
    value = int(address)
    if value >> 32 in (0, 0xFFFF, 0xFFFF0000) or address in _NAT64:
        return ipaddress.IPv4Address(value & 0xFFFFFFFF)
    return address.sixtofour


def _items(text: str) -> list[str]:
    return [item for item in (part.strip() for part in text.split(",")) if item]


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
    if (split.username or "").startswith("-"):
        raise Refused("a URL's user name may not start with '-'")
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
        raise Refused("the URL names no host")
    if host.startswith("-"):
        raise Refused("a host name may not start with '-'")
    return host
