#!/usr/bin/env python3
"""Give every ptx/*.ptx file verbatim copies of the functions it calls from the other files.

PTX has no #include, and ptxas assembles a file as a whole program: a call to a function defined
in another file is an unresolved extern. So each file carries, between its header and its own
code, a copy of every function it needs from the other files (transitively: what those call
too) and of the module-scope .shared and .const arrays they use, grouped by the file they come
from (files in the build's order, callees first; within a file, in its order), each item as
written there:

    // ---- copy from wide_sum.ptx (scripts/sync_ptx_copies.py writes it; the build checks it) ----
    ...an item of wide_sum.ptx...
    // ----
    ...another...
    // ---- end of the copy from wide_sum.ptx ----

A file's own code is what follows its header once its copies are taken out; an item is a .func
(with the comment lines just above it), a .shared declaration, or a .const array (with the comment
lines just above it, to the `;` that ends its initialiser). The canonical text of a function is
in one file only; edit it there and run this script. The build (cmake/embed_ptx.cmake) fails
when a copied item is not verbatim in its file's own code, and leaves the copies out of the
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
COPY = re.compile(r"// ---- copy from (\S+) [^\n]*\n.*?// ---- end of the copy from \1 ----\n\n?", re.S)
EXTERN = re.compile(r"^\.extern \.func[^;]*;\n", re.M)
FUNC_NAME = re.compile(r"\.func\s*(?:\([^)]*\)\s*)?(resample_\w+)\s*\(")
SHARED_NAME = re.compile(r"^\.(?:shared|const)[^;]*?\b(resample_\w+)\s*\[", re.M)
CALLS = re.compile(r"\bcall(?:\.uni)?\s+(?:\([^)]*\),\s*)?(resample_\w+)")
IDENTIFIERS = re.compile(r"\bresample_\w+")
COMMENT = re.compile(r"//[^\n]*")
SEPARATOR = "// ----\n"


def begin_marker(name):
    return f"// ---- copy from {name} (scripts/sync_ptx_copies.py writes it; the build checks it) ----\n"


def end_marker(name):
    return f"// ---- end of the copy from {name} ----\n"


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


def items(own):
    """The own code's copyable items, in order: (kind, name, text) for each .func (with the
    comment lines just above it, up to its closing brace), each module-scope .shared line and each
    .const array (with its comment lines, up to the end of its initialiser)."""
    lines = own.split("\n")
    found = []
    i = 0
    while i < len(lines):
        line = lines[i]
        is_func = line.startswith(".func") or line.startswith(".visible .func")
        is_data = line.startswith(".shared") or line.startswith(".const")
        if not (is_func or is_data):
            i += 1
            continue
        start = i
        while start > 0 and lines[start - 1].startswith("//"):
            start -= 1
        if is_data:
            end = i
            while ";" not in lines[end]:
                end += 1
            name = SHARED_NAME.search(line + "\n").group(1)
        else:
            end = i
            while lines[end] != "}":
                end += 1
            name = FUNC_NAME.search("\n".join(lines[i:end + 1])).group(1)
        found.append(("func" if is_func else "data", name, "\n".join(lines[start:end + 1]) + "\n"))
        i = end + 1
    return found


def main():
    check = "--check" in sys.argv[1:]
    order = source_order()
    files = {name: (PTX / name).read_text() for name in order}
    parts = {name: split(files[name], name) for name in order}
    where = {}  # item name -> (file, index among its items)
    file_items = {}
    for name in order:
        file_items[name] = items(parts[name][1])
        for index, (_, item, _) in enumerate(file_items[name]):
            if item in where:  # a .func and a .shared of one name, or two of either: copies would mix them up
                sys.exit(f"ptx/{name} and ptx/{where[item][0]} both define {item}")
            where[item] = (name, index)

    def uses(text):
        """The items of any file that `text` calls or names (in code: comments may name others)."""
        text = COMMENT.sub("", text)
        names = set(CALLS.findall(text)) | set(IDENTIFIERS.findall(text))
        return {n for n in names if n in where}

    stale = []
    for name in order:
        preamble, own = parts[name]
        local = {item for _, item, _ in file_items[name]}
        needed, todo = set(), [n for n in uses(own) if n not in local]
        while todo:
            item = todo.pop()
            if item in needed:
                continue
            needed.add(item)
            source, index = where[item]
            todo.extend(n for n in uses(file_items[source][index][2]) if n not in needed and n not in local)
        for call in CALLS.findall(own):
            if call not in where:
                sys.exit(f"ptx/{name} calls {call}, which no file defines")
        text = preamble + "\n"
        for source in order:
            chosen = [t for _, item, t in file_items[source] if item in needed and source != name]
            if chosen:
                text += begin_marker(source) + SEPARATOR.join(chosen) + end_marker(source) + "\n"
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
