"""A name that a possessive and a noun put in the sender's life, whatever the noun: "our caretaker
Dragan Stojanović", "unseren Hausmeister Dragan Stojanović", "Raimunda do Nascimento, nossa copeira",
"мой репетитор Игорь Викторович". The relationship lists (gateway/privacy/person_words.py) name
the usual people; this covers the trades and roles no list holds (nanny, janitor, copeira,
conciërge), in the languages whose possessive stands before the noun. The name must already be
a name (gateway/privacy/names.py); a public figure is told apart before (free_text.py).
"""

import re

_POSSESSIVE = (
    r"my|our|mein(?:e[mnrs]?)?|unser(?:e[mnrs]?)?|mon|ma|mes|notre|nos|mi|mis|nuestr[oa]s?|meu|minha|meus"
    r"|minhas|noss[oa]s?|mio|mia|miei|mie|nostr[oaie]|mijn|onze|ons|мо[йяеёи]|моего|моей|моему|моим|наш[аеи]?"
    r"|нашего|нашей|нашему"
)
# a public office is no one's own ("our president Pedro Sánchez", "unser Kanzler")
_OFFICE = (
    r"president|presidente|président|präsident|prime|premier|chancellor|kanzler|minister|ministre|ministro"
    r"|mayor|bürgermeister|maire|alcalde|sindaco|burgemeester|prefeito|king|queen|rey|reina|roi|reine|re"
    r"|regina|könig|königin|pope|papa|senator|governor|gouverneur|gobernador|президент|премьер|министр|мэр"
    r"|губернатор|канцлер|king's|national|favou?rite|hero|idol"
)
_NOUN = rf"(?!(?:{_OFFICE})\b)[^\W\d_][\w'’-]{{2,24}}"
# the possessive and one noun right before the name ("our caretaker ", "unseren Hausmeister, ")
_BEFORE = re.compile(rf"(?i:(?<![^\W\d_])(?:{_POSSESSIVE})[ \t]+{_NOUN}[ \t]*,?[ \t]*)$")
# or starting a run of capitalized words that names.py read as one name ("Unser Hausmeister Dragan")
_LEADING = re.compile(rf"(?i:(?:{_POSSESSIVE})[ \t]+{_NOUN}[ \t]+)(?=[^\W\d_])")
# or just after it, as an apposition ("Raimunda do Nascimento, nossa copeira")
_AFTER = re.compile(
    rf"[ \t]*,[ \t]*(?:(?:la|il|el|a|o|de|der|die)[ \t]+)?(?i:(?:{_POSSESSIVE})[ \t]+[^\W\d_])"
)
REACH = 40


def possessed(text: str, people: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """`people` with each name a possessive and a noun point at anchored."""
    return [
        (start, end, "anchored")
        if how in ("name", "title")
        and (
            _BEFORE.search(text[max(0, start - REACH) : start])
            or _LEADING.match(text, start, end)
            or _AFTER.match(text, end)
        )
        else (start, end, how)
        for start, end, how in people
    ]
