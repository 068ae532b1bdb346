"""A seeded generator of labelled privacy cases: identifiers made by Faker and python-stdnum in
every form people write them (spaced, dashed, split over lines or by words, other scripts'
digits, full width, spelled out, obfuscated e-mail), each set in a sentence of one of seven
languages. `positives()` -> [(kind, language, text)]; `near_misses()` -> [(kind, language, text)]."""

import random

from faker import Faker
from stdnum import luhn, verhoeff
from stdnum.jp import in_ as my_number
from stdnum.kr import rrn

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
PHONES = {  # realistic national forms (Faker's are not all dialable)
    "CN": ["1{a}{d1} {d4} {e4}", "1{a}{d1}-{d4}-{e4}", "1{a}{d1}{d4}{e4}", "+86 1{a}{d1} {d4} {e4}", "010-{d4}{e4}"],
    "JP": ["090-{d4}-{e4}", "03-{d4}-{e4}", "+81 90 {d4} {e4}", "080 {d4} {e4}"],
    "KR": ["010-{d4}-{e4}", "02-{d3}-{d4}", "+82 10 {d4} {e4}", "010 {d4} {e4}"],
    "DE": ["030 {d4}{e4}", "0151 {d4}{e4}", "+49 30 {d4}{e4}", "030/{d4}{d3}", "0176-{d4}{d3}"],
    "FR": ["01 {d2} {d2} {d2} {d2}", "06 {d2} {d2} {d2} {d2}", "+33 6 {d2} {d2} {d2} {d2}", "07.{d2}.{d2}.{d2}.{d2}"],
    "GB": ["07700 900{d3}", "020 7946 0{d3}", "+44 7700 900{d3}", "0161 496 0{d3}"],
    "US": ["(415) 555-{d4}", "212-{d3}-{d4}", "+1 646 {d3} {d4}", "617.{d3}.{d4}"],
    "IN": ["98765 {d2}{d3}", "+91 98{d3} {d2}{d3}", "022 {d4} {e4}"],
}  # fmt: skip
PHONE_WORDS = {
    "en": "call",
    "zh": "电话",
    "de": "Telefon",
    "fr": "tél.",
    "es": "teléfono",
    "ja": "電話",
    "ko": "전화",
}
DIGIT_SCRIPTS = {"arabic-indic": 0x0660, "devanagari": 0x0966, "full-width": 0xFF10, "bengali": 0x09E6}
SPELLED = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
FILLERS = [" then ", " and ", " und ", " puis ", " y ", "然后", " next "]
EMAIL_FORMS = [
    lambda u, d: f"{u}@{d}",
    lambda u, d: f"{u} at {d.replace('.', ' dot ')}",
    lambda u, d: f"{u.replace('.', ' dot ')} at {d.replace('.', ' dot ')}",
    lambda u, d: f"{u}[at]{d.replace('.', '[dot]')}",
    lambda u, d: f"{u} (at) {d.replace('.', ' (dot) ')}",
    lambda u, d: f"{u}&#64;{d}",
    lambda u, d: f"{u}%40{d}",
    lambda u, d: f"{u} [at] {d}",
    lambda u, d: f"{u}＠{d}",
    lambda u, d: f"{u}{{at}}{d.replace('.', '{dot}')}",
]


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789") for _ in range(n))


def _script(text: str, base: int) -> str:
    return "".join(chr(base + int(c)) if c.isdigit() else c for c in text)


def _groups(number: str, size: int = 4) -> list[str]:
    return [number[i : i + size] for i in range(0, len(number), size)]


def _dress_number(rng: random.Random, number: str, form: str) -> str:
    """A long number (card, IBAN digits) written in one of the forms people use."""
    groups = _groups(number)
    if form == "spaced":
        return " ".join(groups)
    if form == "dashed":
        return "-".join(groups)
    if form == "two lines":
        half = len(groups) // 2
        return " ".join(groups[:half]) + "\n" + " ".join(groups[half:])
    if form == "words":
        return rng.choice(FILLERS).join(groups)
    if form == "en-dash":
        return "–".join(groups)
    if form == "underscores":
        return "_".join(groups)
    if form == "zero-width":
        return "\u200b".join(groups)
    if form == "spelled":
        return " ".join(SPELLED[int(c)] for c in number)
    if form in DIGIT_SCRIPTS:
        return _script(" ".join(groups), DIGIT_SCRIPTS[form])
    return number


