#!/usr/bin/env python3
"""Fails when a C++ source file is over 500 lines or a function body is over 80 lines.

Scope: the C++ files the format check covers (git ls-files src/ apps/ tests/ *.h *.cc, fuzz/*.cc).
Python and JavaScript (reference/, tools/, tests/**/*.py|mjs) are oracles, corpus generators and
client scripts, not the product; their budgets are left to review.

Function extents come from two sources, and both are checked:
  * Universal Ctags (`ctags --fields=+ne --c++-kinds=fp`): functions, methods, and the lambdas it
    names `__anon...`, each with its first line (the name's line) and `end:` line;
  * a brace scanner over the source with comments, string, character and raw-string literals
    blanked out: every braced body opened after `) {` (with const/noexcept/override/mutable/
    `-> type` in between) whose callee is not a control keyword, and every lambda `[...] {`.
    This finds what ctags does not report: gtest bodies (TEST, TEST_F, TEST_P, TYPED_TEST, ... and
    any other ALL_CAPS macro followed by a body), lambdas ctags missed, and functions it misparsed.
    A scanned body that ends on the same line as a ctags function inside which it starts is that
    function (or nested in it on its last line) and is not reported twice.
A function's length is end_line - first_line + 1 (signature line through closing brace).

Kernel inner bodies may reach 150 lines when the function carries a marker comment, either on its
first line or in the `//` comment block directly above its declaration:
    // k3-size: kernel body, <reason: why splitting it would cost speed or clarity>
The reason is required. A marker on a function over 150 lines fails; a marker on a function of 80
lines or fewer fails as unnecessary (a stale exception would hide the next growth), and so does a
marker attached to no function.

Usage: tools/check_sizes.py [REPO_ROOT]; --self-test checks the checker itself. Needs Universal
Ctags (scripts/install-deps.sh installs it); without it the check fails rather than skips.
"""
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

FILE_LIMIT = 500
FUNCTION_LIMIT = 80
KERNEL_LIMIT = 150
PATTERNS = ["src/*.h", "src/*.cc", "apps/*.h", "apps/*.cc", "tests/*.h", "tests/*.cc", "fuzz/*.cc"]
MARKER = re.compile(r"//\s*k3-size:\s*kernel body\b\s*[,:;-]?\s*(.*)$")
MARKER_ANY = re.compile(r"//\s*k3-size:")
MIN_REASON_CHARS = 10
CONTROL = {"if", "for", "while", "switch", "catch", "constexpr", "consteval", "return", "sizeof",
           "alignof", "decltype", "static_assert", "co_return", "co_await", "co_yield"}
OPERATOR = re.compile(r"\boperator\b[^;{}()\w]*(\(\s*\))?\s*$")  # text before an operator's '('
QUALIFIERS = {"const", "volatile", "noexcept", "override", "final", "mutable", "constexpr",
              "consteval", "static"}


class CtagsMissing(Exception):
    pass


def mask_code(text):
    """Returns text with comments, preprocessor lines and literals replaced by spaces.

    Newlines are kept, so offsets and line numbers stay those of the original text. Handles
    // and /* */ comments, "..." with escapes, '...' (but not digit separators as in 1'000),
    raw strings R"delim(...)delim" with any encoding prefix, and #-directives with continuations.
    """
    out = list(text)
    n = len(text)
    i = 0
    line_start = True

    def blank(a, b):
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if c == "\n":
            line_start = True
            i += 1
            continue
        if line_start and c in " \t":
            i += 1
            continue
        if line_start and c == "#":
            j = i
            while j < n and text[j] != "\n":
                if text[j] == "\\" and j + 1 < n and text[j + 1] == "\n":
                    j += 2
                    continue
                if text.startswith("/*", j):  # a block comment may start on a directive line
                    break
                j += 1
            blank(i, j)
            i = j
            continue
        line_start = False
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
        elif c == '"':
            prefix = re.search(r"[A-Za-z0-9_]*$", text[max(0, i - 8):i]).group(0)
            if prefix in ("R", "u8R", "uR", "UR", "LR"):
                paren = text.find("(", i)
                delim = text[i + 1:paren]
                end = text.find(")" + delim + '"', paren)
                j = n if end < 0 else end + len(delim) + 2
            else:
                j = i + 1
                while j < n and text[j] != '"' and text[j] != "\n":
                    j += 2 if text[j] == "\\" else 1
                j += 1
            blank(i, j)
            i = j
        elif c == "'":
            k = i - 1
            while k >= 0 and (text[k].isalnum() or text[k] in "_.'"):
                k -= 1
            if k + 1 < i and text[k + 1].isdigit():  # digit separator inside a number
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != "'" and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j += 1
            blank(i, j)
            i = j
        else:
            i += 1
    return "".join(out)


