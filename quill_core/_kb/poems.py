"""The JSON files of the npm package ``chinese-poetry`` as :class:`Piece` records (one poem or chapter each), in
Simplified script, with author, work, topics and its quotable units.

Every file is a list or an object whose text nodes hold ``paragraphs`` (``para``, or ``content`` when that is
text) and whose enclosing nodes carry the fields a piece inherits (``title``, ``chapter``, ``section``, ``type``,
``author``, ``rhythmic``, ``tags``, ``id``): :func:`walk` flattens any of these shapes. :data:`CURATED` lists the
anthologies read whole; :data:`CORPORA` the three full corpora (Tang and Song shi, Song ci), whose files come with
search-engine counts in ``rank/`` (see :mod:`quill_core._kb.poetry`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from .units import clean_paragraph, first_phrase, simplified_all, speech, units


@dataclass(frozen=True)
class Piece:
    """One poem or chapter, in Simplified script. ``speakers`` maps a speaker named at the start of a paragraph
    (``子曰：“……”``) to the author of that paragraph's words; ``prose`` pieces are split paragraph by paragraph."""

    doc: str
    collection: str
    work: str
    author: str
    paragraphs: tuple[str, ...]
    topics: tuple[str, ...] = ()
    popularity: float | None = None
    prose: bool = False
    speakers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Spec:
    """How to read one file of the package: its path under ``package/dist/``, the collection it makes, an ascii
    key for document ids, how its work is named (from the inherited fields) and the author when none is given."""

    path: str
    collection: str
    key: str
    work: Callable[[Mapping[str, str], tuple[str, ...]], str]
    author: str = ""
    prose: bool = False
    speakers: Mapping[str, str] = field(default_factory=dict)
    tags: bool = False


def _title(f: Mapping[str, str], p: tuple[str, ...]) -> str:
    return f.get("chapter") or f.get("title", "")


def _book(book: str) -> Callable[[Mapping[str, str], tuple[str, ...]], str]:
    def work(f: Mapping[str, str], p: tuple[str, ...]) -> str:
        chapter = re.sub(r"篇$", "", f.get("chapter", "")).strip()
        return f"{book}·{chapter}" if chapter and chapter != book else book
    return work


def _path(book: str, *names: str) -> Callable[[Mapping[str, str], tuple[str, ...]], str]:
    def work(f: Mapping[str, str], p: tuple[str, ...]) -> str:
        parts = [book] + [f[n] for n in names if f.get(n)]
        return "·".join(dict.fromkeys(parts))  # 楚辞·离骚, not 楚辞·离骚·离骚
    return work


def ci_work(f: Mapping[str, str], p: tuple[str, ...]) -> str:
    """A ci's work: tune and title (水调歌头·明月几时有); an untitled ci takes the start of its first line."""
    title = (f.get("title") or "").replace("・", "·")
    tune = (f.get("rhythmic") or "").replace("・", "·")
    if "·" in title:
        return title
    if "·" in tune:
        return tune
    title = re.sub(r"\s*其[一二三四五六七八九十]+$", "", title)
    name = title if title and title != tune else first_phrase(p)
    return f"{tune or title}·{name}" if name and name != tune else tune or title


_SAGES = {"子": "孔子", "孔子": "孔子", "仲尼": "孔子", "有子": "有子", "曾子": "曾子", "子夏": "子夏", "子贡": "子贡",
          "子游": "子游", "子张": "子张", "孟子": "孟子"}

