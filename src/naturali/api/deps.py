"""Request-scoped dependencies: the service container and the authenticated user."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from naturali.api.guard import USER_KEY
from naturali.model import User
from naturali.service.container import Services

_bearer = HTTPBearer(auto_error=False, description="A naturali token (nk_…)")


# Both dependencies are ``async def``: they only read request state, and a sync dependency
# would cost every request a hop through the thread pool (measured: ~0.3 ms of server CPU
# per request under 8 clients).
async def service(request: Request) -> Services:
    naturali: Services = request.app.state.naturali
    return naturali


async def current_user(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> User:
    # The request guard authenticated the caller before reading the body.
    known: User | None = getattr(request.state, USER_KEY, None)
    if known is not None:
        return known
    token = credentials.credentials if credentials else None
    # Outside the guard's paths: the same quick token lookup the guard makes on the loop.
    return (await service(request)).auth.authenticate(token)


Service = Annotated[Services, Depends(service)]
CurrentUser = Annotated[User, Depends(current_user)]