def line_of(offsets, pos):
    """1-based line of character offset pos; offsets[k] is the offset where line k+1 starts."""
    lo, hi = 0, len(offsets) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if offsets[mid] <= pos:
            lo = mid
        else:
            hi = mid - 1
    return lo + 1


def match_pairs(code):
    """Maps each '(' '[' '{' offset to its closer, and each closer to its opener (unbalanced: none)."""
    pairs = {}
    stack = []
    openers = {")": "(", "]": "[", "}": "{"}
    for i, c in enumerate(code):
        if c in "([{":
            stack.append(i)
        elif c in ")]}":
            if stack and code[stack[-1]] == openers[c]:
                j = stack.pop()
                pairs[j] = i
                pairs[i] = j
    return pairs


def skip_space_back(code, i):
    while i >= 0 and code[i].isspace():
        i -= 1
    return i


def word_before(code, i):
    """The identifier ending at or before offset i (after spaces) and its start offset."""
    i = skip_space_back(code, i)
    j = i
    while j >= 0 and (code[j].isalnum() or code[j] == "_"):
        j -= 1
    return code[j + 1:i + 1], j + 1


def is_lambda_introducer(code, open_bracket):
    """True when the '[' at open_bracket starts a lambda, not a subscript or an attribute."""
    k = skip_space_back(code, open_bracket - 1)
    if k < 0:
        return True
    prev = code[k]
    if prev == "[" or code.startswith("[[", open_bracket):
        return False  # attribute [[...]]
    if prev.isalnum() or prev == "_":
        word, _ = word_before(code, k)
        return word in {"return", "co_return", "co_yield", "case"}
    return prev not in ")]"


def qualifiers_ok(region):
    """True when the text between ')' and '{' is only function qualifiers and a trailing type."""
    head, arrow, tail = region.partition("->")
    words = re.findall(r"[A-Za-z_]\w*|\S", head)
    if any(w not in QUALIFIERS and w not in ("&", "&&") for w in words):
        return False
    return not arrow or re.fullmatch(r"[\w\s:<>,&*]*", tail) is not None


def scan_bodies(text):
    """Yields (first_line, end_line, name) for every function-like braced body in text."""
    code = mask_code(text)
    offsets = [0] + [m.end() for m in re.finditer(r"\n", text)]
    pairs = match_pairs(code)
    for open_brace, c in enumerate(code):
        if c != "{" or open_brace not in pairs:
            continue
        k = skip_space_back(code, open_brace - 1)
        # Walk back over qualifiers (const, noexcept, -> type, ...) to the ')' or ']' before them.
        j = k
        while j >= 0 and code[j] not in ")];{}(=":
            j -= 1
        if j < 0 or code[j] not in ")]" or not qualifiers_ok(code[j + 1:k + 1]):
            continue
        name = None
        start = None
        if code[j] == "]":
            opener = pairs.get(j)
            if opener is not None and is_lambda_introducer(code, opener):
                name, start = "lambda", opener
        else:
            opener = pairs.get(j)
            if opener is None:
                continue
            before = skip_space_back(code, opener - 1)
            if OPERATOR.search(code[max(0, opener - 40):opener]):
                start = code.rfind("operator", 0, opener)
                name = " ".join(code[start:opener].split())
            elif before >= 0 and code[before] == "]":
                bracket = pairs.get(before)
                if bracket is not None and is_lambda_introducer(code, bracket):
                    name, start = "lambda", bracket
            else:
                word, word_start = word_before(code, opener - 1)
                if word and word not in CONTROL and not word[0].isdigit():
                    start = word_start
                    if re.fullmatch(r"[A-Z][A-Z0-9_]+", word):
                        args = " ".join(text[opener + 1:j].split())
                        name = f"{word}({args})"
                    else:
                        name = word
        if name:
            yield line_of(offsets, start), line_of(offsets, pairs[open_brace]), name


