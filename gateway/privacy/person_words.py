"""The words people put before and around a person in the 13 languages our users write (en zh de
fr es ja ko pt it nl ru hi ar): relationships ("my husband", "unser Mandant", "мой муж", "زوجي",
"मेरे पति", "我表哥"), roles and records ("patient", "学生", "환자", "пациентка", "المريض"), saying
one's own name ("my name is", "меня зовут", "اسمي", "我叫") and first-person disclosure ("I was
diagnosed", "я болею", "أعاني", "मुझे", "我被诊断").

No list of names is needed: a relationship or role word followed by a name-shaped word is a
named person (gateway/privacy/names.py decides what is name-shaped in each script).
"""

from gateway.privacy.alternation import alternation
from gateway.privacy.gated import after_words, gated, in_script, of_words

_EN_RELATION_WORDS = [
    "husband", "wife", "partner", "spouse", "boyfriend", "girlfriend", "fianc[ée]e?", "son", "daughter",
    "child", "kid", "stepson", "stepdaughter", "mother", "mom", "mum", "mommy", "mummy", "father",
    "dad", "daddy", "brother", "sister", "grandmother", "grandma", "nan", "nana", "granny",
    "grandfather", "grandpa", "grandad", "granddaughter", "grandson", "aunt", "auntie", "uncle",
    "cousin", "niece", "nephew", "mother-in-law", "father-in-law", "sister-in-law", "brother-in-law",
    "son-in-law", "daughter-in-law", "stepmother", "stepfather", "stepmum", "stepdad", "ex", "ex-wife",
    "ex-husband", "ex-partner", "flatmate", "roommate", "housemate", "neighbou?r", "friend",
    "best friend", "colleague", "coworker", "co-worker", "boss", "manager", "team lead",
    "direct report", "landlord", "landlady", "tenant", "client", "patient", "student", "pupil",
    "toddler", "baby", "teenager", "carer", "caregiver",
]  # fmt: skip
_EN_RELATIONS = alternation(_EN_RELATION_WORDS)
# a possessive before a relationship: the sender's own people
RELATION = gated(
    after_words(
        rf"(?i)(?=[mohtMOHT])\b(?:my|our|his|her|their)[ \t]+(?:(?:late|elder|older|younger|little|big"
        rf"|eldest|youngest"
        rf"|oldest|teenage|adult|[0-9]{{1,2}}[- ]year[- ]old)[ \t]+)?(?:{_EN_RELATIONS})s?\b",
        "my_ our_ his_ her_ their_",
    ),
    after_words(
        r"(?i)(?=[muMU])\b(?:mein(?:e[mnrs]?)?|unser(?:e[mnrs]?)?)[ \t]+(?:Mann|Ehemann|Frau|Ehefrau|Partner"
        r"(?:in)?"
        r"|Freund(?:in)?"
        r"|Sohn|Tochter|Kind|Mutter|Mama|Vater|Papa|Bruder|Schwester|Oma|Opa|Gro(?:ß|ss)mutter|Gro(?:ß|ss)vater"
        r"|Enkel(?:in)?|Onkel|Tante|Cousine?|Neffe|Nichte|Schwieger(?:mutter|vater|sohn|tochter)|Kollegin"
        r"|Kollege"
        r"|Chef(?:in)?|Nachbar(?:in)?|Mandant(?:in)?|Klient(?:in)?|Patient(?:in)?|Sch(?:ü|ue)ler(?:in)?)"
        r"(?:en|n|s)?\b",
        "mein unser",
    ),
    after_words(
        r"(?=[mnMN])(?i:\b(?:mon|ma|mes|notre|nos)[ \t]+(?:mari|époux|femme|épouse|compagnon|compagne"
        r"|copain|copine|fils"
        r"|fille|enfant|mère|maman|père|papa|frère|sœur|soeur|grand-mère|grand-père|mamie|papi|oncle|tante"
        r"|cousin"
        r"|cousine|neveu|nièce|belle-mère|beau-père|collègue|patron|patronne|voisin|voisine|client|cliente"
        r"|patient|patiente|élève)s?\b)",
        "mon_ ma_ mes_ notre_ nos_",
    ),
    after_words(
        r"(?=[mnilMNIL])(?i:\b(?:mi|mis|nuestr[oa]s?|meu|minha|meus|minhas|noss[oa]s?|il mio|la mia|mio"
        r"|mia|miei|mie"
        r"|nostr[oaie])[ \t]+(?:esposo|esposa|marido|mujer|mulher|moglie|pareja|novi[oa]|namorad[oa]"
        r"|fidanzat[oa]|compagn[oa]|hij[oa]|filh[oa]|figli[oa]|madre|mamá|mãe|mamma|padre|papá|pai|papà"
        r"|herman[oa]|irmão|irmã|fratello|sorella|abuel[oa]|avó|avô|nonn[oa]|tí[oa]|ti[oa]|zi[oa]|prim[oa]"
        r"|cugin[oa]|sobrin[oa]|sobrinh[oa]|nipote|caser[oa]|suegr[oa]|sogr[oa]|suocer[oa]|jef[ea]|chefe|capo"
        r"|compañer[oa]|colega|collega|vecin[oa]|vizinh[oa]|vicin[oa]|cliente|amig[oa]|amic[oa]|paciente"
        r"|paziente|alumn[oa]|alun[oa]|alunn[oa])s?\b)",
        "mi_ mis_ nuestr meu_ meus_ minha noss mio_ mia_ miei_ mie_ nostr",
    ),
    after_words(
        r"(?=[moMO])(?i:\b(?:mijn|onze|ons)[ \t]+(?:man|vrouw|echtgeno(?:ot|te)|partner|vriend(?:in)?|zoon"
        r"|dochter|kind"
        r"|moeder|mama|vader|papa|broer|zus|oma|opa|oom|tante|neef|nicht|schoon(?:moeder|vader)|collega|baas"
        r"|buurman|buurvrouw|cli[eë]nt|pati[eë]nt|leerling)\b)",
        "mijn_ onze_ ons_",
    ),
    in_script(
        r"(?=[мнМН])(?i:\b(?:мо[йяеёю]|моего|моей|моему|моим|наш[аеи]?|нашего|нашей)[ \t]+(?:муж|жен|сын"
        r"|доч|ребён|ребен"
        r"|мам|мат|пап|отц|отец|брат|сестр|бабушк|дедушк|парен|девушк|друг|подруг|дяд|тёт|тет|племянни|внук"
        r"|внучк|свекров|тёщ|тещ|свёкр|свекр|коллег|начальни|сосед|клиент|пациент|ученик|ученица)[а-яё]*)",
        "cyrillic",
    ),
    in_script(
        r"(?:زوجي|زوجتي|ابني|ابنتي|بنتي|أمي|امي|والدتي|أبي|ابي|والدي|أخي|اخي|أختي|اختي"
        r"|جدتي|جدي|خطيبي|خطيبتي"
        r"|صديقي|صديقتي|عمي|عمتي|خالي|خالتي|طفلي|طفلتي|مديري|مديرتي|جاري|جارتي|زميلي|زميلتي|موكلي|موكلتي"
        r"|حفيدي|حفيدتي)(?![\u0600-\u06ff])",
        "arabic",
    ),
    in_script(
        r"(?:मेरे|मेरी|मेरा|हमारे|हमारी|हमारा)[ \t]+(?:पति|पत्नी|बेटा|बेटे|बेटी|माँ|मां|माता|मम्मी"
        r"|पिता|पिताजी"
        r"|पापा|भाई|बहन|दादी|दादा|नानी|नाना|दोस्त|मित्र|चाचा|चाची|मामा|मामी|बच्चे|बच्चा|बॉस|मैनेजर|सहकर्मी"
        r"|पड़ोसी|मुवक्किल|क्लाइंट|ससुर|सास|भतीजा|भतीजी|भांजा|भांजी|पोता|पोती|मरीज़?)",
        "devanagari",
    ),
    in_script(
        r"我(?:的|们的|们)?(?:丈夫|老公|妻子|老婆|爱人|儿子|女儿|孩子|妈妈|母亲|爸爸|父亲|哥哥|弟弟|姐姐"
        r"|妹妹|表哥"
        r"|表姐|表弟|表妹|堂哥|堂姐|堂弟|堂妹|奶奶|爷爷|外婆|姥姥|外公|姥爷|男朋友|女朋友|男友|女友|对象|朋友"
        r"|同事|领导|老板|舅舅|叔叔|阿姨|姑姑|婆婆|公公|岳母|岳父|邻居|室友|前夫|前妻|闺蜜|同学|客户|学生"
        r"|当事人"
        r"|来访者|病人|患者|爸|妈|哥|姐)",
        "han",
    ),
    in_script(
        r"(?:私の|僕の|俺の|うちの)(?:夫|妻|主人|家内|母|父|息子|娘|兄|姉|弟|妹|祖母|祖父"
        r"|彼氏|彼女|友人|同僚"
        r"|上司|部下|子供|子ども|義母|義父)",
        "kana",
    ),
    in_script(
        r"(?:主人|家内|息子|娘|義母|義父)(?:が|は|の|に|を|も)",
        "kana",
    ),
    in_script(
        r"(?:夫|妻|母|父|祖母|祖父|兄|姉|弟|妹)(?:の|が|は)"
        r"(?=[\u4e00-\u9fff\u30a0-\u30ff])",
        "kana",
    ),
    in_script(
        r"(?:제|내|우리)[ \t]?(?:남편|아내|와이프|아들|딸|엄마|어머니|아빠|아버지|형|오빠|누나"
        r"|언니|동생|할머니"
        r"|할아버지|남자친구|여자친구|남친|여친|친구|동료|상사|아이|애|시어머니|장모님|의뢰인|환자|학생)",
        "hangul",
    ),
    in_script(
        r"(?:아빠|엄마|남편|아내|할머니|할아버지|아버지|어머니|아들|딸|시어머니)(?=["
        r"(（ ]?[가는이께을를의(（])",
        "hangul",
    ),
    after_words(
        r"(?=[mhMH])(?i:\b(?:meri|mera|mere|hamari|hamara|hamare)[ \t]+(?:beti|beta|bete|pati|patni|maa"
        r"|mummy|mami|papa"
        r"|pitaji|bhai|behen|behan|didi|dadi|dada|nani|nana|dost|wife|husband|bhabhi|chacha|chachi|saas"
        r"|sasur)\b)",
        "meri_ mera_ mere_ hamar",
    ),
    in_script(
        r"(?=[уоаУОА])(?i:\b[уоа]т?[ \t](?:мужа|жены|сына|дочери|дочки|мамы|матери|папы|отца|брата|сестры"
        r"|бабушки|дедушки"
        r"|ребёнка|ребенка|свекрови|тёщи)\b)",
        "cyrillic",
    ),
)
# bare relationship words: before a name ("Daughter Gillian") a named person, needing a detail
_OTHER_RELATION_WORDS = (
    "moglie marito figlio figlia figli esposa esposo marido hermano hermana hijo hija irmão irmã filho "
    "filha mari femme fils fille frère sœur ehemann ehefrau sohn tochter bruder schwester муж мужа жена "
    "жены сын сына дочь дочери брат брата сестра сестры тётя тётю тетя тетю мама мамы папа"
)
_BARE_RELATION_WORDS = _EN_RELATION_WORDS + _OTHER_RELATION_WORDS.split()
BARE_RELATION = gated(of_words(r"(?i)\b" + alternation(_BARE_RELATION_WORDS) + r"\b", _BARE_RELATION_WORDS))
# a role or record word: in front of a name it names a person in a record
_ROLE_WORDS = [
    "patient", "patientin", "patiente", "paciente", "paziente", "pati[eë]nt[e]?", "client", "cliente",
    "cli[eë]nt[e]?", "klient(?:in)?", "mandant(?:in)?", "student", "pupil", "learner", "leerling",
    "élève", "alumn[oa]", "alun[oa]", "alunn[oa]", "sch(?:ü|ue)ler(?:in)?", "employee", "worker",
    "staff member", "mitarbeiter(?:in)?", "werknemer", "medewerker", "salariée?", "employée?",
    "emplead[oa]", "funcionári[oa]", "dipendente", "applicant", "claimant", "defendant", "plaintiff",
    "respondent", "suspect", "victim", "accused", "tenant", "resident", "cardholder", "card holder",
    "account holder", "policyholder", "insured", "víctima", "vítima", "vittima", "agresor",
    "denunciante", "colaborador(?:a)?", "counsell?ee", "service user", "angeklagte[r]?",
    "kläger(?:in)?", "prévenue?", "acusad[oa]", "imputat[oa]", "verdachte", "réu", "ré",
    "пациент(?:ка|а|у|ом|ки|ке|ку|кой)?", "клиент(?:ка|а|у|ки|ке|ку|ом|кой)?",
    "учени(?:к|ка|ку|ком|ке|ца|цу|цы|це|цей)", "студент(?:ка|а|ки|ку|ом|кой|у)?",
    "сотрудни(?:к|ца|ка|цы|цу|ку|ком|цей)", "работни(?:к|ца)", "заявитель",
    "подсудим(?:ый|ая)", "обвиняем(?:ый|ая)", "истец", "ответчи(?:к|ца)", "потерпевш(?:ий|ая)",
]  # fmt: skip
ROLE = gated(
    of_words(r"(?i:\b" + alternation(_ROLE_WORDS) + r"\b)", _ROLE_WORDS),
    in_script(
        r"(?:المريض|المريضة|الموظف|الموظفة|الطالب|الطالبة|العميل|العميلة|الموكل|الموكلة|المتهم|المتهمة"
        r"|المدعي|المستأجر)(?![\u0600-\u06ff])",
        "arabic",
    ),
    in_script(
        r"(?:मरीज़|मरीज|रोगी|छात्र|छात्रा|कर्मचारी|ग्राहक|मुवक्किल|आरोपी|किरायेदार|क्लाइंट"
        r"|खाताधारक|आवेदक)",
        "devanagari",
    ),
    in_script(
        r"(?:患者|病人|学生|学员|员工|員工|职员|客户|来访者|來訪者|当事人|被告人|被告|原告|嫌疑人|持卡人|申请人"
        r"|租户|住户|孩子|幼儿|患儿|生徒|児童|社員|従業員|相談者|依頼者|利用者|受刑者|환자|학생|직원|내담자"
        r"|의뢰인"
        r"|피고인|고객|원생)",
        "han",
        "hangul",
    ),
)
# saying one's own name: what follows is the sender's name
OWN_NAME = gated(
    after_words(
        r"(?=[mMiIjJeEkKмМ])(?i:\b(?:my (?:full )?name is|my name's|i am called|je m'appelle|je m’appelle"
        r"|mon nom est"
        r"|ich hei(?:ß|ss)e|mein name ist|me llamo|mi nombre es|meu nome é|me chamo|mi chiamo|il mio nome è"
        r"|ik heet|mijn naam is|меня зовут|моё имя|мое имя)\b)"
        r"|(?i:\bmera naam\b)",
        "name called appel nom hei llamo nombre nome chamo chiamo heet naam зовут имя",
    ),
    in_script(r"اسمي|(?:मेरा नाम)", "arabic", "devanagari"),
    in_script(
        r"我叫|我的名字(?:是|叫)|她叫|他叫|名叫|名字叫|本人"
        r"(?:姓名)?[:：]?"
        r"|私の名前は|私は(?=[\u4e00-\u9fff]{2,4}と申)"
        r"|제 이름은|저는(?=[ \t]?[\uac00-\ud7a3]{2,4}(?:입니다|이에요|예요))",
        "han",
        "kana",
        "hangul",
    ),
)
# a name field or where an account is held: what follows is a person's name when it is a known one
# ("what's the name on the account? Alma Russo", "it's under my partner's name Cian Young")
NAME_FIELD = gated(
    after_words(
        r"(?i)\b(?:full[ \t])?name[ \t]*(?:(?:on|in|of)[ \t]+(?:the|my|this|your|our)[ \t]+"
        r"(?:account|card|booking|reservation|order|policy|file|form|ticket|statement)[ \t]*)?"
        r"(?:is|was|to|should be)?[ \t]*[:?]?(?:[ \t]*(?:user|customer|client|me|a):)?"
        r"|\b(?:change|correct|update|spell)(?:ed)?[ \t]+(?:it|that|this)[ \t]+to\b",
        "name",
    ),
    after_words(r"(?i)\b(?:it'?s|it is|is|are|account|booking)[ \t]+under\b", "under"),
    after_words(r"(?i)\b(?:was|were|is|am)[ \t]+called\b|\bnamed\b", "called named"),
    after_words(
        r"(?i)\b(?:add|follow[ -]up with|get in touch with|contact|invite|cc)\b",
        "add follow touch contact invite cc",
    ),
    in_script(
        r"名前[はがを]?|姓名[：:]?|이름[은이:]?|الاسم[ \t]?[:：]|नाम[ \t]?(?:है|:)",
        "han",
        "hangul",
        "arabic",
        "devanagari",
    ),
)
# "I'm", "soy", "ich bin": what follows is the sender's name only when it is a known name
OWN_NAME_IF_NAME = gated(
    after_words(
        r"(?i:\b(?:i'm|i am|im|this is|soy|yo soy|ich bin|je suis|sono|ik ben|eu sou|sou|main)\b)",
        "i'm i_am im this_is soy ich_bin je_suis sono ik_ben sou main",
    ),
    in_script(r"\bя(?:[ \t]—)?(?= [А-ЯЁ])", "cyrillic"),
)
