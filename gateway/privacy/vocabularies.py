"""Sensitive-context vocabularies in English, Chinese, German, French, Spanish, Japanese and
Korean (the other six of our 13 languages, and legal, school and therapy details, are in
gateway/privacy/sensitive_words.py): health, financial, employment and
identity details, the words that say a date is a birth date, and the street words of an address.

Latin-script entries are stems, matched at a word start and case-insensitively ("diagnos" is
diagnosed, diagnosis, diagnostiziert, diagnostiqué, diagnosticado); CJK and Hangul entries are
matched anywhere. Each list names facts about a person, never a topic alone: a question about
diabetes is not private, a named person's diabetes is (gateway/privacy/free_text.py)."""

import re

from gateway.privacy.alternation import alternation
from gateway.privacy.disclosure_words import (
    ABUSE,
    FINANCIAL_DISCLOSED,
    FINANCIAL_ENDINGS,
    HEALTH_DISCLOSED,
    HEALTH_ENDINGS,
    LEGAL_MORE,
    SCHOOL_MORE,
)
from gateway.privacy.sensitive_words import (
    EMPLOYMENT_MORE,
    FINANCIAL_MORE,
    HEALTH_MORE,
    IDENTITY_MORE,
    LEGAL,
    SCHOOL,
    THERAPY,
)

HEALTH = [
    # English
    "diagnos", "hiv", "aids", "cancer", "tumou?r", "carcinom", "leukemi", "leukaemi", "lymphom",
    "diabet", "depress", "schizophren", "bipolar", "psychos", "psychiatr", "autis", "adhd", "dementia",
    "alzheimer", "parkinson", "epilep", "asthma", "copd", "hepatitis", "tubercul", "pregnan",
    "miscarriage", "abortion", "chemotherap", "radiotherap", "dialysis", "transplant", "surgery",
    "operated on", "hospitali[sz]", "admitted to", "discharged from", "prescri", "medication",
    "insulin", "antidepress", "opioid", "overdos", "rehab", "addict", "alcoholi", "suicid", "self-harm",
    "eating disorder", "anorexi", "bulimi", "std", "sti\\b", "syphilis", "chlamydia", "herpes",
    "infertil", "ivf", "stroke", "heart attack", "myocardial", "infarct", "arrhythmi", "hypertensi",
    "blood pressure", "mri", "ct scan", "biopsy", "blood test", "lab result", "test result",
    "positive for", "tested positive", "disabilit", "wheelchair", "therapy", "therapist", "counsel+ing",
    "mental health", "illness", "disease", "condition", "symptom", "allerg", "medical record",
    "health record", "sick leave", "covid", "fracture", "injur", "seizure", "migraine", "obes", "anemi",
    "anaemi", "sclerosis", "arthritis", "lupus", "crohn", "colitis", "glaucoma", "cirrhosis", "kidney",
    "renal", "liver failure", "hiv-positive",
    # German
    "krank", "krebs", "zucker", "depression", "schwanger", "operation", "behandl", "therapie",
    "medikament", "verschrieb", "klinik", "krankenhaus", "befund", "arztbrief", "psychiatrisch",
    "sucht", "herzinfarkt", "schlaganfall", "bluthochdruck", "demenz", "erkrank", "leidet an",
    "leidet unter", "gesundheit",
    # French
    "malad", "diabète", "enceinte", "grossesse", "hospitalis", "traitement", "ordonnance", "médicament",
    "chirurgi", "dépress", "séropositi", "cancer du", "souffre d", "atteint d", "santé",
    # Spanish / Portuguese / Italian
    "enferm", "embaraz", "cáncer", "diabetes", "tratamiento", "receta", "cirugía", "hospitaliz",
    "ingresad", "padece", "sufre de", "salud", "doença", "grávida", "malattia", "incinta", "ricoverat",
    # Chinese
    "诊断", "確診", "确诊", "患有", "患上", "罹患", "病情", "病史", "艾滋", "癌", "肿瘤", "糖尿病",
    "抑郁", "精神分裂", "高血压", "心脏病", "怀孕", "懷孕", "流产", "住院", "手术", "化疗", "处方",
    "服用", "药物", "病历", "病歷", "检查结果", "阳性", "乙肝", "肝炎", "结核", "残疾", "病假", "治疗",
    # Japanese
    "診断", "がん", "糖尿病", "うつ病", "統合失調症", "妊娠", "入院", "手術", "処方", "服用", "持病",
    "病歴", "陽性", "通院", "治療", "障害", "病気",
    # Korean
    "진단", "암", "당뇨", "우울증", "조현병", "임신", "입원", "수술", "처방", "복용", "병력", "양성",
    "치료", "질환", "장애", "병가", "투병",
]  # fmt: skip

FINANCIAL = [
    "salary", "salaries", "income", "earns", "wage", "payslip", "pay slip", "bonus", "debt", "owes",
    "loan", "mortgage", "overdraft", "bankrupt", "insolven", "credit score", "credit rating",
    "credit report", "account balance", "bank account", "bank statement", "tax return", "net worth",
    "inheritance", "alimony", "garnish", "default(?:ed)? on", "arrears", "collections agency", "gehalt",
    "einkommen", "verdien", "schulden", "kredit", "hypothek", "kontostand", "steuererklärung",
    "pfändung", "insolvenz", "salaire", "revenu", "dette", "prêt", "crédit", "découvert", "faillite",
    "solde", "impôt", "salario", "sueldo", "ingresos", "deuda", "préstamo", "hipoteca", "quiebra",
    "saldo", "工资", "薪水", "薪资", "年薪", "月薪", "收入", "欠款", "负债", "贷款", "房贷", "信用记录",
    "征信", "破产", "存款", "余额", "给料", "給料", "年収", "月収", "借金", "ローン", "破産", "残高",
    "預金", "연봉", "월급", "급여", "소득", "빚", "대출", "파산", "신용등급", "잔고", "채무",
]  # fmt: skip

