#!/usr/bin/env python3
"""rocke — static check for the builder-order rule: no call (and no brace
initializer) may hold two arguments that each emit IR, because C leaves the
order of their evaluation unspecified and gcc and clang pick differently.

A call "emits" when one of its arguments is a kernel handle: an identifier
(or struct field) declared `rk_kernel *NAME` in the same file. Read-only
queries on the kernel are listed in QUERIES. Usage:
    lint_builder_order.py FILE_OR_DIR...   (exit 1 and one line per site)
"""
import os
import re
import sys

# Calls that take the kernel but never emit an op: value and type queries
# (types are interned and printed by structure, so their order is free).
QUERIES = {
    "rk_value_type", "rk_kernel_name", "rk_builder_error", "rk_value_ok", "rk_kernel_set_attr_int",
    "rk_kernel_set_attr_str", "rk_kernel_finish", "rk_kernel_free", "vtype", "RK_ASSERT", "rk_bug",
}
QUERY_PREFIX = re.compile(r"^(rk_type_|ir_type|ir_t(bits|count|elem|kind|name)$)")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "do", "else", "case"}


def strip(src):
    """Comments, string and char literals and preprocessor lines become spaces (offsets kept)."""
    out = list(src)
    i, n = 0, len(src)

    def blank(a, b):
        for j in range(a, b):
            if out[j] != "\n":
                out[j] = " "

    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            blank(i, min(j + 1, n))
            i = j + 1
        elif c == "#" and (i == 0 or src.rfind("\n", 0, i) == i - 1 or src[src.rfind("\n", 0, i) + 1:i].strip() == ""):
            # a preprocessor line, with its continuations; macro bodies are checked by their expansions' users
            j = i
            while True:
                e = src.find("\n", j)
                if e < 0:
                    e = n
                    break
                if src[e - 1] != "\\":
                    break
                j = e + 1
            blank(i, e)
            i = e
        else:
            i += 1
    return "".join(out)


def matching(text, i, open_c, close_c):
    """Index of the bracket closing the one at text[i]."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == open_c:
            depth += 1
        elif text[j] == close_c:
            depth -= 1
            if depth == 0:
                return j
    return len(text) - 1


def split_top(text):
    """Split at top-level commas (outside (), [], {})."""
    parts, depth, start = [], 0, 0
    for j, c in enumerate(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append((start, text[start:j]))
            start = j + 1
    parts.append((start, text[start:]))
    return parts


CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


class Checker:
    def __init__(self, text, handles):
        self.text = text
        self.handle = re.compile(r"^\s*(?:[A-Za-z_]\w*\s*(?:->|\.)\s*)*(?:" + "|".join(map(re.escape, handles)) +
                                 r")\s*$") if handles else None

    def emits(self, expr):
        """Does expr contain a call with a kernel-handle argument?"""
        if not self.handle:
            return False
        for m in CALL.finditer(expr):
            name = m.group(1)
            if name in KEYWORDS or name in QUERIES or QUERY_PREFIX.match(name):
                continue
            o = m.end() - 1
            c = matching(expr, o, "(", ")")
            if any(self.handle.match(a) for _, a in split_top(expr[o + 1:c])):
                return True
        return False


def check_file(path):
    src = open(path, encoding="utf-8", errors="replace").read()
    text = strip(src)
    handles = sorted(set(re.findall(r"\brk_kernel\s*\*\s*(?:const\s+)?([A-Za-z_]\w*)", text)))
    ck = Checker(text, handles)
    problems = []
    if not handles:
        return problems

    def line_of(off):
        return text.count("\n", 0, off) + 1

    def report(off, what, args):
        emitting = [a.strip() for _, a in args if ck.emits(a)]
        if len(emitting) >= 2:
            shown = " | ".join(re.sub(r"\s+", " ", a)[:60] for a in emitting)
            problems.append(f"{path}:{line_of(off)}: {what} has {len(emitting)} arguments that emit IR "
                            f"(evaluation order is unspecified; assign them to locals first): {shown}")

    for m in CALL.finditer(text):
        name = m.group(1)
        if name in KEYWORDS:
            continue
        o = m.end() - 1
        c = matching(text, o, "(", ")")
        report(m.start(), f"call of {name}()", split_top(text[o + 1:c]))
    # brace initializers: `= {a, b}` and compound literals `(T){a, b}`
    for m in re.finditer(r"(=|\))\s*\{", text):
        o = m.end() - 1
        c = matching(text, o, "{", "}")
        body = text[o + 1:c]
        if ";" in body:     # a block, not an initializer
            continue
        report(o, "initializer", split_top(body))
    return problems


def main(argv):
    files = []
    for p in argv[1:] or ["src", "tools", "bench"]:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                files += [os.path.join(root, f) for f in sorted(names) if f.endswith((".c", ".h"))]
        else:
            files.append(p)
    problems = []
    for f in sorted(files):
        problems += check_file(f)
    for p in problems:
        print(p)
    if problems:
        print(f"lint_builder_order: {len(problems)} site(s) pass two IR-emitting calls to one call or initializer "
              "(see docs/kernels.md, 'Deterministic IR')", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
