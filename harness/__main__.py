"""``python -m harness``: see harness.cli."""

from harness.cli import main

raise SystemExit(main())
