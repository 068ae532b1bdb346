"""Sensitive details in the six languages gateway/privacy/vocabularies.py does not cover
(Portuguese, Italian, Dutch, Russian, Hindi, Arabic), clinical words of Japanese and Chinese
notes, and three kinds of detail it has no list for: legal matters (custody, domestic violence,
arrests, restraining orders), school records, and therapy and counselling; all 13 languages.

Same form as there: Latin and Cyrillic entries are stems matched at a word start, case-
insensitively; CJK, Hangul, Arabic and Devanagari entries anywhere. Disease, ICD-10 and drug
words come from maintained packages (gateway/privacy/name_index.py), not from these lists.
"""

HEALTH_MORE = [
    # Portuguese, Italian, Dutch
    "diagnosticad", "internad", "depressão", "gravidez", "remédio", "diagnosticat", "depressione",
    "gravidanza", "farmac", "ricovero", "gediagnosticeerd", "ziekte", "ziek", "zwanger", "kanker",
    "suikerziekte", "opgenomen in", "ziekenhuis", "medicijn", "behandeling",
    # Russian
    "диагноз", "диагностир", "болезн", "болеет", "болен", "больна", "рак\\b", "раком", "опухол",
    "диабет", "депресс", "шизофрен", "беремен", "госпитализ", "больниц", "операци", "химиотерап",
    "лекарств", "таблетк", "инсульт", "инфаркт", "деменц", "эпилепс", "аутизм", "вич", "гепатит",
    "туберкулёз", "туберкулез", "лечени", "лечится", "психиатр", "инвалидност", "выкидыш", "аборт",
    # Arabic
    "تشخيص", "مرض", "مريض", "سرطان", "ورم", "السكري", "سكري", "اكتئاب", "فصام", "حامل", "مستشفى",
    "عملية جراحية", "جراحة", "علاج", "دواء", "أدوية", "جلطة", "سكتة", "نوبة قلبية", "الخرف", "صرع",
    "توحد", "الحمل", "فيروس", "تحليل", "إيجابي", "الإيدز", "فيروس نقص المناعة", "التهاب الكبد", "السل",
    "إعاقة", "إجهاض",
    # Hindi
    "निदान", "बीमारी", "बीमार", "कैंसर", "मधुमेह", "डायबिटीज", "डिप्रेशन", "अवसाद", "गर्भवती", "गर्भ",
    "अस्पताल", "ऑपरेशन", "सर्जरी", "इलाज", "उपचार", "दवा", "दवाई", "स्ट्रोक", "हार्ट अटैक",
    "दिल का दौरा", "मिर्गी", "ऑटिज़्म", "एचआईवी", "टीबी", "विकलांग", "गर्भपात", "डायलिसिस",
    "कीमोथेरेपी",
    # clinical words of Japanese and Chinese notes and discharge summaries
    "脳梗塞", "脳出血", "くも膜下出血", "心筋梗塞", "片麻痺", "麻痺", "失語", "認知症", "骨折", "肺炎",
    "心不全", "腎不全", "透析", "抗がん剤", "化学療法", "退院", "既往", "リハビリ", "t-pa", "rt-pa",
    "血栓溶解", "脑梗", "脑出血", "偏瘫", "心梗", "心衰", "肾衰", "透析", "骨折", "肺炎", "痴呆",
    "失智", "康复", "精神科", "精神病", "双相", "焦虑症", "强迫症", "自闭症", "多动症", "post[- ]?op",
    "cannula", "dnacpr", "dnr\\b", "palliative", "hospice", "icu\\b", "health\\b", "nhs\\b", "infarto",
    "avc", "ischémi", "hémiplégi", "aphasi", "thrombolys", "burn-?out", "arrêt maladie", "malat",
    "결절", "조직검사", "건강검진", "검사 결과", "stent", "ictus", "tumore", "цирроз", "печен",
    "пересадк", "наркоти", "мефедрон",
    # a death and its rites: about a named private person, personal
    "died", "passed away", "funeral", "obituary", "eulogy", "è morto", "è morta", "necrolog",
    "funerale", "verstorben", "beerdigung", "décédé", "obsèques", "falleció", "funeral", "faleceu",
    "overleden", "умер", "похорон", "توفي", "جنازة", "निधन", "अंतिम संस्कार", "去世", "逝世", "葬礼",
    "亡くな", "葬儀", "돌아가", "장례",
]  # fmt: skip

