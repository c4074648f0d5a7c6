"""The Chinese names of authors a knowledge base may write in Latin script ("Confucius" -> 孔子).

A Chinese sentence names its author in Chinese: a reader of 正如孔子所说 expects 孔子, not "Confucius". The table
holds two kinds of people, keyed like :func:`quill_core._names.author_key` (case, spaces and punctuation ignored):

- Chinese people under their romanized or Latinized names (pinyin, Wade-Giles, "Confucius", "Sun Tzu"): the Chinese
  form is simply their own name;
- the most quoted Western authors whose Chinese names are fixed by long use (爱因斯坦, 莎士比亚, 萧伯纳).

Anyone else keeps the name the knowledge base writes, even in a Chinese sentence: a transliteration made up on the
spot may not be the one readers know, or may name someone else. The table is deliberately small and only grows
with names whose Chinese form is beyond doubt.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

_CHINESE = {
    "孔子": ("confucius", "kongzi", "kongfuzi", "kongfutse", "kungfutzu"),
    "老子": ("laotzu", "laozi", "laotse", "laotze"),
    "孟子": ("mencius", "mengzi", "mengtzu"),
    "庄子": ("zhuangzi", "chuangtzu", "zhuangzhou", "chuangchou"),
    "孙子": ("suntzu", "sunzi", "suntze", "sunwu"),
    "墨子": ("mozi", "motzu", "micius"),
    "荀子": ("xunzi", "hsuntzu"),
    "韩非": ("hanfei", "hanfeizi", "hanfeitzu"),
    "屈原": ("quyuan", "chuyuan"),
    "陶渊明": ("taoyuanming", "taoqian", "taochien"),
    "李白": ("libai", "lipo", "libo"),
    "杜甫": ("dufu", "tufu"),
    "王维": ("wangwei",),
    "白居易": ("baijuyi", "pochui", "pochüi"),
    "苏轼": ("sushi", "sudongpo", "sutungpo"),
    "李清照": ("liqingzhao",),
    "陆游": ("luyou",),
    "朱熹": ("zhuxi", "chuhsi"),
    "王阳明": ("wangyangming",),
    "诸葛亮": ("zhugeliang",),
    "曹操": ("caocao",),
    "鲁迅": ("luxun", "luhsun"),
    "胡适": ("hushih", "hushi"),
    "林语堂": ("linyutang",),
    "张爱玲": ("eileenchang", "zhangailing"),
    "孙中山": ("sunyatsen", "sunzhongshan"),
    "毛泽东": ("maozedong", "maotsetung"),
    "周恩来": ("zhouenlai", "chouenlai"),
    "邓小平": ("dengxiaoping",),
    "李小龙": ("brucelee",),
}
_WESTERN = {
    "爱因斯坦": ("alberteinstein", "einstein"),
    "莎士比亚": ("williamshakespeare", "shakespeare"),
    "马克·吐温": ("marktwain",),
    "王尔德": ("oscarwilde",),
    "萧伯纳": ("georgebernardshaw",),
    "富兰克林": ("benjaminfranklin",),
    "林肯": ("abrahamlincoln",),
    "甘地": ("mahatmagandhi", "gandhi"),
    "丘吉尔": ("winstonchurchill",),
    "马丁·路德·金": ("martinlutherkingjr", "martinlutherking"),
    "曼德拉": ("nelsonmandela",),
    "牛顿": ("isaacnewton",),
    "达尔文": ("charlesdarwin",),
    "爱迪生": ("thomasedison", "thomasaedison"),
    "居里夫人": ("mariecurie",),
    "培根": ("francisbacon",),
    "苏格拉底": ("socrates",),
    "柏拉图": ("plato",),
    "亚里士多德": ("aristotle",),
    "塞涅卡": ("seneca",),
    "马可·奥勒留": ("marcusaurelius",),
    "西塞罗": ("cicero",),
    "伏尔泰": ("voltaire",),
    "歌德": ("johannwolfgangvongoethe", "goethe"),
    "康德": ("immanuelkant",),
    "尼采": ("friedrichnietzsche",),
    "马克思": ("karlmarx",),
    "托尔斯泰": ("leotolstoy",),
    "雨果": ("victorhugo",),
    "狄更斯": ("charlesdickens",),
    "泰戈尔": ("rabindranathtagore",),
    "海伦·凯勒": ("helenkeller",),
    "拿破仑": ("napoleonbonaparte", "napoleon"),
}

CHINESE_NAMES: Mapping[str, str] = MappingProxyType(
    {k: zh for table in (_CHINESE, _WESTERN) for zh, keys in table.items() for k in keys})
"""Author key (letters and digits, case-folded) -> the author's Chinese name."""


def chinese_name(key: str) -> str:
    """The Chinese name of the author whose :func:`~quill_core._names.author_key` is ``key``, or ''."""
    return CHINESE_NAMES.get(key, "")
