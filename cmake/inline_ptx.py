#!/usr/bin/env python3
"""Expand, in place of the call, every PTX call marked `// inline` (the build runs this on ptx/*.ptx).

ptxas never inlines a .func: each call stays a CALL.REL.NOINC with its argument moves, and nothing
is scheduled across it (docs/results/ptx.md, session 25). A hot loop that calls the deterministic
exp, Philox or a quantisation pays that at every particle. So the source keeps the call, readable
and valid PTX as it stands, and a call whose line ends with `// inline` is written out by the build:

    {                                           {  // inline resample_f (cmake/inline_ptx.py)
      .param .f64 r;                              .reg .f64 %in1_x, %in1_y;     <- f's registers, renamed
      .param .f64 a0;                             .reg .b64 %in1_r0;            <- its result, by byte
      st.param.f64 [a0], %v;             ->       mov.b64 %in1_x, %v;           <- ld.param of its argument
      call (r), resample_f, (a0);  // inline      ...f's body, renamed...
      ld.param.f64 %z, [r];                       mov.b64 %in1_r0, %in1_y;      <- st.param of its result
    }                                           in1_return:                     <- where each ret goes
                                                  mov.b64 %z, %in1_r0;
                                                }

The callee's registers and labels get a prefix of the call site's number in its caller (in1_,
in2_, ...), so that no name clashes and the same function expands to the same text in every file
that carries it (the copies of scripts/sync_ptx_copies.py stay verbatim). A callee's own marked
calls are expanded first, so inlining nests. The call block must hold only the call's .param
declarations, their st.param, the call and the ld.param of its result: anything else, a callee
with .shared / .local / .param declarations of its own, or an argument stored at a different
width than the callee reads it, is refused with the file and line.

    cmake/inline_ptx.py OUT_DIR a.ptx b.ptx ...   writes OUT_DIR/a.ptx ... (unmarked files as they are)
"""
import pathlib
import re
import sys

MARK = "// inline"
LABEL_DEF = re.compile(r"^\s*([A-Za-z_$][\w$]*):\s*(//.*)?$")
FUNC_START = re.compile(r"^(\.visible\s+)?\.(func|entry)\b")
PARAM_DECL = re.compile(r"\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)\s+([A-Za-z_$][\w$]*)(?:\[(\d+)\])?")
PARAM_ACCESS = re.compile(
    r"^(?:@(!?%[\w$]+)\s+)?(ld|st)\.param((?:\.v[24])?)\.(\w+)\s+(.*?);\s*(?://.*)?$")
CALL = re.compile(r"^call(?:\.uni)?\s+(?:\(\s*([\w$]+)\s*\)\s*,\s*)?([\w$]+)\s*,\s*\(([^)]*)\)\s*;")
RET = re.compile(r"^(\s*)(@!?%[\w$]+\s+)?ret(\.uni)?\s*;")


class Refused(Exception):
    pass


def code(line):
    """A line without its comment, stripped."""
    return line.split("//", 1)[0].strip()


def width(type_name):
    """Bits of a PTX scalar type (.f64, .b32, .u8 ...)."""
    bits = re.fullmatch(r"[bsuf](\d+)", type_name)
    if not bits:
        raise Refused(f"type .{type_name} in a parameter access")
    return int(bits.group(1))


def address(operand):
    """[name] or [name+8] -> (name, 8)."""
    m = re.fullmatch(r"\[\s*([\w$]+)\s*(?:\+\s*(\d+))?\s*\]", operand.strip())
    if not m:
        raise Refused(f"parameter address {operand}")
    return m.group(1), int(m.group(2) or 0)


def elements(operand):
    """{%a, %b} -> [%a, %b]; %a -> [%a]."""
    operand = operand.strip()
    if operand.startswith("{"):
        return [e.strip() for e in operand[1:-1].split(",")]
    return [operand]


def split_operands(text):
    """'a, {b, c}' -> ['a', '{b, c}']."""
    out, depth, cur = [], 0, ""
    for c in text:
        depth += c == "{"
        depth -= c == "}"
        if c == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += c
    out.append(cur.strip())
    return out


