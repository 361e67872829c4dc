"""Load the knowledge base (``rules/`` and ``kb/``), validate all of it at once, report every problem.

The shipped knowledge base lives inside the package (``clusterdx.rules``, ``clusterdx.kb``);
experts may load other folders on top (their checkout, site folders). A document's kind is decided
by its ``schema`` key, not its folder. Files named ``*.test.yaml`` are rule tests, ``kb/cases`` and
``kb/reference`` hold case bundles and reference numbers and are loaded by their own modules.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import re
import string
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from pydantic import ValidationError

from clusterdx.engine.graph import TOP_SYMPTOM, CausalGraph, downstream
from clusterdx.engine.ir import ConditionError, parse_condition
from clusterdx.engine.problems import KBLoadError, Problem, did_you_mean
from clusterdx.engine.schema import DOC_MODELS, OPS, FactPattern, Node, Probe, Question, Remediation, Rule

if TYPE_CHECKING:
    from clusterdx.engine.yamlsafe import Located


def shipped_dirs() -> tuple[Path, Path]:
    rules = Path(str(resources.files("clusterdx.rules")))
    kb = Path(str(resources.files("clusterdx.kb")))
    return rules, kb


SKIP_DIRS = {"cases", "reference", "gazetteers", "__pycache__"}
#: documents that may live in a KB folder but are read by their own loaders
NOT_KB_SCHEMAS = {"clusterdx/site/v1", "clusterdx/reference/v1", "clusterdx/bundle/v1"}


@dataclass
class KnowledgeBase:
    rules: dict[str, Rule] = field(default_factory=dict)
    nodes: dict[str, Node] = field(default_factory=dict)
    remediations: dict[str, Remediation] = field(default_factory=dict)
    probes: dict[str, Probe] = field(default_factory=dict)
    questions: dict[str, Question] = field(default_factory=dict)
    files: dict[str, Path] = field(default_factory=dict)
    locations: dict[str, Located] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    roots: list[Path] = field(default_factory=list)
    graph: CausalGraph | None = None
    #: the compiled knowledge base's key (:func:`clusterdx.engine.kbcache.source_key`) when this
    #: one was read from the cache or stored there, else "": what is compiled from it can be
    #: stored under it (:mod:`clusterdx.engine.rulesetcache`)
    cache_key: str = field(default="", compare=False)
    #: the rule objects as loaded under ``cache_key``: a rule replaced since is compiled afresh
    cached_rules: dict[str, Rule] = field(default_factory=dict, compare=False, repr=False)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    def test_file(self, rule_id: str) -> Path | None:
        path = self.files.get(rule_id)
        if path is None:
            return None
        candidate = path.with_name(f"{rule_id}.test.yaml")
        return candidate if candidate.exists() else None

    def probes_for(self, fact_type: str) -> list[Probe]:
        return [p for p in self.probes.values() if fact_type in p.yields]

    def rules_for_node(self, node_id: str) -> list[Rule]:
        return [r for r in self.rules.values() if any(e.node == node_id for e in r.evidence)]


def _yaml_files(root: Path) -> list[Path]:
    """KB documents under ``root``, sorted as paths sort; folders read by other loaders (the case
    library, reference tables) and hidden ones are not entered at all (the case library alone
    holds thousands of files)."""
    found: list[Path] = []
    for folder, subdirs, names in os.walk(root):
        subdirs[:] = [d for d in subdirs if d not in SKIP_DIRS and not d.startswith(".")]
        base = Path(folder)
        found += [base / n for n in names if n.endswith(".yaml") and not n.endswith(".test.yaml")]
    found.sort()
    return found


def _display(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def load_kb(dirs: Iterable[Path] | None = None, *, strict: bool = True, cache: bool = False) -> KnowledgeBase:
    """Load and validate; raise :class:`KBLoadError` on errors when ``strict``.

    ``cache``: read the compiled knowledge base of exactly these files when one is stored, and
    store one after a load from source that found no errors (:mod:`clusterdx.engine.kbcache`).
    Commands that author or check the KB leave it off: they must see the source and its locations.
    """
    from clusterdx.engine import kbcache

    roots = list(dirs) if dirs is not None else list(shipped_dirs())
    files = {root: _yaml_files(root) for root in roots}
    key = ""
    if cache and kbcache.enabled():
        key = kbcache.load_key(roots, files)
        stored = kbcache.read(key)
        if stored is not None:
            kb = _from_compiled(stored, roots, kbcache.warn)
            if kb is not None:
                kb.cache_key, kb.cached_rules = key, dict(kb.rules)
                return kb
    kb = _load_source(roots, files)
    if key and not kb.errors:
        kbcache.write(key, _compiled(kb))
        kb.cache_key, kb.cached_rules = key, dict(kb.rules)
    if strict and kb.errors:
        raise KBLoadError(kb.problems)
    return kb


def _load_source(roots: list[Path], files: dict[Path, list[Path]]) -> KnowledgeBase:
    from clusterdx.facts.base import load_fact_types

    fact_types = load_fact_types()
    kb = KnowledgeBase()
    kb.roots = roots
    seen: set[Path] = set()
    for root in roots:
        for path in files[root]:
            # an editable install makes the shipped KB and the checkout the same files: load once
            real = path.resolve()
            if real in seen:
                continue
            seen.add(real)
            _load_document(kb, path)
    _check_references(kb, fact_types)
    _check_graph(kb)
    _check_coverage(kb)
    return kb


_KINDS: dict[str, str] = {"Rule": "rules", "Node": "nodes", "Remediation": "remediations", "Probe": "probes",
                          "Question": "questions"}


def _compiled(kb: KnowledgeBase) -> dict[str, Any]:
    """A loaded knowledge base as plain data: its documents in load order (so that overrides replay
    the same way), the load's warnings and the graph's tables."""
    docs = []
    for key, path in kb.files.items():
        kind, sep, doc_id = key.partition(":")
        if not sep:
            continue  # the rule-id alias of a "Rule:<id>" entry
        doc = getattr(kb, _KINDS[kind])[doc_id]
        entry: dict[str, Any] = {"kind": kind, "path": str(path), "data": doc.model_dump(mode="json", by_alias=True)}
        dates = _date_paths(doc.model_dump(by_alias=True), ())
        if dates:
            entry["dates"] = dates  # YAML dates in free-form fields (created:) come back as dates
        docs.append(entry)
    return {
        "roots": [str(r) for r in kb.roots],
        "docs": docs,
        "problems": [dataclasses.asdict(p) for p in kb.problems],
        "graph": kb.graph.tables() if kb.graph is not None else None,
    }


def _date_paths(value: Any, path: tuple) -> list[list[Any]]:
    """Where in a document's data a ``date`` or ``datetime`` sits (JSON writes them as text)."""
    if isinstance(value, (datetime.date, datetime.datetime)):
        return [[*path, "datetime" if isinstance(value, datetime.datetime) else "date"]]
    out: list[list[Any]] = []
    if isinstance(value, dict):
        for k, v in value.items():
            out += _date_paths(v, (*path, k))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            out += _date_paths(v, (*path, i))
    return out


