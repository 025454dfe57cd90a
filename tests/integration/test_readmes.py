# SPDX-License-Identifier: MIT
"""Every file git knows of (tracked, or new and not ignored) is named in the README.md of its folder, or,
when its folder has none, in the nearest README.md above it by its path
from there (tests/kernel/README.md names `guest/init`).  One line each
is the house style; this checks that none is missing.

Runs on the source tree only: no processes."""
import os
import re
import subprocess
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def tracked_files():
    """The repository's files (paths from ROOT): tracked, or new and not
    ignored, and present; None outside git."""
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--cached",
                              "--others", "--exclude-standard"],
                             capture_output=True, timeout=30)
    except OSError:
        return None
    if out.returncode != 0:
        return None
    return sorted({p for p in out.stdout.decode().split("\0")
                   if p and os.path.isfile(os.path.join(ROOT, p))})


def names(text, rel):
    """Whether text names rel as a word of its own: not as part of a
    longer name (`ws.c` is not named by `ws_priv.c`)."""
    rx = r"(?<![\w./-])" + re.escape(rel) + r"(?![\w-]|\.\w)"
    return re.search(rx, text) is not None


def readme_for(path, readmes):
    """The folder of the nearest README.md above path, and path from it."""
    folder = os.path.dirname(path)
    while True:
        if folder in readmes:
            return folder, os.path.relpath(path, folder or ".")
        if not folder:
            return None, path
        folder = os.path.dirname(folder)


def missing_lines(files):
    """{README path: [files it should name but does not]}"""
    readmes = {os.path.dirname(p): p for p in files
               if os.path.basename(p) == "README.md"}
    texts = {}
    missing = {}
    for path in files:
        if os.path.basename(path) == "README.md" and \
                os.path.dirname(path) in readmes:
            continue
        folder, rel = readme_for(path, readmes)
        if folder is None:
            missing.setdefault("README.md", []).append(path)
            continue
        readme = readmes[folder]
        if readme not in texts:
            with open(os.path.join(ROOT, readme)) as f:
                texts[readme] = f.read()
        if not names(texts[readme], rel):
            missing.setdefault(readme, []).append(rel)
    return missing


class EveryFileIsListed(unittest.TestCase):
    def test_the_matching(self):
        self.assertTrue(names("| `ws.c` | x", "ws.c"))
        self.assertTrue(names("`guest/init`, `guest/checks.sh`",
                              "guest/init"))
        self.assertTrue(names("`Kbuild`, `Makefile`", "Makefile"))
        self.assertFalse(names("| `ws_priv.c` |", "ws.c"))
        self.assertFalse(names("| `sse_reader.c` |", "sse_reader.h"))
        self.assertFalse(names("`tunerctl_main.c`", "main.c"))
        self.assertFalse(names("`box.c.in`", "box.c"))
        files = ["a/README.md", "a/x.c", "a/b/y.c", "c/z.c", "README.md"]
        readmes = {os.path.dirname(p): p for p in files
                   if p.endswith("README.md")}
        self.assertEqual(readme_for("a/b/y.c", readmes), ("a", "b/y.c"))
        self.assertEqual(readme_for("c/z.c", readmes), ("", "c/z.c"))

    def test_every_readme_names_its_files(self):
        files = tracked_files()
        if files is None:
            self.skipTest("not a git checkout")
        missing = missing_lines(files)
        report = "".join("\n%s does not name: %s" % (r, ", ".join(sorted(m)))
                         for r, m in sorted(missing.items()))
        self.assertEqual(missing, {}, report)


if __name__ == "__main__":
    unittest.main()
