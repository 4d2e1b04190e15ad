/* The C test program of libbytepair, driven by tests/capi/test_capi.py (which builds it against
 * the static and the shared library and checks its output against the Python path).
 *
 *   test_capi encode SPEC TEXT IDS_OUT [FLAGS]  encode TEXT (a file), write the ids (native
 *                                        u32) to IDS_OUT and the decoded bytes to
 *                                        IDS_OUT.decoded; check count and stream decode agree
 *   test_capi errors SPEC QTKR           provoke every error code; exit 1 on any surprise
 *   test_capi threads SPEC TEXT          8 threads share one handle; each encodes and decodes
 *                                        TEXT's lines and compares with the first thread's ids
 *   test_capi bench SPEC TEXT REPS       MB/s of bp_encode over TEXT, and the load time
 *   test_capi chat TEMPLATE CONTEXT OUT  render the Jinja template file with the JSON context
 *                                        file, sizing the buffer with a NULL call; write OUT
 *
 * SPEC is a vocabulary file or builtin:NAME. Exit 0 when every check passed.
 */
#include "bytepair.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failures = 0;

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                    \
            fprintf(stderr, " (last error: %s)\n", bp_last_error_message()); \
            failures++;                                                      \
        }                                                                    \
    } while (0)

static void die(const char *what) {
    fprintf(stderr, "%s: %s\n", what, bp_last_error_message());
    exit(2);
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        perror(path);
        exit(2);
    }
    fclose(f);
    buf[n] = 0;
    *len = (size_t)n;
    return buf;
}

static bp_tokenizer *open_spec(const char *spec) {
    bp_tokenizer *tok = NULL;
    int rc = strncmp(spec, "builtin:", 8) == 0 ? bp_tokenizer_builtin(spec + 8, &tok)
                                                : bp_tokenizer_load(spec, &tok);
    if (rc != BP_OK) die(spec);
    return tok;
}

/* ids of text, sized by a first call with ids == NULL (the documented protocol). */
static uint32_t *encode_all(const bp_tokenizer *tok, const char *text, size_t len, uint32_t flags, size_t *n) {
    size_t need = 0;
    int rc = bp_encode(tok, text, len, flags, NULL, 0, &need);
    if (rc != BP_OK && rc != BP_ERR_BUFFER_TOO_SMALL) die("bp_encode (sizing)");
    uint32_t *ids = malloc((need ? need : 1) * sizeof *ids);
    rc = bp_encode(tok, text, len, flags, ids, need, n);
    if (rc != BP_OK) die("bp_encode");
    return ids;
}

static char *decode_all(const bp_tokenizer *tok, const uint32_t *ids, size_t n, uint32_t flags, size_t *len) {
    size_t need = 0;
    int rc = bp_decode(tok, ids, n, flags, NULL, 0, &need);
    if (rc != BP_OK && rc != BP_ERR_BUFFER_TOO_SMALL) die("bp_decode (sizing)");
    char *out = malloc(need + 1);
    rc = bp_decode(tok, ids, n, flags, out, need, len);
    if (rc != BP_OK) die("bp_decode");
    return out;
}

/* The stream's output, joined, must be decode(ids) (for every model; with U+FFFD where decode
 * gives invalid UTF-8, which the corpora never make). */
static char *stream_all(const bp_tokenizer *tok, const uint32_t *ids, size_t n, size_t *len) {
    bp_stream *s = NULL;
    if (bp_stream_new(tok, &s) != BP_OK) die("bp_stream_new");
    size_t cap = 1024, used = 0;
    char *out = malloc(cap);
    char piece[512];
    for (size_t i = 0; i <= n; i++) {
        size_t got = 0;
        int rc = i < n ? bp_stream_step(s, ids[i], piece, sizeof piece, &got)
                       : bp_stream_flush(s, piece, sizeof piece, &got);
        if (rc != BP_OK) die("bp_stream_step");
        if (used + got > cap) {
            cap = 2 * (used + got);
            out = realloc(out, cap);
        }
        memcpy(out + used, piece, got);
        used += got;
    }
    bp_stream_free(s);
    *len = used;
    return out;
}

