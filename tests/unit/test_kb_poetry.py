"""Chinese quotations from chinese-poetry: units, Traditional to Simplified, popularity, selections, source texts
and the pinned npm download, on a small tarball each test builds (the real 85 MB package only in the slow test)."""

from __future__ import annotations

import io
import json
import os
import stat
import sys
import tarfile
from pathlib import Path

import pytest

from quill_core._errors import InputError, NotFoundError
from quill_core._kb import KnowledgeBase, Row, import_records
from quill_core._kb import npm, poetry
from quill_core._kb.units import balance_quotes, first_phrase, simplified, units
from quill_core._types import RejectedRow

LONG_PROSE = ("孟子曰：“人皆有不忍人之心。先王有不忍人之心，斯有不忍人之政矣。以不忍人之心，行不忍人之政，治天下可运之掌上。"
              "所以谓人皆有不忍人之心者，今人乍见孺子将入于井，皆有怵惕恻隐之心；非所以内交于孺子之父母也，非所以要誉于乡党朋友也，"
              "非恶其声而然也。”")

FILES: dict[str, object] = {
    # corpora first, their ranks after them, anthologies last: the archive's order must not matter
    "quantangshi/poet.tang.0.json": [
        {"author": "王之渙", "title": "登鸛雀樓", "id": "t-1", "paragraphs": ["白日依山盡，黃河入海流。", "欲窮千里目，更上一層樓。"]},
        {"author": "李白", "title": "靜夜思", "id": "t-2", "paragraphs": ["床前看月光，疑是地上霜。", "舉頭望山月，低頭思故鄉。"]},
        {"author": "杜甫", "title": "春望", "id": "t-3", "tags": ["忧国忧民", "八年级上册"],
         "paragraphs": ["國破山河在，城春草木深。", "感時花濺淚，恨別鳥驚心。"]},
        {"author": "無名氏", "title": "句", "id": "t-4", "paragraphs": ["一片孤城萬仞山，羌笛何須怨楊柳。"]},
        {"author": "孟郊", "title": "遊子吟", "id": "t-5", "paragraphs": ["慈母手中線，遊子身上衣。"]},
    ],
    "quantangshi/poet.song.0.json": [
        {"author": "王安石", "title": "泊船瓜洲", "id": "s-1", "paragraphs": ["春風又綠江南岸，明月何時照我還。"]},
        {"author": "蘇軾", "title": "題西林壁", "id": "s-2", "paragraphs": ["橫看成嶺側成峰，遠近高低各不同。"]},
    ],
    "songci/ci.song.0.json": [
        {"author": "苏轼", "rhythmic": "水调歌头", "paragraphs": ["明月几时有？把酒问青天。", "但愿人长久，千里共婵娟。"]},
        {"author": "李清照", "rhythmic": "如梦令", "paragraphs": ["常记溪亭日暮，沉醉不知归路。", "争渡。", "惊起一滩鸥鹭。"]},
        {"author": "王炎2", "rhythmic": "水调歌头", "paragraphs": ["江上一帆远，回首故人遥。"]},
    ],
    "rank/poet/poet.tang.rank.0.json": [  # no entry for 遊子吟: it has no count
        {"author": "王之渙", "title": "登鸛雀樓", "so360": 665000, "baidu": 1970, "google": 9000000},
        {"author": "李白", "title": "靜夜思", "so360": 1250000, "baidu": 418000, "google": 1},
        {"author": "杜甫", "title": "春望", "so360": 921000, "baidu": 7010, "google": 1},
        {"author": "無名氏", "title": "句", "so360": 2000000, "baidu": 5, "google": 1},
    ],
    "rank/poet/poet.song.rank.0.json": [
        {"author": "王安石", "title": "泊船瓜洲", "so360": 100000000},  # the crawler's ceiling: unknown
        {"author": "蘇軾", "title": "題西林壁", "so360": 638000},
    ],
    "rank/ci/ci.song.rank.0.json": [
        {"author": "苏轼", "rhythmic": "水调歌头", "so360": 2150000},
        {"author": "李清照", "rhythmic": "如梦令", "so360": 700000},
        {"author": "王炎2", "rhythmic": "水调歌头", "so360": 3900000},  # above the ceiling: unknown
    ],
    "lunyu/lunyu.json": [{"chapter": "学而篇", "paragraphs": [
        "子曰：“学而时习之，不亦说乎？有朋自远方来，不亦乐乎？人不知而不愠，不亦君子乎？”",
        "曾子曰：“吾日三省吾身：为人谋而不忠乎？与朋友交而不信乎？传不习乎？”",
        "子禽问于子贡曰：“夫子至于是邦也，必闻其政，求之与，抑与之与？”"]}],
    "sishuwujing/mengzi.json": [{"chapter": "公孙丑上", "paragraphs": [LONG_PROSE]}],
    "mengxue/zengguangxianwen.json": {"title": "增廣賢文", "author": "佚名", "content": [
        {"chapter": "上集", "paragraphs": ["觀今宜鑑古，無古不成今。", "路遙知馬力，日久見人心。"]}]},
    "mengxue/qianziwen.json": "[{\"title\": \"千字文\", \"paragraphs\": [\"天地玄黃\"",  # cut off: not JSON
    "quantangshi/唐诗三百首.json": [
        {"author": "王之渙", "title": "登鸛雀樓", "id": "t-1", "tags": ["唐诗三百首", "写景", "八年级下册(课外)", "隋・唐・五代"],
         "paragraphs": ["白日依山盡，黃河入海流。", "欲窮千里目，更上一層樓。"]}],
    "mengxue/qianjiashi.json": {"title": "千家詩", "content": [{"type": "五言絕句", "content": [
        {"chapter": "靜夜思", "author": "（唐）李白", "paragraphs": ["床前明月光，疑是地上霜。", "舉頭望明月，低頭思故鄉。"]}]}]},
    "caocaoshiji/caocao.json": [{"title": "短歌行", "paragraphs": [
        "對酒當歌，人生幾何！譬如朝露，去日苦多。", "明明如月，何時可掇？憂從中來，不可斷絕。(明明 一作：佼佼)"]}],
    "yuanqu/yuanqu.json": [{"author": "马致远", "title": "天净沙·秋思", "paragraphs": ["枯藤老树昏鸦，小桥流水人家。"]}],
}


