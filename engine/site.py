"""Site configuration: what one site changes in the shipped knowledge base, in one file.

A site may load extra KB folders on top of the shipped ones, override rule parameters
(thresholds) and cause priors, disable rules, choose which rule statuses run, and declare which
causes its validation treats as mandatory. Every report says which configuration was in force.

Looked up in this order: ``--config FILE``, ``$CLUSTERDX_CONFIG``, ``site.yaml`` in the user's
configuration folder (``platformdirs.user_config_dir("clusterdx")``, ``~/.config/clusterdx`` on
Linux), ``/etc/clusterdx/site.yaml``. Never from the working directory or a folder being
diagnosed: a ticket is data, and a ``clusterdx.yaml`` shipped inside one must not be able to
disable rules or load knowledge-base folders. Example::

    schema: clusterdx/site/v1
    name: dc-west GB200 pods
    kb_dirs: [/opt/site-kb]                 # relative paths are relative to this file
    statuses: [stable, test, experimental]  # default: stable and test
    rules:
      disable: [cpu-freq-below-max]
      params:
        smmu-cmdq-hot-in-guest: {min_share_pct: 3.0}
    priors:
      vm-vsmmu-cmdq-trap-overhead: high
    mandatory: [numa-balancing-enabled, container-nccl-env-not-propagated]
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from clusterdx.engine.schema import Prior, Status

DEFAULT_STATUSES: tuple[str, ...] = ("stable", "test")


class SiteRules(BaseModel):
    model_config = ConfigDict(extra="forbid")
    disable: list[str] = Field(default_factory=list)
    params: dict[str, dict[str, Any]] = Field(default_factory=dict)


class SiteConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    schema_: Literal["clusterdx/site/v1"] = Field("clusterdx/site/v1", alias="schema")
    name: str = ""
    kb_dirs: list[str] = Field(default_factory=list)
    statuses: list[Status] = Field(default_factory=lambda: list(DEFAULT_STATUSES))
    rules: SiteRules = Field(default_factory=SiteRules)
    priors: dict[str, Prior] = Field(default_factory=dict)
    mandatory: list[str] = Field(default_factory=list)
    #: where it was loaded from; empty for the built-in defaults
    path: str = ""

    def extra_kb_dirs(self) -> list[Path]:
        base = Path(self.path).parent if self.path else Path.cwd()
        return [(base / d).resolve() for d in self.kb_dirs]

    def summary(self) -> dict[str, Any]:
        return {
            "name": self.name, "path": self.path, "statuses": list(self.statuses),
            "disabled_rules": list(self.rules.disable),
            "param_overrides": {r: dict(p) for r, p in self.rules.params.items()},
            "prior_overrides": dict(self.priors), "kb_dirs": [str(p) for p in self.extra_kb_dirs()],
            "mandatory": list(self.mandatory),
        }


class SiteConfigError(Exception):
    pass


def rule_params(kb: Any, site: SiteConfig | None = None) -> dict[str, dict[str, Any]]:
    """Every rule parameter in force: the knowledge base's defaults with the site's overrides over
    them. The rules read them, and so does code that cuts facts at a rule's threshold
    (:mod:`clusterdx.facts.derive.thresholds`)."""
    out = {rid: {name: p.default for name, p in rule.params.items()} for rid, rule in kb.rules.items()}
    for rid, params in (site.rules.params if site else {}).items():
        if rid in out:
            out[rid].update(params)
    return out


def candidates() -> list[Path]:
    out = []
    env = os.environ.get("CLUSTERDX_CONFIG")
    if env:
        out.append(Path(env))
    from platformdirs import user_config_dir

    out += [Path(user_config_dir("clusterdx")) / "site.yaml", Path("/etc/clusterdx/site.yaml")]
    return out


def load_site(path: Path | None = None) -> SiteConfig:
    """The site configuration in force; the defaults when no file exists."""
    chosen = path
    if chosen is None:
        chosen = next((p for p in candidates() if p.is_file()), None)
        if chosen is None:
            return SiteConfig()
    if not chosen.is_file():
        raise SiteConfigError(f"site configuration not found: {chosen}")
    from clusterdx.engine.yamlsafe import YamlError, load_file  # YAML only when a site file exists
    try:
        located = load_file(chosen)
    except YamlError as exc:
        raise SiteConfigError(f"{chosen}:{exc.line}:{exc.col}: {exc}") from None
    data = located.data or {}
    if not isinstance(data, dict):
        raise SiteConfigError(f"{chosen}: expected a mapping")
    try:
        cfg = SiteConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        line, col = located.loc(tuple(err["loc"]))
        raise SiteConfigError(f"{chosen}:{line}:{col}: {' > '.join(map(str, err['loc']))}: {err['msg']}") from None
    return cfg.model_copy(update={"path": str(chosen)})
