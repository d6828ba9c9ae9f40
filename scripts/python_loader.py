#!/usr/bin/env python3
"""The straightforward Python skill loader the benchmark compares against: glob, read, regex,
yaml.safe_load, then print the catalog."""
import re
import sys
from pathlib import Path

import yaml

FRONTMATTER = re.compile(r"^---\s*\n(.*?)\n---\s*\n?(.*)$", re.DOTALL)

skills = []
for path in sorted(Path(sys.argv[1]).rglob("SKILL.md")):
    text = path.read_text(encoding="utf-8", errors="replace")
    match = FRONTMATTER.match(text)
    meta = {}
    if match:
        try:
            meta = yaml.safe_load(match.group(1)) or {}
        except yaml.YAMLError:
            meta = {}
    if not isinstance(meta, dict):
        meta = {}
    name = str(meta.get("name") or path.parent.name)
    description = " ".join(str(meta.get("description") or "").split())
    skills.append((name, description))
for name, description in skills:
    print(f"  - {name}: {description}")