def _restore_dates(data: dict[str, Any], paths: list[list[Any]]) -> None:
    for *where, kind in paths:
        holder: Any = data
        for step in where[:-1]:
            holder = holder[step]
        text = holder[where[-1]]
        holder[where[-1]] = (datetime.datetime if kind == "datetime" else datetime.date).fromisoformat(text)


def _from_compiled(data: dict[str, Any], roots: list[Path], warn: Any) -> KnowledgeBase | None:
    """The knowledge base stored by :func:`_compiled`, every document validated again; None (with a
    warning) when the data does not hold one."""
    from clusterdx.engine.schema import Node, Probe, Question, Remediation, Rule

    models = {"Rule": Rule, "Node": Node, "Remediation": Remediation, "Probe": Probe, "Question": Question}
    kb = KnowledgeBase(roots=roots)
    try:
        for doc in data["docs"]:
            kind = doc["kind"]
            if "dates" in doc:
                _restore_dates(doc["data"], doc["dates"])
            model = models[kind].model_validate(doc["data"])
            path = Path(doc["path"])
            getattr(kb, _KINDS[kind])[model.id] = model  # type: ignore[attr-defined]
            kb.files[f"{kind}:{model.id}"] = path  # type: ignore[attr-defined]
            if kind == "Rule":
                kb.files[model.id] = path  # type: ignore[attr-defined]
        kb.problems = [Problem(**p) for p in data["problems"]]
        tables = data["graph"]
        if tables is not None:
            attenuation = {str(c): {str(n): float(w) for n, w in reach.items()}
                           for c, reach in tables["attenuation"].items()}
            paths = {str(c): [str(n) for n in path] for c, path in tables["paths"].items()}
            kb.graph = CausalGraph.from_tables(kb.nodes, attenuation, paths)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:  # ValidationError is a ValueError
        warn(f"ignoring a compiled knowledge base that does not hold one ({type(exc).__name__}); rebuilding it")
        return None
    if kb.errors:
        warn("ignoring a compiled knowledge base that records errors; loading from source")
        return None
    return kb


