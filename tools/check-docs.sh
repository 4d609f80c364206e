#!/bin/sh
# Check that every relative link and #anchor in the documentation resolves:
# the file (or folder) a link names exists, and an anchor matches a heading of
# the target page, slugged as GitHub does (lower case; punctuation but - and _
# dropped; each space a -; a repeated heading gets -1, -2, ...). Links to other
# sites are not fetched; headings and links inside code are not links.
#
#   tools/check-docs.sh [FILE...]   default: README.md docs/*.md python/README.md
#                                   tools/vm/README.md, from the top of the tree
#   tools/check-docs.sh --self-test plant broken links in a scratch tree and
#                                   check that each one, and only those, is caught
#
# Exit 0 when every link resolves, 1 when one does not (each printed as
# FILE:LINE: LINK: why), 2 on bad usage. Needs python3 (its standard library).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-python3}

check() {
	"$PYTHON" - "$@" <<'PY'
import os
import re
import sys
from urllib.parse import unquote

FENCE = re.compile(r'^ {0,3}(`{3,}|~{3,})')
HEADING = re.compile(r'^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$')
CODE_SPAN = re.compile(r'(`+)(?:(?!\1).)+?\1')
LINK = re.compile(r'!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+"[^"]*")?\s*\)')
REF_DEF = re.compile(r'^ {0,3}\[[^\]]+\]:[ \t]*(\S+)', re.M)
HTML_ID = re.compile(r'<a\s[^>]*(?:name|id)="([^"]+)"', re.I)
SCHEME = re.compile(r'^[A-Za-z][A-Za-z0-9+.-]*:')


def prose_lines(text):
    """The page's lines with fenced code blanked (line numbers kept)."""
    out, fence = [], None
    for line in text.split('\n'):
        m = FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            out.append('')
        elif m:
            fence = m.group(1)
            out.append('')
        else:
            out.append(line)
    return out


def slug(heading):
    t = re.sub(r'!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\([^)]*\)', r'\1', heading)
    t = re.sub(r'<[^>]+>', '', t).strip().lower()
    t = ''.join(c for c in t if c.isalnum() or c in ' -_')
    return t.replace(' ', '-')


anchor_cache = {}


def anchors(path):
    if path not in anchor_cache:
        with open(path, encoding='utf-8') as f:
            lines = prose_lines(f.read())
        seen, found = {}, set()
        for line in lines:
            m = HEADING.match(line)
            if m:
                base = slug(m.group(2))
                n = seen.get(base, 0)
                seen[base] = n + 1
                found.add(base if n == 0 else '%s-%d' % (base, n))
            found.update(HTML_ID.findall(line))
        anchor_cache[path] = found
    return anchor_cache[path]


def links(path):
    """(line number, link) for each link of the page outside code."""
    with open(path, encoding='utf-8') as f:
        lines = prose_lines(f.read())
    text = '\n'.join(CODE_SPAN.sub(lambda m: ' ' * len(m.group(0)), l) for l in lines)
    for regex in (LINK, REF_DEF):
        for m in regex.finditer(text):
            yield text.count('\n', 0, m.start(1)) + 1, m.group(1).strip('<>')


def why_broken(page, link):
    if SCHEME.match(link) or link.startswith('//'):
        return None                         # another site: not fetched
    target, _, frag = link.partition('#')
    target = unquote(target)
    if not target:
        path = page
    elif target.startswith('/'):
        path = target.lstrip('/')
    else:
        path = os.path.normpath(os.path.join(os.path.dirname(page), target))
    if not os.path.exists(path):
        return 'no such file or folder: %s' % path
    if frag and path.endswith('.md'):
        if os.path.isdir(path):
            return 'a folder has no anchors'
        if unquote(frag) not in anchors(path):
            return 'no heading in %s has the anchor #%s' % (path, frag)
    return None


def main(pages):
    if not pages:
        print('usage: check-docs.sh [FILE...]', file=sys.stderr)
        return 2
    bad = checked = 0
    for page in pages:
        if not os.path.isfile(page):
            print('%s: no such file' % page)
            bad += 1
            continue
        for lineno, link in links(page):
            checked += 1
            why = why_broken(page, link)
            if why:
                print('%s:%d: %s: %s' % (page, lineno, link, why))
                bad += 1
    if bad:
        print('check-docs: %d of %d links broken in %d files' % (bad, checked, len(pages)),
              file=sys.stderr)
        return 1
    print('check-docs: %d links in %d files resolve' % (checked, len(pages)))
    return 0


sys.exit(main(sys.argv[1:]))
PY
}

self_test() {
	dir=$(mktemp -d "${TMPDIR:-/tmp}/check-docs.XXXXXX")
	trap 'rm -rf "$dir"' EXIT
	mkdir -p "$dir/docs"
	: >"$dir/docs/pic.svg"
	printf '# Top\n\n[down](docs/good.md#two-words) [folder](docs/)\n' >"$dir/README.md"
	cat >"$dir/docs/good.md" <<'EOF'
# A page: its `title`, and punctuation!

## Two words

## Two words

```sh
# not a heading
[not a link](nowhere.md)
```

[self](#a-page-its-title-and-punctuation) [dup](#two-words-1) [up](../README.md)
[other](bad.md#two-words) ![img](pic.svg) [web](https://example.org/x) [ref]
`[in code](nope.md)`

[ref]: good.md#two-words
EOF
	cat >"$dir/docs/bad.md" <<'EOF'
# Bad

## Two words

[gone](missing.md) [no anchor](good.md#three-words)
[here](#nowhere) [dup](#two-words-1)
![picture](gone.svg)

[ref]: ../READ.md
EOF
	want='docs/bad.md:5 docs/bad.md:5 docs/bad.md:6 docs/bad.md:6 docs/bad.md:7 docs/bad.md:9'
	rc=0
	out=$(cd "$dir" && check README.md docs/good.md docs/bad.md 2>&1) || rc=$?
	got=$(printf '%s\n' "$out" | sed -n 's/^\([^:]*:[0-9]*\): .*/\1/p' | tr '\n' ' ' | sed 's/ $//')
	if [ "$rc" -ne 1 ] || [ "$got" != "$want" ]; then
		printf '%s\n' "$out" >&2
		echo "check-docs self-test: exit $rc, broken links reported at '$got';" \
			"expected exit 1 and '$want'" >&2
		exit 1
	fi
	echo "check-docs self-test: the 6 planted broken links were caught, and only those"
}

if [ "${1:-}" = "--self-test" ]; then
	self_test
	exit 0
fi
cd "$top"
if [ $# -eq 0 ]; then
	set -- README.md docs/*.md python/README.md tools/vm/README.md
fi
check "$@"
