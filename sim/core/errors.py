"""Errors caused by the user's input, reported as one clear message, never a traceback; and the
limits every input file is read under.

Every file a user hands the tool (a catalogue, a tile set, a strategy file, a city, a run's
manifest) is read by :func:`read_input`, which refuses a file larger than its limit before
reading it (and reads at most that much from a pipe or a device such as ``/dev/zero``), and
checked by :func:`check_text` before it is parsed, so a huge, endless or deeply nested file, or a
number longer than Python converts, is one line naming it, in milliseconds, never a hang,
gigabytes of memory, a RecursionError or a ValueError. :func:`decode_text` accepts a UTF-8
byte-order mark (Windows editors write one; the text means the same without it) and names a
UTF-16 or UTF-32 file instead of calling it "not UTF-8 text".
"""

import re
import stat
from pathlib import Path


class UserError(Exception):
    """Bad input (a file, an argument, a run folder): the message names the problem and where."""


class CatalogError(UserError):
    """A catalogue file with one or more problems; ``problems`` holds one message per problem."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))

    def __reduce__(self):  # pickled by worker processes: keep the list, not the joined text
        return (type(self), (self.problems,))


# Arrays and tables nested deeper than this are refused before parsing. The deepest legitimate
# input is a catalogue tile's effect list (array > inline table > array: 3 levels, 5 counting
# [[tiles]] headers); a run manifest nests 4 levels.
MAX_NESTING = 32


def _size(count: int) -> str:
    for unit, factor in (("MB", 1_000_000), ("kB", 1_000)):
        if count >= factor:
            return f"{count / factor:g} {unit}"
    return f"{count} bytes"


def _a(noun: str) -> str:
    """``noun`` with its indefinite article ("an output listing", "a catalogue file")."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def read_input(path, what: str, max_bytes: int, shown: str | None = None) -> bytes:
    """The bytes of the user's file ``path`` (``what``: "catalogue file", "city file", ...;
    ``shown``: how messages name it, default the path). UserError when it is missing, a
    folder, unreadable or larger than ``max_bytes``: a regular file's size is checked before
    reading, anything else (a pipe, ``/dev/zero``) is read up to ``max_bytes`` + 1 bytes."""
    path = Path(path)
    shown = str(path) if shown is None else shown
    too_large = f"{shown}: larger than {_size(max_bytes)}, the limit for {_a(what)}"
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise UserError(f"{shown}: is a directory, not {_a(what)}")
        if stat.S_ISREG(info.st_mode) and info.st_size > max_bytes:
            raise UserError(too_large)
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except FileNotFoundError:
        raise UserError(f"{shown}: {what} not found") from None
    except IsADirectoryError:
        raise UserError(f"{shown}: is a directory, not {_a(what)}") from None
    except OSError as exc:
        raise UserError(f"{shown}: cannot read the {what} ({exc.strerror or exc})") from None
    if len(data) > max_bytes:
        raise UserError(too_large)
    return data


# Tokens that may contain brackets which do not nest (strings, comments), then the brackets.
# Every string pattern also ends at the end of its line (or of the file), so an unterminated
# string is consumed once: the scan is linear in the file's length whatever the file holds.
_TOML_TOKENS = re.compile(
    r'"""(?:[^\\]|\\.)*?(?:"""|\Z)'
    r"|'''.*?(?:'''|\Z)"
    r'|"[^"\\\n]*(?:\\.[^"\\\n]*)*(?:"|$)'
    r"|'[^'\n]*(?:'|$)"
    r"|#[^\n]*"
    r"|[\[\]{}]",
    re.S | re.M,
)
_JSON_TOKENS = re.compile(r'"[^"\\\n]*(?:\\.[^"\\\n]*)*(?:"|$)|[\[\]{}]', re.M)
_TOKENS = {"toml": _TOML_TOKENS, "json": _JSON_TOKENS}

# Python refuses to convert a whole number of more than 4,300 digits (a ValueError the parsers
# let through); no field of any input needs more than 19. A longer run of digits (TOML allows
# "_" between them) outside strings and comments is refused before parsing, in every base TOML
# has: a hexadecimal one parses (its base is a power of two), but a message showing it in
# decimal would raise (a TOML octal or binary number's digits are decimal digits after "0o" or
# "0b": the first pattern). A thousand digits in any base stay below the limit in decimal. The
# look-behinds start a match only at the beginning of a run, so the scan stays linear.
MAX_DIGITS = 1000
_LONG_NUMBER = re.compile(
    rf"(?<![0-9_])[0-9](?:_?[0-9]){{{MAX_DIGITS},}}"
    rf"|(?<![0-9A-Za-z_])0[xX][0-9A-Fa-f](?:_?[0-9A-Fa-f]){{{MAX_DIGITS},}}"
)
_BASES = {"0x": "hexadecimal", "0o": "octal", "0b": "binary"}
_STRINGS = {
    "toml": re.compile(_TOML_TOKENS.pattern.rsplit("|", 1)[0], re.S | re.M),
    "json": re.compile(_JSON_TOKENS.pattern.rsplit("|", 1)[0], re.M),
}


