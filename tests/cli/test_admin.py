"""`moonshot admin`'s own errors, as a person sees them: no token to be found, no server at the
operator address; and where it looks for the token."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from moonshot.cli.main import main
from moonshot.server.admin import TOKEN_FILE, token_path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_token_is_looked_for_beside_the_sqlite_store(tmp_path: Path) -> None:
    assert token_path(f"sqlite:///{tmp_path / 'games.db'}") == tmp_path / TOKEN_FILE
    assert token_path("postgresql+asyncpg://u@h/db") == Path.cwd() / TOKEN_FILE


def test_without_a_token_it_says_where_it_looked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MOONSHOT_OPERATOR_TOKEN", raising=False)
    result = CliRunner().invoke(main, ["admin", "--db", f"sqlite:///{tmp_path / 'games.db'}", "tables"])
    assert result.exit_code == 1
    assert f"cannot read the operator token at {tmp_path / TOKEN_FILE}" in result.output
    assert "--token-file" in result.output


def test_without_a_server_it_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOONSHOT_OPERATOR_TOKEN", "x" * 32)
    result = CliRunner().invoke(main, ["admin", "--operator", f"127.0.0.1:{free_port()}", "drain"])
    assert result.exit_code == 1 and "no operator surface at http://127.0.0.1:" in result.output


def test_a_bad_kind_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["admin", "ban", "planet", "x"])
    assert result.exit_code == 2 and "'name', 'address'" in result.output