def _load_document(kb: KnowledgeBase, path: Path) -> None:
    from clusterdx.engine.yamlsafe import YamlError, load_file

    name = _display(path)
    try:
        located = load_file(path)
    except YamlError as exc:
        kb.problems.append(Problem("KB001", str(exc), name, exc.line, exc.col))
        return
    except (OSError, UnicodeDecodeError) as exc:
        kb.problems.append(Problem("KB001", f"cannot read: {exc}", name, 1, 1))
        return
    data = located.data
    if not isinstance(data, dict):
        kb.problems.append(Problem("KB002", "expected a mapping with a 'schema' key", name, 1, 1))
        return
    schema = data.get("schema")
    if schema in NOT_KB_SCHEMAS:
        return  # a site configuration or reference table kept beside the KB files
    model = DOC_MODELS.get(schema) if isinstance(schema, str) else None
    if model is None:
        line, col = located.loc(("schema",))
        kb.problems.append(Problem("KB002", f"unknown schema {schema!r}", name, line, col,
                                   hint=did_you_mean(str(schema), DOC_MODELS)))
        return
    try:
        doc = model.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors():
            loc = tuple(err["loc"])
            line, col = located.loc(loc)
            crumb = " > ".join(str(x) for x in loc)
            hint = ""
            if err["type"] == "extra_forbidden" and loc:
                hint = did_you_mean(str(loc[-1]), model.model_fields)
            kb.problems.append(Problem("KB101", err["msg"], name, line, col, f"{model.__name__} > {crumb}", hint))
        return
    doc_id = getattr(doc, "id")
    stem = path.name.removesuffix(".yaml")
    if stem != doc_id:
        line, col = located.loc(("id",))
        kb.problems.append(Problem("KB102", f"id {doc_id!r} does not match file name {stem!r}", name, line, col))
    table: dict[str, Any] = {
        Rule: kb.rules, Node: kb.nodes, Remediation: kb.remediations, Probe: kb.probes, Question: kb.questions,
    }[type(doc)]
    key = f"{type(doc).__name__}:{doc_id}"
    if doc_id in table:
        line, col = located.loc(("id",))
        first = kb.files[key]
        same_root = _root_of(kb, first) == _root_of(kb, path)
        # a later folder overrides an earlier one (a checkout or site folder on top of the shipped
        # KB); the same id twice within one folder is a mistake
        kb.problems.append(Problem("KB103", f"{type(doc).__name__.lower()} {doc_id!r} "
                                   f"{'defined again' if same_root else 'overrides the one'} in {_display(first)}",
                                   name, line, col, severity="error" if same_root else "warning"))
    table[doc_id] = doc
    kb.files[key] = path
    if isinstance(doc, Rule):
        kb.files[doc_id] = path
    kb.locations[key] = located


