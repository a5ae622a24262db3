"""API keys: created by `sift keys create --tenant T`, stored as SHA-256 hashes, each mapped to one tenant.

A tenant may also get its own ingest roots (`--root DIR`, stored in ``tenant_roots``): its ingest jobs may then
read only under those, whatever ``SIFT_ALLOWED_ROOTS`` says, so one tenant cannot ingest a parent of another's
repository. A tenant without roots of its own uses ``SIFT_ALLOWED_ROOTS`` (the single-user default).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from litestar import Request
from sqlalchemy import Engine, func, insert, select, update

from sift.api.errors import Unauthorized
from sift.db.api_tables import ApiKey, TenantRoot
from sift.errors import InvalidQuery, NotFound
from sift.names import check_name

KEY_PREFIX = "sk-sift-"


def hash_key(key: str) -> str:
    """The stored form of a key (keys are 256-bit random, so an unsalted SHA-256 is enough)."""
    return hashlib.sha256(key.encode()).hexdigest()


def create_key(engine: Engine, tenant: str, name: str | None = None,
               roots: Sequence[Path | str] = ()) -> tuple[int, str]:
    """Make a key for ``tenant`` (adding ``roots`` to its ingest roots); returns (id, key). The key itself is
    shown once and never stored."""
    check_name(tenant, "tenant")
    resolved = [_root(r) for r in roots]
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    with engine.begin() as conn:
        key_id = conn.execute(
            insert(ApiKey).values(tenant=tenant, name=name, prefix=key[: len(KEY_PREFIX) + 4],
                                  key_hash=hash_key(key)).returning(ApiKey.id)
        ).scalar_one()
        have = set(conn.execute(select(TenantRoot.root).where(TenantRoot.tenant == tenant)).scalars())
        for root in dict.fromkeys(str(r) for r in resolved):
            if root not in have:
                conn.execute(insert(TenantRoot).values(tenant=tenant, root=root))
    return key_id, key


def _root(path: Path | str) -> Path:
    """An ingest root as stored: absolute, symlinks resolved, an existing directory."""
    raw = Path(path).expanduser()
    if not raw.is_absolute():
        raw = Path.cwd() / raw
    resolved = raw.resolve()
    if not resolved.is_dir():
        raise InvalidQuery(f"root {str(path)!r} is not an existing directory", field="root")
    return resolved


def tenant_roots(engine: Engine, tenant: str) -> list[Path]:
    """The ingest roots of ``tenant`` (empty when it has none of its own)."""
    with engine.connect() as conn:
        rows = conn.execute(select(TenantRoot.root).where(TenantRoot.tenant == tenant).order_by(TenantRoot.root))
        return [Path(r) for r in rows.scalars()]


def ingest_roots(engine: Engine, tenant: str, default: Sequence[Path]) -> list[Path]:
    """Where ``tenant``'s ingest jobs may read: its own roots, or ``default`` (SIFT_ALLOWED_ROOTS) if it has none."""
    return tenant_roots(engine, tenant) or list(default)


def list_keys(engine: Engine, tenant: str | None = None) -> list[dict[str, Any]]:
    """Keys (never their secret) of ``tenant`` or of everyone."""
    stmt = select(ApiKey.id, ApiKey.tenant, ApiKey.name, ApiKey.prefix, ApiKey.created_at,
                  ApiKey.revoked_at).order_by(ApiKey.id)
    if tenant is not None:
        stmt = stmt.where(ApiKey.tenant == tenant)
    with engine.connect() as conn:
        keys = [dict(r._mapping) for r in conn.execute(stmt)]
        roots: dict[str, list[str]] = {}
        for row in conn.execute(select(TenantRoot.tenant, TenantRoot.root).order_by(TenantRoot.root)):
            roots.setdefault(row.tenant, []).append(row.root)
    for key in keys:
        key["roots"] = roots.get(key["tenant"], [])
    return keys


def revoke_key(engine: Engine, key_id: int) -> None:
    """Stop accepting a key (NotFound when there is no such live key)."""
    with engine.begin() as conn:
        done = conn.execute(
            update(ApiKey).where(ApiKey.id == key_id, ApiKey.revoked_at.is_(None)).values(revoked_at=func.now())
        ).rowcount
    if not done:
        raise NotFound(f"no active key with id {key_id}; list them with `sift keys list`")


def tenant_for_key(engine: Engine, key: str) -> str | None:
    """The tenant a live key belongs to, or None."""
    with engine.connect() as conn:
        return conn.execute(
            select(ApiKey.tenant).where(ApiKey.key_hash == hash_key(key), ApiKey.revoked_at.is_(None))
        ).scalar()


def bearer_token(header: str | None) -> str:
    """The key in an ``Authorization: Bearer <key>`` header (Unauthorized when missing or malformed)."""
    if not header:
        raise Unauthorized("missing Authorization header; send `Authorization: Bearer <key>` "
                           "(create a key with `sift keys create --tenant NAME`)")
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("Authorization header must be `Bearer <key>`")
    return token.strip()


async def provide_tenant(request: Request) -> str:
    """Dependency: the caller's tenant (the configured default tenant when auth is off)."""
    state = request.app.state
    if not state.settings.auth:
        return state.settings.tenant
    key = bearer_token(request.headers.get("authorization"))
    tenant = tenant_for_key(state.engine, key)
    if tenant is None:
        raise Unauthorized("unknown or revoked API key")
    return tenant