def run_ctags(root, files, ctags):
    exe = shutil.which(ctags)
    if exe is None:
        raise CtagsMissing(f"'{ctags}' not found")
    version = subprocess.run([exe, "--version"], capture_output=True, text=True)
    if "Universal Ctags" not in version.stdout:
        raise CtagsMissing(f"'{exe}' is not Universal Ctags (it must report end: lines)")
    proc = subprocess.run(
        [exe, "--output-format=json", "--fields=+ne", "--c++-kinds=fp", "--language-force=C++",
         "--sort=no", "-o", "-", "-L", "-"],
        input="\n".join(files), capture_output=True, text=True, cwd=root)
    if proc.returncode != 0:
        raise CtagsMissing(f"ctags failed: {proc.stderr.strip()}")
    tags = {}
    for line in proc.stdout.splitlines():
        tag = json.loads(line)
        if tag.get("kind") != "function" or "end" not in tag:
            continue  # prototypes have no body
        name = tag["name"]
        if name.startswith("__anon"):
            scope = tag.get("scope", "").split("::")[-1]
            name = f"lambda in {scope}" if scope and not scope.startswith("__anon") else "lambda"
        tags.setdefault(tag["path"], []).append((tag["line"], tag["end"], name))
    return tags


def find_marker(lines, first_line):
    """Line number (1-based) of the k3-size marker owned by the function starting at first_line."""
    if MARKER_ANY.search(lines[first_line - 1]):
        return first_line
    k = first_line - 2  # index of the line above
    # Declaration lines above the name's line: template <...>, a return type on its own line.
    steps = 0
    while k >= 0 and steps < 3:
        s = lines[k].strip()
        if s and not s.startswith("//") and not s.endswith((";", "{", "}", ":")) \
                and not s.startswith("#"):
            k -= 1
            steps += 1
        else:
            break
    while k >= 0 and lines[k].strip().startswith("//"):
        if MARKER_ANY.search(lines[k]):
            return k + 1
        k -= 1
    return None


def check_file(path, text, ctags_functions):
    errors = []
    lines = text.split("\n")
    count = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if count > FILE_LIMIT:
        errors.append(f"{path}: {count} lines (limit {FILE_LIMIT})")
    functions = list(ctags_functions)
    for first, end, name in scan_bodies(text):
        same = [i for i, (f_first, f_end, _) in enumerate(functions)
                if f_end == end and f_first <= first]
        if not same:
            functions.append((first, end, name))
        for i in same:  # ctags names a gtest body after its macro: keep the suite and test names
            f_first, f_end, f_name = functions[i]
            if name.startswith(f_name + "(") and f_first == first:
                functions[i] = (f_first, f_end, name)
    used_markers = set()
    for first, end, name in sorted(set(functions)):
        length = end - first + 1
        marker_line = find_marker(lines, first)
        if marker_line is None:
            if length > FUNCTION_LIMIT:
                errors.append(f"{path}:{first}: function {name} is {length} lines "
                              f"(limit {FUNCTION_LIMIT})")
            continue
        used_markers.add(marker_line)
        m = MARKER.search(lines[marker_line - 1])
        if not m or len(m.group(1).strip()) < MIN_REASON_CHARS:
            errors.append(f"{path}:{marker_line}: k3-size marker needs the form "
                          f"'// k3-size: kernel body, <reason>' with a reason")
        elif length > KERNEL_LIMIT:
            errors.append(f"{path}:{first}: function {name} is {length} lines "
                          f"(limit {KERNEL_LIMIT} for a marked kernel body)")
        elif length <= FUNCTION_LIMIT:
            errors.append(f"{path}:{marker_line}: k3-size marker on function {name} of {length} "
                          f"lines is unnecessary (limit {FUNCTION_LIMIT}); remove it")
    for number, line in enumerate(lines, 1):
        if MARKER_ANY.search(line) and number not in used_markers:
            errors.append(f"{path}:{number}: k3-size marker is not attached to a function")
    return errors


def check(root, files, ctags="ctags"):
    tags = run_ctags(root, files, ctags)
    errors = []
    for rel in files:
        text = (root / rel).read_text(encoding="utf-8", errors="replace")
        errors += check_file(rel, text, tags.get(rel, []))
    return errors


def tracked_files(root):
    # Tracked and new (not ignored) files: a clean clone in CI and a work tree in progress alike.
    proc = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", *PATTERNS],
                          capture_output=True, text=True, cwd=root)
    if proc.returncode != 0:
        sys.exit(f"size budget: git ls-files failed in {root}: {proc.stderr.strip()}")
    return [f for f in proc.stdout.splitlines() if (root / f).is_file()]


