"""Quill: find the right quotation for a paragraph, prove it is real, and weave it in.

The public API is what ``__all__`` lists; every module not named here is private to the package.
"""

from ._config import Settings
from ._embed import Embedder, SentenceTransformerEmbedder, USEEmbedder, load_embedder
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
from ._attribution import Entailer, JudgeEntailer, LMEntailer, NLIEntailer, load_entailer, localized_entailment
from ._generate import Generator, OpenAIChatGenerator, TransformersGenerator, load_generator
from ._insert import insert
from ._kb import FORMATS, TIERS, KnowledgeBase, Row, build_tier, import_file, import_records
from ._evaluate import EvalReport, EvalRow, RankerMetrics, evaluate, load_dataset, write_report
from ._lexical import LexicalIndex
from ._lm import load_causal_lm
from ._scorer import NLL, PassageNLL, PerplexityScorer
from ._rank import RANKERS, Weights
from ._quill import Quill
from ._sources import Provenance, SourceInfo, SourceLibrary
from ._spans import closest_span, highlight, locate
from ._store import VectorStore
from ._text import detect_lang, split_sentences
from ._query import MARKER, parse_query
from ._types import (
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
from ._verify import DiffOp, Quotation, Verification, find_quotations, verify

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
    "load_causal_lm",
    "PerplexityScorer",
    "LexicalIndex",
    # ranking and evaluation
    "RANKERS",
    "Weights",
    "NLL",
    "PassageNLL",
    "EvalRow",
    "EvalReport",
    "RankerMetrics",
    "evaluate",
    "load_dataset",
    "write_report",
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
    # knowledge base: records, importers, bundled tiers
    "KnowledgeBase",
    "Row",
    "FORMATS",
    "TIERS",
    "import_file",
    "import_records",
    "build_tier",
    # insert: generators, attribution backends, the stage
    "insert",
    "Generator",
    "OpenAIChatGenerator",
    "TransformersGenerator",
    "load_generator",
    "Entailer",
    "LMEntailer",
    "NLIEntailer",
    "JudgeEntailer",
    "load_entailer",
    "localized_entailment",
    # spans, verification, sources
    "locate",
    "closest_span",
    "highlight",
    "verify",
    "find_quotations",
    "Verification",
    "Quotation",
    "DiffOp",
    "SourceLibrary",
    "SourceInfo",
    "Provenance",
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
