"""Credentials as detect-secrets finds them, each idea a linear pattern and a check:

- the major clouds' and services' key formats (detect-secrets' plugins, and the formats those
  services document): Azure storage keys and connection strings, GCP service-account key ids,
  Slack webhooks, Stripe, Twilio, SendGrid, npm, PyPI, GitLab, Hugging Face, Shopify, Square,
  DigitalOcean, Databricks, Telegram, Mailchimp, Azure AD client secrets;
- `KEY=VALUE` / `key: value` where a part of the key names a secret (DB_PASSWORD, SMTP_PASS,
  *_SECRET, *_TOKEN, api_key, ...), and high-entropy values assigned to any other key;
- user-info in a URL (`scheme://user:pass@host`);
- a password said in prose ("my VPN password is ...") in the 13 languages.
A placeholder (`change-me`, `<password>`, `${DB_PASS}`, `PASSWORD`, `xxxx`) is no secret.
"""

import itertools
import math
import re
from collections import Counter

# (pattern, the literals one of which every match holds: the recognizer's gate)
SERVICE_KEYS = (
    (
        r"(?:AccountKey|SharedAccessKey)=[A-Za-z0-9+/]{40,86}+={0,2}",  # Azure storage, Service Bus
        ("AccountKey=", "SharedAccessKey="),
    ),
    (r"\"private_key_id\"[ \t]*:[ \t]*\"[0-9a-f]{40}\"", ("private_key_id",)),  # GCP service account
    (r"hooks\.slack\.com/services/T\w{6,100}+/B\w{6,100}+/\w{4,100}+", ("hooks.slack.com",)),
    (
        r"(?<![\w-])(?:whsec_[A-Za-z0-9]{24,64}"  # Stripe webhook
        r"|SG\.[\w-]{22}\.[\w-]{43}"  # SendGrid
        r"|npm_[A-Za-z0-9]{36}"
        r"|pypi-AgE[A-Za-z0-9_-]{50,400}+"
        r"|gl(?:pat|dt|ft|soat|rt)-[\w-]{20,50}+"  # GitLab
        r"|hf_[A-Za-z]{34}"  # Hugging Face
        r"|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}"  # Shopify
        r"|sq0(?:atp|csp)-[\w-]{22,43}+"  # Square
        r"|do[opr]_v1_[a-f0-9]{64}"  # DigitalOcean
        r"|dapi[a-f0-9]{32}"  # Databricks
        r"|GOCSPX-[\w-]{28}"  # Google OAuth client secret
        r"|LTAI[A-Za-z0-9]{12,24})(?![\w-])",  # Alibaba Cloud AccessKey id
        ("whsec_", "SG.", "npm_", "pypi-", "gl", "hf_", "shp", "sq0", "_v1_", "dapi", "GOCSPX-", "LTAI"),
    ),
    (r"(?<![\w-])(?:AC|SK)[0-9a-z]{32}(?![\w-])", ("AC", "SK")),  # Twilio
    (r"(?<![\w:])\d{8,10}:[\w-]{35}(?![\w-])", (":",)),  # Telegram bot
    (r"(?<![\w-])[0-9a-z]{32}-us\d{1,2}(?![\w-])", ("-us",)),  # Mailchimp
    # detect-secrets' GitLab, GitHub, Discord and Artifactory shapes
    (
        r"(?<![\w-])(?:GR1348941[\w-]{20,50}+|glcbt-(?:[0-9a-fA-F]{2}_)?[\w-]{20,50}+|glimt-[\w-]{25}"
        r"|glptt-[\w-]{40}|glagent-[\w-]{50,1024}+|gloas-[\w-]{64}|gh[pousr]_\w{36})(?![\w-])",
        ("GR1348941", "glcbt-", "glimt-", "glptt-", "glagent-", "gloas-", "gh"),
    ),
    (r"(?<![\w-])[MNO][\w-]{23,25}\.[\w-]{6}\.[\w-]{27}(?![\w-])", (".",)),  # Discord bot
    (  # Artifactory: a digit and a small letter after the prefix (APACHE2 is no key)
        r"(?<![\w-])(?:AKC|AP[\dA-F])(?=[A-Za-z]{0,200}+\d)(?=[A-Z0-9]{0,200}+[a-z])[A-Za-z0-9]{8,200}+(?![\w-])",
        ("AKC", "AP"),
    ),
    (r"(?<![\w~.-])[\w~.-]{3}\dQ~[\w~.-]{31,34}+(?![\w~.-])", ("Q~",)),  # Azure AD client secret
)

