"""Regression cases for the free-text stage's person references without a gazetteer
(relationships, roles, own names, names in every script), the sensitive details of the 13
languages (legal, school, therapy, clinical), abbreviated addresses, and the public cases it must
let through (public figures, templates, fiction). Written by the team: regression, not recall."""

PERSON_POSITIVES = [
    ("person_health", "en", "my husband Callum was diagnosed with early onset alzheimers last week"),
    ("person_school", "en", "My daughter Ellie-Rose (14) has been excluded for 3 days for vaping"),
    ("person_name", "en", "write a short eulogy for my grandmother Nokuthula Khumalo, 1938-2024"),
    (
        "person_legal",
        "en",
        "My brother Tomasz got arrested last night for drink driving, court date in March",
    ),
    ("person_therapy", "en", "text my therapist Dr. Halvorsen that I relapsed on saturday"),
    ("person_address", "en", "Ship it to Yesenia Rodriguez, 3307 Magnolia Bend Dr, Houston TX 77004"),
    ("person_name", "de", "Bitte schreib an unseren Mandanten Herrn Petrović wegen der Frist"),
    ("person_health", "de", "Mein Mann Jürgen hatte einen Schlaganfall und liegt im Krankenhaus"),
    ("person_legal", "fr", "Ma sœur Camille a obtenu une ordonnance de protection contre son ex"),
    ("person_health", "es", "Mi madre Carmen fue ingresada por un infarto ayer"),
    ("person_health", "it", "mio marito Gianluca ha avuto un infarto sabato, ha 2 stent"),
    ("person_legal", "pt", "O meu irmão, o Tiago Matos, tem julgamento na próxima semana"),
    ("person_financial", "nl", "Mijn vader Henk heeft een huurachterstand van drie maanden"),
    ("person_health", "ru", "Мой муж Андрей болеет, ему поставили диагноз цирроз"),
    ("person_legal", "ru", "Брата (Павлов Денис, 26 лет) задержали в Питере, адвокат ничего не делает"),
    ("person_health", "ar", "زوجي أحمد مريض بالسرطان ويحتاج إلى علاج"),
    ("person_health", "hi", "मेरे पति राहुल को कैंसर का निदान हुआ है"),
    ("person_therapy", "zh", "心理咨询记录（来访者：陈思彤，女，19岁）：失眠，有自伤念头，转介精神科"),
    ("person_legal", "zh", "我表哥周文斌因为帮别人跑分被拘留了，涉嫌帮信罪"),
    ("person_name", "zh", "帮我给同事写生日祝福，她叫欧阳晓蕾，是会计"),
    ("person_health", "ja", "夫の拓也が先週うつ病と診断されました"),
    ("person_health", "ja", "患者 山田太郎、脳梗塞でt-PA投与後、右片麻痺が残存"),
    ("person_health", "ko", "아빠(박상철, 63세)가 폐에 결절이 있어서 조직검사를 받아요"),
    ("person_identity", "ko", "저는 탈북민이고 이름은 리은정이에요"),
    ("person_identity", "zh", "我是同性恋，男朋友叫阿杰，想跟爸妈出柜"),
    ("person_name", "es", "Hola, me llamo Pilar Ugarte y quiero reclamar"),
]
PERSON_NEAR_MISSES = [
    ("public_figure", "fr", "Quel rôle la maladie a-t-elle joué dans la vie d'Édith Piaf ?"),
    ("public_figure", "en", "Did Marie Curie die of radiation sickness?"),
    ("public_figure", "en", "Was Franklin D. Roosevelt's polio diagnosis hidden from the public?"),
    ("public_figure", "en", "How did Ludwig van Beethoven cope with his deafness?"),
    ("template", "en", "Termination letter for gross misconduct with placeholders [Employee Name], [Date]"),
    ("template", "zh", "给我一个《解除劳动合同通知书》模板，员工严重违纪，用【员工姓名】【工号】占位。"),
    (
        "fiction",
        "en",
        "Continue the story: Detective Inspector Ravi Sandhu looked at the passport on the table.",
    ),
    ("topic", "zh", "2023年全国居民人均可支配收入39218元，比上年增长6.3%。"),
    ("topic", "zh", "工商银行客服电话和信用卡中心的号码是一样的吗？"),
    ("topic", "zh", "根据《民法典》，离婚时子女抚养权一般怎么判？"),
    ("topic", "ru", "Какие симптомы у диабета второго типа?"),
    ("topic", "ar", "ما هي أعراض مرض السكري؟"),
    ("topic", "hi", "मधुमेह के लक्षण क्या हैं?"),
    ("topic", "en", "What does a restraining order protect against in the UK?"),
    ("topic", "en", "How should a school handle exclusion appeals?"),
]
