"""A reader for the Go composite literals KAI Scheduler's test tables are written in.

KAI's action tests (github.com/NVIDIA/KAI-Scheduler, pkg/scheduler/actions) describe
every case as a Go value: ``[]integration_tests_utils.TestTopologyMetadata{{...}}``.
This module reads such a value into plain Python data so ``port_tables.py`` can write
it out as JSON, case by case, without anyone retyping upstream's figures.

It is not a Go compiler. It understands what the tables use: composite literals
(struct, slice, map, with elided element types), ``&x``, ``*x``, selectors, calls,
arithmetic and string concatenation on constants, and the small immediately-called
``func() T { v := ...; v.Method(...); return v }()`` builders some cases use. Values:

* struct literals -> ``dict`` with ``"$type"`` (the Go type as written) and the fields;
* slices -> ``list``; maps -> ``dict`` (keys as written: strings, numbers);
* ``&x``/``*x`` and pointer helpers (``ptr.To``, ``pointer.Int``, ...) -> ``x``;
* type conversions (``v1.ResourceName("x")``, ``time.Duration(5)``) -> the value;
* durations are nanoseconds (``time.Minute`` is ``60 * 10**9``);
* named constants are resolved from the upstream source they are declared in
  (through ``Resolver``); an ``iota`` enumeration (``pod_status.Running``) reads as
  its name, the way upstream's ``String()`` prints it;
* anything else -- a call to a function we do not evaluate, an identifier we cannot
  resolve, a statement a builder uses that is not listed above -- becomes a marker
  ``{"$call": name, "args": [...]}``, ``{"$ident": name}`` or ``{"$code": text}``, so
  a case built by code is visible as such instead of being silently misread.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["GoError", "Parser", "Resolver", "tokenize"]


class GoError(ValueError):
    """Text the reader cannot parse."""


@dataclass(frozen=True, slots=True)
class Token:
    kind: str   # ident, int, float, string, char, op, eof
    text: str
    pos: int


_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<lcomment>//[^\n]*)
  | (?P<bcomment>/\*.*?\*/)
  | (?P<float>(?:\d[\d_]*\.\d*|\.\d+)(?:[eE][+-]?\d+)?|\d[\d_]*[eE][+-]?\d+)
  | (?P<int>0[xX][0-9a-fA-F_]+|0[oO]?[0-7_]+|\d[\d_]*)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<raw>`[^`]*`)
  | (?P<char>'(?:[^'\\\n]|\\.)+')
  | (?P<op>:=|\.\.\.|<<|>>|&&|\|\||==|!=|<=|>=|[-+*/%&|^<>=!(){}\[\],;:.])
""", re.VERBOSE | re.DOTALL)


def _unquote(text: str) -> str:
    # Go's interpreted string escapes are a subset of Python's for the tables' text.
    body = text[1:-1]
    if "\\" not in body:
        return body
    return body.encode("latin-1", "backslashreplace").decode("unicode_escape")


def tokenize(src: str) -> list[Token]:
    out: list[Token] = []
    pos = 0
    while pos < len(src):
        m = _TOKEN.match(src, pos)
        if m is None:
            raise GoError(f"cannot read Go text at offset {pos}: {src[pos:pos + 20]!r}")
        kind = m.lastgroup or ""
        text = m.group()
        if kind not in ("ws", "lcomment", "bcomment"):
            if kind == "raw":
                kind = "string"
            out.append(Token(kind, text, pos))
        pos = m.end()
    out.append(Token("eof", "", len(src)))
    return out


# --- types as written -------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class GoType:
    kind: str                      # named, slice, map, ptr, func, struct
    name: str = ""                 # named: "pkg.Name" / "int"
    elem: GoType | None = None     # slice/ptr element, map value
    key: GoType | None = None      # map key

    def text(self) -> str:
        if self.kind == "named":
            return self.name
        if self.kind == "slice":
            return "[]" + (self.elem.text() if self.elem else "?")
        if self.kind == "ptr":
            return "*" + (self.elem.text() if self.elem else "?")
        if self.kind == "map":
            k = self.key.text() if self.key else "?"
            v = self.elem.text() if self.elem else "?"
            return f"map[{k}]{v}"
        return self.kind

    def deref(self) -> GoType:
        t = self
        while t.kind == "ptr" and t.elem is not None:
            t = t.elem
        return t


