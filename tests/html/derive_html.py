"""`soac derive --format html` as a person sees it: each golden derivation's page in headless Chromium.

    derive_html.py --soac SOAC --chromium CHROMIUM --root SOURCE_DIR --work DIR [--screenshot NAME ...]

For every derivation of tests/golden/derive.list (its arguments without --format; the .txt,
.tex and .json lines of one derivation are one page), soac writes the page and Chromium
loads it from a file with no network (a fresh profile each time, nothing fetched):

- the DOM after the scripts ran (--dump-dom): no element of class katex-error (the page
  marks a formula KaTeX cannot typeset so), every formula (class "tex") holds exactly one
  typeset .katex, the page has exactly as many step blocks (li.step) as the derivation has
  steps (soac derive --format json counts them), each with its before and after typeset and
  the rewritten part of before highlighted (one .soa-mark with text in it), and with --check
  a PASS for every step and for the whole;
- for the derivations named by --screenshot, the picture (--screenshot, decoded here with
  zlib): down the left padding of the blocks, the input, the steps and the final form appear
  as bands of their background colours, in that order, exactly one step band per step, each
  with highlight pixels, ink and a PASS badge in it: what the page looks like, not just what
  its DOM says.

Every page must also log nothing to its console and refer to nothing outside it. Beside
the pages, the checker proves it can fail: a copy of one page with one formula and the
fonts broken must be reported. Uses the standard library only (Debian's /usr/bin/python3).
"""

import argparse
import concurrent.futures
import html.parser
import json
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars",
    # Virtual time runs the page's scripts and font loading to the end before the dump or
    # the picture, without waiting in real time.
    "--virtual-time-budget=10000",
]

# The page's colours (compiler/pipeline/derivation_html.cpp, kStyle).
STEP = bytes.fromhex("eef3fa")
FORM = bytes.fromhex("f5f4ee")
ACCENT = bytes.fromhex("3f6fb0")
MARK = bytes.fromhex("fde68a")
PASS_BG = bytes.fromhex("dcf3e1")


# Besides the goldens, derivations whose TeX needs care (tests/lit/latex.test has them too):
# arms' subscripts on subscripted names, tilde operators, a scalar factor.
FRESH = [
    ("fresh-arms", ["J1 calM1^-1 J1* + 0.5 J2 calM2^-1 J2*", "--check"]),
    ("fresh-tilde", ["psitilde* Upsilon + Upsilon psitilde - phitilde R E_phi taubar"]),
    ("fresh-f0", ["calM1^-1 J1* f01"]),
]


class Failure(Exception):
    pass


def derivations(list_path):
    """(name, arguments) per distinct derivation of derive.list, without --format."""
    seen = {}
    with open(list_path, encoding="utf-8") as f:
        for line in f:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            name, args = (part.strip() for part in line.split("|", 1))
            words = shlex.split(args)
            kept = []
            i = 0
            while i < len(words):
                if words[i] == "--format":
                    i += 2
                    continue
                kept.append(words[i])
                i += 1
            seen.setdefault(tuple(kept), os.path.splitext(name)[0])
    return [(name, list(args)) for args, name in seen.items()]


def run(command, cwd=None, timeout=120):
    """(stdout, stderr) of a command that must succeed."""
    p = subprocess.run(command, cwd=cwd, capture_output=True, timeout=timeout)
    if p.returncode != 0:
        raise Failure("`%s` exited %d:\n%s" % (shlex.join(command), p.returncode,
                                               p.stderr.decode(errors="replace")[-2000:]))
    return p.stdout, p.stderr.decode(errors="replace")


def chromium(args, work, page, *extra):
    """(stdout, what the page logged to its console) for file `page`, in a profile of its own
    that is removed afterwards. The console holds what would otherwise pass unseen: a script
    error outside the formulas, a KaTeX warning, a font that does not decode, a resource that
    does not load."""
    profile = tempfile.mkdtemp(prefix="profile-", dir=work)
    try:
        out, err = run([args.chromium, *CHROMIUM_FLAGS, "--enable-logging=stderr", "--v=0",
                        "--user-data-dir=" + profile, *extra, "file://" + os.path.abspath(page)], timeout=120)
        return out, [line.split("] ", 1)[-1][:300] for line in err.splitlines() if ":CONSOLE" in line]
    finally:
        shutil.rmtree(profile, ignore_errors=True)