def access(line):
    """A .param load or store: (guard, 'ld' | 'st', [(name, byte, bits, type, operand)])."""
    m = PARAM_ACCESS.match(line.strip())
    if not m:
        return None
    guard, kind, vector, type_name, rest = m.groups()
    first, second = split_operands(rest)
    name, at = address(first if kind == "st" else second)
    values = elements(second if kind == "st" else first)
    bits = width(type_name)
    return guard, kind, [(name, at + k * bits // 8, bits, type_name, v) for k, v in enumerate(values)]


class Function:
    def __init__(self, lines, start, end):
        self.lines = lines[start:end + 1]  # header .. closing brace
        header = ""
        body_at = None
        for k, line in enumerate(self.lines):
            if code(line) == "{":
                body_at = k
                break
            header += " " + code(line)
        if body_at is None:
            raise Refused("a function without a body")
        self.body_at = body_at
        m = re.search(r"\.(?:func|entry)\s*(\(([^)]*)\))?\s*([\w$]+)\s*\((.*)\)", header)
        if not m:
            raise Refused(f"function header {header.strip()}")
        self.name = m.group(3)
        self.result = PARAM_DECL.search(m.group(2)).group(2) if m.group(2) else None
        self.params = [PARAM_DECL.search(p).group(2) for p in m.group(4).split(",") if p.strip()]


def functions(lines):
    """[(first line, last line)] of each function, by its header and its braces."""
    spans = []
    k = 0
    while k < len(lines):
        if FUNC_START.match(lines[k]):
            depth, j, opened = 0, k, False
            while j < len(lines):
                c = code(lines[j])
                if c == "{":
                    depth += 1
                    opened = True
                elif c == "}":
                    depth -= 1
                    if opened and depth == 0:
                        break
                j += 1
            spans.append((k, j))
            k = j
        k += 1
    return spans


def body_names(f):
    """(registers, labels) the function declares in its body (a %r<4> range as r0 .. r3). A .param,
    .shared or .local declaration of the function's own, or a call's .param named as one of its
    parameters, is refused."""
    registers, labels, call_params = set(), set(), set()
    depth = 1
    for line in f.lines[f.body_at + 1:-1]:
        c = code(line)
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c.startswith(".reg"):
            for m in re.finditer(r"%([A-Za-z_$][\w$]*)(?:<(\d+)>)?", c):
                if m.group(2):
                    registers.update(f"%{m.group(1)}{k}" for k in range(int(m.group(2))))
                else:
                    registers.add(f"%{m.group(1)}")
        elif c.startswith(".param") and depth >= 2:
            call_params.add(PARAM_DECL.search(c).group(2))
        elif re.match(r"\.(shared|local|param)\b", c):
            raise Refused(f"{f.name} declares {c.split()[0]} memory of its own: not inlined")
        m = LABEL_DEF.match(line)
        if m:
            labels.add(m.group(1))
    clash = call_params & set(f.params + [f.result])
    if clash:
        raise Refused(f"{f.name} names a call's parameter as its own ({', '.join(sorted(clash))})")
    return registers, labels


def renamed(line, prefix, registers, labels):
    """line with f's registers and labels prefixed (a %r<4> declaration as %in1_r<4>)."""
    text, comment = (line.split("//", 1) + [""])[:2]

    def register(m):
        # one pass, decided on the name as written: a second pass would see the prefixed name of a
        # %x<4> declaration (%in2_x) and could find it among the callee's own (a nested site 2's %x)
        declared = f"%{m.group(1)}0" if m.group(2) else m.group(0)
        return "%" + prefix + m.group(0)[1:] if declared in registers else m.group(0)

    text = re.sub(r"%([A-Za-z_$][\w$]*)(<\d+>)?", register, text)
    if labels:
        text = re.sub(r"(?<![%\w$.])([A-Za-z_$][\w$]*)(?![\w$])",
                      lambda m: prefix + m.group(1) if m.group(1) in labels else m.group(1), text)
    return text + ("//" + comment if comment else "")


def expand_call(block, callee, site, indent):
    """The lines replacing a call block (its lines, braces included) by callee's body."""
    stores = {}  # argument param -> {byte: (bits, type, operand)}
    loads = []   # (byte, bits, type, destination) from the result
    call = None
    for line in block[1:-1]:
        c = code(line)
        if not c or c.startswith(".param"):
            continue
        a = access(line)
        if a and a[1] == "st" and call is None and a[0] is None:
            for name, at, bits, type_name, value in a[2]:
                stores.setdefault(name, {})[at] = (bits, type_name, value)
            continue
        m = CALL.match(c)
        if m and call is None:
            call = m
            continue
        if a and a[1] == "ld" and call is not None and a[0] is None:
            loads += [(at, bits, type_name, value) for name, at, bits, type_name, value in a[2]]
            continue
        raise Refused(f"unexpected line in the call block of {callee.name}: {c}")
    result, name, args = call.group(1), call.group(2), [a.strip() for a in call.group(3).split(",") if a.strip()]
    if len(args) != len(callee.params) or (result is None) != (callee.result is None):
        raise Refused(f"the call of {name} does not match its signature")
    argument = {formal: stores.get(actual, {}) for formal, actual in zip(callee.params, args)}
    prefix = f"in{site}_"
    registers, labels = body_names(callee)
    if "return" in labels:
        raise Refused(f"{name} has a label named return, the inliner's own")
    out_regs = {}  # result byte -> (register, bits)
    body = []
    for line in callee.lines[callee.body_at + 1:-1]:
        c = code(line)
        a = access(line)
        guard = f"@{renamed(a[0], prefix, registers, set())} " if a and a[0] else ""
        if a and a[2][0][0] in argument and a[1] == "ld":
            for formal, at, bits, type_name, value in a[2]:
                if at not in argument[formal] or argument[formal][at][0] != bits:
                    raise Refused(f"{name}: argument {formal}+{at} not stored at {bits} bits by the caller")
                source = argument[formal][at][2]
                destination = renamed(value, prefix, registers, set())
                if source.startswith("%"):
                    body.append(f"{indent}{guard}mov.b{bits} {destination}, {source};")
                else:  # an immediate, in the caller's type
                    body.append(f"{indent}{guard}mov.{argument[formal][at][1]} {destination}, {source};")
            continue
        if a and a[1] == "st" and a[2][0][0] == callee.result:
            for formal, at, bits, type_name, value in a[2]:
                register = out_regs.setdefault(at, (f"%{prefix}result{at}", bits))
                if register[1] != bits:
                    raise Refused(f"{name}: result byte {at} stored at two widths")
                value = renamed(value, prefix, registers, set())
                kind = f"b{bits}" if value.startswith("%") else type_name
                body.append(f"{indent}{guard}mov.{kind} {register[0]}, {value};")
            continue
        if a and a[2][0][0] in (callee.params + [callee.result]):
            raise Refused(f"{name}: a parameter access the inliner does not handle: {c}")
        r = RET.match(line)
        if r:
            ret_guard = renamed(r.group(2), prefix, registers, set()) if r.group(2) else ""
            body.append(f"{indent}{ret_guard}bra{r.group(3) or ''} {prefix}return;")
            continue
        body.append(indent[:-2] + renamed(line, prefix, registers, labels) if line.strip() else "")
    out = [f"{indent[:-2]}{{  // inline {name} (cmake/inline_ptx.py)"]
    for at, (register, bits) in sorted(out_regs.items()):
        out.append(f"{indent}.reg .b{bits} {register};")
    out += body
    while body and not body[-1].strip():
        body.pop()
    if body and body[-1].strip() == f"bra {prefix}return;":  # the callee's final ret
        body.pop()
    out.append(f"{indent[:-2]}{prefix}return:")
    for at, bits, type_name, destination in loads:
        if at not in out_regs or out_regs[at][1] != bits:
            raise Refused(f"{name}: result byte {at} read at {bits} bits, never stored at that width")
        out.append(f"{indent}mov.b{bits} {destination}, {out_regs[at][0]};")
    out.append(f"{indent[:-2]}}}")
    return out


def expand_function(lines, start, end, known, where):
    """The function's lines with its marked calls expanded; known: name -> expanded Function;
    where: the function's first line in its file (for messages)."""
    out = lines[start:end + 1]
    site = 0
    k = 0
    while k < len(out):
        if out[k].rstrip().endswith(MARK) and CALL.match(code(out[k])):
            name = CALL.match(code(out[k])).group(2)
            if name not in known:
                raise Refused(f"line {where + k + 1}: {name} is not defined before its marked call")
            open_at = k
            while open_at >= 0 and code(out[open_at]) != "{":
                open_at -= 1
            close_at = k
            while close_at < len(out) and code(out[close_at]) != "}":
                close_at += 1
            if open_at < 0 or close_at == len(out):
                raise Refused(f"line {where + k + 1}: a marked call outside a {{ }} call block")
            site += 1
            indent = re.match(r"\s*", out[open_at]).group(0) + "  "
            try:
                expansion = expand_call(out[open_at:close_at + 1], known[name], site, indent)
            except Refused as e:
                raise Refused(f"line {where + k + 1}: {e}")
            out[open_at:close_at + 1] = expansion
            k = open_at + len(expansion)
            continue
        k += 1
    # a name the prefix could give must not be the caller's own
    if site and re.search(r"%in\d+_\w*", "\n".join(lines[start:end + 1])):
        raise Refused(f"line {where + 1}: the function uses a register named %in<digits>_, the inliner's prefix")
    return out


def expand(text, path):
    lines = text.split("\n")
    known = {}
    out = []
    last = 0
    for start, end in functions(lines):
        out += lines[last:start]
        try:
            expanded = expand_function(lines, start, end, known, start)
            f = Function(expanded, 0, len(expanded) - 1)
        except Refused as e:
            sys.exit(f"{path}: {e}")
        known[f.name] = f
        out += expanded
        last = end + 1
    out += lines[last:]
    return "\n".join(out)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out_dir = pathlib.Path(sys.argv[1])
    out_dir.mkdir(parents=True, exist_ok=True)
    for source in sys.argv[2:]:
        path = pathlib.Path(source)
        text = path.read_text()
        result = expand(text, path) if MARK in text else text
        (out_dir / path.name).write_text(result)  # always: the build compares the outputs' times


if __name__ == "__main__":
    main()
