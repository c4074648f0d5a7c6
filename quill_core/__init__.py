"""Quill: find the right quotation for a paragraph, prove it is real, and weave it in.

    from quill_core import Quill
    quill = Quill()                                   # settings from QUILL_* variables, resources made on first use
    for s in quill.suggest("Knowledge grows when shared. [Q]"):
        print(s.score, s.quote.text, s.quote.author, s.badge.label)

The public API is exactly what ``__all__`` lists; every module is private (``_name.py``).
"""

from ._config import Settings
from ._criteria import Weights
from ._embed import EMBEDDERS, Embedder
from ._errors import (
    ConfigError,
    GenerationError,
    ImportFormatError,
    InputError,
    ModelError,
    NotFoundError,
    QuillError,
    StoreError,
)
from ._evaluate import EvalReport
from ._attribution import Entailer
from ._generate import Generator
from ._json import to_json
from ._kb import FORMATS, TIERS
from ._query import MARKER, parse_query
from ._quill import Quill
from ._rank import RANKERS
from ._scorer import Scorer
from ._bundled import BUNDLED as SOURCES
from ._sources import SourceInfo
from ._spans import highlight, locate
from ._text import decode_text
from ._types import (
    BrowsePage,
    Candidate,
    FilterOptions,
    Filters,
    ImportReport,
    IndexProgress,
    InsertResult,
    KBStats,
    Provenance,
    Query,
    Quote,
    Span,
    Suggestion,
)
from ._verify import DiffOp, Verification

__all__ = [
    # the facade, its settings and the registries its options come from
    "Quill",
    "Settings",
    "RANKERS",
    "FORMATS",
    "TIERS",
    "SOURCES",
    "EMBEDDERS",
    "Weights",
    # what can be injected into a Quill
    "Embedder",
    "Scorer",
    "Generator",
    "Entailer",
    # inputs and results
    "MARKER",
    "parse_query",
    "Query",
    "Filters",
    "Quote",
    "Candidate",
    "Suggestion",
    "FilterOptions",
    "BrowsePage",
    "ImportReport",
    "IndexProgress",
    "KBStats",
    "InsertResult",
    "Verification",
    "DiffOp",
    "Provenance",
    "SourceInfo",
    "Span",
    "EvalReport",
    # text and spans
    "decode_text",
    "locate",
    "highlight",
    "to_json",
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