CURATED: tuple[Spec, ...] = (
    Spec("lunyu/lunyu.json", "论语", "lunyu", _book("论语"), prose=True, speakers=_SAGES),
    Spec("sishuwujing/daxue.json", "大学", "daxue", _book("大学"), "曾子", prose=True, speakers=_SAGES),
    Spec("sishuwujing/zhongyong.json", "中庸", "zhongyong", _book("中庸"), "子思", prose=True, speakers=_SAGES),
    Spec("sishuwujing/mengzi.json", "孟子", "mengzi", _book("孟子"), "孟子", prose=True, speakers={"孟子": "孟子"}),
    Spec("shijing/shijing.json", "诗经", "shijing", _path("诗经", "section", "title")),
    Spec("chuci/chuci.json", "楚辞", "chuci", _path("楚辞", "section", "title")),
    Spec("quantangshi/唐诗三百首.json", "唐诗三百首", "tang300", _title, tags=True),
    Spec("songci/宋词三百首.json", "宋词三百首", "song300", ci_work, tags=True),
    Spec("mengxue/qianjiashi.json", "千家诗", "qianjiashi", _title),
    Spec("shuimotangshi/shuimotangshi.json", "水墨唐诗", "shuimo", _title),
    Spec("mengxue/zengguangxianwen.json", "增广贤文", "zengguang", _book("增广贤文")),
    Spec("mengxue/sanzijing-traditional.json", "三字经", "sanzijing", _book("三字经"), "王应麟"),
    Spec("mengxue/qianziwen.json", "千字文", "qianziwen", _book("千字文"), "周兴嗣"),
    Spec("mengxue/dizigui.json", "弟子规", "dizigui", _book("弟子规"), "李毓秀"),
    Spec("mengxue/zhuzijiaxun.json", "朱子家训", "zhuzi", _book("朱子家训"), "朱柏庐"),
    Spec("mengxue/youxueqionglin.json", "幼学琼林", "youxue", _book("幼学琼林"), "程登吉", prose=True),
    Spec("mengxue/guwenguanzhi.json", "古文观止", "guwen", _title, prose=True),
    Spec("youmengying/youmengying.json", "幽梦影", "youmeng", _book("幽梦影"), "张潮", prose=True),
    Spec("nalanxingde/纳兰性德诗集.json", "纳兰性德诗集", "nalan", _title, "纳兰性德"),
    Spec("caocaoshiji/caocao.json", "曹操诗集", "caocao", _title, "曹操"),
    Spec("wudaishici/nantang/poetrys.json", "南唐二主词", "nantang", ci_work),
    *(Spec(f"wudaishici/huajianji/huajianji-{n}-juan.json", "花间集", f"huajian{n}", ci_work) for n in "123456789x"),
)
"""The anthologies read whole, in this order (a unit met again later is a duplicate). Left out on purpose:
百家姓 (surnames), 文字蒙求 (lessons on the script), 声律启蒙 (rhyming drills: 云对雨，雪对风), the modern 三字经
(``sanzijing-new``), the second copy of 唐诗三百首 (``mengxue/tangshisanbaishou.json``: the ``quantangshi`` one
has tags and ids), ``yudingquantangshi`` (an older edition of the Tang corpus), ``quantangshi/error`` (records
with missing characters), ``strains`` (tone patterns) and the author biographies."""

YUANQU = Spec("yuanqu/yuanqu.json", "元曲", "yuanqu", _title)
"""元曲 (11,057 arias and sets): in the large selection only."""

CORPORA: Mapping[str, tuple[str, str]] = {
    "tang": (r"quantangshi/poet\.tang\.(\d+)\.json", "全唐诗"),
    "song": (r"quantangshi/poet\.song\.(\d+)\.json", "全宋诗"),
    "ci": (r"songci/ci\.song\.(\w+)\.json", "全宋词"),
}
"""The full corpora: kind -> (path pattern under ``package/dist/``, whose group is the file's number; collection)."""

RANKS: Mapping[str, str] = {
    "tang": r"rank/poet/poet\.tang\.rank\.(\d+)\.json",
    "song": r"rank/poet/poet\.song\.rank\.(\d+)\.json",
    "ci": r"rank/ci/ci\.song\.rank\.(\w+)\.json",
}
"""The search-engine counts of each corpus file, by kind; the group is the number of the corpus file."""

ANONYMOUS = frozenset({"佚名", "无名氏", "無名氏", "缺名", "不详", "不詳", "阙名", "闕名"})
_DROP_TAG = re.compile(r"年级|初中|高中|小学|课外|课内|必修|选修|册|・|·")
_FIELDS = ("title", "chapter", "section", "subchapter", "type", "author", "rhythmic", "tags", "id")
_TEXTS = ("paragraphs", "para", "content")


def walk(node: object, inherited: Mapping[str, object] | None = None) -> Iterator[tuple[dict, tuple[str, ...]]]:
    """``(fields, paragraphs)`` for every text node below ``node``; fields are inherited, the nearest wins."""
    if isinstance(node, list):
        for item in node:
            yield from walk(item, inherited)
        return
    if not isinstance(node, dict):
        return
    here = {**(inherited or {}), **{k: node[k] for k in _FIELDS if node.get(k) not in (None, "", [])}}
    for key in _TEXTS:
        value = node.get(key)
        if isinstance(value, str) and value.strip():
            yield here, (value,)
            return
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            yield here, tuple(value)
            return
    for key in _TEXTS:
        if isinstance(node.get(key), list):
            yield from walk(node[key], here)


def poet_name(raw: str) -> str:
    """A poet's name without a dynasty (（唐）孟浩然, 先秦：左丘明) or a disambiguating number (王炎2); anonymous
    markers (佚名, 无名氏) become no author."""
    name = re.sub(r"^\s*[（(][^）)]*[）)]\s*", "", raw or "")
    name = re.sub(r"^[^：:]{1,4}[：:]\s*", "", name)
    name = re.sub(r"\d+$", "", name).strip()
    return "" if name in ANONYMOUS else name