FINANCIAL_MORE = [
    "salário", "dívida", "empréstimo", "falência", "stipendio", "debito", "debiti", "prestito", "mutuo",
    "fallimento", "salaris", "loon", "schuld", "lening", "hypotheek", "faillissement", "зарплат",
    "доход", "долг", "кредит", "ипотек", "банкрот", "задолженност", "راتب", "دخل", "دين", "ديون", "قرض",
    "رهن عقاري", "إفلاس", "حساب بنكي", "رصيد", "वेतन", "तनख्वाह", "सैलरी", "आय", "कर्ज", "क़र्ज़",
    "लोन", "ऋण", "दिवालिया", "बैंक खाता", "achterstand", "被骗", "诈骗", "理财", "退休金", "抵押",
    "huurachterstand", "huurschuld", "盗刷", "争议交易", "信用卡", "银行卡", "账户", "賬戶", "冻结",
    "借款", "網貸", "网贷", "account ends in", "unauthori[sz]ed transaction", "chargeback",
    "fraudulent", "casino", "gambling",
]  # fmt: skip

EMPLOYMENT_MORE = [
    "licenziat", "demissão", "justa causa", "embriaguez", "en arrêt", "dimission", "demitid",
    "despedimento", "ontslagen", "ontslag", "waarschuwing", "уволен", "увольнени", "выговор",
    "дисциплинарн", "فصل من العمل", "فصلت", "إنذار", "استقالة", "नौकरी से निकाल", "बर्खास्त", "इस्तीफ",
    "चेतावनी", "sick leave", "tribunal", "investigation meeting", "disciplinary hearing", "whistleblow",
    "maternity leave", "paternity leave", "flexible working", "reasonable adjustment", "病假", "旷工",
    "劳动仲裁", "产假", "休職", "休業", "산재", "육아휴직",
    # HR words of the other languages, and English ones written in Devanagari and Arabic
    "परफॉर्मेंस", "मेटरनिटी", "मैटरनिटी", "टर्मिनेशन", "वार्निंग", "मातृत्व अवकाश", "प्रदर्शन समीक्षा",
    "अनुशासनात्मक", "तकनीकी बर्खास्तगी", "تقييم الأداء", "إجازة أمومة", "إنذار نهائي", "إجراء تأديبي",
    "فصل تعسفي", "аттестаци", "декрет", "больничн", "служебн", "испытательн", "sollicitatie",
    "functioneringsgesprek", "zwangerschapsverlof", "ziekteverzuim", "valutazione delle prestazioni",
    "maternità", "provvedimento disciplinare", "avaliação de desempenho", "licença-maternidade",
    "licença maternidade", "processo disciplinar", "evaluación de desempeño", "baja por maternidad",
    "baja médica", "congé maternité", "entretien annuel", "mutuelle", "mutterschutz", "elternzeit",
    "降职", "辞职", "育休", "産休", "人事考課", "降格", "인사평가", "출산휴가", "정직",
]  # fmt: skip

LEGAL = [
    "custody", "domestic violence", "domestic abuse", "restraining order", "protective order",
    "non-molestation", "injunction", "arrested", "charged with", "court date", "court hearing",
    "magistrates", "solicitor", "prosecut", "convicted", "sentenced", "bail", "probation", "parole",
    "lawsuit", "sued", "divorce", "separation", "child support", "visitation", "eviction", "evicted",
    "deport", "drink driving", "drunk driving", "dui", "dwi", "assault", "abuse", "stalking",
    "police report", "sorgerecht", "häusliche gewalt", "gewaltschutz", "kontaktverbot", "festgenommen",
    "verhaftet", "angeklagt", "strafverfahren", "scheidung", "unterhalt", "räumungsklage", "garde d",
    "violence conjugale", "violences conjugales", "ordonnance de protection", "arrêté", "interpellé",
    "garde à vue", "divorce", "pension alimentaire", "expulsion", "custodia", "violencia doméstica",
    "violencia de género", "orden de alejamiento", "orden de protección", "agresor", "detenid",
    "julgamento", "tribunal", "condenad", "pena suspensa", "divorcio", "pensión alimenticia",
    "desahucio", "guarda", "violência doméstica", "medida protetiva", "preso", "divórcio", "pensão",
    "affidamento", "violenza domestica", "ordine restrittivo", "arrestat", "divorzio", "voogdij",
    "huiselijk geweld", "straatverbod", "gearresteerd", "scheiding", "опек", "домашнее насилие",
    "насили", "арестован", "задерж", "адвокат", "обвинени", "суд\\b", "суда\\b", "суде\\b", "развод",
    "алимент", "حضانة", "عنف أسري", "العنف المنزلي", "أمر تقييدي", "اعتقل", "القبض", "محكمة", "طلاق",
    "نفقة", "हिरासत", "घरेलू हिंसा", "गिरफ्तार", "अदालत", "तलाक", "गुजारा भत्ता", "एफआईआर", "抚养权",
    "监护权", "家暴", "家庭暴力", "人身保护令", "被捕", "拘留", "刑拘", "判刑", "起诉", "立案", "离婚",
    "涉嫌", "配合调查", "派出所", "报案", "親権", "家庭内暴力", "接近禁止命令", "逮捕", "離婚", "起訴",
    "양육권", "가정폭력", "접근금지", "체포", "이혼", "기소",
]  # fmt: skip

