"""Headers every answer carries, so a browser treats the Control UI and the API as what they
are: no framing (clickjacking), no type sniffing, no referrer leaving the site, and a strict
Content-Security-Policy — the UI runs only its own scripts and styles (no inline code, no
other origin), and a JSON answer runs nothing at all. FastAPI's /docs page loads Swagger UI
from its CDN, so it alone gets a policy that names it."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

UI_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
API_POLICY = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'"
_CDN = "https://cdn.jsdelivr.net"
DOCS_POLICY = (
    f"default-src 'none'; script-src 'unsafe-inline' {_CDN}; style-src 'unsafe-inline' {_CDN}; "
    "img-src 'self' data: https://fastapi.tiangolo.com; connect-src 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
_COMMON = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
]


def policy(path: str) -> str:
    if path == "/ui" or path.startswith("/ui/"):
        return UI_POLICY
    if path in ("/docs", "/redoc", "/docs/oauth2-redirect"):
        return DOCS_POLICY
    return API_POLICY


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        csp = (b"content-security-policy", policy(scope["path"]).encode())

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *_COMMON, csp]
            await send(message)

        await self.app(scope, receive, sending)