EMPLOYMENT = [
    "fired", "dismiss", "terminated", "termination", "laid off", "layoff", "let go",
    "performance review", "performance improvement", "disciplinary", "written warning", "final warning",
    "misconduct", "grievance", "harass", "resign", "demot", "promot", "probation", "sick note",
    "absence record", "background check", "reference check", "employee id", "personnel file", "hr file",
    "redundan", "gekündigt", "kündigung", "abmahnung", "entlass", "personalakte",
    "leistungsbeurteilung", "licencié", "licenciement", "avertissement", "sanction disciplinaire",
    "démission", "dossier du personnel", "despedid", "despido", "amonestación", "expediente",
    "renuncia", "被解雇", "解雇", "开除", "辞退", "裁员", "警告处分", "绩效", "考核", "离职",
    "人事档案", "懲戒", "退職", "人事評価", "左遷", "해고", "징계", "퇴사", "인사고과", "권고사직",
    "인사기록",
]  # fmt: skip

IDENTITY = [
    "passport", "driver'?s licen", "driving licen", "licence number", "license number", "id card",
    "identity card", "national id", "social security", "date of birth", "place of birth", "nationality",
    "citizenship", "immigration status", "visa status", "asylum", "undocumented", "religio", "ethnicit",
    "sexual orientation", "gay", "lesbian", "transgender", "criminal record", "convict", "arrested",
    "parole", "probation officer", "home address", "lives at", "resides at", "personalausweis",
    "reisepass", "führerschein", "staatsangehörigkeit", "aufenthaltstitel", "vorstrafe", "wohnt in",
    "carte d'identité", "permis de conduire", "nationalité", "casier judiciaire", "titre de séjour",
    "domicilié", "pasaporte", "documento de identidad", "carnet de conducir", "nacionalidad",
    "antecedentes penales", "domicilio", "身份证", "护照", "户籍", "户口", "国籍", "犯罪记录", "住址",
    "家庭住址", "住在", "マイナンバー", "免許証", "在留カード", "国籍", "前科", "住所", "주민등록",
    "여권", "운전면허", "국적", "전과", "주소", "거주",
]  # fmt: skip

BIRTH = [
    "born", "birth", "dob", "d\\.o\\.b", "birthday", "geboren", "geb\\.", "geburts", "née?\\b",
    "naissance", "nacid", "nacimiento", "nato il", "nata il", "出生", "生日", "生年月日", "生まれ",
    "誕生日", "생년월일", "출생", "생일", "태어",
    # Russian "д.р." (дата рождения); the genealogical birth marks of German, Dutch and Belgian
    # records, right before a date ("*11.02.1939", "°1938-03-14")
    "д\\.р\\.", "дата рождения", "[°*](?=\\d)",
]  # fmt: skip

STREET = [
    "street", "st\\.?", "avenue", "ave\\.?", "road", "rd\\.?", "lane", "ln\\.?", "boulevard",
    "blvd\\.?", "drive", "dr\\.?", "court", "ct\\.?", "place", "pl\\.?", "way", "terrace", "ter\\.?",
    "close", "crescent", "square", "sq\\.?", "bend", "circle", "cir\\.?", "parkway", "pkwy\\.?",
    "highway", "hwy\\.?", "trail", "trl\\.?", "concourse", "row", "loop", "pike", "grove", "gardens",
    "mews", "hill", "straße", "strasse", "str\\.", "weg", "gasse", "allee", "platz", "ring", "damm",
    "rue", "chemin", "impasse", "allée", "calle", "avenida", "av\\.", "paseo", "plaza", "carrer", "rua",
    "via", "viale", "corso", "piazza",
]  # fmt: skip


def _latin(stems: list[str]) -> list[str]:
    """Stems of alphabets with word boundaries: Latin and Cyrillic."""
    return [stem for stem in stems if stem.isascii() or any("\u00c0" <= c <= "\u04ff" for c in stem)]


def terms_pattern(terms: list[str], endings: list[str] | None = None) -> re.Pattern:
    """One alternation: Latin and Cyrillic stems at a word start, other scripts' terms and the
    `endings` of compounds anywhere (each grouped by first letter: gateway/privacy/alternation.py)."""
    latin = [t for t in _latin(terms) if t]
    other = [t for t in terms if t not in latin] + (endings or [])
    parts = []
    if latin:
        parts.append(r"\b" + alternation(latin))
    if other:
        parts.append(alternation(other))
    return re.compile("(?i)" + "|".join(parts))


CATEGORIES = {
    "health": terms_pattern(HEALTH + HEALTH_MORE + HEALTH_DISCLOSED, HEALTH_ENDINGS),
    "financial": terms_pattern(FINANCIAL + FINANCIAL_MORE + FINANCIAL_DISCLOSED, FINANCIAL_ENDINGS),
    "employment": terms_pattern(EMPLOYMENT + EMPLOYMENT_MORE),
    "identity": terms_pattern(IDENTITY + IDENTITY_MORE),
    "legal": terms_pattern(LEGAL + LEGAL_MORE + ABUSE),
    "school": terms_pattern(SCHOOL + SCHOOL_MORE),
    "therapy": terms_pattern(THERAPY),
}
BIRTH_WORDS = terms_pattern(BIRTH)
