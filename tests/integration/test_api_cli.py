"""`sift keys` against a real database and `sift serve`'s auth rule."""

from __future__ import annotations

import json

import pytest

from sift.api.auth import tenant_for_key
from sift.cli import UsageError, main
from sift.cli.serve import is_loopback, resolve_auth
from sift.config import Settings
from sift.db import open_database


@pytest.mark.parametrize(
    ("host", "flag", "env", "expected"),
    [
        ("127.0.0.1", None, None, False),
        ("::1", None, None, False),
        ("localhost", None, None, False),
        ("0.0.0.0", None, None, True),
        ("192.168.1.5", None, None, True),
        ("127.0.0.1", "on", None, True),
        ("127.0.0.1", None, "on", True),
        ("127.0.0.1", "off", "on", False),
        ("0.0.0.0", "on", "off", True),
    ],
)
def test_serve_resolve_auth_defaults_off_only_on_loopback(host, flag, env, expected):
    assert resolve_auth(host, flag, env) is expected


@pytest.mark.parametrize(("host", "flag", "env"), [("0.0.0.0", "off", None), ("10.0.0.1", None, "off"),
                                                   ("example.com", None, "false")])
def test_serve_resolve_auth_refuses_off_on_the_network(host, flag, env):
    assert not is_loopback(host)
    with pytest.raises(UsageError, match="only allowed on a loopback host"):
        resolve_auth(host, flag, env)


def test_keys_create_list_revoke(tmp_path, capsys):
    data = str(tmp_path / "data")
    assert main(["keys", "create", "--tenant", "acme", "--name", "ci", "--json", "--data-dir", data]) == 0
    created = json.loads(capsys.readouterr().out)
    engine = open_database(Settings(data_dir=tmp_path / "data"))
    assert tenant_for_key(engine, created["key"]) == "acme"
    assert main(["keys", "list", "--json", "--data-dir", data]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["tenant"], row["name"], row["revoked_at"]) == ("acme", "ci", None)
    assert created["key"] not in json.dumps(row)
    assert main(["keys", "revoke", str(created["id"]), "--data-dir", data]) == 0
    assert tenant_for_key(engine, created["key"]) is None
    assert main(["keys", "revoke", str(created["id"]), "--data-dir", data]) == 1
    assert "no active key" in capsys.readouterr().err
    engine.dispose()
