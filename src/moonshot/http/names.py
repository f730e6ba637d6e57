"""People's names on the HTTP side: what makes two names the same, and who may use a name.

* **One name, many spellings.** Names are compared by :func:`name_key`: NFKC normalisation, then
  casefolding (``"Alice"``, ``"alice"`` and the fullwidth ``"Ａｌｉｃｅ"`` are one name). A name is
  shown as it was first taken (NFKC-normalised, case kept).
* **Bindings.** A name is bound to one browser by a signed HttpOnly session cookie
  (:class:`~moonshot.http.identity.Identity`); each binding is a :class:`NameRecord`, kept in
  the store's ``kv`` under ``turbo:name:<key>``: the digest of the cookie's nonce, the digest of
  the name's recovery code, and whether the name has played a rated game.
* **Who may take a bound name.** Nobody while it is in use (a lobby stream, a seat in a game).
  Once the name has played a rated game, nobody else ever: it moves to another browser only with
  its recovery code (shown once, when the binding is made: ``POST /api/names/recover``) or when
  an operator releases it (``moonshot names release NAME``). A name that never played a rated
  game may be taken by another browser once it is not in use (anonymous, unrated play).

The recovery code and the cookie's nonce are never stored: only their SHA-256.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import unicodedata
from dataclasses import dataclass
from typing import Any

NAME_PREFIX = "turbo:name:"  # kv keys of the bindings
MAX_NAME = 40
BOT_SUFFIX = " (bot)"
RECOVERY_ALPHABET = "ABCDEFGHJKMNPQRSTVWXYZ23456789"  # no 0/O, 1/I/L, U
RECOVERY_GROUPS = 5  # 5 groups of 4: about 98 bits


class NameRefused(ValueError):
    """A name that cannot be used (the reason is the message; ``code`` and ``params`` say it
    again for the web app's catalogue)."""

    def __init__(self, message: str, code: str = "bad_name", params: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.params = dict(params or {})


def display_name(raw: str) -> str:
    """The name as shown: NFKC-normalised, without surrounding spaces; NameRefused when it is not
    a name (empty, over 40 characters, control or format characters, a bot's suffix)."""
    name = unicodedata.normalize("NFKC", raw).strip()
    if not name:
        raise NameRefused("a name is 1 to 40 printable characters")
    if len(name) > MAX_NAME or not name.isprintable():
        raise NameRefused("a name is 1 to 40 printable characters")
    if name_key(name).endswith(BOT_SUFFIX):
        raise NameRefused(f"names ending in {BOT_SUFFIX!r} are for bots", "bot_name", {"suffix": BOT_SUFFIX})
    return name


def name_key(name: str) -> str:
    """What two names are compared by: NFKC, casefolded, NFKC again (casefolding may leave a
    string that is not NFKC), without surrounding spaces."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold()).strip()


def same_name(a: str, b: str) -> bool:
    """Whether two names are one (:func:`name_key`); the same string needs no normalising."""
    return a == b or name_key(a) == name_key(b)


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def new_recovery_code() -> str:
    """A code to move a name to another browser: ``XXXX-XXXX-XXXX-XXXX-XXXX``."""
    chars = "".join(secrets.choice(RECOVERY_ALPHABET) for _ in range(4 * RECOVERY_GROUPS))
    return "-".join(chars[i : i + 4] for i in range(0, len(chars), 4))


def _code_digest(code: str) -> str | None:
    """The digest of a code as typed (case, spaces and dashes do not matter); None when it holds
    characters no code has."""
    text = "".join(ch for ch in code.upper() if ch not in " -")
    if len(text) != 4 * RECOVERY_GROUPS or any(ch not in RECOVERY_ALPHABET for ch in text):
        return None
    return digest("-".join(text[i : i + 4] for i in range(0, len(text), 4)))


@dataclass
class NameRecord:
    """One name's binding (what the store keeps under ``turbo:name:<key>``)."""

    name: str  # as shown
    session: str  # SHA-256 of the nonce in the bound browser's session cookie
    recovery: str | None = None  # SHA-256 of the recovery code (None: bound before codes existed)
    rated: bool = False  # the name has played a rated game: only the code or an operator moves it

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "session": self.session, "recovery": self.recovery, "rated": self.rated}

    @classmethod
    def from_json(cls, key: str, value: Any) -> NameRecord | None:
        """A stored binding; a plain string is a binding kept before records (the nonce's digest)."""
        if isinstance(value, str):
            return cls(key, value)
        if not isinstance(value, dict) or not isinstance(value.get("session"), str):
            return None
        name = value.get("name")
        recovery = value.get("recovery")
        return cls(
            name if isinstance(name, str) and name else key,
            value["session"],
            recovery if isinstance(recovery, str) else None,
            bool(value.get("rated", False)),
        )

    def code_matches(self, code: str) -> bool:
        given = _code_digest(code)
        if given is None or self.recovery is None:
            return False
        return hmac.compare_digest(given, self.recovery)


__all__ = [
    "NAME_PREFIX",
    "NameRecord",
    "NameRefused",
    "digest",
    "display_name",
    "name_key",
    "new_recovery_code",
    "same_name",
]
