"""Generated mutants for tests/mutants/run --generate: classic mutation
operators applied to the product's C++ source, drawn deterministically.

The hand-written list (mutants.toml) holds the bugs someone thought of;
these are the ones nobody did. Each operator rewrites one line of a .cc file
under sim/, harness/, reports/ or scenarios/:

  relational   a < b  <->  a <= b,  a > b  <->  a >= b
  equality     a == b <->  a != b
  logical      a && b <->  a || b
  negate-if    if (c)  ->  if (!(c))       (after an init-statement's ';')
  delete       a line that is only `return ...;`, `continue;` or `break;`
  constant     an integer literal n -> n + 1, n - 1 (n >= 1)
  swap-args    f(a, b) -> f(b, a) for two adjacent plain arguments (names,
               member accesses, calls without arguments); arguments of
               another type do not compile, and such a mutant is reported
               "uncompilable", so only same-type swaps are scored

Where nothing is mutated, and why:
  - comments and the inside of string and character literals (a lexer masks
    them, raw strings and block comments included): text is not behaviour;
  - preprocessor lines: includes and guards;
  - log text: statements that only print or note (fmt::print, std::cerr,
    std::cout, Note(, RunNote(, TraceNote(), across all their lines, and
    calls of fmt::format's family when swapping arguments: they change what
    a message says, which the report tests check by their own text;
  - a `<` or `>` without a space on both sides: a template's brackets, not a
    comparison (the code base spaces its binary operators).

The draw: each candidate gets a rank, the sha256 of the seed, its file's
path, its line's text with whitespace collapsed (and, when the same text
occurs more than once in the file, which occurrence it is), its operator and
its mutated line likewise collapsed; the N lowest ranks are drawn (equal
ranks in the order file, line, column, operator, replacement). A rank does
not depend on line numbers or on any other file, so a seed names the same
mutants on every machine, and an edit elsewhere does not reshuffle them:
editing file X (or adding tests, which are no candidates) changes only
which of X's mutants are drawn, except at the margin, where a new candidate
of X that ranks among the N lowest displaces the highest-ranked one drawn
(on average N / candidates of a mutant per new candidate: 0.5 % for 60 of
12 000). A line that moves keeps its rank; a line whose text changes gets
new ones. `--under` draws the lowest ranks of its folders alone.
"""

import hashlib
import os
import re
import subprocess

DEFAULT_DIRS = ("sim", "harness", "reports", "scenarios")

LOG_CALLS = ("fmt::print", "std::cerr", "std::cout", "Note(", "RunNote(", "TraceNote(")
FORMAT_CALLS = ("format", "print", "format_to", "Quoted")


def mask(text):
    """`text` with comments blanked and the inside of string and character
    literals replaced by spaces (quotes kept); newlines stay, so offsets and
    lines match the original."""
    out = list(text)
    i, n = 0, len(text)

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            open_paren = text.find("(", i + 2)
            delim = text[i + 2:open_paren]
            close = text.find(")" + delim + '"', open_paren)
            close = n if close < 0 else close
            blank(open_paren + 1, close)
            i = close + len(delim) + 2
        elif c in "\"'":
            # A digit separator (1'000) is not a character literal.
            if c == "'" and i > 0 and text[i - 1].isdigit():
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, min(j, n))
            i = j + 1
        else:
            i += 1
    return "".join(out)


def matching_paren(s, open_at):
    """The index of the ')' that closes s[open_at] == '(', or -1 on this line."""
    depth = 0
    for k in range(open_at, len(s)):
        if s[k] in "([{":
            depth += 1
        elif s[k] in ")]}":
            depth -= 1
            if depth == 0:
                return k
    return -1


def parens_after(code, m):
    """(open, close) of the parentheses that regex match `m` ends by opening,
    or None when they do not close on this line."""
    open_at = m.end() - 1
    close = matching_paren(code, open_at)
    return (open_at, close) if close >= 0 else None


def top_level_splits(s, start, end, sep):
    """Offsets of `sep` characters in s[start:end] outside any brackets."""
    depth, at = 0, []
    for k in range(start, end):
        if s[k] in "([{":
            depth += 1
        elif s[k] in ")]}":
            depth -= 1
        elif s[k] == sep and depth == 0:
            at.append(k)
    return at


