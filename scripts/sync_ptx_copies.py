#!/usr/bin/env python3
"""Give every ptx/*.ptx file verbatim copies of the functions it calls from the other files.

PTX has no #include, and ptxas assembles a file as a whole program: a call to a function defined
in another file is an unresolved extern. So each file carries, between its header and its own
code, a copy of the own code of every file it needs (transitively), callees first:

    // ---- copy of philox.ptx (scripts/sync_ptx_copies.py writes it; the build checks it) ----
    ... philox.ptx's own code ...
    // ---- end of the copy of philox.ptx ----

A file's own code is what follows its header once its copies are taken out. The canonical text
of a function is in one file only; edit it there and run this script. The build
(cmake/embed_ptx.cmake) fails when a copy differs from its file, and leaves the copies out of the
module it embeds, so each function is defined once there.

    scripts/sync_ptx_copies.py           rewrite the copies in place
    scripts/sync_ptx_copies.py --check   exit 1, naming the files, if any copy is stale
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PTX = ROOT / "ptx"
CMAKE = ROOT / "src" / "ptx" / "CMakeLists.txt"

HEADER = re.compile(r"^\.version [^\n]*\n\.target [^\n]*\n\.address_size [^\n]*\n", re.M)
COPY = re.compile(r"// ---- copy of (\S+) [^\n]*\n.*?// ---- end of the copy of \1 ----\n\n?", re.S)
EXTERN = re.compile(r"^\.extern \.func[^;]*;\n", re.M)
DEFINES = re.compile(r"\.func\s*(?:\([^)]*\)\s*)?(resample_\w+)\s*\(")
CALLS = re.compile(r"\bcall(?:\.uni)?\s+(?:\([^)]*\),\s*)?(resample_\w+)")


def begin_marker(name):
    return f"// ---- copy of {name} (scripts/sync_ptx_copies.py writes it; the build checks it) ----\n"


def end_marker(name):
    return f"// ---- end of the copy of {name} ----\n"


def source_order():
    """The files in the build's order, callees first (src/ptx/CMakeLists.txt)."""
    text = CMAKE.read_text()
    listed = re.search(r"set\(RESAMPLE_PTX_SOURCES(.*?)\)", text, re.S).group(1)
    return listed.split()


def split(text, name):
    """(preamble up to and including the header, own code) of a file."""
    header = HEADER.search(text)
    if header is None:
        sys.exit(f"ptx/{name}: no .version/.target/.address_size header")
    own = EXTERN.sub("", COPY.sub("", text[header.end():]))
    return text[: header.end()], own.strip("\n") + "\n"


def main():
    check = "--check" in sys.argv[1:]
    order = source_order()
    files = {name: (PTX / name).read_text() for name in order}
    parts = {name: split(files[name], name) for name in order}
    defined_in = {}
    for name in order:
        for function in DEFINES.findall(parts[name][1]):
            defined_in[function] = name

    def needs(name, seen):
        for function in CALLS.findall(parts[name][1]):
            source = defined_in.get(function)
            if source is None:
                sys.exit(f"ptx/{name} calls {function}, which no file defines")
            if source != name and source not in seen:
                seen.add(source)
                needs(source, seen)
        return seen

    stale = []
    for name in order:
        preamble, own = parts[name]
        copies = [source for source in order if source in needs(name, set())]
        text = preamble + "\n"
        for source in copies:
            text += begin_marker(source) + parts[source][1] + end_marker(source) + "\n"
        text += own
        if text != files[name]:
            stale.append(name)
            if not check:
                (PTX / name).write_text(text)
    if check and stale:
        print("stale copies in: " + ", ".join("ptx/" + n for n in stale) + " (run scripts/sync_ptx_copies.py)")
        return 1
    if not check:
        print(f"rewrote {len(stale)} of {len(order)} files" + (": " + ", ".join(stale) if stale else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