CARD_FORMS = [
    "plain",
    "spaced",
    "dashed",
    "two lines",
    "words",
    "en-dash",
    "underscores",
    "zero-width",
    "spelled",
]
CARD_FORMS += list(DIGIT_SCRIPTS)


def _card(fake: Faker) -> str:
    while True:
        number = fake.credit_card_number()
        if 13 <= len(number) <= 19:
            return number


def _rrn(rng: random.Random) -> str:
    """A Korean resident registration number with a real birth date and its check digit."""
    body = f"{rng.randint(50, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{rng.choice('12')}{_digits(rng, 5)}"
    return f"{body[:6]}-{body[6:]}{rrn.calc_check_digit(body)}"


def _aadhaar(rng: random.Random) -> str:
    body = rng.choice("23456789") + _digits(rng, 10)
    return body + verhoeff.calc_check_digit(body)


def _frame(rng: random.Random, language: str, value: str) -> str:
    return rng.choice(FRAMES[language]).format(x=value)


def _phone(rng: random.Random, country: str) -> str:
    pattern = rng.choice(PHONES[country])
    return pattern.format(
        a=rng.choice("3456789"), d1=_digits(rng, 1), d2=_digits(rng, 2), d3=_digits(rng, 3), d4=_digits(rng, 4),
        e4=_digits(rng, 4),
    )  # fmt: skip


def _identifier_cases(rng: random.Random, fakes: dict[str, Faker]) -> list[tuple[str, str, str]]:
    cases = []
    for i in range(40):
        language = LANGUAGES[i % 7]
        form = CARD_FORMS[i % len(CARD_FORMS)]
        cases.append(
            ("card_number", language, _frame(rng, language, _dress_number(rng, _card(fakes["en"]), form)))
        )
        country = list(PHONES)[i % len(PHONES)]
        phone = _phone(rng, country)
        if i % 5 == 4:
            phone = _script(phone, DIGIT_SCRIPTS["full-width"])
        said = f"{PHONE_WORDS[language]} {phone}" if i % 3 == 0 else phone
        cases.append(("phone", language, _frame(rng, language, said)))
        user, domain = (
            fakes[language].user_name(),
            rng.choice(["example.com", "mail.example.org", "beispiel.de"]),
        )
        if i % 3 == 0:
            user = f"{fakes['en'].first_name().lower()}.{fakes['en'].last_name().lower()}"
        cases.append(
            ("email", language, _frame(rng, language, EMAIL_FORMS[i % len(EMAIL_FORMS)](user, domain)))
        )
        iban = fakes[rng.choice(["de", "fr", "es"])].iban()
        spaced = " ".join(_groups(iban))
        iban_form = [
            iban,
            spaced,
            spaced.replace(" ", "\n", 1 + i % 3).replace("\n", " ", i % 2),
            iban.lower(),
        ][i % 4]
        cases.append(("iban", language, _frame(rng, language, iban_form)))
    return cases


