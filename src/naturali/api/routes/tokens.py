"""The caller's named tokens: create (the secret shown once), list, revoke."""

from __future__ import annotations

from fastapi import APIRouter

from naturali.api import errors
from naturali.api.deps import CurrentUser, Service
from naturali.contracts.resources import TokenCreated, TokenList, TokenOut
from naturali.service.requests import TokenCreate

router = APIRouter(prefix="/v1/tokens", tags=["tokens"])


@router.post("", status_code=201, response_model=TokenCreated, responses=errors.responses(403, 404))
def create_token(body: TokenCreate, user: CurrentUser, svc: Service) -> TokenCreated:
    """A token of the caller's with a scope, optionally limited to projects and expiring;
    the secret is in this answer only. Needs an admin token."""
    projects = list(body.projects) if body.projects is not None else None
    token, secret = svc.tokens.create(user, body.name, body.scope, projects, body.expires_in)
    return TokenCreated(**TokenOut.of(token).model_dump(), token=secret)


@router.get("", response_model=TokenList, responses=errors.responses(403))
def list_tokens(user: CurrentUser, svc: Service) -> TokenList:
    """The caller's tokens, revoked ones included; never a secret. Needs an admin token."""
    return TokenList(data=[TokenOut.of(t) for t in svc.tokens.list(user)])


@router.delete("/{token_id}", status_code=204, responses=errors.responses(403))
def revoke_token(token_id: str, user: CurrentUser, svc: Service) -> None:
    """Revoke a token: refused from now on (on another server within a second)."""
    svc.tokens.revoke(user, token_id)