def topics_of(tags: object, collection: str) -> tuple[str, ...]:
    """The collection name and the theme tags (友情, 送别, 哲理, ...); school-grade and dynasty tags are dropped."""
    items = [tags] if isinstance(tags, str) else tags if isinstance(tags, list) else []
    kept = [t.strip() for t in items if isinstance(t, str) and t.strip() and not _DROP_TAG.search(t)]
    return tuple(dict.fromkeys([collection, *kept]))


def make_piece(doc: str, collection: str, work: str, author: str, paragraphs: tuple[str, ...], *,
               tags: object = (), popularity: float | None = None, prose: bool = False,
               speakers: Mapping[str, str] | None = None) -> Piece:
    """A :class:`Piece` from raw (possibly Traditional) strings, converted to Simplified in one call."""
    raw_topics = topics_of(tags, collection)
    texts = [work, author, *raw_topics, *paragraphs]
    if any("\n" in t for t in texts):
        texts = [" ".join(t.split("\n")) for t in texts]
    out = simplified_all(texts)
    n = len(raw_topics)
    return Piece(doc=doc, collection=collection, work=out[0].strip(), author=poet_name(out[1]),
                 paragraphs=tuple(p for p in out[2 + n:] if p.strip()),
                 topics=tuple(dict.fromkeys(t for t in out[2:2 + n] if t)), popularity=popularity, prose=prose,
                 speakers=tuple((speakers or {}).items()))


def match_key(fields: Mapping, paragraphs: tuple[str, ...] | list) -> tuple | None:
    """What links an anthology's poem to its record in a full corpus (raw strings): the poem id, or for an untitled
    ci its author, tune and first line."""
    if isinstance(fields.get("id"), str):
        return ("id", fields["id"])
    if isinstance(fields.get("rhythmic"), str) and paragraphs:
        return ("ci", fields.get("author"), fields["rhythmic"], paragraphs[0])
    return None


def curated_pieces(spec: Spec, data: object) -> Iterator[tuple[Piece, tuple | None]]:
    """The pieces of one anthology file (already parsed), each with its :func:`match_key`."""
    for n, (fields, paragraphs) in enumerate(walk(data)):
        simple = {k: v for k, v in fields.items() if isinstance(v, str)}
        work = spec.work(simple, paragraphs)
        piece = make_piece(f"{spec.key}/{n}", spec.collection, work, simple.get("author") or spec.author,
                           paragraphs, tags=fields.get("tags", ()) if spec.tags else (), prose=spec.prose,
                           speakers=spec.speakers)
        yield piece, match_key(fields, paragraphs)


def corpus_piece(kind: str, number: str, index: int, record: Mapping, *,
                 popularity: float | None = None) -> Piece | None:
    """The piece of one record of a full corpus (None when it has no text)."""
    paragraphs = record.get("paragraphs")
    if not isinstance(paragraphs, list) or not all(isinstance(p, str) for p in paragraphs) or not paragraphs:
        return None
    fields = {k: record[k] for k in ("title", "rhythmic") if isinstance(record.get(k), str)}
    work = ci_work(fields, tuple(paragraphs)) if kind == "ci" else fields.get("title", "")
    doc = f"{kind}/{record['id']}" if isinstance(record.get("id"), str) else f"{kind}/{number}/{index}"
    author = record.get("author") if isinstance(record.get("author"), str) else ""
    return make_piece(doc, CORPORA[kind][1], work, author, tuple(paragraphs), tags=record.get("tags", ()),
                      popularity=popularity)


def piece_units(piece: Piece) -> list[tuple[str, str]]:
    """``(unit, author)`` for every quotable unit of a piece; a paragraph that is one sage's speech is credited to
    that sage, without the ``子曰：`` and the quotation marks."""
    if not piece.prose:
        return [(u, piece.author) for u in units(piece.paragraphs)]
    speakers = dict(piece.speakers)
    out = []
    for paragraph in piece.paragraphs:
        said = speech(paragraph) if speakers else None
        if said and said[0] in speakers:
            out.extend((u, speakers[said[0]]) for u in units([said[1]]))
        else:
            out.extend((u, piece.author) for u in units([paragraph]))
    return out


def full_text(piece: Piece) -> str:
    """The text of a whole piece, one paragraph a line (the source a unit is located in)."""
    return "\n".join(t for t in (clean_paragraph(p) for p in piece.paragraphs) if t)
