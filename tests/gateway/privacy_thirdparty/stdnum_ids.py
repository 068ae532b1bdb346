"""python-stdnum's own example numbers: the strings each module's docstring doctests pass to its
functions (`>>> validate('…')`, `>>> format('…')`, ...) or get back, as the module's authors wrote
them (spaced, dashed, dotted), those its own `is_valid` accepts.

Which modules name a person, and so are private, is decided here by what the number identifies:
a national, social-security, health or personal tax number of one person; a passport; a pupil
number; a bank account (as presidio labels IBAN_CODE). Product, security, bank and company
numbers, postal codes and payment references are public. Numbers that name persons and companies
alike (es.nif, cl.rut, ar.cuit, hr.oib, is_.kennitala, us.tin, au.tfn, ...) and VAT numbers that
are a person's id for a sole trader (cz.dic, lv.pvn, bg.vat, nl.btw, se.orgnr, ...) are left out;
so are device, vehicle and property numbers (imei, imsi, mac, es.referenciacatastral, ...)."""

import importlib
import re

from tests.gateway.privacy_thirdparty.carriers import fill, language_of, single_slot
from tests.gateway.privacy_thirdparty.case import Case

PERSON_MODULES = {
    "national_id": (
        "ar.dni be.bis be.eid be.nn bg.egn bg.pnf br.cpf cn.ric cr.cpf cr.cr cu.ni cz.rc dk.cpr "
        "do.cedula ec.ci ee.ik es.dni es.nie fi.hetu fr.nir id.nik il.idnr in_.aadhaar in_.epic "
        "in_.vid jp.in_ kr.rrn lt.asmens mu.nid mx.curp my.nric nl.bsn no.fodselsnummer pe.cui "
        "pk.cnic pl.pesel pt.cc ro.cnp se.personnummer si.emso sk.rc th.pin tr.tckimlik za.idnr"
    ),
    "social_security": "at.vnr be.ssn ca.sin ch.ssn gr.amka us.ssn",
    "health_id": "ca.bc_phn gb.nhs",
    "personal_tax_id": (
        "de.idnr fi.veronumero ie.pps in_.pan it.codicefiscale mx.rfc ru.inn ua.rntrc us.atin us.itin us.ptin"
    ),
    "passport": "nl.identiteitskaartnummer",
    "pupil_id": "gb.upn nl.onderwijsnummer",
    "bank_account": "iban be.iban es.iban me.iban no.iban es.ccc cz.bankaccount no.kontonr nz.bankaccount ar.cbu",
}
PUBLIC_MODULES = {
    "product_code": "isbn issn ismn isan isrc ean gs1_128 grid casrn imo iso6346 it.aic eu.ecnumber eu.banknote",
    "security_code": "isin cusip figi gb.sedol de.wkn cfi lei",
    "bank_code": "bic us.rtn",
    "company_id": (
        "at.businessid at.uid au.abn au.acn be.vat br.cnpj ca.bn ch.uid ch.vat cn.uscc cr.cpj "
        "de.handelsregisternummer de.vat dk.cvr ec.ruc ee.kmkr ee.registrikood es.cif fi.alv "
        "fi.associationid fi.ytunnus fr.rcs fr.siren fr.siret fr.tva gb.vat il.hp it.iva jp.cn "
        "kr.brn ma.ice md.idno no.mva no.orgnr pe.ruc pl.regon ro.onrc sg.uen si.maticna th.moa "
        "tw.ubn ua.edrpou us.ein eu.at_02 fr.accise"
    ),
    "postal_code": "at.postleitzahl es.postal_code nl.postcode se.postnummer",
    "payment_reference": "be.ogm_vcs ch.esr iso11649 do.ncf nl.brin de.leitweg",
}
# Modules that number persons and organisations apart: the persons' form only.
PERSONS_ONLY = {
    "in_.pan": lambda number: number[3] == "P",  # the fourth letter says the holder: P, a person
    "ru.inn": lambda number: len(number) == 12,  # 10 digits: an organisation
    "mx.rfc": lambda number: len(number) == 13,  # 12 characters: a company
}
# a doctest call on one string, its comment, and the first line of its answer
EXAMPLE = re.compile(r">>> \w+\((['\"])([^'\"]+)\1\)([^\n]*)\n\s*(\S[^\n]*)")
NOT_A_PERSON = re.compile(r"(?i)compan|organi[sz]|non-personal|business|legal")


def examples(module_name: str) -> list[str]:
    """Every string its doctests pass to a function or answer with (`format`'s output) that the
    module accepts, in docstring order, without repeats; not those its comments call a company's."""
    module = importlib.import_module(f"stdnum.{module_name}")
    found = []
    for _, value, comment, answer in EXAMPLE.findall(module.__doc__ or ""):
        answered = answer[1:-1] if answer[:1] in "'\"" and answer[:1] == answer[-1:] else None
        for candidate in (value, answered):
            fresh = candidate and candidate not in found and not NOT_A_PERSON.search(comment)
            if fresh and _accepts(module, candidate):
                found.append(candidate)
    keep = PERSONS_ONLY.get(module_name)
    return [value for value in found if keep is None or keep(module.compact(value))]


def _accepts(module, value: str) -> bool:
    try:
        return module.is_valid(value)
    except Exception:  # a module's own check failing on another's example: not accepted
        return False


def label(module_name: str) -> str:
    """The number's short name, from the first line of its module's docstring ("RRN")."""
    first = importlib.import_module(f"stdnum.{module_name}").__doc__.strip().splitlines()[0]
    return re.split(r" \(|, ", first.rstrip("."), maxsplit=1)[0]


def language(module_name: str) -> str:
    country, dot, _ = module_name.partition(".")
    return language_of(country.rstrip("_")) if dot else "en"


def stdnum_cases() -> list[Case]:
    cases = []
    kinds = [(kind, names, True) for kind, names in PERSON_MODULES.items()]
    kinds += [(kind, names, False) for kind, names in PUBLIC_MODULES.items()]
    carriers = {"bank_account": single_slot("iban")}
    for kind, names, is_private in kinds:
        templates = carriers.get(kind, single_slot("ssn") if is_private else ())
        for module_name in names.split():
            source = f"python-stdnum stdnum.{module_name} docstring"
            for i, value in enumerate(examples(module_name)):
                lang = language(module_name)
                cases.append(Case(kind, lang, f"{label(module_name)}: {value}", is_private, source))
                if templates:
                    text = fill(templates[i % len(templates)], value)
                    cases.append(
                        Case(kind, lang, text, is_private, f"{source} + presidio-evaluator template")
                    )
    return cases
