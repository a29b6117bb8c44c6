#!/usr/bin/env bash
# Checks that the documentation stands alone: every relative markdown link in README.md, AGENTS.md,
# SECURITY.md and docs/ (or in the files given as arguments) names a file inside the repository, every
# `#anchor` names a heading of its target, and no file names the folder that sits beside a checkout
# on the project's machines (the origin documents: a fresh clone has none). No network: links
# with a scheme (https:, mailto:, …) are not followed. Exit 0 when clean, 1 with one line per problem.
set -euo pipefail
cd "$(dirname "$0")/.."

if (($#)); then
  files=("$@")
else
  files=(README.md AGENTS.md SECURITY.md)
  while IFS= read -r f; do files+=("$f"); done < <(find docs -name '*.md' -type f | sort)
fi

exec python3 - "${files[@]}" <<'PY'
import os, re, sys, unicodedata

root = os.getcwd()
problems = []

def strip_code(text):
    """The text with fenced code blocks blanked (line numbers kept) and inline code removed."""
    out, fence = [], None
    for line in text.split("\n"):
        m = re.match(r"^\s{0,3}(`{3,}|~{3,})", line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            out.append("")
            continue
        if m:
            fence = m.group(1)
            out.append("")
            continue
        out.append(re.sub(r"(`+)(.+?)\1", "", line))
    return out

def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes."""
    h = re.sub(r"<[^>]+>", "", heading).strip().lower()
    h = "".join(c for c in h if c in "-_ " or unicodedata.category(c)[0] in "LNM")
    return h.replace(" ", "-")

anchor_cache = {}
def anchors(path):
    if path not in anchor_cache:
        seen, result = {}, set()
        with open(path, encoding="utf-8") as f:
            text = f.read()
        fence = None
        for line in text.split("\n"):
            m = re.match(r"^\s{0,3}(`{3,}|~{3,})", line)
            if fence:
                if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                    fence = None
                continue
            if m:
                fence = m.group(1)
                continue
            h = re.match(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
            if h:
                base = slug(h.group(1))
                n = seen.get(base, 0)
                seen[base] = n + 1
                result.add(base if n == 0 else f"{base}-{n}")
        for m in re.finditer(r'<a\s+(?:name|id)="([^"]+)"', text):
            result.add(m.group(1))
        anchor_cache[path] = result
    return anchor_cache[path]

link_re = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
ref_re = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")

for md in sys.argv[1:]:
    if not os.path.isfile(md):
        problems.append(f"{md}: file not found")
        continue
    with open(md, encoding="utf-8") as f:
        raw = f.read()
    for n, line in enumerate(raw.split("\n"), 1):
        # Spelled in two pieces, so that this script does not name that folder itself.
        outside = "../" + "shared"
        if outside in line:
            problems.append(f"{md}:{n}: names a path outside the repository ({outside})")
    for n, line in enumerate(strip_code(raw), 1):
        targets = [m.group(1) for m in link_re.finditer(line)]
        m = ref_re.match(line)
        if m:
            targets.append(m.group(1))
        for t in targets:
            if not t or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", t) or t.startswith("//"):
                continue
            path, _, frag = t.partition("#")
            here = os.path.dirname(md)
            target = os.path.normpath(os.path.join(here, path)) if path else md
            full = os.path.abspath(target)
            if os.path.commonpath([full, root]) != root:
                problems.append(f"{md}:{n}: link leaves the repository: {t}")
                continue
            if not os.path.exists(target):
                problems.append(f"{md}:{n}: missing file: {t}")
                continue
            if frag and os.path.isfile(target) and target.endswith(".md"):
                if frag not in anchors(target):
                    problems.append(f"{md}:{n}: missing heading #{frag} in {target}")

for p in problems:
    print(p)
if problems:
    print(f"{len(problems)} broken links in {len(sys.argv) - 1} files", file=sys.stderr)
    sys.exit(1)
print(f"links ok in {len(sys.argv) - 1} files", file=sys.stderr)
PY
