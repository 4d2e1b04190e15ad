"""Which encoding each OpenAI model uses: tiktoken's table, kept in step with it.

`tests/api/test_registry.py` compares these two mappings with the installed tiktoken's, entry by
entry and in order (prefix order decides which prefix matches first).
"""

# Model name prefixes, tried in this order after the exact names below.
MODEL_PREFIX_TO_ENCODING: dict[str, str] = {
    "o1-": "o200k_base",
    "o3-": "o200k_base",
    "o4-mini-": "o200k_base",
    "gpt-5": "o200k_base",
    "gpt-4.5-": "o200k_base",
    "gpt-4.1-": "o200k_base",
    "chatgpt-4o-": "o200k_base",
    "gpt-4o-": "o200k_base",
    "gpt-4-": "cl100k_base",
    "gpt-3.5-turbo-": "cl100k_base",
    "gpt-35-turbo-": "cl100k_base",  # Azure deployment names
    "gpt-oss-": "o200k_harmony",
    "ft:gpt-4o": "o200k_base",
    "ft:gpt-4": "cl100k_base",
    "ft:gpt-3.5-turbo": "cl100k_base",
    "ft:davinci-002": "cl100k_base",
    "ft:babbage-002": "cl100k_base",
}

_R50K_MODELS = (
    "text-davinci-001 text-curie-001 text-babbage-001 text-ada-001 davinci curie babbage ada "
    "text-similarity-davinci-001 text-similarity-curie-001 text-similarity-babbage-001 "
    "text-similarity-ada-001 text-search-davinci-doc-001 text-search-curie-doc-001 "
    "text-search-babbage-doc-001 text-search-ada-doc-001 code-search-babbage-code-001 "
    "code-search-ada-code-001"
).split()

MODEL_TO_ENCODING: dict[str, str] = {
    # reasoning and chat
    **dict.fromkeys(["o1", "o3", "o4-mini", "gpt-5", "gpt-4.1", "gpt-4o"], "o200k_base"),
    **dict.fromkeys(["gpt-4", "gpt-3.5-turbo", "gpt-3.5", "gpt-35-turbo"], "cl100k_base"),
    # base and embeddings
    **dict.fromkeys(
        ["davinci-002", "babbage-002", "text-embedding-ada-002", "text-embedding-3-small",
         "text-embedding-3-large"],
        "cl100k_base",
    ),
    # deprecated text and code models
    **dict.fromkeys(["text-davinci-003", "text-davinci-002"], "p50k_base"),
    **dict.fromkeys(_R50K_MODELS[:8], "r50k_base"),
    **dict.fromkeys(
        ["code-davinci-002", "code-davinci-001", "code-cushman-002", "code-cushman-001",
         "davinci-codex", "cushman-codex"],
        "p50k_base",
    ),
    **dict.fromkeys(["text-davinci-edit-001", "code-davinci-edit-001"], "p50k_edit"),
    **dict.fromkeys(_R50K_MODELS[8:], "r50k_base"),
    # open weights
    "gpt2": "gpt2",
    "gpt-2": "gpt2",
}