_BUILTIN_TYPES = frozenset({
    "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64", "string", "bool", "byte", "rune", "any",
})
# Helpers that only take the address of their argument.
_POINTER_HELPERS = frozenset({
    "ptr.To", "pointer.Int", "pointer.Int32", "pointer.Int64", "pointer.Float64",
    "pointer.String", "pointer.Bool", "pointer.Duration", "pointer.Uint64",
    "test_utils.CreateFloat64Pointer", "utilpointer.Int32",
})
# Named types the tables convert constants to (a conversion keeps the value).
_CONVERSIONS = frozenset({
    "v1.ResourceName", "time.Duration", "common_info.QueueID", "common_info.PodGroupID",
    "common_info.PodID", "types.UID", "enginev2alpha2.Preemptibility",
    "v2alpha2.Preemptibility", "node_info.MigStrategy", "resourceapi.QualifiedName",
})
_NS = 1
_EXTERNAL_CONSTANTS: dict[str, Any] = {
    "time.Nanosecond": _NS, "time.Microsecond": 1000 * _NS, "time.Millisecond": 10**6 * _NS,
    "time.Second": 10**9 * _NS, "time.Minute": 60 * 10**9 * _NS,
    "time.Hour": 3600 * 10**9 * _NS,
    "v1.ResourceCPU": "cpu", "v1.ResourceMemory": "memory", "v1.ResourcePods": "pods",
    "v1.ResourceEphemeralStorage": "ephemeral-storage",
    "v1.NodeSelectorOpIn": "In", "v1.NodeSelectorOpNotIn": "NotIn",
    "v1.NodeSelectorOpExists": "Exists",
    "v1.PodPending": "Pending", "v1.PodRunning": "Running",
    "resourceapi.DeviceAllocationModeExactCount": "ExactCount",
    "resourceapi.DeviceAllocationModeAll": "All",
    "resourceapi.ResourceClaimReservedForMaxSize": 256,
    "math.MaxInt32": 2**31 - 1, "math.MaxInt64": 2**63 - 1,
}


def _sprintf(fmt: str, args: list[Any]) -> str:
    """fmt.Sprintf for the verbs the tables use (%d, %s, %v, %f, %g, %q, %%)."""
    it = iter(args)

    def one(m: re.Match[str]) -> str:
        verb = m.group(0)
        if verb == "%%":
            return "%"
        value = next(it)
        if verb[-1] == "d":
            return verb % int(value)
        if verb[-1] in "sv":
            return (verb[:-1] + "s") % str(value)
        if verb[-1] == "q":
            return '"' + str(value) + '"'
        return str(verb % value)
    return re.sub(r"%[-+ 0#]*\d*(?:\.\d+)?[dsvfgq%]", one, fmt)


def _unknown(name: str) -> Any:
    raise KeyError(name)


class _Unsupported(Exception):
    """A construct the reader leaves to a marker."""