# ---- the DOM ----------------------------------------------------------------------------------

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.classes = set((self.attrs.get("class") or "").split())
        self.children, self.text = [], []
        if parent:
            parent.children.append(self)

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()

    def find(self, cls, tag=None):
        return [n for n in self.walk() if cls in n.classes and (tag is None or n.tag == tag)]

    def all_text(self):
        return "".join("".join(n.text) for n in self.walk())


class Tree(html.parser.HTMLParser):
    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", [], None)
        self.stack = [self.root]
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        node = Node(tag, attrs, self.stack[-1])
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag, attrs):
        Node(tag, attrs, self.stack[-1])

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        self.stack[-1].text.append(data)


def check_source(page):
    """The page's references to anything outside it."""
    with open(page, encoding="utf-8") as f:
        text = f.read()
    problems = ["refers to a file or the network: %s" % text[m.start():m.start() + 60]
                for m in re.finditer(r"url\((?!data:)", text)]
    for n in Tree(text).root.walk():
        problems += ["<%s %s=%s> refers outside the page" % (n.tag, a, n.attrs[a][:60])
                     for a in ("src", "href") if a in n.attrs]
    return problems


def check_dom(dom, steps, checked):
    """The problems of a page's DOM after the scripts ran (empty: none)."""
    root = Tree(dom).root
    problems = []
    for n in root.find("katex-error"):
        problems.append("KaTeX error: %s (TeX: %s)" % (n.attrs.get("title", "?"), n.attrs.get("data-tex", "?")))
    formulas = root.find("tex")
    if not formulas:
        problems.append("no formula (class tex) in the page")
    for n in formulas:
        typeset = [c for c in n.children if "katex" in c.classes]
        if len(typeset) != 1:
            problems.append("formula not typeset (%d .katex): %s" % (len(typeset), n.attrs.get("data-tex", "?")))
    if len(root.find("expression")) != 2:
        problems.append("expected the input and the final form, found %d" % len(root.find("expression")))
    blocks = root.find("step", "li")
    if len(blocks) != steps:
        problems.append("%d step blocks rendered, the derivation has %d steps" % (len(blocks), steps))
    for i, block in enumerate(blocks, 1):
        if block.attrs.get("id") != "step-%d" % i:
            problems.append("step block %d has id %s" % (i, block.attrs.get("id")))
        for part in ("before", "after"):
            if len([n for n in block.find(part) if "tex" in n.classes and n.find("katex")]) != 1:
                problems.append("step %d: its %s form is not typeset once" % (i, part))
        marks = [m for b in block.find("before") for m in b.find("soa-mark")]
        if len(marks) != 1 or not marks[0].all_text().strip():
            problems.append("step %d: %d highlighted parts in its before form, expected one" % (i, len(marks)))
        if checked and len([v for v in block.find("verdict") if "pass" in v.classes]) != 1:
            problems.append("step %d: no PASS" % i)
    if checked and len([n for n in root.find("check", "section") if "pass" in n.classes]) != 1:
        problems.append("no passing check summary")
    return problems


# ---- the picture ------------------------------------------------------------------------------