def _root_of(kb: KnowledgeBase, path: Path) -> Path | None:
    for root in kb.roots:
        try:
            path.resolve().relative_to(root.resolve())
            return root
        except ValueError:
            continue
    return None


def _problem_at(kb: KnowledgeBase, kind: str, doc_id: str, path: tuple, code: str, message: str,
                hint: str = "", severity: str = "error") -> None:
    key = f"{kind}:{doc_id}"
    located = kb.locations.get(key)
    line, col = located.loc(path) if located else (0, 0)
    crumb = f"{kind}(id={doc_id!r})" + "".join(f" > {p}" for p in path)
    kb.problems.append(Problem(code, message, _display(kb.files[key]) if key in kb.files else "",
                               line, col, crumb, hint, severity))  # type: ignore[arg-type]


_TEMPLATE_FIELD = re.compile(r"^([A-Za-z_]\w*)(?:\.([A-Za-z_]\w*))?$")


def _check_pattern(kb: KnowledgeBase, rule: Rule, path: tuple, pat: FactPattern, fact_types: dict) -> None:
    from clusterdx.facts.base import field_kinds

    cls = fact_types.get(pat.fact)
    if cls is None:
        _problem_at(kb, "Rule", rule.id, path + ("fact",), "KB202", f"unknown fact type {pat.fact!r}",
                    did_you_mean(pat.fact, fact_types))
        return
    kinds = field_kinds(cls)
    for fld, spec in pat.where.items():
        if fld not in kinds:
            _problem_at(kb, "Rule", rule.id, path + ("where", fld), "KB203",
                        f"fact type {pat.fact!r} has no field {fld!r}", did_you_mean(fld, kinds))
            continue
        ops = spec.items() if isinstance(spec, dict) else [("eq", spec)]
        for op, value in ops:
            if op not in OPS:
                _problem_at(kb, "Rule", rule.id, path + ("where", fld, op), "KB207",
                            f"unknown operator {op!r}", did_you_mean(op, OPS))
                continue
            _check_value(kb, rule, path + ("where", fld), fld, kinds[fld], op, value)


def _check_value(kb: KnowledgeBase, rule: Rule, path: tuple, fld: str, kind: str, op: str, value: Any) -> None:
    values = value if op in ("in", "not_in") else [value]
    if op in ("in", "not_in") and not isinstance(value, list):
        _problem_at(kb, "Rule", rule.id, path, "KB206", f"{op} takes a list")
        return
    for v in values:
        if isinstance(v, str) and v.startswith("$"):
            pname = v[1:]
            if pname not in rule.params:
                _problem_at(kb, "Rule", rule.id, path, "KB204", f"unknown param {pname!r}",
                            did_you_mean(pname, rule.params))
                continue
            v = rule.params[pname].default
        if op == "exists":
            if not isinstance(v, bool):
                _problem_at(kb, "Rule", rule.id, path, "KB206", "exists takes true or false")
            continue
        if op == "matches":
            try:
                re.compile(str(v))
            except re.error as exc:
                _problem_at(kb, "Rule", rule.id, path, "KB208", f"bad regex {v!r}: {exc}")
            else:
                nested = nested_quantifier(str(v))
                if nested:
                    _problem_at(kb, "Rule", rule.id, path, "KB210",
                                f"regex {v!r} repeats a repeated part ({nested}): it can take exponential "
                                "time on a long value", hint="write the repeated part once, e.g. '(ab)+' "
                                "for '(a+b?)+', or anchor it to a fixed shape")
            if kind != "string":
                _problem_at(kb, "Rule", rule.id, path, "KB206", f"matches needs a string field; {fld!r} is {kind}")
            continue
        if op == "contains":
            if kind != "list":
                _problem_at(kb, "Rule", rule.id, path, "KB206", f"contains needs a list field; {fld!r} is {kind}")
            continue
        ok = {
            "number": isinstance(v, (int, float)) and not isinstance(v, bool),
            "string": isinstance(v, str),
            "bool": isinstance(v, bool),
        }.get(kind, True)
        if op in ("gt", "gte", "lt", "lte") and kind not in ("number", "string"):
            ok = False
        if not ok:
            _problem_at(kb, "Rule", rule.id, path, "KB206",
                        f"field {fld!r} is {kind} but the rule compares it with {v!r} ({type(v).__name__})")