def _national_id_cases(rng: random.Random, fakes: dict[str, Faker]) -> list[tuple[str, str, str]]:
    cases = []
    for i in range(25):
        language = LANGUAGES[i % 7]
        cases.append(("cn_resident_id", "zh", f"身份证号{fakes['zh'].ssn()}，请登记"))
        rrn = _rrn(rng)
        cases.append(("kr_rrn", "ko", f"주민등록번호 {rrn if i % 2 else rrn.replace('-', '')} 확인 바랍니다"))
        body = _digits(rng, 11)
        number = body + str(my_number.calc_check_digit(body))
        written = " ".join(_groups(number)) if i % 2 else number
        cases.append(("jp_my_number", "ja", f"マイナンバーは{written}です"))
        cpf = fakes["pt"].cpf()
        cases.append(("br_cpf", "pt", f"Meu CPF é {cpf if i % 2 else cpf.replace('.', '').replace('-', '')}"))
        nir = fakes["fr"].ssn()
        nir_form = (
            f"{nir[0]} {nir[1:3]} {nir[3:5]} {nir[5:7]} {nir[7:10]} {nir[10:13]} {nir[13:]}" if i % 2 else nir
        )
        cases.append(("fr_nir", "fr", f"Mon numéro de sécurité sociale : {nir_form}"))
        bsn = fakes["nl"].ssn()
        bsn_form = [bsn, f"{bsn[:4]}.{bsn[4:6]}.{bsn[6:]}", f"{bsn[:3]} {bsn[3:6]} {bsn[6:]}"][i % 3]
        cases.append(("nl_bsn", "nl", f"BSN {bsn_form}, graag controleren"))
        cases.append(("us_ssn", "en", _frame(rng, "en", f"SSN {fakes['en'].ssn()}")))
        cases.append(("es_dni", "es", f"Mi DNI es {fakes['es'].nif()}"))
        cases.append(("it_fiscal_code", "it", f"Codice fiscale {fakes['it'].ssn()}"))
        aadhaar = _aadhaar(rng)
        cases.append(("in_aadhaar", "en", f"Aadhaar {' '.join(_groups(aadhaar)) if i % 2 else aadhaar}"))
        cases.append(
            (
                "mac_address",
                language,
                _frame(
                    rng, language, fakes["en"].mac_address().upper() if i % 2 else fakes["en"].mac_address()
                ),
            )
        )
        cases.append(
            (
                "ip_address",
                language,
                _frame(
                    rng,
                    language,
                    fakes["en"].ipv4_public() if i % 2 else f"2a0{i % 10}:{fakes['en'].ipv6()[5:]}",
                ),
            )
        )
        passport = fakes["en"].passport_number()
        label = {
            "en": "passport",
            "zh": "护照号码",
            "de": "Reisepass",
            "fr": "passeport",
            "es": "pasaporte",
            "ja": "旅券番号",
            "ko": "여권번호",
        }[language]
        cases.append(("passport", language, _frame(rng, language, f"{label} {passport}")))
    return cases


