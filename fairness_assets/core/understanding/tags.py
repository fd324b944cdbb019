"""Program name -> QS broad subject areas (METHOD.md §7).

Three sources, in order of authority:

1. the reviewed overrides file (``data/tag_overrides/programs.csv``): always wins;
2. a tagger: the deterministic keyword rules below (:func:`tag_rules`), or an LLM prompted
   with a few annotated examples (:func:`few_shot_prompt` / :func:`parse_llm_tags`, run by
   ``resources.tagger``);
3. nothing: a program no rule recognises gets no tag (``[]``), reported as untagged.

Tags are keyed by the normalised program name (:func:`normalize_program`), so "MSc in
Computer Science", "Master of Science (Computer Science)" and "computer science" share one
cache entry.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Optional

from ..common.text import fold_accents
from ..reference.subjects import ARTS, ENG, LIFE, NAT, QS_AREAS, SOC

RULES_VERSION = "rules-3"  # rules-2: the subjects in seven more languages (issue 35); rules-3: more of them

_DEGREE = re.compile(
    r"^(?:(?:an?|the)\s+)?(?:"
    r"master(?:s|'s|’s)?(?:\s+(?:of|in|degree|program(?:me)?|course))*|m\s?sc|m\s?s|m\s?a|m\s?eng|m\s?phil|m\s?res|"
    r"m\s?tech|m\s?ed|mestrado|maestria|master|magister|postgraduate|graduate|pg|"
    r"science|sciences|arts|research"
    r")\b\s*(?:\b(?:of|in|en|em|de|di|im|on)\b\s*)?",
)


_APOS = re.compile(r"[’']")
_NONWORD = re.compile(r"[^\w]+")


def _fold(text: str) -> str:
    return fold_accents(text)


def normalize_program(text: Optional[str]) -> str:
    """Cache key of a program name: folded, degree words and punctuation removed."""
    if text is None or (isinstance(text, float) and text != text):
        return ""
    t = _fold(text).replace("&", " and ")
    t = _APOS.sub("", t)
    t = _NONWORD.sub(" ", t).strip()
    for _ in range(3):  # "Master of Science in ..." peels in steps
        new = _DEGREE.sub("", t, count=1).strip()
        if new == t or not new:
            break
        t = new
    return re.sub(r"\s+", " ", t).strip()


# (area, pattern over the folded full program text). Keep patterns specific; a program may
# carry several areas (Biomedical Engineering: ENG + LIFE).
_RULES: list[tuple[str, str]] = [
    (
        ENG,
        r"engineer|engenharia|ingenier|ingenieur|ingegneria|computer|computing|comput|informatic|informatik|"
        r"software|electrical|electronic|mechanical|mechatronic|civil|aerospace|aeronaut|robotic|"
        r"artificial intelligence|\bai\b|machine learning|data science|data engineering|cyber|information technology|"
        r"\bit\b|information systems|telecommunication|automation|petroleum|mining|chemical eng|nanotech|"
        r"technology management|manufactur|\bcs\b|\bmeng\b|\bm tech\b|\bmtech\b|systems design|embedded|"
        r"renewable energy|energy systems|sustainable energy|construction|transport|architecture engineering|"
        r"tecnolog|technolog",
    ),
    (
        NAT,
        r"physic|fisica|physique|chemistry|chemie|quimica|chimie|mathemat|matematic|\bmath|geolog|geoscien|"
        r"earth scien|earth system|ocean|marine scien|environmental scien|environment and|climate|astronom|"
        r"astrophys|materials scien|geograph|geophys|natural scien|meteorolog|hydrolog",
    ),
    (
        LIFE,
        r"medic|medizin|clinical|public health|global health|health|saude|salud|sante|nurs|pharma|"
        r"biolog|biotech|bioinformatic|biomedic|biochem|biolo|life scien|neuroscien|psycholog|dentist|"
        r"veterinar|agricult|agro|agronom|food scien|nutrition|epidemiolog|genetic|immunolog|anatomy|"
        r"physiotherap|forestry|ecology|zoolog|botan|molecular|microbio|pathology|surgery|mph\b",
    ),
    (
        SOC,
        r"business|mba\b|m b a|management|manage|administra|economi|econometr|wirtschaft|financ|account|"
        r"marketing|\blaw\b|\blaws\b|llm\b|legal|derecho|direito|droit|\brecht\b|jurisprud|international relations|"
        r"politic|policy|public admin|governance|sociolog|anthropolog|education|educacion|educacao|"
        r"pedagog|teaching|development studies|international development|development economics|communication|"
        r"journalism|media|statistic|operations research|social work|social scien|human resource|supply chain|logistic|"
        r"entrepreneur|hospitality|tourism|\bsports?\b|library|urban planning|planning|diplomacy|criminolog|"
        r"gender studies|migration|demograph|commerce|banking|actuar|analytics",  # not an axis: subject names
    ),
    (
        ARTS,
        r"histor|philosoph|filosof|literat|linguist|language|languages|translation|english|french|spanish|"
        r"german studies|classics|archaeolog|theolog|religio|\bart\b|\barts\b|fine art|design|music|theatre|"
        r"theater|film|performing|architecture|arquitetura|arquitectura|humanities|cultural studies|"
        r"creative writing|curat|museum|heritage|letras|lettres",
    ),
]
# the same subjects in the prompt languages of issue 35 (French, Spanish, Portuguese, German written in Latin
# script; Arabic, Hindi and Chinese in their own, which have no word boundaries to anchor on): keywords matched
# inside the folded program text, each folded as the text is (accents and marks removed)
_RULES_OTHER_LANGUAGES: dict[str, tuple[str, ...]] = {
    ENG: (
        "informatiq",
        "computacao",
        "computacion",
        "genie",
        "maschinenbau",
        "elektrotechnik",
        "ciencia de datos",
        "ciencias de datos",
        "science des donnees",
        "ciencia de dados",
        "datenwissenschaft",
        "inteligencia artificial",
        "intelligence artificielle",
        "kunstliche intelligenz",
        "计算机",
        "電腦",
        "软件",
        "軟體",
        "工程",
        "电子",
        "電子",
        "人工智能",
        "人工智慧",
        "数据科学",
        "數據科學",
        "大数据",
        "信息技术",
        "資訊",
        "自动化",
        "機械",
        "机械",
        "土木",
        "电气",
        "電機",
        "通信",
        "هندسة",
        "حاسوب",
        "الحاسب",
        "الذكاء الاصطناعي",
        "برمجيات",
        "تقنية المعلومات",
        "تكنولوجيا",
        "علم البيانات",
        "इंजीनियरिंग",
        "अभियांत्रिकी",
        "कंप्यूटर",
        "सॉफ्टवेयर",
        "कृत्रिम बुद्धिमत्ता",
        "डेटा विज्ञान",
        "सूचना प्रौद्योगिकी",
        "प्रौद्योगिकी",
        "luft und raumfahrt",
        "raumfahrt",
        "verfahrenstechnik",
        "डेटा साइंस",
        "الحاسبات",
    ),
    NAT: (
        "physik",
        "umwelt",
        "medio ambiente",
        "meio ambiente",
        "environnement",
        "ambiental",
        "物理",
        "化学",
        "化學",
        "数学",
        "數學",
        "地理",
        "地质",
        "地質",
        "天文",
        "环境科学",
        "環境科學",
        "فيزياء",
        "كيمياء",
        "رياضيات",
        "جيولوجيا",
        "علوم البيئة",
        "भौतिकी",
        "रसायन",
        "गणित",
        "भूविज्ञान",
        "पर्यावरण",
        "sciences de la terre",
        "planet",
        "geowissenschaft",
        "erdwissenschaft",
    ),
    LIFE: (
        "medecin",
        "enfermeria",
        "infirmier",
        "pflege",
        "psicolog",
        "farmac",
        "odontolog",
        "医学",
        "醫學",
        "医疗",
        "醫療",
        "公共卫生",
        "公共衛生",
        "护理",
        "護理",
        "药学",
        "藥學",
        "生物",
        "生命科学",
        "心理",
        "الطب",
        "طب بشري",
        "الصحة",
        "صحة عامة",
        "تمريض",
        "صيدلة",
        "أحياء",
        "علم النفس",
        "चिकित्सा",
        "स्वास्थ्य",
        "नर्सिंग",
        "फार्मेसी",
        "जीव विज्ञान",
        "मनोविज्ञान",
        "enfermagem",
        "agrarwissenschaft",
        "صيدلان",
        "प्राणी विज्ञान",
        "प्राणिविज्ञान",
    ),
    SOC: (
        "gestion",
        "gestao",
        "negocios",
        "comercio",
        "finanz",
        "contab",
        "comptab",
        "mercadotecnia",
        "politiq",
        "politica",
        "politik",
        "relations internationales",
        "relaciones internacionales",
        "relacoes internacionais",
        "internationale beziehungen",
        "estadistic",
        "statistiq",
        "estatistic",
        "statistik",
        "padagog",
        "periodismo",
        "jornalismo",
        "comunica",
        "turismo",
        "rechtswissenschaft",
        "经济",
        "經濟",
        "金融",
        "管理",
        "会计",
        "會計",
        "市场营销",
        "法学",
        "法學",
        "法律",
        "国际关系",
        "國際關係",
        "政治",
        "教育",
        "社会学",
        "社會學",
        "统计",
        "統計",
        "新闻",
        "新聞",
        "传播",
        "傳播",
        "اقتصاد",
        "إدارة",
        "ادارة",
        "أعمال",
        "مالية",
        "محاسبة",
        "تسويق",
        "قانون",
        "حقوق",
        "علاقات دولية",
        "العلوم السياسية",
        "تعليم",
        "التربية",
        "علم الاجتماع",
        "إحصاء",
        "صحافة",
        "إعلام",
        "अर्थशास्त्र",
        "प्रबंधन",
        "व्यवसाय",
        "वित्त",
        "लेखा",
        "विपणन",
        "कानून",
        "अंतरराष्ट्रीय संबंध",
        "राजनीति",
        "शिक्षा",
        "समाजशास्त्र",
        "सांख्यिकी",
        "पत्रकारिता",
        "soziolog",
        "विधि",
        "एलएल.एम",
    ),
    ARTS: (
        "histoire",
        "geschicht",
        "musique",
        "architektur",
        "traduc",
        "ubersetz",
        "bellas artes",
        "beaux arts",
        "artes",
        "kunst",
        "diseno",
        "历史",
        "歷史",
        "哲学",
        "哲學",
        "文学",
        "文學",
        "语言",
        "語言",
        "翻译",
        "翻譯",
        "艺术",
        "藝術",
        "设计",
        "設計",
        "音乐",
        "音樂",
        "建筑",
        "建築",
        "تاريخ",
        "فلسفة",
        "أدب",
        "الأدب",
        "لغويات",
        "اللغة",
        "ترجمة",
        "فنون",
        "تصميم",
        "موسيقى",
        "عمارة",
        "इतिहास",
        "दर्शनशास्त्र",
        "साहित्य",
        "भाषा",
        "अनुवाद",
        "कला",
        "डिज़ाइन",
        "संगीत",
        "वास्तुकला",
        "germanistik",
        "anglistik",
        "romanistik",
        "الدراسات الإسلامية",
        "دراسات إسلامية",
    ),
}


def _keyword(word: str) -> str:
    """One keyword as a pattern: folded; a Latin-script one anchored at a word's start ("gestion", not
    "digestion"), one of a script without word spaces anywhere."""
    folded = re.escape(_fold(word))
    return rf"\b{folded}" if word.isascii() else folded


_RULES = [(area, pat + "|" + "|".join(_keyword(w) for w in _RULES_OTHER_LANGUAGES[area])) for area, pat in _RULES]
_COMPILED = [(area, re.compile(pat)) for area, pat in _RULES]
# terms that tag an area only when no other area is matched ("Food Technology" is not ENG,
# "Mechanical Design" is not ARTS, "Business Analytics" is not only analytics)
_WEAK = re.compile(
    r"^(design|analytics|technolog|tecnolog|management|manage|planning|media|language|diseno|gestion|gestao|"
    + "|".join(
        re.escape(_fold(w))
        for w in ("管理", "设计", "設計", "प्रौद्योगिकी", "تكنولوجيا", "إدارة", "ادارة", "प्रबंधन", "تصميم")
    )
    + r")$"
)


_PUNCT = re.compile(r"[^\w\u0900-\u0dff]+")


# chemical engineering in other languages reads as engineering only, as the English "chemical engineering" does
# (not chemistry too): rewritten to the English words before the areas are matched
_CHEMICAL_ENGINEERING = re.compile(
    r"\b(?:engenharia|ingenieria|ingegneria|genie) (?:de |dos |des )?(?:quimica|chimique|chimica|procedes)\b|"
    r"\bchemieingenieur\w*|\bchemische verfahrenstechnik|化学工程|化學工程"
)


def tag_rules(program: Optional[str]) -> tuple[str, ...]:
    """Deterministic keyword tagger over the folded program text; () when nothing matches."""
    if not program or (isinstance(program, float) and program != program):
        return ()
    # punctuation to spaces; the vowel signs of the Indic scripts are kept (they are not \w)
    text = " " + _PUNCT.sub(" ", _fold(program).replace("&", " and ")) + " "
    text = _CHEMICAL_ENGINEERING.sub(" chemical engineering ", text)
    strong, weak = set(), set()
    for area, pat in _COMPILED:
        terms = {m.group(0).strip() for m in pat.finditer(text)}
        if not terms:
            continue
        (weak if all(_WEAK.match(t) for t in terms) else strong).add(area)
    found = strong or weak
    return tuple(a for a in QS_AREAS if a in found)


def load_overrides(path: str | Path) -> dict[str, tuple[str, ...]]:
    """Reviewed overrides: CSV ``program,areas[,note]`` with areas separated by ``;``."""
    out: dict[str, tuple[str, ...]] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        for lineno, row in enumerate(csv.DictReader(fh), start=2):
            program = (row.get("program") or "").strip()
            areas = tuple(a.strip() for a in (row.get("areas") or "").split(";") if a.strip())
            bad = [a for a in areas if a not in QS_AREAS]
            if not program or bad:
                raise ValueError(f"{path}: line {lineno}: need a program and areas among {list(QS_AREAS)}; got {row!r}")
            out[normalize_program(program)] = tuple(a for a in QS_AREAS if a in areas)
    return out


# ----------------------------------------------------------------------------- LLM few-shot tagger
FEW_SHOT_EXAMPLES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Biomedical Engineering", (ENG, LIFE)),
    ("MSc Computer Science", (ENG,)),
    ("Master of Public Health", (LIFE,)),
    ("MA in History", (ARTS,)),
    ("MSc Physics", (NAT,)),
    ("MBA", (SOC,)),
)


def few_shot_prompt(program: str) -> list[dict]:
    """A few-shot chat (system instruction, example turns, the program) asking for the QS areas."""
    messages = [
        {
            "role": "system",
            "content": (
                "You classify Master's programs into the QS broad subject areas: " + "; ".join(QS_AREAS) + ". "
                "Answer with a JSON list holding the one area the program belongs to, or two when it is clearly "
                "interdisciplinary, and nothing else."
            ),
        }
    ]
    for name, areas in FEW_SHOT_EXAMPLES:
        messages += [{"role": "user", "content": name}, {"role": "assistant", "content": json.dumps(list(areas))}]
    messages.append({"role": "user", "content": program})
    return messages


_AREA_ALIASES = {_fold(a): a for a in QS_AREAS} | {
    "arts and humanities": ARTS,
    "humanities": ARTS,
    "engineering and technology": ENG,
    "engineering": ENG,
    "technology": ENG,
    "life sciences and medicine": LIFE,
    "life sciences": LIFE,
    "medicine": LIFE,
    "natural sciences": NAT,
    "natural science": NAT,
    "social sciences and management": SOC,
    "social sciences": SOC,
    "management": SOC,
}


def parse_llm_tags(text: Optional[str]) -> Optional[tuple[str, ...]]:
    """QS areas named in an LLM answer, or None when it names none (never raises)."""
    if not isinstance(text, str) or not text.strip():
        return None
    head = text.strip().split("\n\nProgram:")[0]
    found = set()
    m = re.search(r"\[[^\]]*\]", head)
    if m:
        try:
            for a in json.loads(m.group(0)):
                key = _fold(str(a)).replace("&", "and").strip()
                if key in _AREA_ALIASES:
                    found.add(_AREA_ALIASES[key])
        except ValueError:
            pass
    if not found:
        folded = _fold(head).replace("&", "and")
        for a in QS_AREAS:
            if _fold(a).replace("&", "and") in folded:
                found.add(a)
    return tuple(a for a in QS_AREAS if a in found) or None