def _check_references(kb: KnowledgeBase, fact_types: dict) -> None:
    for rule in kb.rules.values():
        for alias, pat in rule.match.items():
            if not re.fullmatch(r"[A-Za-z_]\w*", alias) or alias in ("and", "or", "not"):
                _problem_at(kb, "Rule", rule.id, ("match", alias), "KB301", f"alias {alias!r} is not a plain name")
            _check_pattern(kb, rule, ("match", alias), pat, fact_types)
        for i, req in enumerate(rule.requires.facts):
            if isinstance(req, str):
                if req not in fact_types:
                    _problem_at(kb, "Rule", rule.id, ("requires", "facts", i), "KB202",
                                f"unknown fact type {req!r}", did_you_mean(req, fact_types))
            else:
                _check_pattern(kb, rule, ("requires", "facts", i), req, fact_types)
        try:
            parse_condition(rule.condition, list(rule.match))
        except ConditionError as exc:
            located = kb.locations.get(f"Rule:{rule.id}")
            line, col = located.vloc(("condition",)) if located else (0, 0)
            kb.problems.append(Problem("KB301", str(exc), _display(kb.files[f"Rule:{rule.id}"]), line,
                                       col + max(exc.col - 1, 0), f"Rule(id={rule.id!r}) > condition"))
        for i, ev in enumerate(rule.evidence):
            if ev.node not in kb.nodes:
                _problem_at(kb, "Rule", rule.id, ("evidence", i, "node"), "KB201",
                            f"unknown graph node {ev.node!r}", did_you_mean(ev.node, kb.nodes))
            elif ev.via and ev.via not in downstream(kb.nodes, ev.node):
                _problem_at(kb, "Rule", rule.id, ("evidence", i, "via"), "KB201",
                            f"{ev.via!r} is not a graph node downstream of {ev.node!r}",
                            did_you_mean(ev.via, downstream(kb.nodes, ev.node)))
        _check_template(kb, rule, ("message",), rule.message, fact_types)
        for key, ref in rule.data.items():
            _check_template(kb, rule, ("data", key), "{" + ref + "}", fact_types)
    for node in kb.nodes.values():
        for i, edge in enumerate(node.causes):
            if edge.node not in kb.nodes:
                _problem_at(kb, "Node", node.id, ("causes", i, "node"), "KB201",
                            f"unknown graph node {edge.node!r}", did_you_mean(edge.node, kb.nodes))
        for i, rem in enumerate(node.remediations):
            if rem not in kb.remediations:
                _problem_at(kb, "Node", node.id, ("remediations", i), "KB205",
                            f"unknown remediation {rem!r}", did_you_mean(rem, kb.remediations))
        if node.kind == "root_cause":
            missing = [f for f in ("layer", "prior") if getattr(node, f) is None]
            if len(node.cost_pct) != 2:
                missing.append("cost_pct [low, high]")
            if not node.remediations:
                missing.append("remediations")
            if not node.verification:
                missing.append("verification")
            if not node.references:
                missing.append("references")
            if missing:
                _problem_at(kb, "Node", node.id, (), "KB503", "root cause lacks " + ", ".join(missing))
    for rem in kb.remediations.values():
        for i, target in enumerate(rem.addresses):
            if target not in kb.nodes:
                _problem_at(kb, "Remediation", rem.id, ("addresses", i), "KB201",
                            f"unknown graph node {target!r}", did_you_mean(target, kb.nodes))
        _check_step_values(kb, rem)
    for q in kb.questions.values():
        for i, node_id in enumerate(q.about):
            if node_id not in kb.nodes:
                _problem_at(kb, "Question", q.id, ("about", i), "KB201", f"unknown graph node {node_id!r}",
                            did_you_mean(node_id, kb.nodes))
        for i, ans in enumerate(q.answers):
            for j, ev in enumerate(ans.evidence):
                if ev.node not in kb.nodes:
                    _problem_at(kb, "Question", q.id, ("answers", i, "evidence", j, "node"), "KB201",
                                f"unknown graph node {ev.node!r}", did_you_mean(ev.node, kb.nodes))
    for probe in kb.probes.values():
        for i, ft in enumerate(probe.yields):
            if ft not in fact_types:
                _problem_at(kb, "Probe", probe.id, ("yields", i), "KB209", f"unknown fact type {ft!r}",
                            did_you_mean(ft, fact_types))


