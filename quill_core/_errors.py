"""Errors raised by quill_core.

Every error a user can cause or meet derives from :class:`QuillError`; the CLI turns one into a single line on
stderr and exit code 1, the app into one ``st.error``. Nothing else should escape the core.

    QuillError
    ├── ConfigError          a setting is missing or malformed
    ├── InputError           user input is empty, too large, binary, not UTF-8 or otherwise unusable
    │   └── ImportFormatError    a knowledge-base file whose format cannot be detected or parsed
    ├── NotFoundError        a knowledge base, source, quote or dataset that does not exist
    ├── ModelError           a model cannot be loaded or run (missing package, bad name, offline)
    ├── StoreError           the vector store cannot be reached or written
    └── GenerationError      a generator endpoint failed (unreachable, timed out, bad response)
"""

from __future__ import annotations



class QuillError(Exception):
    """Base class of every error quill_core raises on purpose."""


class ConfigError(QuillError):
    """A setting is missing or malformed."""


class InputError(QuillError):
    """User input cannot be used as given."""


class ImportFormatError(InputError):
    """A knowledge-base file whose format cannot be detected or parsed."""


class NotFoundError(QuillError):
    """Something named by the user does not exist."""


class ModelError(QuillError):
    """A model cannot be loaded or run."""


class StoreError(QuillError):
    """The vector store cannot be reached or written."""


class GenerationError(QuillError):
    """A text generator failed."""
