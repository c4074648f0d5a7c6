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
from .attribution import Entailer, JudgeEntailer, LMEntailer, NLIEntailer, load_entailer, localized_entailment
from .generate import Generator, OpenAIChatGenerator, TransformersGenerator, load_generator
from .insert import insert
from .kb import FORMATS, TIERS, KnowledgeBase, Row, build_tier, import_file, import_records
from .evaluate import EvalReport, EvalRow, RankerMetrics, evaluate, load_dataset, write_report
from .lexical import LexicalIndex
from .lm import NLL, PassageNLL, PerplexityScorer, load_causal_lm
from .rank import RANKERS, Weights
from .quill import Quill
from .sources import Provenance, SourceInfo, SourceLibrary
from .spans import closest_span, highlight, locate
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
from .verify import DiffOp, Quotation, Verification, find_quotations, verify

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
