"""Identifiers and birth dates in tables (CSV, TSV, Markdown, pipe-separated exports): a header
cell that names an identifier or a birth date (the words of gateway/privacy/labelled_ids.py:
"ИНН", "SSN", "Geburtsdatum", "DOB") makes the number-shaped cells below it in its column the
person's, as the word before a number does in prose:

    ФИО;ИНН;СНИЛС;Дата рождения
    Ибрагимова Зарема Руслановна;506482244903;473-905-676 23;12.03.1987

Linear: each line is split once on its separator; a header is a line of at least three cells.
"""

import re

from gateway.privacy.labelled_ids import BIRTH_WORDS, DATE, ID_ABBREVIATIONS, ID_WORDS, MIN_CHARS, MIN_DIGITS

SEPARATORS = (";", "\t", "|", ",")
MIN_CELLS = 3
MAX_CELL_CHARS = 48
ID_HEADER = re.compile(rf"(?i:{ID_WORDS}|{BIRTH_WORDS})|(?:{ID_ABBREVIATIONS})")
BIRTH_HEADER = re.compile(rf"(?i:{BIRTH_WORDS})")
DATE_CELL = re.compile(DATE)
ID_CELL = re.compile(r"[A-Za-z0-9][A-Za-z0-9 .\-/]{4,30}")


def table_findings(text: str) -> list[tuple[str, int, int]]:
    """(kind, start, end) of the identifier and birth-date cells under a header naming them."""
    found: list[tuple[str, int, int]] = []
    columns: dict[int, str] = {}  # column -> kind, from the last header
    separator = None
    offset = 0
    for line in text.split("\n"):
        line_separator = _separator(line)
        if line_separator is None:
            columns, separator = {}, None
        else:
            cells = line.split(line_separator)
            header = _header(cells)
            if header:
                columns, separator = header, line_separator
            elif line_separator == separator:
                found.extend(_cells(cells, columns, offset, len(line_separator)))
        offset += len(line) + 1
    return found


def _separator(line: str) -> str | None:
    return next((sep for sep in SEPARATORS if line.count(sep) >= MIN_CELLS - 1), None)


def _header(cells: list[str]) -> dict[int, str]:
    """column -> kind for the cells that name an identifier or a birth date, all of them short."""
    columns = {}
    for column, cell in enumerate(cells):
        name = cell.strip(" *#`")
        if len(name) <= MAX_CELL_CHARS and ID_HEADER.fullmatch(name):
            columns[column] = "date_of_birth" if BIRTH_HEADER.fullmatch(name) else "labelled_id"
    return columns


def _cells(cells: list[str], columns: dict[int, str], offset: int, gap: int) -> list[tuple[str, int, int]]:
    found, start = [], offset
    for column, cell in enumerate(cells):
        kind, value = columns.get(column), cell.strip()
        if kind is not None and _is_value(kind, value):
            first = start + cell.index(value)
            found.append((kind, first, first + len(value)))
        start += len(cell) + gap
    return found


def _is_value(kind: str, value: str) -> bool:
    if kind == "date_of_birth":
        return DATE_CELL.fullmatch(value) is not None
    compact = re.sub(r"[ .\-/]", "", value)
    digits = [c for c in compact if c.isdigit()]
    return (
        ID_CELL.fullmatch(value) is not None
        and len(compact) >= MIN_CHARS
        and len(digits) >= MIN_DIGITS
        and len(set(digits)) > 1
    )