PLAIN_ARG = re.compile(r"^[A-Za-z_]\w*(?:(?:\.|->|::)[A-Za-z_]\w*)*(?:\(\))?$")
COMPARISON = re.compile(r"(?<= )(<=|>=|==|!=|<|>)(?= )")
LOGICAL = re.compile(r"(?<= )(&&|\|\|)(?= )")
INTEGER = re.compile(r"(?<![\w.'])(\d[\d']*)([uU]?[lL]{0,2}[uU]?)(?![\w.'])")
IF_OPEN = re.compile(r"\bif \(")
CALL = re.compile(r"([A-Za-z_]\w*)\(")
SWAPS = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "==", "&&": "||", "||": "&&"}


def line_candidates(line, code):
    """(column, operator, mutated line) for one line; `code` is its masked
    form."""
    out = []
    for m in COMPARISON.finditer(code):
        op = m.group(1)
        kind = "equality" if op in ("==", "!=") else "relational"
        out.append((m.start(), kind, line[:m.start()] + SWAPS[op] + line[m.end():]))
    for m in LOGICAL.finditer(code):
        out.append((m.start(), "logical", line[:m.start()] + SWAPS[m.group(1)] + line[m.end():]))
    for m in IF_OPEN.finditer(code):
        if code.startswith("if constexpr", m.start()):
            continue
        span = parens_after(code, m)
        if span is None:
            continue
        open_at, close = span
        semis = top_level_splits(code, open_at + 1, close, ";")
        begin = (semis[-1] + 1) if semis else open_at + 1
        cond = line[begin:close]
        lead = " " if semis and cond.startswith(" ") else ""
        out.append((m.start(), "negate-if", line[:begin] + lead + "!(" + cond.strip() + ")" + line[close:]))
    stripped = code.strip()
    if (stripped.startswith("return ") or stripped.startswith("return;") or stripped in ("continue;", "break;")) \
            and stripped.endswith(";") and stripped.count("(") == stripped.count(")"):
        out.append((len(code) - len(code.lstrip()), "delete", "\n" if line.endswith("\n") else ""))
    for m in INTEGER.finditer(code):
        digits = m.group(1).replace("'", "")
        if not digits.isdigit() or (len(digits) > 1 and digits.startswith("0")):
            continue  # octal or odd: leave it
        n = int(digits)
        for v in (n + 1, n - 1) if n >= 1 else (n + 1,):
            out.append((m.start(), "constant", line[:m.start()] + str(v) + line[m.start() + len(m.group(1)):]))
    for m in CALL.finditer(code):
        if m.group(1) in FORMAT_CALLS or m.group(1).isupper() or m.group(1) in ("if", "for", "while", "switch",
                                                                                  "return", "sizeof", "catch"):
            continue
        span = parens_after(code, m)
        if span is None:
            continue
        open_at, close = span
        commas = top_level_splits(code, open_at + 1, close, ",")
        bounds = [open_at + 1] + [c + 1 for c in commas] + [close + 1]
        args = [(bounds[k], bounds[k + 1] - 1) for k in range(len(bounds) - 1)]
        texts = [line[a:b].strip() for a, b in args]
        for k in range(len(args) - 1):
            if not (PLAIN_ARG.match(texts[k]) and PLAIN_ARG.match(texts[k + 1])) or texts[k] == texts[k + 1]:
                continue
            (a0, b0), (a1, b1) = args[k], args[k + 1]
            first = line[a0:b0].replace(texts[k], texts[k + 1], 1)
            second = line[a1:b1].replace(texts[k + 1], texts[k], 1)
            out.append((a0, "swap-args", line[:a0] + first + "," + second + line[b1:]))
    return out


def file_candidates(root, rel):
    """Every candidate of one file: dicts with file, line (1-based), column,
    operator, find (the line), replace (the mutated line) and occurrence
    (how many earlier lines of the file read the same, whitespace aside)."""
    with open(os.path.join(root, rel)) as f:
        text = f.read()
    lines = text.splitlines(keepends=True)
    codes = mask(text).splitlines(keepends=True)
    out = []
    seen = {}  # collapsed line text -> lines so far
    log_depth = 0  # open parentheses of a log statement that goes on
    for i, (line, code) in enumerate(zip(lines, codes), 1):
        occurrence = seen.get(collapsed(line), 0)
        seen[collapsed(line)] = occurrence + 1
        if log_depth > 0 or any(call in code for call in LOG_CALLS):
            log_depth = max(0, log_depth + code.count("(") - code.count(")"))
            continue
        if code.lstrip().startswith("#"):
            continue
        for col, op, mutated in line_candidates(line, code):
            if mutated != line:
                out.append({"file": rel, "line": i, "column": col + 1, "operator": op, "find": line,
                            "replace": mutated, "occurrence": occurrence})
    return out


