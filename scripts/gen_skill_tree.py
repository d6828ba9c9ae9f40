#!/usr/bin/env python3
"""Writes a tree of N skills for benchmarks: OUT/group-XXX/skill-NNNNN/SKILL.md.

With a corpus (../shared/corpus or $SKILLET_CORPUS), each skill copies the frontmatter and body
of a real SKILL.md (cycling through the corpus) under a new unique name, so sizes and YAML shapes
are real. Without one, skills are synthetic. Deterministic.
"""
import os
import re
import sys
from pathlib import Path


def corpus_files():
    root = Path(os.environ.get("SKILLET_CORPUS", Path(__file__).resolve().parents[2] / "shared" / "corpus"))
    if not root.is_dir():
        return []
    return sorted(p for p in root.rglob("SKILL.md"))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: gen_skill_tree.py OUT COUNT")
    out, count = Path(sys.argv[1]), int(sys.argv[2])
    sources = corpus_files()
    texts = []
    for path in sources:
        try:
            texts.append(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError:
            pass
    for index in range(count):
        name = f"skill-{index:05d}"
        folder = out / f"group-{index // 100:03d}" / name
        folder.mkdir(parents=True, exist_ok=True)
        if texts:
            text = texts[index % len(texts)]
            text = re.sub(r"(?m)^name:.*$", f"name: {name}", text, count=1)
        else:
            text = (
                f"---\nname: {name}\ndescription: Synthetic skill number {index} for benchmarks. "
                f"Use when the task mentions benchmark topic {index % 97}.\n---\n\n# {name}\n\n"
                + "Instructions line.\n" * 80
            )
        (folder / "SKILL.md").write_text(text, encoding="utf-8")
    print(f"wrote {count} skills under {out} ({'from the corpus' if texts else 'synthetic'})")


if __name__ == "__main__":
    main()