def _check_step_values(kb: KnowledgeBase, rem: Remediation) -> None:
    """A step's named values: each used by a command (KB601), and each supplied by the ``data`` of
    some rule that supports a cause the remediation addresses (KB602), else it always prints as
    its placeholder."""
    from clusterdx.engine.remedy import ENGINE_VALUES, names_in

    supplied = {key for r in kb.rules.values() for e in r.evidence
                if e.effect == "supports" and e.node in rem.addresses for key in r.data} | ENGINE_VALUES
    for i, step in enumerate(rem.steps):
        commands = [step.command] + [v.command for v in step.variants] + [a.command for a in step.alternatives]
        named = {n for c in commands for n in names_in(c)}
        for name in step.values:
            if name not in named:
                _problem_at(kb, "Remediation", rem.id, ("steps", i, "values", name), "KB601",
                            f"value {name!r} is declared but no command of the step names {{{name}}}")
            if name not in supplied:
                _problem_at(kb, "Remediation", rem.id, ("steps", i, "values", name), "KB602",
                            f"no rule supporting {', '.join(rem.addresses)} supplies {name!r} in its data; "
                            "the command always shows the placeholder", severity="warning")
        for j, variant in enumerate(step.variants):
            for name in variant.when:
                if name not in supplied:
                    _problem_at(kb, "Remediation", rem.id, ("steps", i, "variants", j, "when", name), "KB602",
                                f"no rule supporting {', '.join(rem.addresses)} supplies {name!r} in its data; "
                                "the variant never applies", severity="warning")


def _check_template(kb: KnowledgeBase, rule: Rule, path: tuple, template: str, fact_types: dict) -> None:
    from clusterdx.facts.base import field_kinds

    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        _problem_at(kb, "Rule", rule.id, path, "KB401", f"bad template: {exc}")
        return
    for _, fname, _, _ in parsed:
        if fname is None:
            continue
        m = _TEMPLATE_FIELD.match(fname)
        if not m:
            _problem_at(kb, "Rule", rule.id, path, "KB401", f"template field {fname!r} must be alias.field or param")
            continue
        alias, fld = m.group(1), m.group(2)
        if fld is None:
            if alias not in rule.params and alias not in ("node",):
                _problem_at(kb, "Rule", rule.id, path, "KB401", f"unknown template name {alias!r}",
                            did_you_mean(alias, list(rule.params) + list(rule.match)))
            continue
        if alias not in rule.match:
            _problem_at(kb, "Rule", rule.id, path, "KB401", f"unknown alias {alias!r} in template",
                        did_you_mean(alias, rule.match))
            continue
        cls = fact_types.get(rule.match[alias].fact)
        if cls is not None and fld not in field_kinds(cls) and fld != "source":
            _problem_at(kb, "Rule", rule.id, path, "KB401", f"fact type {cls.fact_type!r} has no field {fld!r}",
                        did_you_mean(fld, field_kinds(cls)))