FREE_TEXT = {  # kind -> language -> templates ({n}: a name of that language's locale)
    "person_health": {
        "en": ["{n} was diagnosed with type 2 diabetes in March.", "Can you summarize {n}'s HIV test results?",
               "{n} is being treated for depression and takes sertraline."],
        "zh": ["{n}上个月被确诊为乳腺癌。", "请总结一下{n}的病情，他患有高血压。", "{n}因抑郁症住院治疗。"],
        "de": ["{n} wurde mit Brustkrebs diagnostiziert.", "{n} leidet an Depressionen und nimmt Medikamente.",
               "Bitte fasse die Befunde von {n} zusammen: Diabetes Typ 2."],
        "fr": ["{n} a été diagnostiqué avec un cancer du poumon.", "{n} souffre d'une dépression sévère.",
               "Résume le dossier de {n}, atteint de diabète."],
        "es": ["{n} fue diagnosticado con cáncer de colon.", "{n} padece diabetes y está en tratamiento.",
               "Resume la historia clínica de {n}, que sufre de depresión."],
        "ja": ["{n}さんは糖尿病と診断されました。", "{n}さんの病歴をまとめてください。うつ病で通院中です。",
               "{n}さんは先月がんの手術を受けました。"],
        "ko": ["{n} 씨는 당뇨병 진단을 받았습니다.", "{n} 님의 병력을 요약해 주세요. 우울증 치료 중입니다.",
               "{n} 환자는 지난달 암 수술을 받았습니다."],
    },
    "person_financial": {
        "en": ["{n}'s salary is $92,000 and she has $30,000 in credit card debt.", "{n} defaulted on his mortgage."],
        "zh": ["{n}的年薪是三十万，还有房贷没还。", "{n}欠款五万元，征信有问题。"],
        "de": ["Das Gehalt von {n} beträgt 5.200 Euro, dazu Schulden beim Kredit.", "{n} hat Insolvenz angemeldet."],
        "fr": ["Le salaire de {n} est de 3 800 euros et il a une dette importante.", "{n} est en faillite personnelle."],
        "es": ["El salario de {n} es de 40.000 euros y tiene una deuda con el banco.", "{n} no paga su hipoteca."],
        "ja": ["{n}さんの年収は600万円で、借金があります。", "{n}さんはローンの返済が滞っています。"],
        "ko": ["{n} 씨의 연봉은 5천만 원이고 대출이 있습니다.", "{n} 님은 파산 신청을 했습니다."],
    },
    "person_employment": {
        "en": ["Write a termination letter for {n}, who was fired for misconduct.", "{n} received a final warning in the performance review."],
        "zh": ["{n}因违纪被开除，请写一份通知。", "{n}的绩效考核不合格，收到警告处分。"],
        "de": ["{n} hat eine Abmahnung erhalten und die Kündigung droht.", "Schreibe die Kündigung für {n}."],
        "fr": ["{n} a été licencié pour faute grave.", "Rédige l'avertissement pour {n} suite au licenciement."],
        "es": ["{n} fue despedido por bajo rendimiento.", "Redacta la carta de despido de {n}."],
        "ja": ["{n}さんは懲戒処分を受けて退職しました。", "{n}さんの人事評価が低く、解雇が検討されています。"],
        "ko": ["{n} 씨는 징계를 받고 해고되었습니다.", "{n} 님의 인사고과 결과와 권고사직 건입니다."],
    },
    "person_birth_date": {
        "en": ["{n}, born on {d}, needs a new card.", "Name: {n}. Date of birth: {d}."],
        "zh": ["{n}，出生日期{dz}。", "{n}出生于{dz}，请登记。"],
        "de": ["{n}, geboren am {d}, wohnhaft in Berlin.", "Name: {n}, Geburtsdatum {d}"],
        "fr": ["{n}, né le {d}, demande un rendez-vous.", "{n} — date de naissance : {d}"],
        "es": ["{n}, nacido el {d}, solicita una cita.", "{n}, fecha de nacimiento {d}"],
        "ja": ["{n}さん、生年月日{dz}。", "{n}さんは{dz}生まれです。"],
        "ko": ["{n} 씨, 생년월일 {dk}.", "{n} 님은 {dk} 출생입니다."],
    },
    "person_address": {
        "en": ["{n} lives at 221 Baker Street, London.", "Send it to {n}, 1600 Pennsylvania Avenue."],
        "zh": ["{n}住在北京市朝阳区建国路88号。", "请把包裹寄给{n}，地址是上海市南京路100号。"],
        "de": ["{n} wohnt in der Hauptstraße 12, 10115 Berlin.", "Bitte an {n}, Lindenallee 5 senden."],
        "fr": ["{n} habite au 12 rue de la Paix, Paris.", "Envoyez-le à {n}, 8 avenue Victor Hugo."],
        "es": ["{n} vive en la Calle Mayor 15, Madrid.", "Envíalo a {n}, Avenida de América 32."],
        "ja": ["{n}さんの住所は東京都千代田区1丁目2番3号です。", "{n}様 大阪市北区3丁目5番地"],
        "ko": ["{n} 씨는 서울시 강남구 테헤란로 123에 삽니다.", "{n} 님 주소: 종로구 세종대로 175"],
    },
}  # fmt: skip


CLINICAL_NOTES = {
    "en": "CC: {c}. HPI: {a} y/o {s} with {d}. BP {bp}, HR {hr}. Plan: {m} {dose} mg daily, follow-up in 2 weeks.",
    "de": "Anamnese: {a}-jähriger Patient, {d}. Befund: RR {bp} mmHg, Puls {hr}. Therapie: {m} {dose} mg täglich.",
    "fr": "Motif de consultation : {c}. Antécédents : {d}. Examen clinique : TA {bp} mmHg. Traitement : {m} {dose} mg.",
    "es": "Motivo de consulta: {c}. Antecedentes: {d}. Exploración física: TA {bp} mmHg. Tratamiento: {m} {dose} mg.",
    "zh": "主诉：{c}。现病史：患者{a}岁男，{d}。血压{bp}mmHg。诊断：{d}。医嘱：{m} {dose} mg。",
    "ja": "主訴：{c}。現病歴：{a}歳女性、{d}。血圧{bp}mmHg。処方：{m} {dose} mg。",
    "ko": "주호소: {c}. 현병력: {a}세 남성, {d}. 혈압 {bp} mmHg. 처방: {m} {dose} mg. 경과 관찰",
}
COMPLAINTS = ["chest pain", "shortness of breath", "fever", "headache", "abdominal pain"]
DIAGNOSES = ["hypertension", "type 2 diabetes", "COPD", "atrial fibrillation", "pneumonia"]
DRUGS = ["metformin", "lisinopril", "amlodipine", "furosemide", "atorvastatin"]


