"""Which cluster and credentials: kubeconfig files, contexts and in-cluster config.

kubectl's rules (client-go's ``clientcmd``): ``--kubeconfig`` names one file; otherwise
``KUBECONFIG`` lists files (``:``-separated) merged so that the first file to set a
name or ``current-context`` wins; otherwise ``~/.kube/config``; and inside a pod with
none of those, the service account. Relative paths in a file are relative to that file.
lightkube parses the merged result (its models, TLS setup and token auth); exec
credential plugins run through our own ``ExecCredentialAuth`` (``auth.py``), which
also speaks ``client.authentication.k8s.io/v1``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from lightkube.config.kubeconfig import KubeConfig, SingleConfig
from lightkube.core.exceptions import ConfigError

from .errors import ClusterError

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
DEFAULT_KUBECONFIG = Path("~/.kube/config")
# A kubeconfig is a few kilobytes; a larger file is not one.
MAX_KUBECONFIG_BYTES = 4 * 1024 * 1024

# Fields holding file paths, per section, resolved against the file that holds them.
_PATH_FIELDS = {
    "cluster": ("certificate-authority",),
    "user": ("client-certificate", "client-key", "tokenFile"),
}


@dataclass(frozen=True, slots=True)
class ClusterConfig:
    """One context resolved: lightkube's view of it plus where it came from."""

    single: SingleConfig
    source: str  # the file(s), or "in-cluster service account"
    kubeconfigs: tuple[str, ...] = ()  # the kubeconfig files read (none in-cluster)

    @property
    def server(self) -> str:
        return str(self.single.cluster.server)

    @property
    def context(self) -> str:
        return str(self.single.context_name)

    @property
    def namespace(self) -> str | None:
        """The context's namespace when it names one (kubectl's default for a bare NAME)."""
        namespace = self.single.context.namespace
        return str(namespace) if namespace else None

    @property
    def files(self) -> tuple[str, ...]:
        """Every local file this context reads: the kubeconfig files and the certificate,
        key and token files they name. An output must never replace one of them."""
        cluster, user = self.single.cluster, self.single.user
        named = [cluster.certificate_auth]
        if user is not None:
            named += [user.client_cert, user.client_key, user.token_file]
        return (*self.kubeconfigs, *(str(f) for f in named if f))


