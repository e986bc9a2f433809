#!/usr/bin/env python3
"""Fails when a file under src/<module>/ includes a header of a module it may not depend on.

The allowed dependencies are the ```deps block of docs/architecture.md (the single source of
truth). Usage: tools/check_includes.py [REPO_ROOT]; --self-test checks the checker itself.
"""
import pathlib
import re
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def load_rules(architecture_md):
    text = architecture_md.read_text(encoding="utf-8")
    block = re.search(r"```deps\n(.*?)```", text, re.S)
    if not block:
        sys.exit(f"{architecture_md}: no ```deps block")
    rules = {}
    for line in block.group(1).splitlines():
        if not line.strip():
            continue
        module, _, deps = line.partition("<-")
        rules[module.strip()] = deps.split()
    return rules


def module_of(parts, modules):
    """The module a path (its parts under src/) belongs to: a nested module ("model/testing") when
    the deps block lists one, else its top folder."""
    if len(parts) > 2 and f"{parts[0]}/{parts[1]}" in modules:
        return f"{parts[0]}/{parts[1]}"
    return parts[0]


def allowed(module, header, rules):
    target = module_of(header.split("/"), rules)
    if target == module:
        return True
    for dep in rules.get(module, []):
        if dep == target or dep == header:
            return True
    return False


def check(root):
    rules = load_rules(root / "docs" / "architecture.md")
    modules = set(rules)
    errors = []
    src = root / "src"
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".h", ".cc") or not path.is_file():
            continue
        module = module_of(path.relative_to(src).parts, modules)
        if module not in modules:
            errors.append(f"{path}: module '{module}' is not in docs/architecture.md")
            continue
        for header in INCLUDE.findall(path.read_text(encoding="utf-8", errors="replace")):
            if header.split("/")[0] in modules and not allowed(module, header, rules):
                errors.append(f"{path}: '{module}' may not include \"{header}\"")
    return errors


def self_test():
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        (root / "docs").mkdir()
        (root / "docs" / "architecture.md").write_text(
            "```deps\nbase <-\ntext <- base\nrouter <- cache/kv_events.h base\ncache <- base\n"
            "text/extra <- text base\n```\n")
        for rel, body in {
            "src/base/a.h": '#include "base/b.h"\n',
            "src/text/t.cc": '#include "base/a.h"\n#include "cache/x.h"\n',
            "src/router/r.cc": '#include "cache/kv_events.h"\n#include "cache/pool.h"\n',
            "src/text/extra/e.cc": '#include "text/t.h"\n#include "base/a.h"\n',
            "src/text/u.cc": '#include "text/extra/e.h"\n',
        }.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(body)
        errors = check(root)
        expected = ["'text' may not include \"cache/x.h\"", "'router' may not include \"cache/pool.h\"",
                    "'text' may not include \"text/extra/e.h\""]
        if len(errors) != 3 or not all(any(e in err for err in errors) for e in expected):
            print("self-test FAILED:", errors)
            return 1
    print("self-test passed: 3 planted violations found, allowed includes accepted")
    return 0


def main():
    if "--self-test" in sys.argv:
        return self_test()
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    errors = check(root)
    for error in errors:
        print(error)
    print(f"layering: {'FAILED' if errors else 'ok'} ({len(errors)} violations)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