def read_png(path):
    """(width, height, rows) of an 8-bit RGB or RGBA, non-interlaced PNG; each row is bytes,
    three per pixel (r, g, b)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise Failure("%s: not a PNG" % path)
    pos, idat = 8, []
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
    if depth != 8 or colour not in (2, 6) or interlace:
        raise Failure("%s: depth %d, colour type %d, interlace %d: not read here" % (path, depth, colour, interlace))
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        if kind == 1:  # Sub
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif kind == 2:  # Up
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif kind == 3:  # Average
            for i in range(stride):
                line[i] = (line[i] + ((line[i - bpp] if i >= bpp else 0) + prev[i]) // 2) & 255
        elif kind == 4:  # Paeth
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        # RGBA: without the alpha bytes.
        rows.append(bytes(line) if bpp == 3 else bytes(b for i, b in enumerate(line) if i % 4 != 3))
        prev = line
    return width, height, rows


def pixel(rows, x, y):
    return rows[y][3 * x:3 * x + 3]


def count(row, colour):
    """Pixels of exactly `colour` in a row (bytes of r, g, b)."""
    n, at = 0, row.find(colour)
    while at >= 0:
        if at % 3 == 0:
            n += 1
            at = row.find(colour, at + 3)
        else:
            at = row.find(colour, at + 1)
    return n


def runs(values, predicate, shortest):
    """[(begin, end)) of the runs of consecutive values that satisfy predicate, at least `shortest` long."""
    out, begin = [], None
    for i, v in enumerate(list(values) + [None]):
        if v is not None and predicate(v):
            begin = i if begin is None else begin
        elif begin is not None:
            if i - begin >= shortest:
                out.append((begin, i))
            begin = None
    return out


INK = bytes(1 if b < 80 else 0 for b in range(256))  # a dark channel: text


def check_picture(path, steps):
    width, height, rows = read_png(path)
    problems = []
    # The blocks' left edge: the steps' accent border (else the input block's edge), the
    # leftmost pixel of its colour.
    edge = ACCENT if steps else FORM
    found = [row.find(edge) for row in rows[::4]]
    found = [at // 3 for at in found if at >= 0 and at % 3 == 0]
    if not found:
        return ["no %s in the picture: a blank page?" % ("step border" if steps else "input block")]
    probe = min(found) + 12  # inside every block's left padding (1.25rem), right of the border
    column = [pixel(rows, probe, y) for y in range(height)]
    step_bands = runs(column, lambda p: p == STEP, 40)
    form_bands = runs(column, lambda p: p == FORM, 40)
    check_bands = runs(column, lambda p: p == PASS_BG, 20)
    if len(step_bands) != steps:
        problems.append("%d step bands in the picture, the derivation has %d steps" % (len(step_bands), steps))
    if len(form_bands) != 2:
        problems.append("%d input/final bands in the picture, expected 2 (page taller than the window?)"
                        % len(form_bands))
    elif step_bands and not form_bands[0][1] <= step_bands[0][0] <= step_bands[-1][1] <= form_bands[1][0]:
        problems.append("the bands are not input, steps, final form in that order")
    if not check_bands or (form_bands and check_bands[0][0] < form_bands[-1][1]):
        problems.append("no check summary band below the final form")
    for i, (top, bottom) in enumerate(step_bands, 1):
        band = [row[3 * probe:] for row in rows[top:bottom]]
        mark = sum(count(row, MARK) for row in band)
        badge = sum(count(row, PASS_BG) for row in band)
        ink = sum(row.translate(INK).count(1) for row in band)
        if mark < 30:
            problems.append("step band %d: no highlighted part (%d highlight pixels)" % (i, mark))
        if badge < 50:
            problems.append("step band %d: no PASS badge (%d badge pixels)" % (i, badge))
        if ink < 300:
            problems.append("step band %d: no text (%d dark channels)" % (i, ink))
    return problems


# ---- the test ---------------------------------------------------------------------------------

def page_of(args, work, name, derive_args):
    path = os.path.join(work, name + ".html")
    with open(path, "wb") as f:
        f.write(run([args.soac, "derive", *derive_args, "--format", "html"], cwd=args.root)[0])
    return path


def steps_of(args, name, derive_args):
    """The derivation's steps: counted in its text golden (the `goldens` test holds soac to it),
    else in soac derive --format json (deriving twice is what takes time here)."""
    golden = os.path.join(args.root, "tests", "golden", "derive", name + ".txt")
    if os.path.exists(golden):
        with open(golden, encoding="utf-8") as f:
            return sum(1 for line in f if re.match(r"\d+\. ", line))
    plain = [a for a in derive_args if a != "--check"]
    return len(json.loads(run([args.soac, "derive", *plain, "--format", "json"], cwd=args.root)[0])["steps"])


def test_one(args, work, name, derive_args):
    page, steps = page_of(args, work, name, derive_args), steps_of(args, name, derive_args)
    problems = check_source(page)
    dom, console = chromium(args, work, page, "--dump-dom")
    problems += ["the page logged: " + line for line in console]
    problems += check_dom(dom.decode("utf-8"), steps, "--check" in derive_args)
    if name in args.screenshot and not problems:
        picture = os.path.join(work, name + ".png")
        window = "--window-size=1000,%d" % (600 + 220 * steps)  # the whole page: about 420 + 185 per step
        _, console = chromium(args, work, page, window, "--screenshot=" + picture)
        problems += ["the page logged: " + line for line in console]
        problems += ["%s: %s" % (os.path.basename(picture), p) for p in check_picture(picture, steps)]
    return problems


def self_check(args, work, name, derive_args):
    """The checker can fail: a copy of a page with one formula and the fonts broken must be
    reported, by the DOM (a KaTeX error) and by the console (fonts that do not decode)."""
    page, steps = page_of(args, work, name + ".broken", derive_args), steps_of(args, name, derive_args)
    with open(page, encoding="utf-8") as f:
        text = f.read()
    at = text.index('data-tex="') + len('data-tex="')
    text = text[:at] + r"\notacommand " + text[at:]
    text = re.sub(r"(base64,[A-Za-z0-9+/]{100})[A-Za-z0-9+/]{40}", r"\1" + "A" * 40, text)
    with open(page, "w", encoding="utf-8") as f:
        f.write(text)
    dom, console = chromium(args, work, page, "--dump-dom")
    problems = check_dom(dom.decode("utf-8"), steps, "--check" in derive_args)
    missed = []
    if not any("KaTeX error" in p for p in problems):
        missed.append("a broken formula")
    if not any("Failed to decode downloaded font" in line for line in console):
        missed.append("broken fonts")
    return ["the checker passed %s (%s)" % (" and ".join(missed), page)] if missed else []


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--soac", required=True)
    parser.add_argument("--chromium", required=True)
    parser.add_argument("--root", required=True, help="the source tree (derive.list is tests/golden/derive.list)")
    parser.add_argument("--work", required=True, help="where the pages and pictures are written (kept)")
    parser.add_argument("--screenshot", action="append", default=[], help="NAME: also check its picture")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    work = os.path.abspath(args.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    todo = derivations(os.path.join(args.root, "tests", "golden", "derive.list")) + FRESH
    unknown = set(args.screenshot) - {name for name, _ in todo}
    if unknown:
        raise Failure("--screenshot %s: no such derivation in derive.list" % ", ".join(sorted(unknown)))

    # The self-check on the derivation with the fewest arguments (a short one), beside the pages.
    tasks = [("self-check", self_check, min(todo, key=lambda t: len(" ".join(t[1]))))]
    tasks += [(name, test_one, (name, derive_args)) for name, derive_args in todo]
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = pool.map(lambda t: (t[0], t[1](args, work, *t[2])), tasks)
        for name, problems in results:
            if problems:
                failed += 1
                more = ["... and %d more" % (len(problems) - 12)] if len(problems) > 12 else []
                print("FAIL %s:\n  %s" % (name, "\n  ".join(problems[:12] + more)))
            elif name == "self-check":
                print("ok   self-check: a page with a broken formula and broken fonts is reported")
            else:
                shot = " (and its picture)" if name in args.screenshot else ""
                print("ok   %s: every step rendered%s" % (name, shot))
    print("%d of %d checks passed (pages and pictures in %s)" % (len(tasks) - failed, len(tasks), work))
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (Failure, subprocess.TimeoutExpired) as e:
        print("derive_html: %s" % e, file=sys.stderr)
        sys.exit(1)
