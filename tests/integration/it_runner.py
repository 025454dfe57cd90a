# SPDX-License-Identifier: MIT
"""Runs test modules the way ctest calls them: python3 it_runner.py NAME...

unittest exits 0 when tests were skipped, so a test whose dependency is
missing would pass unseen.  Under CI=true a skip counts as a failure:
CI must run every test; a developer's machine may lack a package."""
import os
import sys
import unittest


def main(names):
    suite = unittest.defaultTestLoader.loadTestsFromNames(names)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    if not result.wasSuccessful():
        return 1
    if result.skipped and os.environ.get("CI") == "true":
        for test, reason in result.skipped:
            print("CI=true: skipped counts as failed: %s (%s)" %
                  (test.id(), reason), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print("usage: it_runner.py MODULE...", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
