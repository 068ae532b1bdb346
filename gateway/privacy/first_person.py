"""First-person disclosure in the 13 languages: the sender speaking of themselves ("I was
diagnosed", "I owe", "bei mir wurde", "on m'a", "у меня", "मुझ पर", "عليّ", "我欠", and the
pronoun-less forms of Japanese and Korean: "診断されました", "返せません", "진단받았어요").

A match is a person reference (gateway/privacy/names.py, how "first_person"); it is personal
data only with a sensitive detail near it (gateway/privacy/free_text.py), which may lie inside
the match itself ("me diagnosticaron", "мне поставили диагноз"). Pronouns and verb forms that
ask for information ("I want to know", "ich möchte wissen") are left out: a topic question
names no one.
"""

from gateway.privacy.alternation import alternation
from gateway.privacy.gated import after_words, gated, in_script

_EN = (
    r"i(?:'m| am| was| have| had|'ve|'d| got| suffer| tested| take| relapsed| feel| lost| owe| owed"
    r"| can't| cannot| couldn't| drink| smoke| fell| missed| filed| went| just| recently| still| keep"
    r"| started| stopped| failed| haven't| didn't| don't| found out| struggle| used to| self-harm)"
    r"|my (?:diagnos|doctor|salary|debt|therap|medication|test result|loan|mortgage|boss|manager|employer"
    r"|psychiatr|account|bank|card|record|case|court|lawyer|solicitor|divorce|credit|rent|pay|landlord"
    r"|condition|illness|addiction|drinking|health|visa|immigration|arrest|conviction|grades|school)"
    r"|(?:told|gave|diagnosed|fired|arrested|charged|evicted) me"
)
_DE = (
    r"ich (?:habe|hatte|bin|war|wurde|leide|nehme|trinke|schulde|muss|kann nicht|komme nicht)"
    r"|mein(?:e|en|em)? (?:diagnose|gehalt|arzt|ärztin|therapie|schulden|anwalt|konto|kredit|miete)"
    r"|bei mir|mir wurde|mich (?:hat|haben)"
)
_FR = (
    r"j'ai|j'avais|j'étais|je suis|je souffre|je dois|je bois|je prends|je n'arrive|on m'a|m'a diagnostiqué"
    r"|mon (?:salaire|médecin|diagnostic|avocat|compte|crédit|prêt)|ma (?:maladie|dette)|mes dettes"
)
_ES = (
    r"tengo|estoy|estaba|sufro|padezco|debo|me (?:diagnosticaron|despidieron|detectaron|operaron|echaron"
    r"|arrestaron|detuvieron)|mi (?:salario|sueldo|diagnóstico|médico|abogado|deuda|préstamo)|mis deudas"
)
_PT = (
    r"eu (?:tenho|estou|fui|sou)|estou|tenho|sofro|devo|fui (?:diagnosticad[oa]|demitid[oa]|pres[oa])"
    r"|me (?:diagnosticaram|demitiram)|meu (?:salário|médico|diagnóstico|advogado)|minhas? (?:doença|dívida)"
)
_IT = (
    r"(?:io )?(?:sono stat[oa]|soffro|ho (?:debiti|un debito|il|la|una|un|avuto|paura))"
    r"|mi (?:hanno|è stat[oa])|il mio (?:stipendio|medico|avvocato|debito)|la mia (?:malattia|diagnosi)"
    r"|i miei debiti|devo"
)
_NL = (
    r"ik (?:ben|heb|had|lijd|werd|moet|kan niet|drink)|bij mij|mij is|heb ik|ben ik"
    r"|mijn (?:salaris|arts|diagnose|therapeut|schuld|advocaat|huur)"
)


def _branches(pattern: str) -> list[str]:
    """The top-level branches of an alternation ("a|b(?:c|d)" -> ["a", "b(?:c|d)"])."""
    branches, depth, start = [], 0, 0
    for at, char in enumerate(pattern):
        depth += (char == "(") - (char == ")")
        if char == "|" and depth == 0:
            branches.append(pattern[start:at])
            start = at + 1
    return [*branches, pattern[start:]]


# grouped by first letter (gateway/privacy/alternation.py): one check per word start, not 150
_LATIN_BRANCHES = [branch for part in (_EN, _DE, _FR, _ES, _PT, _IT, _NL) for branch in _branches(part)]
LATIN = after_words(
    rf"(?i)\b{alternation(_LATIN_BRANCHES)}\b",
    "i' i_ my_ told_me gave_me diagnosed_me fired_me arrested_me charged_me evicted_me ich_ mein bei_mir"
    " mir_ mich_ j'a j'é je_ on_m' m'a mon_ ma_ mes_ tengo estoy estaba sufro padezco debo me_ mi_ mis_"
    " eu_ tenho sofro devo fui_ meu_ minha sono_ soffro ho_ mi_ il_mio la_mia"
    " i_miei ik_ bij_mij mij_ heb_ik ben_ik mijn",
)
FIRST_PERSON = gated(
    LATIN,
    in_script(
        # "я" with any word but those of asking ("я хочу узнать", "я изучаю")
        r"(?i)\b(?:я (?!хоч|хотел|интерес|изуча|пиш|чита|дума|ищу|не понимаю)(?=\w)"
        r"|у меня|мне (?:поставили|диагностировали|назначили|нечем)"
        r"|меня (?:уволили|арестовали|задержали|бьёт|бьет|избил)"
        r"|мо[йяёи] (?:врач|диагноз|психотерапевт|долг|долги|зарплата|болезнь|адвокат|кредит))\b",
        "cyrillic",
    ),
    in_script(
        r"(?:أنا|لدي|عندي|عليّ|عليَّ|تم تشخيصي|شخصت|أعاني|اقترضت|راتبي|طبيبي|ديوني|محاميي)(?![\u0600-\u06ff])",
        "arabic",
    ),
    in_script(r"(?:मैं|मुझे|मुझको|मुझ|मेरा|मेरी|मेरे|हमें|हमारा|हमारी)(?![\u0900-\u097f])", "devanagari"),
    in_script(
        r"我(?:被|的|患|得了|有|确诊|怀孕|欠|是|曾|一直|最近|现在|去年|今年|上个月|刚|已经|借|离婚|在吃)"
        r"|私|僕|俺|わたし|と診断され|診断されました|返せ(?:ない|ません)|払えな|払えません|解雇され"
        r"|逮捕され|저는|제가|나는|내가|저희|진단(?:을)? ?받|못 갚|갚을 수 없|해야 할까요",
        "han",
        "kana",
        "hangul",
    ),
)