def _clinical_cases(rng: random.Random) -> list[tuple[str, str, str]]:
    cases = []
    for i in range(28):
        language = LANGUAGES[i % 7]
        note = CLINICAL_NOTES[language].format(
            c=rng.choice(COMPLAINTS), a=rng.randint(20, 90), s=rng.choice("MF"), d=rng.choice(DIAGNOSES),
            bp=f"{rng.randint(100, 190)}/{rng.randint(60, 110)}", hr=rng.randint(50, 130), m=rng.choice(DRUGS),
            dose=rng.choice([5, 10, 20, 40, 500]),
        )  # fmt: skip
        cases.append(("clinical_note", language, note))
        label = [
            "MRN",
            "Medical record number",
            "Patientennummer",
            "N° de dossier",
            "病历号",
            "カルテ番号",
            "환자번호",
        ][i % 7]
        cases.append(
            ("medical_record_number", language, _frame(rng, language, f"{label}: {_digits(rng, 8)}"))
        )
    return cases


def _free_text_cases(rng: random.Random, fakes: dict[str, Faker]) -> list[tuple[str, str, str]]:
    cases = []
    for kind, by_language in FREE_TEXT.items():
        for language, templates in by_language.items():
            for i in range(5):
                fake = fakes[language]
                name = fake.name() if language not in ("ko", "ja") else fake.last_name() + fake.first_name()
                birth = fake.date_of_birth(minimum_age=18, maximum_age=90)
                text = templates[i % len(templates)].format(
                    n=name, d=birth.strftime("%d.%m.%Y" if language in ("de", "fr", "es") else "%m/%d/%Y"),
                    dz=f"{birth.year}年{birth.month}月{birth.day}日", dk=f"{birth.year}년 {birth.month}월 {birth.day}일",
                )  # fmt: skip
                cases.append((kind, language, text))
    return cases


def fakes_for(seed: int) -> dict[str, Faker]:
    locales = {**LOCALE, "pt": "pt_BR", "nl": "nl_NL", "it": "it_IT", "in": "en_IN"}
    fakes = {}
    for language, locale in locales.items():
        fakes[language] = Faker(locale)
        fakes[language].seed_instance(seed)
    return fakes


def positives(seed: int = 20261206) -> list[tuple[str, str, str]]:
    rng, fakes = random.Random(seed), fakes_for(seed)
    cases = _identifier_cases(rng, fakes) + _national_id_cases(rng, fakes) + _free_text_cases(rng, fakes)
    return cases + _clinical_cases(rng)


def near_misses(seed: int = 20261206) -> list[tuple[str, str, str]]:
    """Numbers and texts that look like personal data and are not."""
    rng, fake = random.Random(seed), fakes_for(seed)["en"]
    cases = []
    for i in range(20):
        language = LANGUAGES[i % 7]
        cases.append(("order_number", language, _frame(rng, language, f"order #{_digits(rng, 9)}")))
        cases.append(("isbn", language, _frame(rng, language, f"ISBN {fake.isbn13()}")))
        cases.append(
            (
                "version",
                language,
                _frame(
                    rng, language, f"version {rng.randint(1, 30)}.{rng.randint(0, 20)}.{rng.randint(0, 99)}"
                ),
            )
        )
        cases.append(("uuid", language, _frame(rng, language, fake.uuid4())))
        cases.append(("git_sha", language, _frame(rng, language, f"commit {fake.sha1()}")))
        cases.append(
            (
                "private_ip",
                language,
                _frame(
                    rng,
                    language,
                    rng.choice(
                        [
                            f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
                            f"192.168.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
                            "127.0.0.1",
                            f"172.16.{rng.randint(0, 255)}.1",
                        ]
                    ),
                ),
            )
        )
        cases.append(("date", language, _frame(rng, language, fake.date())))
        bad_card = _card(fake)
        bad_card = bad_card[:-1] + next(d for d in "0123456789" if not luhn.is_valid(bad_card[:-1] + d))
        cases.append(("bad_luhn", language, _frame(rng, language, " ".join(_groups(bad_card)))))
        cases.append(
            (
                "price",
                language,
                _frame(rng, language, f"{rng.randint(1, 99999):,}.{rng.randint(0, 99):02d} USD"),
            )
        )
        cases.append(
            ("timestamp", language, _frame(rng, language, str(rng.randint(1_600_000_000, 1_800_000_000))))
        )
    return cases