static int cmd_encode(const char *spec, const char *text_path, const char *ids_path, uint32_t flags) {
    bp_tokenizer *tok = open_spec(spec);
    size_t len;
    char *text = read_file(text_path, &len);
    size_t n = 0;
    uint32_t *ids = encode_all(tok, text, len, flags, &n);

    size_t counted = 0;
    CHECK(bp_count(tok, text, len, flags, &counted) == BP_OK && counted == n, "count %zu != %zu ids", counted, n);

    size_t dlen = 0;
    char *decoded = decode_all(tok, ids, n, 0, &dlen);
    size_t slen = 0;
    char *streamed = stream_all(tok, ids, n, &slen);
    CHECK(slen == dlen && memcmp(streamed, decoded, dlen) == 0, "stream decode (%zu bytes) != decode (%zu bytes)", slen, dlen);

    FILE *f = fopen(ids_path, "wb");
    if (!f || fwrite(ids, sizeof *ids, n, f) != n) die(ids_path);
    fclose(f);
    printf("ids %zu\n", n);
    /* The Python side compares the ids; decoded text goes next to them. */
    char dpath[4096];
    snprintf(dpath, sizeof dpath, "%s.decoded", ids_path);
    f = fopen(dpath, "wb");
    if (!f || fwrite(decoded, 1, dlen, f) != dlen) die(dpath);
    fclose(f);
    free(streamed);
    free(decoded);
    free(ids);
    free(text);
    bp_tokenizer_free(tok);
    return failures ? 1 : 0;
}

