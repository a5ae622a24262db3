"""`sift keys`: create, list and revoke API keys; each key maps to one tenant and is stored hashed.

`--root DIR` (repeatable) confines the tenant's ingest jobs to those directories; a tenant without roots of its
own may ingest under SIFT_ALLOWED_ROOTS.
"""

from __future__ import annotations

import argparse

from sift.cli.common import add_common, settings_from
from sift.cli.output import echo, escape, print_json

EXAMPLE = """examples:
  sift keys create --tenant acme --name ci      # prints the key once
  sift keys create --tenant acme --root /srv/repos/acme   # acme may ingest only under /srv/repos/acme
  sift keys list --tenant acme
  sift keys revoke 3
"""


def register(sub: argparse._SubParsersAction) -> None:
    """Add the keys command with its create/list/revoke actions."""
    p = sub.add_parser("keys", help="manage API keys", description=__doc__, epilog=EXAMPLE,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    c = actions.add_parser("create", help="create a key for a tenant", epilog=EXAMPLE,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("--tenant", required=True, help="tenant the key acts for")
    c.add_argument("--name", default=None, help="a label to recognise the key by")
    c.add_argument("--root", dest="roots", action="append", default=[], metavar="DIR",
                   help="a directory the tenant's ingest jobs may read (repeatable; default SIFT_ALLOWED_ROOTS)")
    c.add_argument("--json", action="store_true", help="print id, tenant and key as JSON")
    add_common(c)
    ls = actions.add_parser("list", help="list keys (never their secret)")
    ls.add_argument("--tenant", default=None)
    ls.add_argument("--json", action="store_true")
    add_common(ls)
    r = actions.add_parser("revoke", help="revoke a key by id")
    r.add_argument("id", type=int)
    add_common(r)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the chosen action."""
    from sift.api.auth import create_key, list_keys, revoke_key, tenant_roots
    from sift.db import open_database

    engine = open_database(settings_from(args))
    try:
        if args.action == "create":
            key_id, key = create_key(engine, args.tenant, args.name, args.roots)
            roots = [str(r) for r in tenant_roots(engine, args.tenant)]
            if args.json:
                print_json({"id": key_id, "tenant": args.tenant, "key": key, "roots": roots}, indent=None)
            else:
                where = f"; ingest roots: {', '.join(escape(r) for r in roots)}" if roots else ""
                echo(f"key {key_id} for tenant {escape(args.tenant)}{where} (shown once, store it now):\n{key}")
        elif args.action == "list":
            rows = list_keys(engine, args.tenant)
            if args.json:
                print_json(rows)
            for row in [] if args.json else rows:
                state = f"revoked {row['revoked_at']}" if row["revoked_at"] else "active"
                echo(f"{row['id']:>4}  {escape(row['tenant']):<20} {row['prefix']}…  {escape(row['name'] or ''):<20} {state}")
        else:
            revoke_key(engine, args.id)
            echo(f"key {args.id} revoked")
    finally:
        engine.dispose()
    return 0