SCHOOL = [
    "excluded", "exclusion", "suspended", "suspension", "expelled", "detention", "report card",
    "grades", "attendance", "iep", "504 plan", "sen\\b", "ehcp", "special needs", "dyslexi", "bullied",
    "bullying", "taunt", "孤立", "被欺负", "校园霸凌", "pelea", "bagarre", "rissa", "schlägerei",
    "драк", "打架", "からかわ", "登校", "싸움", "head teacher", "headteacher", "school record",
    "transcript", "failed (?:his|her) exams", "schulverweis", "zeugnis", "noten", "nachsitzen",
    "förderbedarf", "exclusion temporaire", "bulletin", "redoubl", "expulsad", "boletín",
    "calificaciones", "suspendid", "pagella", "bocciat", "отчислен", "оценки", "двойк", "травл",
    "дислекси", "прогул",
    "مفصول من المدرسة", "درجات", "تنمر", "निलंबित", "अंक", "停学", "退学", "处分", "成绩单", "挂科",
    "霸凌", "校园欺凌", "不及格", "停学処分", "成績", "いじめ", "不登校", "정학", "퇴학", "성적",
    "학교폭력", "왕따",
]  # fmt: skip

THERAPY = [
    "therapist", "therapy session", "counsell?(?:ing|or)", "psychologist", "relapse", "sober",
    "sobriety", "self-harm", "self harm", "suicidal", "panic attack", "phq-9", "gad-7", "trauma",
    "ptsd", "psychotherapeut", "psychotherapie", "selbstverletz", "suizid", "psychothérap",
    "psychologue", "automutil", "psicólog", "psicoterap", "autolesi", "psicolog", "zelfbeschadig",
    "psycholoog", "психотерапевт", "психолог", "самоповрежд", "суицид", "معالج نفسي", "علاج نفسي",
    "إيذاء النفس", "انتحار", "मनोचिकित्सक", "काउंसलिंग", "आत्महत्या", "आत्म-हानि", "心理咨询", "咨询师",
    "来访者", "自伤", "自残", "轻生", "不想活", "自杀", "失眠", "抑郁", "焦虑", "心理治疗",
    "カウンセリング", "自傷", "希死念慮", "自殺", "心療内科", "상담", "자해", "자살", "정신과",
    # the other languages' therapy words
    "terapeuta", "terapia", "recaída", "ricaduta", "terugval", "therapeut", "psichiatr", "psiquiatr",
    "sobri[oa]", "ideación", "ideação", "ideazione", "idées suicidaires", "suizidgedanken",
    "trastorno de ansiedad", "transtorno de ansiedade", "disturbo d'ansia", "angststoornis",
    "paniekaanval", "ataque de pánico", "attacco di panico", "crise d'angoisse", "trouble anxieux",
    "сеанс", "терапи", "тревожное расстройство", "паническ",
    "جلسة علاج", "اضطراب القلق", "نوبات هلع", "थेरेपी", "थेरेपिस्ट", "एंग्जायटी", "घबराहट", "カウンセラー",
    "不安障害", "パニック", "심리상담", "공황", "우울", "心理医生", "惊恐", "复发",
]  # fmt: skip

IDENTITY_MORE = [
    "gay", "homosexual", "bisexual", "queer", "came out", "coming out", "catholic", "muslim", "jewish",
    "hindu", "sikh", "jehovah", "refugee", "asylum seeker", "defector", "schwul", "lesbisch",
    "katholisch", "evangelisch", "jüdisch", "muslimisch", "flüchtling", "homosexuel", "catholique",
    "musulman", "juif", "juive", "réfugié", "homosexual", "católic", "musulmán", "judío", "refugiad",
    "omosessual", "cattolic", "musulman", "ebre", "homoseksue", "moslim", "joods", "vluchteling", "гей",
    "гомосексуал", "лесби", "мусульман", "еврей", "беженец", "مثلي", "مسيحي", "لاجئ", "ملحد",
    "समलैंगिक", "धर्म परिवर्तन", "दलित", "同性恋", "同志", "出柜", "性取向", "跨性别", "宗教信仰",
    "难民", "ゲイ", "رخصة", "جواز سفر", "الهوية", "पैन", "आधार", "レズビアン", "同性愛",
    "カミングアウト", "パートナーシップ", "在日", "탈북", "동성애", "커밍아웃", "성소수자", "난민",
]  # fmt: skip
