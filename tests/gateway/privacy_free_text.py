"""Seeded free-text privacy cases: a named person with health, financial, employment or identity
details, a birth date or an address, in seven languages (names from each language's Faker
locale), and clinical notes; used by tests/gateway/privacy_generator.py."""

import random

from faker import Faker

from tests.gateway.privacy_forms import LANGUAGES, digits, frame

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


def clinical_cases(rng: random.Random) -> list[tuple[str, str, str]]:
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
        cases.append(("medical_record_number", language, frame(rng, language, f"{label}: {digits(rng, 8)}")))
    return cases


def free_text_cases(rng: random.Random, fakes: dict[str, Faker]) -> list[tuple[str, str, str]]:
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
