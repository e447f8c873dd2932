"""Load a report site's JSON API with pandas: every cell as a row, then two questions a user asks of it.

    python examples/site_api_pandas.py reports            # the site `make report` wrote
    python examples/site_api_pandas.py https://example.org/gsc   # or a published one (any base URL)

api/index.json lists every cell (its page and JSON: the same path, .html / .json); api/schema.json describes
every file (docs/site.md).
"""

from __future__ import annotations

import json
import sys
from urllib.request import urlopen

import pandas as pd


def load(base: str, path: str) -> dict:
    """One JSON file of the site, from a folder or a URL."""
    if base.startswith(("http://", "https://")):
        with urlopen(f"{base.rstrip('/')}/{path}") as fh:
            return json.load(fh)
    with open(f"{base}/{path}", encoding="utf-8") as fh:
        return json.load(fh)


def main(base: str) -> int:
    index = load(base, "api/index.json")
    cells = pd.DataFrame(index["cells"])
    print(f"{len(cells)} cells of {cells['system'].nunique()} systems, generated {index['generated']}")
    # Which systems are memory-unsafe where, per operator?
    unsafe = cells[cells["severity"] == "unsafe"].pivot_table(index="system", columns="op", values="url",
                                                               aggfunc="count", fill_value=0)
    print("\nmemory-unsafe cells per system and operator:")
    print(unsafe.to_string() if not unsafe.empty else "none")
    # One cell in full: its cases, documentation and history.
    first = cells.sort_values("url").iloc[0]
    cell = load(base, first["url"].removesuffix(".html") + ".json")
    print(f"\n{cell['url']}: {cell['label']} ({cell['words']}); documentation {cell['documentation']['state']}; "
          f"{len(cell['cases'])} case(s), {len(cell['history'])} release(s) in its history")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "reports"))