def body(n, filler="  x += 1;"):
    """n lines of statements."""
    return "\n".join([filler] * n)


def self_test_cases():
    """(relative path, text, expected violations as substrings)."""
    tricky = "\n".join([
        '  const char* a = "}}} { \\" }";',
        "  char b = '}';",
        "  char c = '\\'';",
        "  int d = 1'000'000;",
        '  auto e = R"json({"x": "}}}"})json";',
        '  auto f = u8R"(})";',
        "  // } a comment with a brace",
        "  /* } { */",
    ])
    kernel_reason = "// k3-size: kernel body, one pass over the tile keeps the accumulators in registers"
    return [
        ("src/a/long_file.cc", "\n".join(["int x;"] * 501) + "\n",
         ["src/a/long_file.cc: 501 lines (limit 500)"]),
        ("src/a/ok_file.cc", "\n".join(["int x;"] * 500) + "\n", []),
        ("src/a/funcs.cc",
         "int Short() {\n" + body(78) + "\n}\n\nint Long() {\n" + body(79) + "\n}\n",
         ["src/a/funcs.cc:82: function Long is 81 lines (limit 80)"]),
        ("tests/a/gtest_test.cc",
         "TEST_F(Suite, Case) {\n" + tricky + "\n" + body(72) + "\n}\n"
         "TEST(Suite, Fits) {\n" + tricky + "\n" + body(70) + "\n}\n",
         ["tests/a/gtest_test.cc:1: function TEST_F(Suite, Case) is 82 lines (limit 80)"]),
        ("src/a/lambda.cc",
         "const auto kTable = [](int v) {\n" + body(85) + "\n  return v;\n};\n",
         ["src/a/lambda.cc:1: function lambda"]),
        ("src/a/kernels.cc",
         kernel_reason + "\nvoid Kernel() {\n" + body(118) + "\n}\n"
         "// Shapes: [rows, cols].\n" + kernel_reason + "\ntemplate <int N>\nvoid TooLong() {\n"
         + body(150) + "\n}\n"
         + kernel_reason + "\nvoid Tiny() {\n" + body(3) + "\n}\n"
         "// k3-size: kernel body\nvoid NoReason() {\n" + body(100) + "\n}\n"
         + kernel_reason + "\nint orphan = 0;\n",
         ["function TooLong is 152 lines (limit 150 for a marked kernel body)",
          "k3-size marker on function Tiny of 5 lines is unnecessary",
          "k3-size marker needs the form",
          "k3-size marker is not attached to a function"]),
        ("src/a/control.cc",
         "void F(int x) {\n  if (x) {\n" + body(90) + "\n  }\n}\n",
         ["src/a/control.cc:1: function F is 94 lines"]),
    ]


def self_test():
    cases = self_test_cases()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        for rel, text, _ in cases:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        try:
            errors = check(root, [rel for rel, _, _ in cases])
        except CtagsMissing as e:
            print(f"self-test FAILED: {e}")
            return 1
        for rel, _, expected in cases:
            got = [e for e in errors if e.startswith(rel + ":")]
            if len(got) != len(expected) or not all(any(x in g for g in got) for x in expected):
                failures.append(f"{rel}: expected {expected}, got {got}")
        try:
            check(root, [cases[0][0]], ctags="k3-no-such-ctags")
            failures.append("a missing ctags did not fail")
        except CtagsMissing:
            pass
    if failures:
        print("self-test FAILED:\n  " + "\n  ".join(failures))
        return 1
    planted = sum(len(expected) for _, _, expected in cases)
    print(f"self-test passed: {planted} planted violations found, in-budget code accepted")
    return 0


def main():
    if "--self-test" in sys.argv:
        return self_test()
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    files = tracked_files(root)
    try:
        errors = check(root, files)
    except CtagsMissing as e:
        print(f"size budget: FAILED: Universal Ctags is required ({e}); "
              "install it with scripts/install-deps.sh (Debian package universal-ctags)")
        return 1
    for error in errors:
        print(error)
    print(f"size budget: {'FAILED' if errors else 'ok'} ({len(errors)} violations in "
          f"{len(files)} files; limits: file {FILE_LIMIT}, function {FUNCTION_LIMIT}, "
          f"marked kernel body {KERNEL_LIMIT})")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
