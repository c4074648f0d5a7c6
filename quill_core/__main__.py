"""``python -m quill_core`` runs the CLI."""

import sys

from ._cli import main

sys.exit(main())
