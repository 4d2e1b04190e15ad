"""Hugging Face ``tokenizer.json``, BPE models.

Read: byte-level BPE (``ByteLevel`` pre-tokenizer/decoder, vocabulary spelled with GPT-2's
printable stand-ins for bytes), optionally after a ``Split`` regex pre-tokenizer; and
character-level BPE with ``byte_fallback``/``unk_token`` (Llama-style, with the
``Prepend("▁")`` + ``Replace(" ", "▁")`` normalizer or a non-splitting ``Metaspace``
pre-tokenizer). ``added_tokens`` are split out of the text first. Anything else (other models,
normalizers, pre-tokenizers, ``continuing_subword_prefix``, dropout) is refused with a
FormatError naming the field.

Write: a rank vocabulary as a byte-level BPE whose merges reproduce its ranks, with
``ignore_merges`` (a piece that is a token is that token, as in tiktoken) and the split pattern
as a ``Split`` pre-tokenizer, so ``tokenizers.Tokenizer.from_file`` gives the same ids.
"""

from __future__ import annotations

import json
import re

from bytepair import _core
from bytepair.errors import FormatError, VocabError
from bytepair.formats.gpt2 import byte_to_char
from bytepair.merged import MergeEncoding

# GPT-2's pattern as HF's ByteLevel pre-tokenizer applies it (use_regex=True).
BYTE_LEVEL_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
SPACE = "\u2581"


def load(data: bytes, source: str = "<bytes>", name: str = "tokenizer") -> MergeEncoding:
    def fail(field: str, message: str):
        raise FormatError(message, field, source)

    try:
        obj = json.loads(data)
    except (UnicodeDecodeError, ValueError) as e:
        fail("JSON", f"does not parse: {e}")
    model = obj.get("model")
    if not isinstance(model, dict):
        fail("model", "expected an object")
    if model.get("type", "BPE") != "BPE":
        fail("model.type", f"{model.get('type')!r}: only BPE models are supported")
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key):
            fail(f"model.{key}", f"{model[key]!r} is not supported")
    if model.get("dropout"):
        fail("model.dropout", "BPE dropout makes encoding random; only deterministic models are read")
    vocab = model.get("vocab")
    if not isinstance(vocab, dict) or not all(isinstance(v, int) and v >= 0 for v in vocab.values()):
        fail("model.vocab", "expected an object of token -> non-negative id")

    pattern, byte_level, prefix_space, normalize = _pipeline(obj, fail)
    if not byte_level and obj.get("decoder", {}) and _has_type(obj.get("decoder"), "ByteLevel"):
        byte_level = True

    # Token bytes by id. Byte-level spellings go through str.translate (C speed) after one check
    # that every character used is one of ByteLevel's 256.
    if byte_level:
        char_to_byte = {c: b for b, c in byte_to_char().items()}
        unknown = set().union(*vocab) - char_to_byte.keys()
        if unknown:
            bad = next(s for s in vocab if unknown & set(s))
            fail(f"model.vocab[{bad!r}]", f"character {min(unknown)!r} is not one of ByteLevel's byte characters")
        table = {ord(c): b for c, b in char_to_byte.items()}

        def to_bytes(s: str, where: str) -> bytes:
            return s.translate(table).encode("latin-1")
    else:
        def to_bytes(s: str, where: str) -> bytes:
            return s.encode("utf-8")

    size = max(vocab.values(), default=-1) + 1
    added = obj.get("added_tokens") or []
    for t in added:
        if not isinstance(t, dict) or not isinstance(t.get("id"), int) or not isinstance(t.get("content"), str):
            fail("added_tokens", f"expected {{id, content, ...}} objects, found {t!r}")
        size = max(size, t["id"] + 1)
    if size > 16 * (len(vocab) + len(added)) + (1 << 20):
        fail("model.vocab", f"id {size - 1} is far beyond the {len(vocab)} tokens given")
    tokens = [b""] * size
    for s, i in vocab.items():
        if tokens[i]:
            fail("model.vocab", f"id {i} is given to two tokens")
        tokens[i] = to_bytes(s, f"model.vocab[{s!r}]")
    specials = {}
    for t in added:
        content = t["content"].encode("utf-8")
        if tokens[t["id"]] and tokens[t["id"]] != content and t["content"] not in vocab:
            fail("added_tokens", f"{t['content']!r} has id {t['id']}, which the vocabulary gives to another token")
        tokens[t["id"]] = content
        specials[t["content"]] = t["id"]

    raw = model.get("merges") or []
    try:
        # The fast path for well-formed files; any problem is located by the loop below.
        pairs = [m.split(" ") if isinstance(m, str) else m for m in raw]
        merges = [(vocab[a], vocab[b], vocab[a + b]) for a, b in pairs]
    except (KeyError, ValueError, TypeError, AttributeError):
        for k, m in enumerate(raw):
            parts = m.split(" ") if isinstance(m, str) else m if isinstance(m, list) else None
            if not parts or len(parts) != 2 or not all(isinstance(x, str) for x in parts):
                fail(f"model.merges[{k}]", f"expected 'a b' or [a, b], found {m!r}")
            a, b = parts
            missing = next((x for x in (a, b, a + b) if x not in vocab), None)
            if missing is not None:
                fail(f"model.merges[{k}]", f"{m!r} names {missing!r}, which is not in the vocabulary")
        raise AssertionError("unreachable: the fast path failed but every merge checks out") from None

    char_level = None
    if not byte_level:
        unk = model.get("unk_token")
        unk_id = vocab.get(unk) if unk is not None else None
        if unk is not None and unk_id is None:
            fail("model.unk_token", f"{unk!r} is not in the vocabulary")
        char_level = (bool(model.get("byte_fallback")), unk_id, bool(model.get("fuse_unk")))
    try:
        core = _core.MergeBPE(tokens, merges, char_level, bool(model.get("ignore_merges")), pattern,
                              pattern is not None, list(specials.items()))
    except VocabError as e:
        raise FormatError(str(e), "model", source) from None
    except ValueError as e:  # PatternError
        raise FormatError(str(e), "pre_tokenizer.pattern", source) from None

    if prefix_space:
        def normalize(text: str, _inner=normalize) -> str:  # noqa: F811
            text = _inner(text) if _inner else text
            return text if text.startswith(" ") else " " + text

    original = data

    def writer(fmt: str):
        return original if fmt == "tokenizer.json" else None

    denormalize = None
    if normalize is not None and not byte_level:
        # U+2581 back to spaces, and the space the normalizer prepended dropped (HF's
        # Replace + Strip decoders, or Metaspace's).
        def denormalize(data: bytes) -> bytes:
            data = data.replace(SPACE.encode(), b" ")
            return data[1:] if data.startswith(b" ") else data

    return MergeEncoding(name, core, "tokenizer.json", special_tokens=specials, pat_str=pattern,
                         split_specials=True, normalize=normalize, denormalize=denormalize, writer=writer)