# KEY=VALUE, key: "value", "key": "value" (YAML, .env, JSON, INI, shell)
ASSIGNMENT = re.compile(
    r"(?<![\w.-])[\"']?(?P<key>[A-Za-z_][\w.-]{0,60}+)[\"']?[ \t]*(?::|=|:=|=>)[ \t]*"
    r"[\"']?(?P<value>[^\s\"',;]{4,300}+)"
)
SECRET_PARTS = frozenset({
    "password", "passwd", "passwort", "pass", "pwd", "pw", "passphrase", "secret", "token",
    "apikey", "credential", "credentials", "privatekey", "secretkey", "accesskey", "clientsecret",
    "authtoken", "accesstoken", "refreshtoken", "connectionstring", "sas", "dsn",
})  # fmt: skip
HASH_PARTS = frozenset({
    "sha", "sha1", "sha256", "sha512", "md5", "hash", "checksum", "digest", "commit", "etag",
    "integrity", "uuid", "id", "guid", "nonce", "salt", "fingerprint",
})  # fmt: skip
PLACEHOLDER = re.compile(
    r"(?i)(?:[<{\[(]|\$\{?|%\(|\{\{|\*{3}|x{3}|\.{3}|#{3})"  # <password>, ${VAR}, $VAR, {{x}}, ***, xxx
    r"|^(?:change|replace|your|my|enter|insert|put|example|sample|dummy|placeholder|redacted|todo|fixme"
    r"|secret|password|passwort|token|none|null|nil|true|false|undefined|empty|default|test|demo)"
    r"[\w-]{0,20}$"
    r"|^(?:os\.|process\.env|env\(|getenv|settings\.|config\.|self\.|environ)"
    # "sk_test_YOUR_KEY_HERE", "sua_senha_aqui", "votre_mot_de_passe": your-value-here, in our languages
    r"|(?:^|[_\W])(?:your|seu|sua|votre|vos|ihr|dein|deine|tu|tus|tuo|tua|uw|jouw|ваш|твой)[_-]"
    r"|[_-](?:here|aqui|aquí|ici|hier|qui|hier_eintragen)$"
)
URL_USERINFO = re.compile(
    r"(?<![\w+.-])[A-Za-z][\w+.-]{1,20}+://[^\s:/?#@\"'<>]{1,64}+:(?P<value>[^\s:/?#@\"'<>]{1,128}+)@[\w-]"
)
# detect-secrets' keyword plugin: a denylisted word anywhere in a key ("databasepassXYZ",
# "_secret-accesskey"), any assignment operator (=, :, :=, =>, ==, !=, ::), a value
KEYWORD = re.compile(  # its first letters up front: the engine skips every other position at once
    r"(?=[AaSsDdPpCcKk])(?i:a(?:pi|uth|ccount)_?key|s(?:ervice_?key|ecret)|d(?:b|atabase)_?(?:key|pass)"
    r"|p(?:riv(?:ate)?_?key|ass(?:word|wd)|wd)|c(?:lient_?key|ontrase[nñ]a)|key_?pass)"
    r"[\w.-]{0,80}+[\]'\"]{0,2}[ \t]*(?P<operator>[:=!]{1,3}|=>)[ \t]*(?P<quote>[\"'`]?)"
    r"(?P<value>[^\s\"'`,;]{6,300}+)"
)
KEYWORD_LITERALS = ("key", "pass", "pwd", "secret", "contrase")
PASSWORD_WORDS = (  # Latin and Cyrillic ones as whole words; the others may touch any letter
    r"(?<![A-Za-z])(?:password|passcode|passwort|kennwort|mot de passe|mdp|contraseña|contrasena|clave"
    r"|senha|wachtwoord|parola d'ordine|pin|pass|pwd|пароль|secret(?: key)?|api key|access key|token)"
    r"(?![A-Za-z])"
    r"|密码|密碼|口令|パスワード|暗証番号|비밀번호|암호|पासवर्ड|كلمة المرور|كلمة السر"
)
SAID = re.compile(
    rf"(?i:{PASSWORD_WORDS})"
    r"[^\n.?!。？！:=@/]{0,30}?"  # "du boulot", "für das WLAN", "del VPN"
    r"(?i:[ \t]+(?:is|was|ist|lautet|war|est|c'est|était|es|era|é|è|e|são|het|это|—|-|→)[ \t]*"
    r"|[ \t]*[:：=][ \t]*|[ \t]*(?:是|为|為|は|が|은|는|이|가|：|:)[ \t]*|[ \t]+)"
    r"[\"'“«「]?(?P<value>(?=\S{0,63}?[\d!@#$%^&*_+=?~|\\/-])[^\s\"'”»」，。、,]{4,64}+)"
)
SAID_LITERALS = (
    "pass", "secret", "api key", "access key", "token", "kennwort", "mot de passe", "mdp", "contrase",
    "clave", "senha", "wachtwoord",
    "parola d'ordine", "пароль", "密码", "密碼", "口令", "パスワード", "暗証番号", "비밀번호", "암호",
    "पासवर्ड", "كلمة المرور", "كلمة السر", "pin",
)  # fmt: skip
_KEY_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def is_placeholder(value: str) -> bool:
    value = value.strip("\"'`")
    return (
        PLACEHOLDER.search(value) is not None
        or len(set(value.lower())) <= 2
        or re.fullmatch(r"[A-Z][A-Z_]*", value) is not None  # USER, DB_PASSWORD: a name for it
    )


