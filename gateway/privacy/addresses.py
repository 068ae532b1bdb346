"""Street addresses in the 13 languages, abbreviations included ("3307 Magnolia Bend Dr", "Apt 4C,
1180 Grand Concourse, Bronx NY 10456", "ул. Ленина, д. 5", "Kerkstraat 12", "C/ Mayor 15",
"东路100号", "1丁目2番3号", "테헤란로 123"). An address is a detail: it makes a request private
only near a person (gateway/privacy/free_text.py). Every alternative is bounded, so linear."""

import re

from gateway.privacy.vocabularies import STREET, terms_pattern

_STREET = terms_pattern(STREET).pattern.removeprefix("(?i)")
_US_STATES = (
    "AL|AK|AZ|AR|CA|CO|CT|DE|DC|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|NH|NJ|NM|NY|NC"
    "|ND|OH|OK|OR|PA|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY"
)
ADDRESS = re.compile(
    rf"(?i:\b\d{{1,5}}[a-z]?,?[ \t]{{1,2}}(?:[A-Za-zÀ-ÿ'’.\-]{{1,30}}[ \t]{{1,2}}){{0,4}}"
    rf"(?:{_STREET})(?![a-z]))"
    r"|(?i:\b(?:apt|apartment|unit|suite|flat|wohnung|appartement|piso|apto|interno)\.?[ \t]?#?"
    r"\d{1,5}[a-z]?\b)"
    rf"|\b(?:{_US_STATES})[ \t]{{1,2}}\d{{5}}(?:-\d{{4}})?\b"
    r"|\b[A-Z]{1,2}\d[A-Z\d]?[ \t]\d[A-Z]{2}\b"  # a UK postcode
    r"|(?i:\b[A-Za-zÀ-ÿ\-]{2,30}(?:straße|strasse|str\.|weg|gasse|allee|platz|straat|laan|plein|gracht"
    r"|kade|singel|dreef|steeg))[ \t]{0,2}\d{1,4}[a-z]?\b"
    r"|(?i:\b(?:rue|avenue|av\.|avda\.?|boulevard|bd|chemin|calle|c/|avenida|via|viale|piazza|p\.za|corso"
    r"|c\.so|rua|r\.|travessa|largo|praça)[ \t]"
    r"[A-Za-zÀ-ÿ'’\-]{1,30}(?:[ \t][A-Za-zÀ-ÿ'’\-]{1,30}){0,3}),?[ \t]?(?:n[º°o.]?[ \t]?)?\d{1,4}"
    r"|(?:ул\.|улица|пр\.|проспект|пр-т|пер\.|переулок|бульвар|б-р|шоссе|наб\.)[ \t]?"
    r"[А-ЯЁа-яё\-]{1,30}(?:[ \t][А-ЯЁа-яё\-]{1,30}){0,2},?[ \t]?(?:д\.|дом)[ \t]?\d{1,4}"
    r"|(?:شارع|حي|عمارة|شقة)[ \t](?:[\u0600-\u06ff]{1,20}[ \t]){0,3}(?:رقم[ \t])?\d{1,5}"
    r"|(?:ग्राम|गांव|गाँव|तहसील|ज़िला|जिला|पोस्ट|मोहल्ला|वार्ड)[^\n]{0,80}?(?<!\d)\d{6}(?!\d)"  # an Indian PIN
    r"|(?:मकान|फ्लैट|हाउस|प्लॉट)[ \t]?(?:नं\.?|नंबर|न\.)?[ \t]?\d{1,5}"
    r"|\d{1,5}[ \t,/-]{1,3}(?:[\u0900-\u097f]{1,20}[ \t]){0,3}(?:मार्ग|रोड|गली|नगर|कॉलोनी|सेक्टर)"
    r"|[\u4e00-\u9fff]{1,8}(?:路|街|道|巷|弄)[ \t]?\d{1,5}[ \t]?(?:号|號)"
    r"|\d{1,2}[ \t]?丁目[ \t]?\d{1,4}(?:[ \t]?番地?)?(?:[ \t]?\d{1,4}[ \t]?号?)?"
    r"|\d{1,4}-\d{1,4}-\d{1,4}(?=[ \t]?[\u3040-\u30ff\u4e00-\u9fff])"
    r"|[\uac00-\ud7a3\d]{1,10}(?:로|길)[ \t]?\d{1,5}(?:-\d{1,4})?"
    r"|[\uac00-\ud7a3]{1,6}(?:리|동)[ \t]?\d{1,5}-\d{1,4}"
)