def _has_type(node, name: str) -> bool:
    if not isinstance(node, dict):
        return False
    if node.get("type") == name:
        return True
    return any(_has_type(n, name) for key in ("pretokenizers", "decoders", "normalizers")
               for n in node.get(key) or [])


def _pipeline(obj: dict, fail):
    """(split pattern, byte_level, add_prefix_space, text normalizer) from the normalizer and
    pre-tokenizer."""
    normalize = None
    norm = obj.get("normalizer")
    if norm is not None:
        steps = norm.get("normalizers", [norm]) if norm.get("type") == "Sequence" else [norm]
        kinds = [(s.get("type"), s) for s in steps]
        if [k for k, _ in kinds] == ["Prepend", "Replace"] and kinds[0][1].get("prepend") == SPACE \
                and kinds[1][1].get("pattern", {}).get("String") == " " and kinds[1][1].get("content") == SPACE:
            def normalize(text: str) -> str:
                return SPACE + text.replace(" ", SPACE) if text else text
        else:
            fail("normalizer", f"{[k for k, _ in kinds]} is not supported (only none, or "
                               "Prepend('▁') + Replace(' ', '▁'))")
    pre = obj.get("pre_tokenizer")
    pattern, byte_level, prefix_space = None, False, False
    if pre is None:
        return pattern, byte_level, prefix_space, normalize
    steps = pre.get("pretokenizers", []) if pre.get("type") == "Sequence" else [pre]
    for k, s in enumerate(steps):
        where = f"pre_tokenizer[{k}]"
        t = s.get("type")
        if t == "ByteLevel":
            byte_level = True
            prefix_space = bool(s.get("add_prefix_space"))
            if s.get("use_regex", True):
                if pattern is not None:
                    fail(where, "two splitting pre-tokenizers are not supported")
                pattern = BYTE_LEVEL_PATTERN
        elif t == "Split":
            if pattern is not None:
                fail(where, "two splitting pre-tokenizers are not supported")
            if s.get("behavior") != "Isolated" or s.get("invert"):
                fail(where, f"Split with behavior {s.get('behavior')!r}, invert {s.get('invert')!r}: "
                            "only Isolated, not inverted, is supported")
            p = s.get("pattern", {})
            pattern = p["Regex"] if "Regex" in p else re.escape(p.get("String", ""))
            if not pattern:
                fail(where, "empty Split pattern")
        elif t == "Metaspace" and not s.get("split", True) and s.get("replacement") == SPACE \
                and s.get("prepend_scheme", "always") in ("always", "first"):
            # Metaspace prepends only when the text does not already start with the symbol.
            def normalize(text: str) -> str:
                text = text.replace(" ", SPACE)
                return text if not text or text.startswith(SPACE) else SPACE + text
        else:
            fail(where, f"pre-tokenizer {t!r} is not supported (ByteLevel, Split, non-splitting Metaspace)")
    return pattern, byte_level, prefix_space, normalize


def onig_pattern(pattern: str) -> str:
    """The pattern for HF's regex engine (Oniguruma). In Oniguruma ``X{1,3}+`` is not a
    possessive ``{1,3}`` but ``(X{1,3})+``, any number of X; tiktoken's patterns use the
    possessive form only to save backtracking, so the plain ``{1,3}`` matches the same pieces.
    (``?+``, ``*+`` and ``++`` are possessive in both engines.)"""
    return re.sub(r"(\{\d+(?:,\d*)?\})\+", r"\1", pattern)


def dumps_encoding(enc) -> bytes:
    """A rank Encoding as tokenizer.json (byte-level BPE, ignore_merges, Split on its pattern).
    Special tokens are in the model's vocabulary too: HF gives an added token that is not in
    the vocabulary the next free id, not the id the file states."""
    table = {b: c for b, c in byte_to_char().items()}

    def spell(token: bytes) -> str:
        return token.decode("latin-1").translate(table)

    ranks = enc._mergeable_ranks
    by_id = {r: spell(t) for t, r in ranks.items()}
    merges = _core.MergeBPE.merges_from_ranks(enc._core_bpe)
    doc = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True}
            for s, i in sorted(enc._special_tokens.items(), key=lambda kv: kv[1])
        ],
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": onig_pattern(enc._pat_str)}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
        ]},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
            "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": True,
            "vocab": {**{by_id[r]: r for r in sorted(by_id)}, **enc._special_tokens},
            "merges": [f"{by_id[a]} {by_id[b]}" for a, b, _ in merges],
        },
    }
    return json.dumps(doc, ensure_ascii=False).encode("utf-8")
