"""Byte-pair encoding you can read: training and encoding in plain Python, with the merges
shown as they happen (``tiktoken._educational``, in bytepair's words).

Training is bytepair's reference trainer (``bytepair/train_reference.py``, the specification
the Rust trainer is tested against). Encoding is rank BPE written out step by step: split the
text with the pattern, start each piece as single bytes, and merge the adjacent pair whose
bytes have the lowest rank until no pair is a token. It is slow on purpose; use
``bytepair.Encoding`` for real work, which gives the same ids.

    >>> enc = SimpleBytePairEncoding.train("hug pug hug bug " * 10, vocab_size=260, pat_str="gpt2")
    >>> ids = enc.encode("hug bug", visualise=None)
    >>> enc.decode_tokens_bytes(ids)
    [b'hug', b' bug']
    >>> enc.decode(ids)
    'hug bug'

Where it differs from tiktoken's educational module: ties between equally frequent pairs go to
the smallest pair of ids (as ``bytepair.train`` and rustbpe do; tiktoken's takes the pair it
met first), so the ranks can differ on ties; training shows nothing unless asked
(``visualise=``), and then shows the tokens learned rather than each step; ``pat_str`` may also
be a preset name (``"gpt2"``, ``"gpt4"``, ...).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from bytepair.encoding import Encoding

# Background colours (ANSI 256-colour codes) that alternate between neighbouring tokens.
_COLOURS = [f"\x1b[48;5;{code}m" for code in (167, 179, 185, 77, 80, 68, 134)]
_RESET = "\x1b[0m"


def _regex():
    # The patterns use \p{L} and friends, which only the `regex` module knows (tiktoken's own
    # dependency; not bytepair's, so it is imported when needed).
    try:
        import regex
    except ImportError:
        raise ImportError("bytepair.tiktoken._educational needs the `regex` module: pip install regex") from None
    return regex


class SimpleBytePairEncoding:
    """A split pattern and mergeable ranks, encoded and decoded in plain Python."""

    def __init__(self, *, pat_str: str, mergeable_ranks: dict[bytes, int]) -> None:
        from bytepair.train import resolve_pattern

        self.pat_str = pat_str
        # Token bytes -> rank; a lower rank merges first.
        self.mergeable_ranks = mergeable_ranks
        self._decoder = {rank: token for token, rank in mergeable_ranks.items()}
        self._pat = _regex().compile(resolve_pattern(pat_str))

    def encode(self, text: str, visualise: str | None = "colour") -> list[int]:
        """The ids of ``text``: each piece the pattern finds is merged on its own.

        ``visualise`` shows each piece's merges as they happen: ``"colour"`` (or ``"color"``)
        paints the tokens, ``"simple"`` prints them as a list, None shows nothing.
        """
        ids: list[int] = []
        for piece in self._pat.findall(text):
            ids.extend(bpe_encode(self.mergeable_ranks, piece.encode("utf-8"), visualise=visualise))
        return ids

    def decode_bytes(self, tokens: list[int]) -> bytes:
        """The bytes of the ids, joined."""
        return b"".join(self._decoder[t] for t in tokens)

    def decode(self, tokens: list[int]) -> str:
        """The text of the ids; bytes that are not valid UTF-8 become U+FFFD."""
        return self.decode_bytes(tokens).decode("utf-8", errors="replace")

    def decode_tokens_bytes(self, tokens: list[int]) -> list[bytes]:
        """The bytes of each id: how the text was cut."""
        return [self._decoder[t] for t in tokens]

    @staticmethod
    def train(training_data: str, vocab_size: int, pat_str: str, visualise: str | None = None) -> SimpleBytePairEncoding:
        """Learns ``vocab_size`` tokens from ``training_data`` (see :func:`bpe_train`)."""
        ranks = bpe_train(training_data, vocab_size, pat_str, visualise=visualise)
        return SimpleBytePairEncoding(pat_str=pat_str, mergeable_ranks=ranks)

    @staticmethod
    def from_tiktoken(encoding: str | Encoding) -> SimpleBytePairEncoding:
        """The same ranks and pattern as an encoding, or as the encoding of that name."""
        if isinstance(encoding, str):
            from bytepair.registry import get_encoding

            encoding = get_encoding(encoding)
        return SimpleBytePairEncoding(pat_str=encoding._pat_str, mergeable_ranks=encoding._mergeable_ranks)


def bpe_encode(mergeable_ranks: dict[bytes, int], input: bytes, visualise: str | None = "colour") -> list[int]:
    """Rank BPE of one piece: start from single bytes; while some adjacent pair joins into a
    token, join the pair whose token has the lowest rank (the leftmost, if two pairs make the
    same token); the ranks of the parts are the ids.

    >>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257}
    >>> bpe_encode(ranks, b"abcab", visualise=None)
    [257, 256]
    """
    parts = [bytes([b]) for b in input]
    while True:
        if visualise in ("colour", "color"):
            visualise_tokens(parts)
        elif visualise == "simple":
            print(parts)
        best: tuple[int, int] | None = None  # (rank, position) of the pair to join
        for i in range(len(parts) - 1):
            rank = mergeable_ranks.get(parts[i] + parts[i + 1])
            if rank is not None and (best is None or rank < best[0]):
                best = (rank, i)
        if best is None:
            break
        i = best[1]
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    if visualise:
        print()
    return [mergeable_ranks[part] for part in parts]


def bpe_train(data: str, vocab_size: int, pat_str: str, visualise: str | None = None) -> dict[bytes, int]:
    """``{token bytes: rank}`` learned from ``data``: the 256 single bytes, then one token per
    merge of the most frequent adjacent pair, until there are ``vocab_size`` tokens (or no pair
    is left). ``bytepair.train_reference`` does the work; its docstring states the algorithm.

    ``visualise`` (``"colour"`` or ``"simple"``) prints the tokens learned and the start of
    ``data`` cut into them.
    """
    from bytepair.errors import TrainingError
    from bytepair.train_reference import count_chunks, train_from_counts

    if vocab_size < 256:
        raise TrainingError(f"vocab_size must be at least 256 (one token per byte), got {vocab_size}")
    tokens = train_from_counts(count_chunks([data], pat_str), vocab_size)
    ranks = {token: rank for rank, token in enumerate(tokens)}
    if visualise:
        for rank in range(256, len(tokens)):
            print(f"token {rank}: {tokens[rank]!r}")
        print("The start of the training data, cut into these tokens:")
        head = SimpleBytePairEncoding(pat_str=pat_str, mergeable_ranks=ranks)
        pieces = head.decode_tokens_bytes(head.encode(data[:400], visualise=None))
        if visualise in ("colour", "color"):
            visualise_tokens(pieces)
        else:
            print(pieces)
    return ranks


def visualise_tokens(token_values: list[bytes]) -> None:
    """Prints the tokens side by side, each on its own background colour.

    A token that ends inside a UTF-8 character shows U+FFFD for its part of it.
    """
    out = []
    for i, token in enumerate(token_values):
        out.append(_COLOURS[i % len(_COLOURS)] + token.decode("utf-8", errors="replace"))
    print("".join(out) + _RESET)


def train_simple_encoding() -> SimpleBytePairEncoding:
    """Trains 600 tokens on this file's own text and shows how "hello world" is merged."""
    with open(__file__, encoding="utf-8") as f:
        data = f.read()
    enc = SimpleBytePairEncoding.train(data, vocab_size=600, pat_str="gpt2")
    print("The merges that encode 'hello world':")
    ids = enc.encode("hello world")
    assert enc.decode(ids) == "hello world"
    assert enc.decode_bytes(ids) == b"hello world"
    return enc
