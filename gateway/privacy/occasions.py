"""Writing for a person's own occasion: a birthday card, a eulogy, a retirement or farewell
speech, condolences, a thank-you note, a wedding toast, a reference letter, in the 13 languages
our users write (en zh de fr es ja ko pt it nl ru hi ar).

Such a request is written for someone of the sender's life, so a name near it is a private
person's (the bare-name policy in docs/privacy.md): "write a birthday card for Anja Köhler",
"Glückwunschkarte für unseren Hausmeister Dragan Stojanović", "悼词 ... 王建国". A public figure
(gateway/privacy/figures.py), a template's placeholder and a story's characters are told apart
before this counts (gateway/privacy/free_text.py).
"""

import functools

from gateway.privacy.gated import after_words, gated, in_script

OCCASION = gated(
    after_words(
        r"(?i)\b(?:birthday (?:card|poem|message|wish(?:es)?|note|speech|toast)|eulog(?:y|ies)|obituary"
        r"|condolences?|sympathy (?:card|note|message)|get[- ]well (?:card|message|soon)|retirement"
        r"|farewell|leaving (?:card|speech|do)|wedding (?:toast|speech)|best man'?s? speech|toast for"
        r"|thank[- ]you (?:note|card|letter|message)|reference letter|letter of (?:recommendation|reference)"
        r"|recommendation letter|congratulat\w*|tribute to|in memory of|memorial (?:speech|service))\b",
        "birthday eulog obituar condolence sympathy well retirement farewell leaving wedding best toast"
        " thank reference recommendation congratulat tribute memory memorial",
    ),
    after_words(
        r"(?i)\b(?:glückwunsch\w*|geburtstags(?:karte|gedicht|rede|gruß|grüße|wünsche)|trauerrede|nachruf"
        r"|beileid\w*|kondolenz\w*|abschieds(?:rede|karte|feier|brief)|ruhestand|in rente|hochzeitsrede"
        r"|dankes(?:karte|brief|rede)|genesungswünsche|empfehlungsschreiben|laudatio|jubiläum)",
        "glückwunsch geburtstags trauerrede nachruf beileid kondolenz abschieds ruhestand rente"
        " hochzeitsrede dankes genesungs empfehlungs laudatio jubiläum",
    ),
    after_words(
        r"(?i)\b(?:carte d'anniversaire|joyeux anniversaire|éloge funèbre|condoléances|discours de (?:départ"
        r"|mariage|retraite)|pot de départ|départ à la retraite|mot de remerciement|lettre de recommandation"
        r"|hommage à|faire-part)",
        "anniversaire funèbre condoléances discours départ retraite remerciement recommandation hommage"
        " faire-part",
    ),
    after_words(
        r"(?i)\b(?:felicitaci[oó]n|tarjeta de cumpleaños|feliz cumpleaños|elogio fúnebre|pésame|condolencias"
        r"|jubilaci[oó]n|discurso de (?:despedida|boda|jubilaci[oó]n)|carta de recomendaci[oó]n"
        r"|homenaje a|cartão de aniversário|feliz aniversário|parabéns|condolências|pêsames"
        r"|aposentadoria|aposentar|texto de despedida|discurso de casamento|carta de recomendação"
        r"|homenagem)",
        "felicitaci cumpleaños fúnebre pésame pêsames condolencias condolências jubilaci discurso"
        " recomenda homenaje homenagem aniversário parabéns aposenta despedida",
    ),
    after_words(
        r"(?i)\b(?:biglietto d'auguri|buon compleanno|auguri di compleanno|elogio funebre|condoglianze"
        r"|pensionamento|discorso di (?:addio|nozze|pensionamento)|festa d'addio|lettera di raccomandazione"
        r"|verjaardagskaart|gefeliciteerd|felicitatie\w*|afscheids(?:speech|toespraak|kaart|cadeau)"
        r"|met pensioen|condoleance\w*|rouwkaart|bruiloftstoespraak|aanbevelingsbrief|bedankkaart)",
        "auguri compleanno funebre condoglianze pensionamento discorso addio raccomandazione verjaardag"
        " gefeliciteerd felicitatie afscheids pensioen condoleance rouwkaart bruiloft aanbeveling bedank",
    ),
    in_script(
        r"(?i)(?:поздравлени|поздравить|с днём рождения|с днем рождения|открытк|некролог|соболезновани"
        r"|прощальн|на пенсию|юбиле|надгробн|рекомендательное письмо|благодарственное письмо)",
        "cyrillic",
    ),
    in_script(
        r"生日贺卡|生日祝福|生日快乐|贺卡|祝福语|悼词|讣告|慰问信|退休|欢送|告别会|婚礼致辞|推荐信|感谢信|寿宴"
        r"|誕生日カード|お誕生日|弔辞|追悼|お悔やみ|退職祝|送別|結婚式のスピーチ|推薦状|お礼状|還暦",
        "han",
        "kana",
    ),
    in_script(r"생일 ?카드|생일 ?축하|추도사|조의|애도|은퇴|퇴임|송별|축사|추천서|감사 ?편지", "hangul"),
    in_script(
        r"जन्मदिन|बधाई|श्रद्धांजलि|शोक ?संदेश|सेवानिवृत्ति|रिटायरमेंट|विदाई|सिफारिश पत्र|धन्यवाद पत्र",
        "devanagari",
    ),
    in_script(
        r"عيد ميلاد|تهنئة|تأبين|رثاء|تعزية|العزاء|تقاعد|وداع|خطاب توصية|رسالة شكر|حفل زفاف",
        "arabic",
    ),
)

OCCASION_REACH = 400  # characters between an occasion's word and the name it counts for


def for_an_occasion(text: str, people: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """`people` with each name or titled name near an occasion's word anchored (the words are
    looked for only around the names: a long prompt with one name costs a few hundred characters)."""
    people = list(people)
    for index, (start, end, how) in enumerate(people):
        if how not in ("name", "title"):
            continue
        window = text[max(0, start - OCCASION_REACH) : end + OCCASION_REACH]
        if _near_an_occasion(window):
            people[index] = (start, end, "anchored")
    return people


@functools.lru_cache(maxsize=64)  # names near each other share their window's text
def _near_an_occasion(window: str) -> bool:
    return OCCASION.search(window) is not None