def check_nesting(text: str, syntax: str, shown: str, max_depth: int = MAX_NESTING) -> None:
    """UserError if ``text`` (``syntax``: "toml" or "json") nests arrays and tables more than
    ``max_depth`` deep (brackets in strings and comments do not count). Run before parsing:
    the parsers recurse once per level."""
    depth = 0
    for match in _TOKENS[syntax].finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > max_depth:
                line = text.count("\n", 0, match.start()) + 1
                raise UserError(
                    f"{shown}: arrays or tables nested more than {max_depth} deep (line {line})"
                )
        elif token in ("]", "}"):
            depth -= 1


def check_numbers(text: str, syntax: str, shown: str) -> None:
    """UserError if ``text`` (``syntax``: "toml" or "json") holds a number of more than
    MAX_DIGITS digits outside its strings and comments. Run before parsing: the parsers would
    raise a bare ValueError past Python's 4,300-digit conversion limit."""
    if not _LONG_NUMBER.search(text):
        return  # the common case: one quick scan
    strings = [(m.start(), m.end()) for m in _STRINGS[syntax].finditer(text)]
    for match in _LONG_NUMBER.finditer(text):
        if any(start <= match.start() < end for start, end in strings):
            continue
        raise UserError(_long_number_message(text, match.start(), match.group(), shown))


def _long_number_message(text: str, start: int, number: str, shown: str) -> str:
    """The one line refusing ``number`` (at ``start`` in ``text``): its base, its count of
    digits, its line and its first digits (never the whole: a message is one readable line)."""
    prefix = text[max(start - 2, 0) : start].lower()
    if number[:2].lower() == "0x":
        prefix, number = number[:2].lower(), number[2:]
    base = _BASES.get(prefix)
    digits = len(number.replace("_", ""))
    line = text.count("\n", 0, start) + 1
    shown_number = (prefix if base else "") + number[:20]
    kind = {None: "a number", "octal": "an octal number"}.get(base, f"a {base} number")
    return (
        f"{shown}: {kind} of {digits:,} digits (line {line}), {shown_number}...; no "
        f"value is longer than {MAX_DIGITS} digits"
    )


def check_text(text: str, syntax: str, shown: str, max_depth: int = MAX_NESTING) -> None:
    """Everything checked before a user's TOML or JSON text is parsed: its nesting
    (:func:`check_nesting`) and its numbers (:func:`check_numbers`)."""
    check_nesting(text, syntax, shown, max_depth)
    check_numbers(text, syntax, shown)


# Byte-order marks of encodings that are not UTF-8 (longest first: UTF-32 LE starts like
# UTF-16 LE).
_OTHER_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)
UTF8_BOM = b"\xef\xbb\xbf"


def decode_text(data: bytes, shown: str) -> str:
    """``data`` as UTF-8 text, a leading UTF-8 byte-order mark dropped; UserError naming a
    UTF-16 or UTF-32 file (by its byte-order mark, or the zero bytes every other character of
    ASCII text has in them), else the first line that is not UTF-8."""
    if data.startswith(UTF8_BOM):
        data = data[len(UTF8_BOM) :]
    for bom, encoding in _OTHER_BOMS:
        if data.startswith(bom):
            raise UserError(f"{shown}: {encoding} text (byte-order mark); save it as UTF-8")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UserError(f"{shown}: not UTF-8 text (line {line})") from None
    if "\x00" in text[:4096]:
        raise UserError(
            f"{shown}: holds zero bytes, as UTF-16 or UTF-32 text does; save it as UTF-8"
        )
    return text


def read_toml_input(path, what: str, max_bytes: int, shown: str) -> tuple[dict, bytes]:
    """A user's TOML file read under the limits above: its parsed content and its exact bytes.
    A missing or oversized file is a UserError; text that is not UTF-8, nested too deeply,
    holding a number too long to convert or not TOML is a CatalogError naming the file (and
    the line)."""
    import tomllib

    content = read_input(path, what, max_bytes, shown=shown)
    try:
        text = decode_text(content, shown)
        check_text(text, "toml", shown)
        return tomllib.loads(text), content
    except UserError as exc:
        raise CatalogError([str(exc)]) from None
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError([f"{shown}: TOML syntax error: {exc}"]) from None
    except RecursionError:  # the nesting check stops this first; never a traceback
        raise CatalogError([f"{shown}: nested too deeply"]) from None


class KeptByDigest:
    """What was compiled from a user's data file, kept by the sha256 of the file's bytes (the
    last ``keep`` of them): a run reads its data file when it plans and again when its folder
    is opened, and ``neom balance`` for every candidate, while the compile depends on the bytes
    alone (the file's name only names it in messages). A file with problems is never kept,
    since only a compiled object is put. One per game's loader (catalogues, tile sets)."""

    def __init__(self, keep: int = 32):
        self.keep = keep
        self.kept: dict = {}

    def take(self, path: Path, what: str, max_bytes: int, shown: str) -> tuple[object, bytes]:
        """The object compiled from ``path``'s bytes before, taken out (``put`` it back), or
        None; and the bytes read (None: not read). Only a regular file is read here: a pipe is
        read once, by the loader."""
        import hashlib

        if not path.is_file():
            return None, None
        content = read_input(path, what, max_bytes, shown)
        return self.kept.pop(hashlib.sha256(content).hexdigest(), None), content

    def put(self, digest: str, compiled) -> None:
        """Keep ``compiled`` as the most recent; forget the oldest beyond ``keep``."""
        self.kept[digest] = compiled
        for stale in list(self.kept)[: -self.keep]:  # safe if another thread reads one too
            self.kept.pop(stale, None)