def build_tarball(path: Path, files: dict[str, object] = FILES) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, content in files.items():
            data = (content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)).encode()
            info = tarfile.TarInfo(f"package/dist/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def tarball(tmp_path: Path) -> Path:
    return build_tarball(tmp_path / "chinese-poetry-2.0.1.tgz")


def rows_of(items) -> tuple[list[Row], list[RejectedRow]]:
    items = list(items)
    return [r for r in items if isinstance(r, Row)], [r for r in items if isinstance(r, RejectedRow)]


def by_text(rows: list[Row]) -> dict[str, Row]:
    return {r.text: r for r in rows}


# -- units -------------------------------------------------------------------------------------------------------

def test_units_split_long_prose_at_sentence_ends_and_keep_quotes_balanced() -> None:
    out = units([LONG_PROSE])
    assert len(out) >= 4 and all(len(u) <= 60 for u in out)
    assert out[0] == "孟子曰：人皆有不忍人之心。"  # the cut left “ without its partner: dropped
    assert all(balance_quotes(u) == u for u in out)
    assert "".join(out).replace("“", "").replace("”", "") == LONG_PROSE.replace("“", "").replace("”", "").replace(
        "孟子曰：", "孟子曰：", 1)


def test_units_join_short_lines_drop_notes_and_placeholders() -> None:
    assert units(["天地玄黃", "宇宙洪荒", "日月盈昃", "辰宿列張"]) == ["天地玄黃，宇宙洪荒", "日月盈昃，辰宿列張"]
    assert units(["争渡。", "惊起一滩鸥鹭。"]) == ["争渡。惊起一滩鸥鹭。"]
    assert units(["明明如月，何时可掇？(明明 一作：佼佼)"]) == ["明明如月，何时可掇？"]
    assert units(["弟子規 聖人訓 首孝弟 次謹信"]) == ["弟子規，聖人訓，首孝弟，次謹信"]
    assert units(["綬吐芽猶嫩，冰□已鏤津。", "（以上劉瑛整理", "方期君寿度千秋。。"]) == ["方期君寿度千秋。"]
    assert units(["孟子曰：「是亦羿有罪焉。」"]) == ["孟子曰：“是亦羿有罪焉。”"]


def test_simplified_and_first_phrase() -> None:
    assert simplified("觀今宜鑑古，無古不成今。") == "观今宜鉴古，无古不成今。"
    assert simplified("学而时习之") == "学而时习之"
    assert first_phrase(["明月几时有？把酒问青天。"]) == "明月几时有"


def test_hit_count_rules() -> None:
    assert poetry.hit_count({"so360": 921000, "google": 10**9}, "杜甫", "春望") == 921000.0
    assert poetry.hit_count({"so360": 100_000_000}, "杜甫", "春望") is None  # the crawler's ceiling
    assert poetry.hit_count({"so360": 5}, "無名氏", "春望") is None
    assert poetry.hit_count({"so360": 5}, "杜甫", "句 三") is None
    assert poetry.hit_count({"so360": 5}, "杜甫", "雨") is None  # one character: the word, not the poem
    assert poetry.hit_count({"baidu": 5}, "杜甫", "春望") is None
    assert poetry.hit_count({"so360": True}, "杜甫", "春望") is None


# -- selections --------------------------------------------------------------------------------------------------

def test_starter_curated_in_full_simplified_with_authors_works_topics(tarball: Path) -> None:
    rows, rejected = rows_of(poetry.starter_rows(tarball, target=0))
    assert len(rejected) == 1 and "mengxue/qianziwen.json is not valid JSON" in rejected[0].reason
    assert "\n" not in rejected[0].reason
    texts = by_text(rows)
    assert all(r.lang == "zh" for r in rows)
    assert texts["学而时习之，不亦说乎？"].author == "孔子"  # 子曰：“……” credited to the sage, marks gone
    assert texts["学而时习之，不亦说乎？"].work == "论语·学而"
    assert texts["吾日三省吾身：为人谋而不忠乎？"].author == "曾子"
    assert any(t.startswith("子禽问于子贡曰") and texts[t].author == "" for t in texts)
    assert texts["观今宜鉴古，无古不成今。"].work == "增广贤文·上集"  # Traditional in, Simplified out
    assert texts["观今宜鉴古，无古不成今。"].author == ""  # 佚名
    assert texts["床前明月光，疑是地上霜。"].author == "李白"  # （唐）李白
    climb = texts["白日依山尽，黄河入海流。"]
    assert (climb.author, climb.work) == ("王之涣", "登鹳雀楼")
    assert climb.topics == ("唐诗三百首", "写景")  # grade and dynasty tags dropped
    assert climb.popularity == 665000.0  # from the corpus record with the same id
    assert texts["床前明月光，疑是地上霜。"].popularity == 1250000.0  # by Simplified author and title
    assert texts["明明如月，何时可掇？"].author == "曹操"
    mengzi = [r for r in rows if r.work == "孟子·公孙丑上"]
    assert len(mengzi) >= 4 and all(len(r.text) <= 60 and r.author == "孟子" for r in mengzi)
    assert not any(r.topics[0] in ("全唐诗", "全宋诗", "全宋词", "元曲") for r in rows)  # target reached already


def test_starter_adds_popular_corpus_poems_in_turn_until_the_target(tarball: Path) -> None:
    curated, _ = rows_of(poetry.starter_rows(tarball, target=0))
    rows, _ = rows_of(poetry.starter_rows(tarball, target=len(curated) + 4))
    extra = rows[len(curated):]  # one poem of each corpus in turn, whole poems, until the target is passed
    assert [r.topics[0] for r in extra] == ["全唐诗", "全唐诗", "全宋诗", "全宋词", "全宋词"]
    assert extra[0].text == "国破山河在，城春草木深。" and extra[0].popularity == 921000.0  # 静夜思 is curated
    assert extra[0].topics == ("全唐诗", "忧国忧民")
    assert extra[2].text == "横看成岭侧成峰，远近高低各不同。"  # 泊船瓜洲's count is the ceiling: unknown
    assert [r.text for r in extra[3:]] == ["明月几时有？把酒问青天。", "但愿人长久，千里共婵娟。"]
    assert extra[3].work == "水调歌头·明月几时有" and extra[3].popularity == 2150000.0


def test_large_has_every_line_once(tarball: Path) -> None:
    rows, rejected = rows_of(poetry.large_rows(tarball))
    assert len(rejected) == 1
    texts = by_text(rows)
    assert len(texts) == len(rows)
    assert texts["慈母手中线，游子身上衣。"].popularity is None  # no rank entry
    assert texts["一片孤城万仞山，羌笛何须怨杨柳。"].author == ""  # 無名氏
    assert texts["江上一帆远，回首故人遥。"].author == "王炎"  # the disambiguating number dropped
    assert texts["江上一帆远，回首故人遥。"].popularity is None
    assert texts["春风又绿江南岸，明月何时照我还。"].topics == ("全宋诗",)
    assert texts["枯藤老树昏鸦，小桥流水人家。"].work == "天净沙·秋思"
    assert texts["常记溪亭日暮，沉醉不知归路。"].work == "如梦令·常记溪亭日暮"
    climb = texts["白日依山尽，黄河入海流。"]
    assert climb.topics[0] == "唐诗三百首" and climb.popularity == 665000.0  # the anthology keeps its copy
    starter, _ = rows_of(poetry.starter_rows(tarball, target=10**6))
    assert {r.text for r in starter} < set(texts)


def test_imported_rows_are_clean_chinese_quotes(tarball: Path) -> None:
    kb = KnowledgeBase(":memory:", name="test")
    report = import_records(kb, poetry.starter_rows(tarball), collection="chinese-poetry")
    assert report.imported > 20 and len(report.rejected) == 1
    moon = kb.by_key("床前明月光，疑是地上霜。")[0]
    assert (moon.author, moon.work, moon.lang) == ("李白", "静夜思", "zh")


def test_source_texts(tarball: Path) -> None:
    docs = {t.doc: t for t in poetry.source_texts(tarball, tier="starter", target=0)}
    lunyu = docs["chinese-poetry/lunyu/0"]
    assert (lunyu.title, lunyu.author) == ("论语·学而", "")
    assert lunyu.text.splitlines()[0].startswith("子曰：“学而时习之，不亦说乎？")
    assert docs["chinese-poetry/tang300/0"].text == "白日依山尽，黄河入海流。\n欲穷千里目，更上一层楼。"
    assert docs["chinese-poetry/caocao/0"].text.endswith("忧从中来，不可断绝。")  # the note is gone
    large = {t.doc for t in poetry.source_texts(tarball, tier="large")}
    assert {"chinese-poetry/tang/t-5", "chinese-poetry/ci/0/1", "chinese-poetry/yuanqu/0"} <= large
    with pytest.raises(InputError):
        list(poetry.source_texts(tarball, tier="huge"))  # type: ignore[arg-type]


def test_unreadable_tarballs(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError):
        list(poetry.starter_rows(tmp_path / "missing.tgz"))
    junk = tmp_path / "junk.tgz"
    junk.write_bytes(b"not a tarball at all")
    with pytest.raises(InputError, match="not a readable package tarball"):
        list(poetry.large_rows(junk))


# -- the pinned download -----------------------------------------------------------------------------------------

def fake_npm(bin_dir: Path, *, payload: Path | None, fail: str = "") -> Path:
    """A stand-in ``npm`` on PATH: ``npm pack SPEC --pack-destination DIR`` copies ``payload`` there (or fails
    with ``fail`` on stderr) and logs its arguments and npm cache folder."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "npm"
    script.write_text(f"""#!{sys.executable}
import os, shutil, sys
args = sys.argv[1:]
with open({str(bin_dir / 'log')!r}, "a") as log:
    log.write(" ".join(args) + "\\n" + os.environ.get("npm_config_cache", "") + "\\n")
if {fail!r}:
    sys.stderr.write("npm notice working\\n" + {fail!r} + "\\n")
    sys.exit(1)
dest = args[args.index("--pack-destination") + 1]
os.makedirs(os.environ["npm_config_cache"], exist_ok=True)
shutil.copy({str(payload)!r}, os.path.join(dest, "chinese-poetry-2.0.1.tgz"))
""")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


@pytest.fixture
def path_with(monkeypatch: pytest.MonkeyPatch):
    def use(bin_dir: Path) -> None:
        monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    return use


def test_fetch_downloads_verifies_and_caches(tmp_path: Path, tarball: Path, path_with) -> None:
    bin_dir = tmp_path / "bin"
    fake_npm(bin_dir, payload=tarball)
    path_with(bin_dir)
    downloads = tmp_path / "home" / "downloads"
    expected = npm.integrity(tarball)
    got = npm.fetch_tarball(downloads, name="chinese-poetry", version="2.0.1", expected=expected)
    assert got == downloads / "chinese-poetry-2.0.1.tgz" and npm.integrity(got) == expected
    assert sorted(p.name for p in downloads.iterdir()) == ["chinese-poetry-2.0.1.tgz"]  # temp folder removed
    args, cache = (bin_dir / "log").read_text().splitlines()
    assert args.startswith("pack chinese-poetry@2.0.1 --pack-destination " + str(downloads))
    assert cache.startswith(str(downloads))  # npm's cache stays under QUILL_HOME, and is removed
    cached = npm.fetch_tarball(downloads, name="chinese-poetry", version="2.0.1", expected=expected,
                               npm="no-such-npm-here")  # cached: npm is not needed again
    assert cached == got
    got.write_bytes(b"damaged")  # a damaged cache is fetched again
    assert npm.fetch_tarball(downloads, name="chinese-poetry", version="2.0.1", expected=expected) == got
    assert npm.integrity(got) == expected and len((bin_dir / "log").read_text().splitlines()) == 4
    got.write_bytes(b"damaged")
    with pytest.raises(NotFoundError, match="npm is not installed"):
        npm.fetch_tarball(downloads, name="chinese-poetry", version="2.0.1", expected=expected, npm="no-such-npm")
    assert not got.exists()


def test_fetch_integrity_mismatch_leaves_nothing(tmp_path: Path, tarball: Path, path_with) -> None:
    fake_npm(tmp_path / "bin", payload=tarball)  # not the real package: fails the pinned hash
    path_with(tmp_path / "bin")
    home = tmp_path / "home"
    with pytest.raises(InputError, match="failed its integrity check") as err:
        poetry.fetch_package(home)
    assert "\n" not in str(err.value)
    assert list((home / "downloads").iterdir()) == []


def test_fetch_without_npm_or_registry(tmp_path: Path, tarball: Path, path_with) -> None:
    home = tmp_path / "home"
    with pytest.raises(NotFoundError, match="npm is not installed: cannot download chinese-poetry@2.0.1"):
        poetry.fetch_package(home, npm="no-such-npm-here")
    fake_npm(tmp_path / "bin", payload=None, fail="npm error code E404")
    path_with(tmp_path / "bin")
    with pytest.raises(NotFoundError) as err:
        poetry.fetch_package(home)
    assert str(err.value) == "npm could not download chinese-poetry@2.0.1 (exit code 1): npm error code E404"
    assert list((home / "downloads").iterdir()) == []


# -- the real package --------------------------------------------------------------------------------------------

REAL = Path("/tmp/chinese-poetry-2.0.1.tgz")


@pytest.mark.slow
@pytest.mark.skipif(not REAL.is_file(), reason="the real chinese-poetry tarball is not at /tmp")
def test_real_package_starter() -> None:
    from quill_core._kb.clean import make_quote
    from quill_core._text import HAN

    assert npm.integrity(REAL) == poetry.INTEGRITY
    rows, rejected = rows_of(poetry.starter_rows(REAL))
    assert rejected == []
    quotes = [make_quote(r.text, author=r.author, work=r.work, topics=r.topics, lang=r.lang)[0] for r in rows]
    assert sum(q is not None and q.lang == "zh" for q in quotes) >= 15_000
    assert all(simplified(r.text) == r.text and HAN.search(r.text) for r in rows[::50])


def test_the_chinese_tier_builds_through_the_facade(tmp_path: Path, tarball: Path, monkeypatch) -> None:
    """``quill kb build --tier chinese``: the package is fetched into QUILL_HOME/downloads (here: the small fixture)
    and its starter selection lands in the knowledge base as Simplified Chinese quotes; building again adds nothing."""
    from quill_core import TIERS, Quill, Settings
    from tests.fakes import FakeEmbedder

    fetched: list[Path] = []
    monkeypatch.setattr("quill_core._kb.poetry.fetch_package", lambda home: fetched.append(home) or tarball)
    quill = Quill(Settings.load(home=tmp_path / "home"), embedder=FakeEmbedder())
    assert "chinese" in TIERS
    report = quill.build("chinese")
    assert fetched == [tmp_path / "home"] and report.imported > 0
    assert [r.reason for r in report.rejected] == [  # the fixture's one malformed file, named
        "chinese-poetry: mengxue/qianziwen.json is not valid JSON (Expecting ',' delimiter: line 1 column 40 "
        "(char 39)); file skipped"]
    stats = quill.stats()
    assert stats.by_lang == {"zh": stats.quotes} and stats.by_collection == {"chinese-poetry": stats.quotes}
    # the full poems and chapters became source texts: a quote is verified in its poem
    [source] = quill.list_sources()
    assert source.name == "chinese-poetry" and source.docs == 10 and "王之涣" in source.authors
    [v] = quill.verify("王之涣在《登鹳雀楼》中写道：“欲窮千里目，更上一層樓。”")
    assert v.verdict == "verbatim" and "verified in source: 王之涣《登鹳雀楼》" in v.note
    assert quill.build("chinese").imported == 0
    assert [s.docs for s in quill.list_sources()] == [10]
