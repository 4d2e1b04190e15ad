/* hello.c: load a tokenizer, encode a prompt with BOS/EOS as an inference engine does, decode
 * it back, and print a model's output as it streams in.
 *
 *   cc -std=c11 -I include examples/hello.c -L target/release -lbytepair -o hello
 *   ./hello                       # the built-in cl100k_base
 *   ./hello path/to/tokenizer.model "some text"
 */
#include "bytepair.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, int rc) {
    fprintf(stderr, "%s failed (%d): %s\n", what, rc, bp_last_error_message());
    return 1;
}

int main(int argc, char **argv) {
    const char *text = argc > 2 ? argv[2] : "Hello, world! naïve café 😀";
    bp_tokenizer *tok = NULL;
    int rc = argc > 1 ? bp_tokenizer_load(argv[1], &tok) : bp_tokenizer_builtin("cl100k_base", &tok);
    if (rc != BP_OK) return fail("load", rc);
    printf("bytepair %s, vocabulary of %zu ids, BOS %lld, EOS %lld\n", bp_version(), bp_vocab_size(tok),
           (long long)bp_bos_id(tok), (long long)bp_eos_id(tok));

    /* BOS/EOS only where the tokenizer has them (SentencePiece and QTKR files do). */
    uint32_t flags = 0;
    if (bp_bos_id(tok) >= 0) flags |= BP_ENCODE_ADD_BOS;
    if (bp_eos_id(tok) >= 0) flags |= BP_ENCODE_ADD_EOS;

    /* Size, allocate, encode: the buffer-too-small protocol. */
    size_t n = 0;
    rc = bp_encode(tok, text, strlen(text), flags, NULL, 0, &n);
    if (rc != BP_OK && rc != BP_ERR_BUFFER_TOO_SMALL) return fail("bp_encode", rc);
    uint32_t *ids = malloc((n ? n : 1) * sizeof *ids);
    if ((rc = bp_encode(tok, text, strlen(text), flags, ids, n, &n)) != BP_OK) return fail("bp_encode", rc);
    printf("%zu ids:", n);
    for (size_t i = 0; i < n; i++) printf(" %u", ids[i]);
    printf("\n");

    /* Decode, leaving BOS/EOS out as an engine's detokenizer does. */
    char buf[1024];
    size_t len = 0;
    if ((rc = bp_decode(tok, ids, n, BP_DECODE_SKIP_SPECIAL, buf, sizeof buf, &len)) != BP_OK) return fail("bp_decode", rc);
    printf("decoded: %.*s\n", (int)len, buf);

    /* Streaming: each id as it arrives; split characters wait for the id that completes them. */
    bp_stream *s = NULL;
    if ((rc = bp_stream_new(tok, &s)) != BP_OK) return fail("bp_stream_new", rc);
    printf("streamed: ");
    for (size_t i = 0; i < n; i++) {
        if ((rc = bp_stream_step(s, ids[i], buf, sizeof buf, &len)) != BP_OK) return fail("bp_stream_step", rc);
        fwrite(buf, 1, len, stdout);
    }
    if ((rc = bp_stream_flush(s, buf, sizeof buf, &len)) != BP_OK) return fail("bp_stream_flush", rc);
    fwrite(buf, 1, len, stdout);
    printf("\n");

    bp_stream_free(s);
    free(ids);
    bp_tokenizer_free(tok);
    return 0;
}
