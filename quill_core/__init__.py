"""Quill: find the right quotation for a paragraph, prove it is real, and weave it in.

The public API is what ``__all__`` lists; every module not named here is private to the package.
"""

from .config import Settings
from .embed import Embedder, SentenceTransformerEmbedder, USEEmbedder, load_embedder
from .errors import (
    ConfigError,
    GenerationError,
    ImportFormatError,
    InputError,
    ModelError,
    NotFoundError,
    QuillError,
    StoreError,
)
from .quill import Quill
from .store import VectorStore
from .text import MARKER, detect_lang, parse_query, split_sentences
from .types import (
    Candidate,
    Criterion,
    Draft,
    Filters,
    ImportReport,
    InsertResult,
    KBStats,
    Query,
    Quote,
    RejectedRow,
    Span,
    Suggestion,
)

__all__ = [
    # facade and settings
    "Quill",
    "Settings",
    # resources
    "Embedder",
    "SentenceTransformerEmbedder",
    "USEEmbedder",
    "load_embedder",
    "VectorStore",
    # text
    "MARKER",
    "parse_query",
    "detect_lang",
    "split_sentences",
    # result types
    "Quote",
    "Query",
    "Filters",
    "Candidate",
    "Criterion",
    "Suggestion",
    "Span",
    "Draft",
    "InsertResult",
    "ImportReport",
    "RejectedRow",
    "KBStats",
    # errors
    "QuillError",
    "ConfigError",
    "InputError",
    "ImportFormatError",
    "NotFoundError",
    "ModelError",
    "StoreError",
    "GenerationError",
]
