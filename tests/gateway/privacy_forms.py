"""The sentences and small helpers the seeded privacy cases share: seven languages, each with its
Faker locale and a few frames a value is set in."""

import random

LANGUAGES = ("en", "zh", "de", "fr", "es", "ja", "ko")
LOCALE = {
    "en": "en_US",
    "zh": "zh_CN",
    "de": "de_DE",
    "fr": "fr_FR",
    "es": "es_ES",
    "ja": "ja_JP",
    "ko": "ko_KR",
}
FRAMES = {
    "en": ["Please check this: {x}.", "Here it is - {x} - thanks.", "Update the file with {x} today"],
    "zh": ["请帮我核对一下：{x}。", "信息如下{x}，谢谢", "这是我的资料 {x}"],
    "de": ["Bitte prüfen: {x}.", "Hier ist es: {x}, danke.", "Die Angabe lautet {x}"],
    "fr": ["Merci de vérifier : {x}.", "Voici : {x}, merci.", "L'information est {x}"],
    "es": ["Por favor, revisa: {x}.", "Aquí está: {x}, gracias.", "El dato es {x}"],
    "ja": ["確認をお願いします：{x}。", "こちらです{x}よろしく", "情報は {x} です"],
    "ko": ["확인 부탁드립니다: {x}.", "여기 있습니다 {x} 감사합니다", "정보는 {x} 입니다"],
}


def digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789") for _ in range(n))


def frame(rng: random.Random, language: str, value: str) -> str:
    return rng.choice(FRAMES[language]).format(x=value)