def _key_parts(key: str) -> list[str]:
    parts = [part.lower() for part in _KEY_PARTS.findall(key)]
    return parts + ["".join(pair) for pair in itertools.pairwise(parts)]


def entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def assignment(match: re.Match) -> bool:
    """A secret-named key with a real value, or any other key (not a hash's) with a long random
    base64-like value: upper and lower case letters and digits, 4.2 bits a character or more."""
    parts, value = _key_parts(match.group("key")), match.group("value")
    if is_placeholder(value):
        return False
    if any(part in SECRET_PARTS for part in parts):  # "Password: hunter2", DB_PASS=x, "secret": "x"
        key = match.group("key")
        return "_" in key or "." in key or key.isupper() or _has_letter_and_other(value)
    random_like = (
        len(value) >= 24
        and re.fullmatch(r"[A-Za-z0-9+/=_-]+", value) is not None
        and re.search(r"[a-z]", value) is not None
        and re.search(r"[A-Z]", value) is not None
        and re.search(r"\d", value) is not None
    )
    return random_like and not any(part in HASH_PARTS for part in parts) and entropy(value) >= 4.2


def keyword(match: re.Match) -> bool:
    """A value that is no placeholder and no plain word: a letter with a digit or a sign, or 16
    characters or more; compared (==, !=), a quoted literal only (else a variable)."""
    value = match.group("value")
    if match.group("operator") in ("==", "!=", "===", "!==") and not match.group("quote"):
        return False
    return not is_placeholder(value) and (_has_letter_and_other(value) or len(value) >= 16)


def url_userinfo(match: re.Match) -> bool:
    return not is_placeholder(match.group("value"))


def said(match: re.Match) -> bool:
    """A password told in prose: a value with a digit or a sign among letters, not a word."""
    value = match.group("value").rstrip("?")  # "... 应该怎么替换?": a question's mark, no sign
    url = re.match(r"[A-Za-z][\w+.-]*://", value) is not None  # "Bearer <token> https://...": no secret
    return _has_letter_and_other(value) and not is_placeholder(value) and not url


def _has_letter_and_other(value: str) -> bool:
    return re.search(r"[^\W\d_]", value) is not None and re.search(r"[\d\W_]", value) is not None