static int cmd_errors(const char *spec, const char *qtkr_path) {
    bp_tokenizer *tok = open_spec(spec);
    bp_tokenizer *bad = (bp_tokenizer *)1; /* must be set to NULL on failure */
    uint32_t ids[8];
    char out[64];
    size_t n = 0;
    uint32_t id = 0;

    /* BP_ERR_INVALID_ARG */
    CHECK(bp_tokenizer_load(NULL, &bad) == BP_ERR_INVALID_ARG && bad == NULL, "NULL path");
    CHECK(bp_tokenizer_builtin("no_such", &bad) == BP_ERR_INVALID_ARG && bad == NULL, "unknown builtin");
    CHECK(strstr(bp_last_error_message(), "no_such") != NULL, "message names the builtin");
    CHECK(bp_encode(NULL, "a", 1, 0, ids, 8, &n) == BP_ERR_INVALID_ARG, "NULL tok");
    CHECK(bp_encode(tok, "a", 1, 0, ids, 8, NULL) == BP_ERR_INVALID_ARG, "NULL n_out");
    CHECK(bp_encode(tok, NULL, 3, 0, ids, 8, &n) == BP_ERR_INVALID_ARG, "NULL text with length");
    CHECK(bp_encode(tok, "a", 1, 1u << 20, ids, 8, &n) == BP_ERR_INVALID_ARG, "unknown flag");
    CHECK(bp_decode(tok, NULL, 2, 0, out, sizeof out, &n) == BP_ERR_INVALID_ARG, "NULL ids with n");
    CHECK(bp_stream_new(tok, NULL) == BP_ERR_INVALID_ARG, "NULL stream out");
    CHECK(bp_token_to_bytes(tok, 0, NULL, &n) == BP_ERR_INVALID_ARG, "NULL bytes out");
    CHECK(bp_token_id(tok, (const uint8_t *)"a", 1, NULL) == BP_ERR_INVALID_ARG, "NULL id out");
    CHECK(bp_encode(tok, "", 0, 0, NULL, 0, &n) == BP_OK && n == 0, "empty text, NULL buffer is fine");

    /* BP_ERR_IO */
    CHECK(bp_tokenizer_load("/nonexistent/vocab.bpe2", &bad) == BP_ERR_IO && bad == NULL, "missing file");
    CHECK(strstr(bp_last_error_message(), "/nonexistent/vocab.bpe2") != NULL, "message names the path");

    /* BP_ERR_FORMAT: garbage, an empty file, a truncated table, an unknown .tiktoken file */
    const uint8_t junk[] = {0xff, 0xfe, 0xfd, 0xfc, 0, 1, 2, 3};
    CHECK(bp_tokenizer_load_memory(junk, sizeof junk, &bad) == BP_ERR_FORMAT && bad == NULL, "junk");
    CHECK(bp_tokenizer_load_memory(NULL, 0, &bad) == BP_ERR_FORMAT, "empty");
    const char unknown_tiktoken[] = "IQ== 0\nIg== 1\nIw== 2\n";
    CHECK(bp_tokenizer_load_memory((const uint8_t *)unknown_tiktoken, strlen(unknown_tiktoken), &bad) == BP_ERR_FORMAT,
          "a .tiktoken file bytepair does not know");
    CHECK(strstr(bp_last_error_message(), "split pattern") != NULL, "says the pattern is missing");
    size_t qlen;
    char *q = read_file(qtkr_path, &qlen);
    CHECK(bp_tokenizer_load_memory((const uint8_t *)q, qlen / 2, &bad) == BP_ERR_FORMAT && bad == NULL, "truncated QTKR");
    bp_tokenizer *qt = NULL;
    CHECK(bp_tokenizer_load_memory((const uint8_t *)q, qlen, &qt) == BP_OK && qt != NULL, "whole QTKR");
    free(q);

    /* BP_ERR_BUFFER_TOO_SMALL: the size needed is reported, for ids, bytes and streams */
    const char *hello = "hello world, hello C";
    size_t need = 0;
    CHECK(bp_encode(tok, hello, strlen(hello), 0, ids, 1, &need) == BP_ERR_BUFFER_TOO_SMALL && need > 1, "small ids");
    size_t got = 0;
    CHECK(bp_encode(tok, hello, strlen(hello), 0, ids, need, &got) == BP_OK && got == need, "exact ids");
    size_t dneed = 0;
    CHECK(bp_decode(tok, ids, got, 0, out, 3, &dneed) == BP_ERR_BUFFER_TOO_SMALL && dneed == strlen(hello), "small bytes");
    CHECK(bp_decode(tok, ids, got, 0, out, sizeof out, &dneed) == BP_OK && memcmp(out, hello, dneed) == 0, "decode");
    bp_stream *s = NULL;
    CHECK(bp_stream_new(tok, &s) == BP_OK, "stream");
    CHECK(bp_stream_step(s, ids[0], NULL, 0, &dneed) == BP_ERR_BUFFER_TOO_SMALL && dneed > 0, "small stream buffer");
    CHECK(bp_stream_step(s, ids[0], out, sizeof out, &dneed) == BP_OK && memcmp(out, "hello", 5) == 0, "retried step");

    /* BP_ERR_UNKNOWN_TOKEN */
    uint32_t far = (uint32_t)bp_vocab_size(tok) + 1000;
    CHECK(bp_decode(tok, &far, 1, 0, out, sizeof out, &n) == BP_ERR_UNKNOWN_TOKEN, "decode unknown id");
    CHECK(bp_stream_step(s, far, out, sizeof out, &n) == BP_ERR_UNKNOWN_TOKEN, "stream unknown id");
    const uint8_t *tb = NULL;
    CHECK(bp_token_to_bytes(tok, far, &tb, &n) == BP_ERR_UNKNOWN_TOKEN && tb == NULL, "bytes of unknown id");
    CHECK(bp_token_id(tok, (const uint8_t *)"not one token at all", 20, &id) == BP_ERR_UNKNOWN_TOKEN, "no such token");
    bp_stream_free(s);

    /* A character split across ids waits for the id that completes it: U+1F600 is
     * F0 9F 98 | 80 in cl100k_base (ids 76460, 222). */
    size_t nemoji = 0;
    CHECK(bp_encode(tok, "\xf0\x9f\x98\x80", 4, 0, ids, 8, &nemoji) == BP_OK && nemoji == 2, "emoji in 2 ids");
    CHECK(bp_stream_new(tok, &s) == BP_OK, "stream");
    CHECK(bp_stream_step(s, ids[0], out, sizeof out, &n) == BP_OK && n == 0, "first half held back (%zu bytes out)", n);
    CHECK(bp_stream_step(s, ids[1], out, sizeof out, &n) == BP_OK && n == 4 && memcmp(out, "\xf0\x9f\x98\x80", 4) == 0,
          "completed by the second id");
    CHECK(bp_stream_step(s, ids[0], out, sizeof out, &n) == BP_OK && n == 0, "held back again");
    CHECK(bp_stream_flush(s, out, sizeof out, &n) == BP_OK && n == 3 && memcmp(out, "\xef\xbf\xbd", 3) == 0,
          "flush: an unfinished character is one U+FFFD");
    bp_stream_free(s);

    /* BP_ERR_SPECIAL_TOKEN (and the default: a special spelling is text) */
    const char *eot = "a<|endoftext|>";
    CHECK(bp_encode(tok, eot, strlen(eot), BP_ENCODE_REFUSE_SPECIAL, ids, 8, &n) == BP_ERR_SPECIAL_TOKEN, "refused");
    CHECK(strstr(bp_last_error_message(), "<|endoftext|>") != NULL, "names the special token");
    CHECK(bp_encode(tok, eot, strlen(eot), BP_ENCODE_ALLOW_SPECIAL, ids, 8, &n) == BP_OK && n == 2, "allowed: 2 ids");
    uint32_t eot_id = ids[1];
    CHECK(bp_token_id(tok, (const uint8_t *)"<|endoftext|>", 13, &id) == BP_OK && id == eot_id, "token_id of a special");
    CHECK(bp_encode(tok, eot, strlen(eot), 0, ids, 8, &n) == BP_OK && n > 2, "default: text (%zu ids)", n);
    CHECK(bp_bos_id(tok) == -1, "rank vocabularies have no BOS");
    CHECK(bp_encode(tok, "a", 1, BP_ENCODE_ADD_BOS, ids, 8, &n) == BP_ERR_SPECIAL_TOKEN, "no BOS to add");
    uint32_t two[2] = {ids[0], eot_id};
    CHECK(bp_decode(tok, two, 2, BP_DECODE_SKIP_SPECIAL, out, sizeof out, &n) == BP_OK && n == 1, "skip special");

    /* BP_ERR_UTF8: a lone continuation byte, a truncated character, a surrogate */
    CHECK(bp_encode(tok, "ab\x80", 3, 0, ids, 8, &n) == BP_ERR_UTF8, "continuation byte");
    CHECK(strstr(bp_last_error_message(), "byte 2") != NULL, "says where");
    CHECK(bp_count(tok, "\xe2\x82", 2, 0, &n) == BP_ERR_UTF8, "truncated");
    CHECK(bp_encode(tok, "\xed\xa0\x80", 3, 0, ids, 8, &n) == BP_ERR_UTF8, "surrogate");

    /* BP_ERR_PANIC: caught, and the library goes on working */
    CHECK(bp_debug_panic() == BP_ERR_PANIC, "panic caught");
    CHECK(strstr(bp_last_error_message(), "panic") != NULL, "says so");
    CHECK(bp_encode(tok, hello, strlen(hello), 0, ids, 8, &n) == BP_OK, "usable after a panic");

    /* BP_ERR_TEMPLATE: a template that does not compile, one that raises, a context that is
     * not a JSON object; BP_ERR_UTF8 for a context that is not UTF-8 */
    bp_chat_template *ct = (bp_chat_template *)1; /* must be set to NULL on failure */
    CHECK(bp_chat_template_new("\n{% for %}", 10, &ct) == BP_ERR_TEMPLATE && ct == NULL, "syntax error");
    CHECK(strstr(bp_last_error_message(), "line 2") != NULL, "says the line");
    const char *raising = "{% if messages | length > 1 %}{{ raise_exception('one message only') }}{% endif %}ok";
    CHECK(bp_chat_template_new(raising, strlen(raising), &ct) == BP_OK && ct != NULL, "compiles");
    const char *two_messages = "{\"messages\": [1, 2]}";
    CHECK(bp_chat_template_render(ct, two_messages, strlen(two_messages), out, sizeof out, &n) == BP_ERR_TEMPLATE,
          "raises");
    CHECK(strstr(bp_last_error_message(), "one message only") != NULL, "with the template's message");
    CHECK(bp_chat_template_render(ct, "[1]", 3, out, sizeof out, &n) == BP_ERR_TEMPLATE, "context not an object");
    CHECK(bp_chat_template_render(ct, "{\"a\": \"\xff\"}", 10, out, sizeof out, &n) == BP_ERR_UTF8, "context not UTF-8");
    CHECK(bp_chat_template_render(ct, "{}", 2, NULL, 0, &n) == BP_ERR_BUFFER_TOO_SMALL && n == 2, "sized");
    CHECK(bp_chat_template_render(ct, "{}", 2, out, sizeof out, &n) == BP_OK && n == 2 && memcmp(out, "ok", 2) == 0,
          "renders");
    bp_chat_template_free(ct);
    bp_chat_template_free(NULL);

    /* QTKR: BOS/EOS/PAD as the file records them */
    if (qt) {
        int64_t bos = bp_bos_id(qt), eos = bp_eos_id(qt);
        if (eos >= 0) {
            CHECK(bp_encode(qt, "hi", 2, BP_ENCODE_ADD_EOS, ids, 8, &n) == BP_OK && ids[n - 1] == (uint32_t)eos, "EOS added");
        }
        printf("qtkr bos %lld eos %lld pad %lld\n", (long long)bos, (long long)eos, (long long)bp_pad_id(qt));
        bp_tokenizer_free(qt);
    }
    CHECK(bp_bos_id(NULL) == -1 && bp_vocab_size(NULL) == 0, "NULL handle getters");
    bp_tokenizer_free(NULL);
    bp_stream_free(NULL);
    CHECK(strlen(bp_version()) >= 5, "version");
    bp_tokenizer_free(tok);
    printf("errors %s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}

struct job {
    const bp_tokenizer *tok;
    const char *text;
    size_t len;
    const uint32_t *expect;
    size_t n_expect;
    int ok;
};

static void *worker(void *arg) {
    struct job *j = arg;
    j->ok = 1;
    for (int round = 0; round < 3; round++) {
        size_t n = 0;
        uint32_t *ids = encode_all(j->tok, j->text, j->len, 0, &n);
        if (n != j->n_expect || memcmp(ids, j->expect, n * sizeof *ids) != 0) j->ok = 0;
        size_t dlen = 0;
        char *back = decode_all(j->tok, ids, n, 0, &dlen);
        if (dlen != j->len || memcmp(back, j->text, dlen) != 0) j->ok = 0;
        free(back);
        free(ids);
    }
    return NULL;
}

static int cmd_threads(const char *spec, const char *text_path) {
    bp_tokenizer *tok = open_spec(spec);
    size_t len;
    char *text = read_file(text_path, &len);
    size_t n = 0;
    uint32_t *expect = encode_all(tok, text, len, 0, &n);
    pthread_t th[8];
    struct job jobs[8];
    for (int i = 0; i < 8; i++) {
        jobs[i] = (struct job){tok, text, len, expect, n, 0};
        if (pthread_create(&th[i], NULL, worker, &jobs[i]) != 0) die("pthread_create");
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        CHECK(jobs[i].ok, "thread %d gave other ids or text", i);
    }
    free(expect);
    free(text);
    bp_tokenizer_free(tok);
    printf("threads %s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmd_bench(const char *spec, const char *text_path, int reps) {
    double t0 = now();
    bp_tokenizer *tok = open_spec(spec);
    double load = now() - t0;
    size_t len;
    char *text = read_file(text_path, &len);
    size_t cap = len + 16, n = 0;
    uint32_t *ids = malloc(cap * sizeof *ids);
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t = now();
        if (bp_encode(tok, text, len, 0, ids, cap, &n) != BP_OK) die("bp_encode");
        t = now() - t;
        if (t < best) best = t;
    }
    printf("load_ms %.2f mb_s %.2f ids %zu\n", load * 1e3, (double)len / best / 1e6, n);
    free(ids);
    free(text);
    bp_tokenizer_free(tok);
    return 0;
}

static int cmd_chat(const char *template_path, const char *context_path, const char *out_path) {
    size_t slen, clen, n = 0;
    char *source = read_file(template_path, &slen);
    char *context = read_file(context_path, &clen);
    bp_chat_template *t = NULL;
    if (bp_chat_template_new(source, slen, &t) != BP_OK) die("bp_chat_template_new");
    CHECK(bp_chat_template_render(t, context, clen, NULL, 0, &n) == BP_ERR_BUFFER_TOO_SMALL || n == 0, "sizing call");
    char *text = malloc(n + 1);
    size_t got = 0;
    if (bp_chat_template_render(t, context, clen, text, n, &got) != BP_OK) die("bp_chat_template_render");
    CHECK(got == n, "the size reported is the size written");
    FILE *f = fopen(out_path, "wb");
    if (!f || fwrite(text, 1, got, f) != got || fclose(f) != 0) die("write OUT");
    free(text);
    free(context);
    free(source);
    bp_chat_template_free(t);
    return failures ? 1 : 0;
}

int main(int argc, char **argv) {
    if ((argc == 5 || argc == 6) && strcmp(argv[1], "encode") == 0)
        return cmd_encode(argv[2], argv[3], argv[4], argc == 6 ? (uint32_t)strtoul(argv[5], NULL, 0) : 0);
    if (argc == 4 && strcmp(argv[1], "errors") == 0) return cmd_errors(argv[2], argv[3]);
    if (argc == 4 && strcmp(argv[1], "threads") == 0) return cmd_threads(argv[2], argv[3]);
    if (argc == 5 && strcmp(argv[1], "bench") == 0) return cmd_bench(argv[2], argv[3], atoi(argv[4]));
    if (argc == 5 && strcmp(argv[1], "chat") == 0) return cmd_chat(argv[2], argv[3], argv[4]);
    fprintf(stderr, "usage: test_capi encode|errors|threads|bench|chat ...\n");
    return 2;
}