@dataclass
class Parser:
    """Evaluates Go expressions from ``src``. ``resolve(name)`` answers a bare or
    package-qualified identifier (``"constants.PriorityTrainNumber"``) with its value
    or raises ``KeyError``."""

    src: str
    resolve: Callable[[str], Any] = field(default=lambda name: _unknown(name))
    toks: list[Token] = field(default_factory=list)
    i: int = 0
    scopes: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.toks:
            self.toks = tokenize(self.src)

    # -- token helpers
    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def peek(self, n: int = 1) -> Token:
        return self.toks[min(self.i + n, len(self.toks) - 1)]

    def next(self) -> Token:
        t = self.toks[self.i]
        self.i += 1
        return t

    def expect(self, text: str) -> Token:
        t = self.next()
        if t.text != text:
            raise GoError(f"expected {text!r} at offset {t.pos}, found {t.text!r}")
        return t

    def at(self, text: str) -> bool:
        return self.tok.text == text and self.tok.kind in ("op", "ident")

    def seek(self, offset: int) -> None:
        """Move to the first token at or after byte ``offset``."""
        for k, t in enumerate(self.toks):
            if t.pos >= offset:
                self.i = k
                return
        self.i = len(self.toks) - 1

    def skip_balanced(self) -> None:
        """Skip one bracketed group starting at the current ``(``, ``[`` or ``{``."""
        pairs = {"(": ")", "[": "]", "{": "}"}
        stack = [pairs[self.next().text]]
        while stack:
            t = self.next()
            if t.kind == "eof":
                raise GoError("unbalanced brackets")
            if t.kind == "op" and t.text in pairs:
                stack.append(pairs[t.text])
            elif t.kind == "op" and t.text == stack[-1]:
                stack.pop()

    # -- types
    def parse_type(self) -> GoType:
        t = self.tok
        if t.text == "*":
            self.next()
            return GoType("ptr", elem=self.parse_type())
        if t.text == "[":
            self.next()
            if not self.at("]"):
                if self.at("..."):
                    self.next()
                else:
                    self.parse_expr()
            self.expect("]")
            return GoType("slice", elem=self.parse_type())
        if t.text == "map":
            self.next()
            self.expect("[")
            key = self.parse_type()
            self.expect("]")
            return GoType("map", key=key, elem=self.parse_type())
        if t.text == "func":
            self.next()
            self.skip_balanced()          # parameters
            if self.at("("):
                self.skip_balanced()      # results
            elif not self.at("{"):
                self.parse_type()
            return GoType("func")
        if t.text in ("struct", "interface"):
            self.next()
            self.skip_balanced()
            return GoType(t.text)
        if t.kind == "ident":
            name = self.next().text
            if self.at(".") and self.peek().kind == "ident":
                self.next()
                name += "." + self.next().text
            if self.at("["):              # generic instantiation
                self.skip_balanced()
            return GoType("named", name=name)
        raise GoError(f"expected a type at offset {t.pos}, found {t.text!r}")

    # -- expressions
    _BINARY = {"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 3, "<=": 3, ">": 3, ">=": 3,
               "+": 4, "-": 4, "|": 4, "^": 4, "*": 5, "/": 5, "%": 5, "<<": 5, ">>": 5,
               "&": 5}

    def parse_expr(self, min_prec: int = 1, hint: GoType | None = None) -> Any:
        left = self.parse_unary(hint)
        while self.tok.kind == "op" and self.tok.text in self._BINARY:
            prec = self._BINARY[self.tok.text]
            if prec < min_prec:
                break
            op = self.next().text
            right = self.parse_expr(prec + 1)
            left = _binary(op, left, right)
        return left

    def parse_unary(self, hint: GoType | None = None) -> Any:
        t = self.tok
        if t.kind == "op" and t.text in ("&", "*"):
            self.next()
            inner = hint.deref() if hint is not None else None
            return self.parse_unary(inner)
        if t.kind == "op" and t.text == "-":
            self.next()
            v = self.parse_unary()
            return -v if isinstance(v, (int, float)) else {"$code": "-", "args": [v]}
        if t.kind == "op" and t.text == "+":
            self.next()
            return self.parse_unary()
        if t.kind == "op" and t.text == "!":
            self.next()
            v = self.parse_unary()
            return (not v) if isinstance(v, bool) else {"$code": "!", "args": [v]}
        return self.parse_postfix(self.parse_primary(hint))

    def parse_primary(self, hint: GoType | None) -> Any:
        t = self.tok
        if t.kind == "int":
            self.next()
            return int(t.text.replace("_", ""), 0) if not re.fullmatch(r"0[0-7_]+", t.text) \
                else int(t.text.replace("_", ""), 8)
        if t.kind == "float":
            self.next()
            return float(t.text.replace("_", ""))
        if t.kind == "string":
            self.next()
            return t.text[1:-1] if t.text.startswith("`") else _unquote(t.text)
        if t.kind == "char":
            self.next()
            return ord(_unquote(t.text))
        if t.kind == "op" and t.text == "(":
            self.next()
            v = self.parse_expr()
            self.expect(")")
            return v
        if t.kind == "op" and t.text == "{":
            # A literal whose type is elided: the enclosing slice's or map's element.
            return self.parse_braced(hint.deref() if hint is not None else GoType("struct"))
        if (t.kind == "op" and t.text == "[") or t.text == "map":
            typ = self.parse_type()
            if self.at("{"):
                return self.parse_braced(typ)
            return _TypeValue(typ)
        if t.text == "func":
            return self.parse_func_literal()
        if t.kind == "ident":
            return self.parse_name()
        raise GoError(f"unexpected {t.text!r} at offset {t.pos}")

    def parse_name(self) -> Any:
        name = self.next().text
        if name == "true":
            return True
        if name == "false":
            return False
        if name == "nil":
            return None
        # A local variable of a builder body shadows package names.
        for scope in reversed(self.scopes):
            if name in scope:
                if self.at(".") and self.peek().kind == "ident" and self.peek(2).text == "(":
                    return _Receiver(name, scope[name])
                return scope[name]
        qualified = name
        if self.at(".") and self.peek().kind == "ident":
            self.next()
            qualified = name + "." + self.next().text
        if self.at("{") and (qualified[0].isupper() or "." in qualified) and \
                self._looks_like_literal():
            return self.parse_braced(GoType("named", name=qualified))
        if self.at("("):
            return _Callee(qualified)
        if qualified in _EXTERNAL_CONSTANTS:
            return _EXTERNAL_CONSTANTS[qualified]
        if qualified in _BUILTIN_TYPES:
            return _Callee(qualified)
        try:
            return self.resolve(qualified)
        except KeyError:
            return {"$ident": qualified}

    def _looks_like_literal(self) -> bool:
        # ``T{`` is a composite literal in every place the tables use it.
        return True

    def parse_postfix(self, value: Any) -> Any:
        while True:
            if self.at("("):
                if isinstance(value, _TypeValue):
                    self.next()
                    arg = self.parse_expr()
                    self.expect(")")
                    value = arg
                    continue
                args = self.parse_args()
                value = self.call(value, args)
                continue
            if self.at(".") and self.peek().kind == "ident":
                self.next()
                attr = self.next().text
                if isinstance(value, _Receiver):
                    value = _Callee(value.name + "." + attr, receiver=value)
                elif isinstance(value, dict) and attr in value:
                    value = value[attr]
                elif self.at("("):
                    value = _Callee("(value)." + attr, receiver=_Receiver("", value))
                else:
                    value = {"$code": "." + attr, "args": [value]}
                continue
            if self.at("[") and not isinstance(value, _TypeValue):
                self.next()
                index = self.parse_expr()
                self.expect("]")
                try:
                    value = value[index]
                except (KeyError, IndexError, TypeError):
                    value = {"$code": "index", "args": [value, index]}
                continue
            return value

    def parse_args(self) -> list[Any]:
        self.expect("(")
        args: list[Any] = []
        while not self.at(")"):
            args.append(self.parse_expr())
            if self.at("..."):
                self.next()
            if self.at(","):
                self.next()
        self.expect(")")
        return args

    def call(self, callee: Any, args: list[Any]) -> Any:
        if isinstance(callee, _FuncLiteral):
            return callee.invoke(self)
        if not isinstance(callee, _Callee):
            return {"$call": "(value)", "args": args}
        name = callee.name
        if callee.receiver is not None:
            # A method on a builder's local (``root.AddPodSet(...)``): record it.
            target = callee.receiver.value
            method = name.rsplit(".", 1)[1]
            if isinstance(target, dict):
                target.setdefault("$methods", []).append({"method": method, "args": args})
                return None
            return {"$call": name, "args": args}
        if name in _POINTER_HELPERS and len(args) == 1:
            return args[0]
        if (name in _CONVERSIONS or name in _BUILTIN_TYPES) and len(args) == 1:
            value = args[0]
            if name in ("int", "int32", "int64", "uint64", "uint32") and isinstance(value, float):
                return int(value)
            if name in ("float64", "float32") and isinstance(value, int):
                return float(value)
            return value
        if name == "fmt.Sprintf" and args and isinstance(args[0], str):
            return _sprintf(args[0], args[1:])
        return {"$call": name, "args": args}

    def parse_braced(self, typ: GoType) -> Any:
        self.expect("{")
        base = typ.deref()
        if base.kind == "slice":
            items: list[Any] = []
            while not self.at("}"):
                items.append(self.parse_expr(hint=base.elem))
                if self.at(","):
                    self.next()
            self.expect("}")
            return items
        if base.kind == "map":
            out: dict[Any, Any] = {}
            while not self.at("}"):
                key = self.parse_expr(hint=base.key)
                self.expect(":")
                out[_key(key)] = self.parse_expr(hint=base.elem)
                if self.at(","):
                    self.next()
            self.expect("}")
            return out
        # A struct (or a named map/slice type: keys that are not field names are kept).
        struct: dict[str, Any] = {}
        if base.kind == "named":
            struct["$type"] = base.name
        positional: list[Any] = []
        while not self.at("}"):
            if self.tok.kind == "ident" and self.peek().text == ":" and \
                    self.peek().kind == "op":
                fieldname = self.next().text
                self.next()
                struct[fieldname] = self.parse_expr(hint=_field_hint(base, fieldname))
            else:
                value = self.parse_expr()
                if self.at(":"):
                    self.next()
                    struct[_key(value)] = self.parse_expr()
                else:
                    positional.append(value)
            if self.at(","):
                self.next()
        self.expect("}")
        if positional:
            struct["$positional"] = positional
        return struct

    # -- builders: ``func() T { v := f(); v.M(x); return v }()``
    def parse_func_literal(self) -> Any:
        start = self.tok.pos
        self.parse_type()            # func(params) results
        if not self.at("{"):
            raise GoError(f"expected a function body at offset {self.tok.pos}")
        body_start = self.i
        self.skip_balanced()
        text = self.src[start:self.toks[self.i - 1].pos + 1]
        return _FuncLiteral(body_start, self.i, text)