def _read_file(path: Path) -> dict[str, Any]:
    try:
        with path.expanduser().open("rb") as handle:
            raw = handle.read(MAX_KUBECONFIG_BYTES + 1)
    except OSError as exc:
        raise ClusterError(f"kubeconfig {path}: cannot read it: {exc.strerror or exc}") from None
    if len(raw) > MAX_KUBECONFIG_BYTES:
        raise ClusterError(f"kubeconfig {path}: larger than {MAX_KUBECONFIG_BYTES} bytes")
    try:
        data = yaml.load(raw, Loader=yaml.CSafeLoader) if raw.strip() else {}
    except yaml.YAMLError as exc:
        raise ClusterError(f"kubeconfig {path}: not YAML: {' '.join(str(exc).split())}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ClusterError(f"kubeconfig {path}: expected a mapping (kind: Config)")
    return data


def _absolute(section: str, entry: dict[str, Any], base: Path) -> dict[str, Any]:
    inner = entry.get(section)
    if not isinstance(inner, dict):
        return entry
    inner = dict(inner)
    for key in _PATH_FIELDS[section]:
        value = inner.get(key)
        if isinstance(value, str) and value and not os.path.isabs(value):
            inner[key] = str(base / value)
    if section == "user" and isinstance(inner.get("exec"), dict):
        # client-go resolves a relative exec command containing a slash against the file
        command = inner["exec"].get("command")
        if isinstance(command, str) and "/" in command and not os.path.isabs(command):
            inner["exec"] = {**inner["exec"], "command": str(base / command)}
    return {**entry, section: inner}


def _merge(paths: list[Path]) -> dict[str, Any]:
    """client-go's merge: the first file to define a name (or current-context) wins."""
    merged: dict[str, Any] = {"clusters": [], "contexts": [], "users": []}
    seen: dict[str, set[str]] = {"clusters": set(), "contexts": set(), "users": set()}
    for path in paths:
        data = _read_file(path)
        base = path.expanduser().resolve().parent
        if "current-context" not in merged and data.get("current-context"):
            merged["current-context"] = data["current-context"]
        for key, section in (("clusters", "cluster"), ("contexts", "context"),
                             ("users", "user")):
            entries = data.get(key) or []
            if not isinstance(entries, list):
                raise ClusterError(f"kubeconfig {path}: {key}: expected a list")
            for i, entry in enumerate(entries):
                if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                    raise ClusterError(f"kubeconfig {path}: {key}[{i}].name: required")
                if entry["name"] in seen[key]:
                    continue
                seen[key].add(entry["name"])
                merged[key].append(_absolute(section, entry, base) if section != "context"
                                   else entry)
    return merged


def _kubeconfig_paths(kubeconfig: str | None) -> list[Path] | None:
    if kubeconfig:
        path = Path(kubeconfig).expanduser()
        if not path.is_file():
            raise ClusterError(f"--kubeconfig {kubeconfig}: no such file")
        return [path]
    env = os.environ.get("KUBECONFIG", "")
    listed = [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    if listed:
        existing = [p for p in listed if p.is_file()]  # kubectl skips missing ones
        if not existing:
            raise ClusterError(f"KUBECONFIG={env}: none of its files exists")
        return existing
    default = DEFAULT_KUBECONFIG.expanduser()
    return [default] if default.is_file() else None


def _in_cluster() -> KubeConfig | None:
    if not (os.environ.get("KUBERNETES_SERVICE_HOST") and os.environ.get("KUBERNETES_SERVICE_PORT")
            and (SERVICE_ACCOUNT_DIR / "token").is_file()):
        return None
    try:
        return KubeConfig.from_service_account(SERVICE_ACCOUNT_DIR)
    except (ConfigError, OSError, KeyError) as exc:
        raise ClusterError(f"in-cluster config: {exc}") from None


def load_cluster_config(kubeconfig: str | None = None,
                        context: str | None = None) -> ClusterConfig:
    """The context to read, as kubectl would pick it; ``ClusterError`` if there is none."""
    paths = _kubeconfig_paths(kubeconfig)
    if paths is None:
        # kubectl: in-cluster config only when no kubeconfig file is found
        config = _in_cluster()
        if config is None:
            raise ClusterError(
                "no cluster to read: no -f given and no kubeconfig found (--kubeconfig, "
                "KUBECONFIG, ~/.kube/config) nor an in-cluster service account")
        if context:
            raise ClusterError(f"--context {context}: no kubeconfig file to find it in "
                               "(in-cluster config has one context)")
        single = config.get()
        assert single is not None
        return ClusterConfig(single, "in-cluster service account")
    merged = _merge(paths)
    source = os.pathsep.join(str(p) for p in paths)
    try:
        config = KubeConfig.from_dict(merged, fname=paths[0])
    except (ConfigError, TypeError, KeyError, ValueError) as exc:
        raise ClusterError(f"kubeconfig {source}: {exc}") from None
    name = context or merged.get("current-context")
    if not name:
        raise ClusterError(f"kubeconfig {source}: no current-context set; pass --context NAME")
    if name not in config.contexts:
        known = ", ".join(sorted(config.contexts)) or "none"
        raise ClusterError(f"kubeconfig {source}: context {name!r} not found (contexts: {known})")
    ctx = config.contexts[name]
    if ctx.cluster not in config.clusters:
        raise ClusterError(f"kubeconfig {source}: context {name!r}: cluster {ctx.cluster!r} "
                           "not found")
    if ctx.user and ctx.user not in config.users:
        raise ClusterError(f"kubeconfig {source}: context {name!r}: user {ctx.user!r} not found")
    single = config.get(name)
    assert single is not None
    if not single.cluster.server:
        raise ClusterError(f"kubeconfig {source}: cluster {ctx.cluster!r}: no server")
    return ClusterConfig(single, source, tuple(str(p) for p in paths))