def source_files(root, under):
    files = subprocess.run(["git", "ls-files", "-z", "--", *under], cwd=root, check=True,
                           capture_output=True).stdout.decode().split("\0")
    return sorted(f for f in files if f.endswith(".cc") and os.path.isfile(os.path.join(root, f)))


def collapsed(text):
    """`text` with runs of whitespace as one space and none at either end."""
    return " ".join(text.split())


def rank(seed, candidate):
    """The candidate's place in seed's draw: a hash of what it mutates,
    never of where (see the module's docstring)."""
    key = "\0".join((str(seed), candidate["file"], collapsed(candidate["find"]), str(candidate["occurrence"]),
                      candidate["operator"], collapsed(candidate["replace"])))
    return hashlib.sha256(key.encode()).hexdigest()


def generate(root, count, seed, under=DEFAULT_DIRS):
    """The `count` lowest-ranked mutants of `seed` (rank()) among every
    candidate of the .cc files under `under`; also returns how many
    candidates there were."""
    candidates = []
    for rel in source_files(root, under):
        candidates.extend(file_candidates(root, rel))
    order = lambda c: (c["file"], c["line"], c["column"], c["operator"], c["replace"])  # noqa: E731
    drawn = sorted(candidates, key=lambda c: (rank(seed, c), order(c)))[:max(0, count)]
    drawn.sort(key=order)
    for m in drawn:
        m["name"] = f"{m['file']}:{m['line']}:{m['column']}:{m['operator']}"
        m["why"] = f"{m['operator']}: {m['find'].strip()}  ->  {m['replace'].strip() or '(deleted)'}"
        m["generated"] = True
    return drawn, len(candidates)


TEST_DEFINITION = re.compile(r"^\s*(?:TEST|TEST_F|TEST_P|TYPED_TEST|RC_GTEST_PROP|RC_GTEST_FIXTURE_PROP)\((\w+),", re.M)


def targeted_tests(root, rel, listed=()):
    """A ctest regex of the gtest suites a mutant of `rel` should meet
    first: the suites defined in test sources that include its header or
    are named after it (foo.cc: foo.h, foo_test.cc), else those of the test
    folder that mirrors its source folder (sim/x.cc: tests/sim/), and the
    `tests` of every mutant in `listed` (the list) that mutates `rel` too:
    a test once written for a bug in a file is where the next bug in it is
    likeliest caught, wherever that test lives. None when there are none."""
    stem = os.path.splitext(os.path.basename(rel))[0]
    mention = re.compile(r"\b" + re.escape(stem) + r"\.(h|cc)\b")
    tests = os.path.join(root, "tests")
    by_file = {}
    for dirpath, _, names in os.walk(tests):
        for name in names:
            if name.endswith(".cc"):
                path = os.path.join(dirpath, name)
                with open(path, errors="replace") as f:
                    by_file[os.path.relpath(path, root)] = f.read()
    suites = set()
    for path, text in by_file.items():
        if os.path.basename(path) == stem + "_test.cc" or mention.search(text):
            suites.update(TEST_DEFINITION.findall(text))
    if not suites:
        mirror = os.path.join("tests", rel.split("/")[0]) + "/"
        for path, text in by_file.items():
            if path.startswith(mirror):
                suites.update(TEST_DEFINITION.findall(text))
    # ctest's regex has no \w; a parameterized suite's tests are Prefix/Suite.Name/N.
    regexes = ["^([A-Za-z0-9_]+/)?(" + "|".join(sorted(suites)) + ")\\."] if suites else []
    regexes += sorted({m["tests"] for m in listed if m.get("file") == rel and m.get("tests")})
    if not regexes:
        return None
    # Joined at the top level, unbracketed: CMake's regex engine takes at
    # most ten groups, and `|` binds loosest anyway.
    return "|".join(regexes)