def _field_hint(base: GoType, fieldname: str) -> GoType | None:
    # Field types are not known without the struct declaration; an elided literal in a
    # field is always a struct, slice or map literal written with its type, so no hint.
    return None


def _key(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


def _binary(op: str, a: Any, b: Any) -> Any:
    numeric = isinstance(a, (int, float)) and isinstance(b, (int, float)) and \
        not isinstance(a, bool) and not isinstance(b, bool)
    if op == "+" and isinstance(a, str) and isinstance(b, str):
        return a + b
    if numeric:
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            if isinstance(a, int) and isinstance(b, int):
                return int(a / b)   # Go truncates toward zero
            return a / b
        if op == "%" and isinstance(a, int) and isinstance(b, int):
            return a % b
        if op == "<<" and isinstance(a, int) and isinstance(b, int):
            return a << b
        if op == "|" and isinstance(a, int) and isinstance(b, int):
            return a | b
    return {"$code": op, "args": [a, b]}


@dataclass(frozen=True, slots=True)
class _TypeValue:
    typ: GoType


@dataclass(frozen=True, slots=True)
class _Receiver:
    name: str
    value: Any


@dataclass(frozen=True, slots=True)
class _Callee:
    name: str
    receiver: _Receiver | None = None


@dataclass(frozen=True, slots=True)
class _FuncLiteral:
    body_start: int
    body_end: int
    text: str

    def invoke(self, parser: Parser) -> Any:
        """Run the body's statements: ``x := e``, ``x = e``, ``var x = e``,
        ``x.M(args)``, ``return e``. Anything else: the whole literal is a marker."""
        saved = parser.i
        parser.i = self.body_start + 1
        parser.scopes.append({})
        try:
            while parser.i < self.body_end - 1:
                if parser.at(";"):
                    parser.next()
                    continue
                if parser.at("return"):
                    parser.next()
                    return parser.parse_expr()
                if parser.at("var"):
                    parser.next()
                name = parser.tok
                if name.kind == "ident" and parser.peek().text in (":=", "="):
                    parser.next()
                    parser.next()
                    parser.scopes[-1][name.text] = parser.parse_expr()
                    continue
                if name.kind == "ident" and name.text in parser.scopes[-1]:
                    parser.parse_expr()       # a method call on a local, recorded
                    continue
                raise _Unsupported(name.text)
            return {"$code": self.text}
        except (_Unsupported, GoError):
            return {"$code": self.text}
        finally:
            parser.scopes.pop()
            parser.i = saved


# --- upstream constants -------------------------------------------------------------

_IMPORT_LINE = re.compile(r'^\s*(?:(?P<alias>[A-Za-z_.][A-Za-z0-9_]*)\s+)?"(?P<path>[^"]+)"\s*$')


def imports_of(src: str) -> dict[str, str]:
    """alias -> import path for one Go file (the alias defaults to the path's tail)."""
    out: dict[str, str] = {}
    block = re.search(r"^import\s*\((.*?)^\)", src, re.MULTILINE | re.DOTALL)
    lines = block.group(1).splitlines() if block else []
    lines += [m.group(1) for m in re.finditer(r'^import\s+(.*"[^"]+")\s*$', src, re.MULTILINE)]
    for line in lines:
        m = _IMPORT_LINE.match(line.split("//")[0])
        if m is None:
            continue
        path = m.group("path")
        alias = m.group("alias") or path.rsplit("/", 1)[-1]
        if alias in ("_", "."):
            continue
        out[alias] = path
    return out


class Resolver:
    """Resolves package-level constants (and plain ``var X = literal``s) of the
    upstream repository at one commit, read with ``git show``."""

    MODULE = "github.com/NVIDIA/KAI-scheduler/"

    def __init__(self, gitdir: str, commit: str) -> None:
        self.gitdir = gitdir
        self.commit = commit
        self._files: dict[str, list[str]] = {}
        self._text: dict[str, str] = {}
        self._decls: dict[str, dict[str, tuple[str, str]]] = {}
        self._cache: dict[tuple[str, str], Any] = {}
        self._active: set[tuple[str, str]] = set()

    def show(self, path: str) -> str:
        if path not in self._text:
            self._text[path] = subprocess.run(
                ["git", "-C", self.gitdir, "show", f"{self.commit}:{path}"],
                check=True, capture_output=True, text=True).stdout
        return self._text[path]

    def package_files(self, pkgdir: str) -> list[str]:
        if pkgdir not in self._files:
            out = subprocess.run(
                ["git", "-C", self.gitdir, "ls-tree", "--name-only", self.commit, pkgdir + "/"],
                check=True, capture_output=True, text=True).stdout.split()
            self._files[pkgdir] = [p for p in out if p.endswith(".go")]
        return self._files[pkgdir]

    def declarations(self, pkgdir: str, with_tests: bool) -> dict[str, tuple[str, str]]:
        """name -> (file, expression text) for the package's constants; an iota
        enumeration's members map to ``("", "")`` (they read as their names)."""
        key = pkgdir + ("+tests" if with_tests else "")
        if key in self._decls:
            return self._decls[key]
        decls: dict[str, tuple[str, str]] = {}
        for path in self.package_files(pkgdir):
            if path.endswith("_test.go") and not with_tests:
                continue
            src = self.show(path)
            for m in re.finditer(r"^(?:const|var)\s*\((.*?)^\)", src, re.MULTILINE | re.DOTALL):
                iota = "iota" in m.group(1)
                for line in m.group(1).splitlines():
                    line = line.split("//")[0].strip()
                    d = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\s+[A-Za-z_.*\[\]]+)?\s*=\s*(.+)$",
                                 line)
                    if d and not iota:
                        decls[d.group(1)] = (path, d.group(2))
                    elif iota and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(?:\s+[A-Za-z_.]+\s*=.*)?",
                                               line):
                        decls[line.split()[0]] = ("", "")
            for m in re.finditer(
                    r"^(?:const|var)\s+([A-Za-z_][A-Za-z0-9_]*)(?:\s+[A-Za-z_.*\[\]]+)?\s*=\s*(.+)$",
                    src, re.MULTILINE):
                decls.setdefault(m.group(1), (path, m.group(2).split("//")[0].strip()))
        self._decls[key] = decls
        return decls

    def for_file(self, path: str) -> Callable[[str], Any]:
        """The resolver for identifiers in the Go file ``path``."""
        imports = imports_of(self.show(path))
        pkgdir = path.rsplit("/", 1)[0]

        def resolve(name: str) -> Any:
            if "." in name:
                alias, member = name.split(".", 1)
                target = imports.get(alias)
                if target is None or not target.startswith(self.MODULE):
                    raise KeyError(name)
                return self.value(target[len(self.MODULE):], member, with_tests=False)
            return self.value(pkgdir, name, with_tests=True)
        return resolve

    def value(self, pkgdir: str, name: str, with_tests: bool) -> Any:
        key = (pkgdir, name)
        if key in self._cache:
            return self._cache[key]
        decls = self.declarations(pkgdir, with_tests)
        if name not in decls or key in self._active:
            raise KeyError(name)
        path, expr = decls[name]
        if not path:
            value: Any = name
        else:
            self._active.add(key)
            try:
                value = Parser(expr, self.for_file(path)).parse_expr()
            except GoError as err:
                raise KeyError(name) from err
            finally:
                self._active.discard(key)
        self._cache[key] = value
        return value
