"""Parity with the reference tokenizers on real text: whole corpora and the JSONL documents."""

from __future__ import annotations

import pytest

from support import CORPORA


@pytest.mark.parametrize("corpus", CORPORA)
def test_whole_corpus_encode_ordinary(pair, corpus_texts, corpus):
    ours, ref = pair
    text = corpus_texts[corpus]
    got, want = ours.encode_ordinary(text), ref.encode_ordinary(text)
    assert len(got) == len(want)
    assert got == want
    assert ours.count(text, disallowed_special=()) == len(want)
    # Twice more from an empty piece cache (`clear_cache`; a warm call merges nothing), now
    # that the first call has built the tables the engine builds only after enough merged
    # text has asked for them: the sealed characters and the pairs of whole characters (256 KB
    # of such pieces), the characters side by side in tokens that long CJK pieces are cut by
    # (1 MB more; zh-fortunes crosses it in the second call). engine.md, sections 3b-3d.
    for _ in range(2):
        ours.clear_cache()
        assert ours.encode_ordinary(text) == want


def test_documents_encode_all_specials(pair, corpus_documents):
    ours, ref = pair
    # Splice special tokens between documents so the special-token path is exercised on real text.
    specials = sorted(ref.special_tokens_set)[:3]
    mismatches = 0
    for i, doc in enumerate(corpus_documents):
        text = doc + specials[i % len(specials)] + doc[: i % 50]
        if ours.encode(text, allowed_special="all") != ref.encode(text, allowed_special="all"):
            mismatches += 1
    assert mismatches == 0, f"{mismatches} of {len(corpus_documents)} documents differ"


def test_documents_batch_equals_reference(pair, corpus_documents):
    ours, ref = pair
    assert ours.encode_ordinary_batch(corpus_documents) == ref.encode_ordinary_batch(corpus_documents)
    assert ours.encode_batch(corpus_documents, disallowed_special=()) == [
        ref.encode(d, disallowed_special=()) for d in corpus_documents
    ]


def _split(ids, offsets) -> list[list[int]]:
    """A flat batch back into one list per text."""
    return [ids[offsets[i]:offsets[i + 1]].tolist() for i in range(len(offsets) - 1)]


@pytest.mark.parametrize("threads", [1, 2])
def test_flat_batch_equals_reference(pair, corpus_texts, corpus_documents, threads):
    """The flat batch (one ids array, offsets) of the JSONL documents and of every corpus cut
    into ~4 KB documents, as the benchmark cuts them: tiktoken's ids for every document."""
    ours, ref = pair
    docs = list(corpus_documents)
    for text in corpus_texts.values():
        docs += [text[i:i + 4000] for i in range(0, min(len(text), 200_000), 4000)]
    want = ref.encode_ordinary_batch(docs)
    ids, offsets = ours.encode_ordinary_batch_to_numpy(docs, num_threads=threads)
    assert len(offsets) == len(docs) + 1 and offsets[0] == 0 and offsets[-1] == len(ids)
    assert _split(ids, offsets) == want
    ids, offsets = ours.encode_batch_to_numpy(docs, num_threads=threads, disallowed_special=())
    assert _split(ids, offsets) == want


def test_documents_round_trip(pair, corpus_documents):
    ours, _ = pair
    for doc in corpus_documents:
        assert ours.decode(ours.encode_ordinary(doc)) == doc


