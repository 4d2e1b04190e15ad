"""``tiktoken.core``: the Encoding class, which is :class:`bytepair.Encoding` itself (an object
made through either name is the same type), and tiktoken's helper that raises the error for a
disallowed special token."""

from __future__ import annotations

from bytepair.encoding import Encoding

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

__all__ = ["Encoding", "raise_disallowed_special_token"]


def raise_disallowed_special_token(token: str) -> NoReturn:
    """Raises the ValueError that ``encode`` raises for text holding ``token`` while it is
    disallowed (tiktoken's wording, word for word)."""
    from bytepair import _core

    # The message is written once, in the Rust policy check (crates/python/src/policy.rs):
    # a 256-byte table refusing `token` in the text `token` raises it.
    if token:
        byte_table = _core.Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, [], r"[\s\S]")
        byte_table.encode(token, allowed_special=set(), disallowed_special=[token])
    raise ValueError(f"Encountered text corresponding to disallowed special token {token!r}.")
