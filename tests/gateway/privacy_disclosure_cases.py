"""Regression cases for issue 61 round 2: first-person disclosure without a name in the 13
languages (the sender's own health, debt, addiction, abuse, status), compound and lay condition
words, and the public texts it must let through: code and configuration with placeholders and
dummy values, organisations' lines and footers, placeholder names, topic questions. Written by
the team (none copied from a corpus): regression, not recall."""

DISCLOSURE_POSITIVES = [
    ("person_financial", "en", "I owe nearly 30k on three credit cards and the minimum payments eat my wage"),
    ("person_legal", "en", "My girlfriend hits me when she's angry, what can I do?"),
    ("person_health", "en", "I've been struggling with anxiety since the accident, is that normal?"),
    ("person_health", "de", "Bei mir wurde vor zwei Wochen Darmkrebs festgestellt"),
    ("person_financial", "de", "Ich habe 12.000 € Kreditkartenschulden und eine Mahnung vom Inkasso"),
    ("person_health", "fr", "On m'a diagnostiqué un diabète de type 1 à 34 ans"),
    ("person_health", "es", "Me diagnosticaron ansiedad y no sé si contárselo a mi jefe"),
    ("person_financial", "pt", "Estou endividada e meu nome foi para o Serasa no mês passado"),
    ("person_financial", "it", "Ho debiti con due finanziarie e rischio il pignoramento dello stipendio"),
    ("person_health", "nl", "Bij mij is vorige maand longkanker vastgesteld"),
    ("person_health", "ru", "Я пью уже полгода и не могу остановиться, что делать?"),
    ("person_financial", "ru", "У меня долги по трём микрозаймам, звонят коллекторы"),
    ("person_financial", "ar", "عليّ ديون كثيرة للبنك ولا أستطيع دفع الأقساط"),
    ("person_financial", "hi", "मुझ पर बैंक का बहुत कर्ज है और EMI नहीं भर पा रहा"),
    ("person_financial", "zh", "我欠了网贷十几万，现在天天被催收"),
    ("person_financial", "ja", "カードローンの借金が200万円あって返せません"),
    ("person_health", "ko", "저 작년에 공황장애 진단 받았는데 회사에 말해야 하나요?"),
]
DISCLOSURE_NEAR_MISSES = [
    (
        "code",
        "en",
        "export OPENAI_API_KEY=YOUR_API_KEY\ncurl -H 'Authorization: Bearer <token>' https://api.example.com/v2",
    ),
    ("code", "en", "stripe:\n  secret_key: sk_test_YOUR_SECRET_HERE\nsupport_email: admin@example.com"),
    ("code", "pt", "# .env\nDB_USER=seu_usuario\nDB_PASSWORD=sua_senha_aqui"),
    ("code", "en", "assert format_ssn('123456789') == '123-45-6789'"),
    ("code", "de", "IBAN_TEST = 'DE89 3704 0044 0532 0130 00'\nif not valid(IBAN_TEST): raise ValueError"),
    ("code", "es", "const cliente = { name: 'Juan Pérez', email: 'juan@example.com' }; // datos de prueba"),
    ("template", "es", "Formulario: Yo, [NOMBRE], con DNI [00000000X], declaro que ..."),
    (
        "company",
        "de",
        "Impressum: Beispiel Handels GmbH, Lindenweg 3, 28195 Bremen, Tel. 0421 987654-0, HRB 12345",
    ),
    ("company", "en", "Questions? Write to info@acme-widgets.co.uk or see our FAQ"),
    ("topic", "zh", "糖尿病患者能不能吃水果？"),
    ("code", "zh", "redis-cli -a <密码> 里的 <密码> 要换成什么？"),
    ("topic", "ru", "Я хочу узнать, как лечат диабет второго типа"),
]