def test_kept_piece_caches_follow_their_encoding(reference, corpus_texts, corpus_documents):
    """Threads keep the pieces they merged from one call to the next, tied to the encoding.
    Alternating two encodings (and a third built from the same file, which must not share
    the first one's cache) document by document on one thread, with clear_cache between
    some calls, every id list is tiktoken's."""
    import bytepair

    a, b = bytepair.get_encoding("cl100k_base"), bytepair.get_encoding("o200k_base")
    a2 = bytepair.Encoding("cl100k_copy", pat_str=a._pat_str, mergeable_ranks=a._mergeable_ranks,
                           special_tokens=a._special_tokens)
    refs = {id(a): reference("cl100k_base"), id(a2): reference("cl100k_base"), id(b): reference("o200k_base")}
    # German paragraphs: many words that are not one token, so the caches fill.
    docs = corpus_documents[:200] + corpus_texts["de"].split("\n\n")[:400]
    mismatches = 0
    for i, doc in enumerate(docs):
        for enc in ((a, a, b, a2) if i % 3 else (a2, b, a)):
            if i % 17 == 0:
                enc.clear_cache()
            if enc.encode_ordinary(doc) != refs[id(enc)].encode_ordinary(doc):
                mismatches += 1
    assert mismatches == 0, f"{mismatches} encodings of {len(docs)} documents differ"


def test_kept_long_pieces_warm_and_across_encodings(reference, corpus_texts):
    """A thread keeps every merged piece across calls, long ones (Chinese pieces of up to 1,023
    bytes) included, tied to the encoding. Each corpus encoded again on the same instance (the
    second call answered from what the first kept), alternately with the other encoding on the
    same thread (whose ids differ, so an entry served to the wrong one shows), and again after
    clear_cache; then in batches on two threads, twice: tiktoken's ids every time."""
    import bytepair

    encs = {name: bytepair.get_encoding(name) for name in ("cl100k_base", "o200k_base")}
    for corpus, text in corpus_texts.items():
        want = {name: reference(name).encode_ordinary(text) for name in encs}
        for step in ("first", "kept", "kept", "cleared"):
            for name, enc in encs.items():
                if step == "cleared":
                    enc.clear_cache()
                assert enc.encode_ordinary(text) == want[name], f"{name} {corpus}, {step}"
                # The same encoding again at once: every piece from this thread's tables.
                assert enc.encode_ordinary(text) == want[name], f"{name} {corpus}, {step}, repeated"
    docs = [t[i:i + 4000] for t in corpus_texts.values() for i in range(0, min(len(t), 400_000), 4000)]
    for name, enc in encs.items():
        want = reference(name).encode_ordinary_batch(docs)
        for _ in range(2):
            assert enc.encode_ordinary_batch(docs, num_threads=2) == want, name


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_warm_list_and_numpy_every_corpus(reference, corpus_texts, name):
    """The warm path (issue 14, eleventh pass): a call on text this thread has encoded before
    answers its pieces from the short and medium indexes and from the piece cache's inline
    table without merging, through lookups inlined into the scanner's loop. Every corpus, on
    one instance: the first call, warm calls, and calls after clear_cache, to a list and to a
    numpy array in both orders; then short slices of the corpus, warm, whose last pieces lie in
    the text's last 16 bytes (where the lookups cannot read whole words and take the byte-by-
    byte keys). tiktoken's ids every time."""
    import bytepair

    enc, ref = bytepair.get_encoding(name), reference(name)
    for corpus, text in corpus_texts.items():
        want = ref.encode_ordinary(text)
        enc.clear_cache()
        steps = [("first", "list"), ("warm", "numpy"), ("warm", "list"), ("cleared", "numpy"), ("warm", "list"),
                 ("warm", "numpy")]
        for step, output in steps:
            if step == "cleared":
                enc.clear_cache()
            if output == "list":
                got = enc.encode_ordinary(text)
            else:
                array = enc.encode_to_numpy(text, disallowed_special=())
                assert str(array.dtype) == "uint32"
                got = array.tolist()
            assert got == want, f"{name} {corpus}: {step} call to a {output}"
        # Slices of 1-400 characters at 97 places, warm: their ends cut words anywhere.
        step = max(1, len(text) // 97)
        for k, start in enumerate(range(0, len(text) - 400, step)):
            piece = text[start:start + 1 + (k * 37) % 400]
            want = ref.encode_ordinary(piece)
            assert enc.encode_ordinary(piece) == want, f"{name} {corpus}: slice at {start}"
            assert enc.encode_to_numpy(piece, disallowed_special=()).tolist() == want, f"{name} {corpus}: slice at {start}"