def _check_graph(kb: KnowledgeBase) -> None:
    graph = CausalGraph.build(kb.nodes)
    cycles = graph.cycles()
    for cycle in cycles:
        _problem_at(kb, "Node", cycle[0], ("causes",), "KB501", "cycle: " + " -> ".join(cycle + [cycle[0]]))
    if not cycles:
        if kb.nodes and TOP_SYMPTOM not in kb.nodes:
            kb.problems.append(Problem("KB502", f"the top symptom {TOP_SYMPTOM!r} is not defined"))
        else:
            for root in graph.unreachable_root_causes():
                _problem_at(kb, "Node", root, ("causes",), "KB502",
                            f"root cause {root!r} does not reach {TOP_SYMPTOM!r}")
        kb.graph = graph


def _check_coverage(kb: KnowledgeBase) -> None:
    evidenced = {e.node for r in kb.rules.values() for e in r.evidence}
    targets = {e.node for n in kb.nodes.values() for e in n.causes}
    for node in kb.nodes.values():
        if node.kind == "root_cause" and node.id not in evidenced and kb.graph is not None:
            downstream = set(kb.graph.attenuation.get(node.id, {})) - {TOP_SYMPTOM}
            if not (downstream & evidenced):
                _problem_at(kb, "Node", node.id, (), "KB901",
                            f"no rule gives evidence for root cause {node.id!r} or anything it causes",
                            severity="warning")
        if node.kind != "root_cause" and node.id != TOP_SYMPTOM and node.id not in targets:
            _problem_at(kb, "Node", node.id, (), "KB903", f"nothing causes node {node.id!r}", severity="warning")
    for rule in kb.rules.values():
        if kb.test_file(rule.id) is None:
            _problem_at(kb, "Rule", rule.id, (), "KB902", f"rule {rule.id!r} has no {rule.id}.test.yaml beside it")


def nested_quantifier(pattern: str) -> str:
    """The first repeat inside a repeat in ``pattern`` (``(a+)+``, ``(\\w*\\.?)*``), or ''.

    >>> nested_quantifier(r"^(a+)+$"), nested_quantifier(r"mlx5_\\d+"), nested_quantifier(r"(ab|cd){2}x*")
    ('(a+)+', '', '')
    """
    try:
        from re import _parser as sre_parse  # type: ignore[attr-defined]
    except ImportError:  # Python < 3.11
        import sre_parse  # type: ignore[no-redef]
    try:
        tree = sre_parse.parse(pattern)
    except Exception:
        return ""
    repeats = {sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT}
    possessive = getattr(sre_parse, "POSSESSIVE_REPEAT", None)

    def unbounded_inside(items, depth: int) -> bool:
        for op, av in items:
            if op in repeats:
                lo, hi, sub = av
                if hi > 1 and depth > 0:
                    return True
                if unbounded_inside(sub, depth + (1 if hi > 1 else 0)):
                    return True
            elif op == possessive:
                continue  # no backtracking into it
            elif op == sre_parse.SUBPATTERN:
                if unbounded_inside(av[-1], depth):
                    return True
            elif op == sre_parse.BRANCH:
                if any(unbounded_inside(b, depth) for b in av[1]):
                    return True
            elif op in (sre_parse.ASSERT, sre_parse.ASSERT_NOT):
                if unbounded_inside(av[1], depth):
                    return True
        return False

    if not unbounded_inside(tree, 0):
        return ""
    m = re.search(r"\([^()]*[+*}][^()]*\)[+*{]", pattern)
    return m.group(0) if m else "nested repeat"
