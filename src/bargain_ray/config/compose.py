"""Finding and composing the Hydra configs under ``conf/``.

A ``conf/`` folder in the working directory extends the packaged one (its grids, games, models, ...) and, where a
file has a packaged file's name, takes its place: it comes first on Hydra's search path (our choice, as Hydra users
expect of their own config folder; refusing it would leave no way to edit a packaged brief without a copy under
another name). Every file composed from it is named in the composed config (``local_conf``), so the manifest, the
terminal and the summary can say which one was used.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

import yaml
from hydra import compose, initialize_config_dir
from hydra._internal.config_loader_impl import ConfigLoaderImpl
from hydra.core.config_search_path import ConfigSearchPath, SearchPathQuery
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override, OverrideType
from hydra.core.plugins import Plugins
from hydra.errors import HydraException, MissingConfigException, OverrideParseException
from hydra.plugins.search_path_plugin import SearchPathPlugin
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from bargain_ray.config.errors import ConfigError, nearest, schema_keys, unknown_key
from bargain_ray.config.schema import LocalFile, SweepConfig

_ABSENT = object()
LOCAL = Path("conf")
"""The user's own config folder, relative to the working directory."""


_PACKAGE = Path(__file__).resolve().parents[1]


def conf_dir() -> Path:
    """Where every packaged YAML lives (or ``BARGAIN_RAY_CONF``): ``bargain_ray/conf/`` in an installed wheel, where
    ``setup.py`` maps the repository's ``conf/``; that ``conf/`` itself when the code runs from a checkout (an
    editable install or ``src`` on the path), the one copy in git."""
    env = os.environ.get("BARGAIN_RAY_CONF")
    if env:
        return Path(env)
    installed = _PACKAGE / "conf"
    return installed if installed.is_dir() else _PACKAGE.parents[1] / "conf"


def local_dir() -> Path | None:
    """``./conf`` when there is one that is not the packaged folder itself."""
    folder = LOCAL.resolve()
    return folder if folder.is_dir() and folder != conf_dir().resolve() else None


class LocalConf(SearchPathPlugin):
    """Puts ``./conf`` on Hydra's search path just before the packaged folder, so its files win."""

    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        folder = local_dir()
        if folder is not None:
            search_path.prepend("bargain_ray ./conf", f"file://{folder}", anchor=SearchPathQuery(provider="main"))


def local_files(config_name: str, overrides: list[str]) -> list[LocalFile]:
    """Every file of ``./conf`` the composition of ``config_name`` with ``overrides`` reads (inside its Hydra
    context), each with its digest and whether a packaged file of its name was set aside for it."""
    folder = local_dir()
    if folder is None:
        return []
    loader = GlobalHydra.instance().hydra.config_loader  # type: ignore[union-attr]
    used = loader.compute_defaults_list(config_name, overrides, RunMode.RUN).defaults
    out = []
    for d in used:
        path = folder / f"{d.config_path}.yaml"
        if d.config_path and path.is_file():
            out.append(LocalFile(path=str(LOCAL / f"{d.config_path}.yaml"),
                                 sha256=hashlib.sha256(path.read_bytes()).hexdigest()[:16],
                                 replaces=(conf_dir() / f"{d.config_path}.yaml").is_file()))
    return list({f.path: f for f in out}.values())


def local_conf_note(files: Sequence[LocalFile]) -> str | None:
    """One line naming the ``./conf`` files a sweep was composed from, for the terminal and the summary."""
    if not files:
        return None
    named = ", ".join(f"{f.path}{' (in place of the packaged one)' if f.replaces else ''}" for f in files)
    return f"config from ./conf: {named}"


def choices(group: str) -> list[str]:
    """The configs of one group (``grid``, ``game``, ...): the packaged ones and those of ``./conf/<group>``."""
    folders = [conf_dir() / group, LOCAL / group]
    return sorted({p.stem for folder in folders if folder.is_dir() for p in folder.glob("*.yaml")})


MODEL_SWAP = re.compile(r"^(\+?)models\.([A-Za-z]\w*)=([\w.-]+)$")
"""``models.O=NAME`` (``+models.G=NAME`` to add a letter): a model file named as a value, which Hydra would set as a
string in place of the model's block."""


def swap_models(overrides: Sequence[str]) -> list[str]:
    """``overrides`` with each ``models.LETTER=NAME`` made Hydra's config-group form, ``model@models.LETTER=NAME``
    (ours: both forms choose a file of ``conf/model/``; ``null`` is left as written)."""
    swaps = [MODEL_SWAP.match(o) for o in overrides]
    return [f"{m[1]}model@models.{m[2]}={m[3]}" if m and m[3] != "null" else o
            for o, m in zip(overrides, swaps, strict=True)]


def _typed(override: Override) -> str:
    """An override as the user typed it (Hydra's parser sets it on every override it returns)."""
    return str(override.input_line)


def _is_group(override: Override) -> bool:
    """A config group choice (``+grid=demo``, ``provider=sim``, ``model@models.O=...``), not a value."""
    key = override.key_or_group
    folders = [conf_dir(), LOCAL]
    return override.package is not None or key.startswith("hydra") or any((f / key).is_dir() for f in folders)


MAX_YAML_VALUES = 100_000
"""Values one config file may hold once its YAML aliases are followed (ours: the largest shipped file holds under
400). Past it the file is refused before Hydra reads it: an alias bomb (aliases of aliases, each doubling what
it names) expands to billions and spins Hydra for minutes."""


def read_yaml_files(folders: list[Path]) -> tuple[str, list[str]]:
    """A digest of every YAML file under ``folders`` (each path and its bytes: what a composition may read), and one
    line per file that is not UTF-8 (naming the first bad byte) or whose aliases expand past ``MAX_YAML_VALUES``."""
    digest, problems = hashlib.sha256(), []
    for folder in folders:
        for path in sorted(folder.rglob("*.yaml")) if folder.is_dir() else []:
            data = path.read_bytes()
            digest.update(f"{path.resolve()}\0{len(data)}\0".encode())
            digest.update(data)
            try:
                data.decode("utf-8")
            except UnicodeDecodeError as exc:
                problems.append(f"{path}: not UTF-8 (byte {exc.start} is 0x{exc.object[exc.start]:02x}); "
                                "save the file as UTF-8")
                continue
            if not _within_bound(data):
                problems.append(f"{path}: its YAML aliases expand to more than {MAX_YAML_VALUES:,} values; write "
                                "the values out, or use fewer aliases")
    return digest.hexdigest(), problems


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's, where PyYAML was built with it (its wheels are): it composes a file's nodes in C."""


@functools.cache
def _within_bound(data: bytes) -> bool:
    """Whether each YAML document of ``data`` holds at most ``MAX_YAML_VALUES`` values with its aliases followed (a
    node aliased inside itself holds without end). Composed once, each aliased node built once; a file that is not
    valid YAML is Hydra's to name."""
    try:
        documents = list(yaml.compose_all(data, Loader=_LOADER))
    except yaml.YAMLError:
        return True
    return all(_values(node) <= MAX_YAML_VALUES for node in documents)


def _values(root: yaml.Node) -> int:
    """Values under ``root`` (itself included) with aliases followed, capped just past the bound: each node counted
    once (its count kept for every alias of it), children first, without recursion; a node met again while its
    children are being counted (aliased inside itself) counts as past the bound."""
    past = MAX_YAML_VALUES + 1
    counted: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_counted = stack.pop()
        if children_counted:
            counted[id(node)] = min(past, 1 + sum(counted[id(child)] for child in _children(node)))
        elif id(node) not in counted:
            counted[id(node)] = past  # until its children are counted
            stack.append((node, True))
            stack.extend((child, False) for child in _children(node))
    return counted[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


_COMPOSED: dict[tuple[str, ...], tuple[DictConfig, list[LocalFile]] | list[str]] = {}
"""This process's compositions (read-only) or their ConfigError lines, by their inputs and the digest of every YAML
file: a process that composes the same config again (a test session, the README check composing every game) gets Hydra's
answer without asking again (about 0.1 s each); an edit to any file changes the digest, so it is never stale."""


def _compose(overrides: list[str], config_name: str = "config",
             hydra: bool = False) -> tuple[DictConfig, list[LocalFile]]:
    """Hydra's composition, read-only (its own ``hydra`` node too, if asked), and the ``./conf`` files it read; its
    errors as ConfigError (one readable line, no stack hints). Composed once per process for the same files and the
    same overrides but plain values (``_COMPOSED``); the values are applied to a copy as Hydra applies them."""
    digest, problems = read_yaml_files([conf_dir(), LOCAL])
    if problems:
        raise ConfigError(problems)
    rest, values = (overrides, []) if hydra else _values_apart(overrides)
    key = (digest, str(conf_dir().resolve()), os.getcwd(), config_name, str(hydra), *rest)  # cwd: ./conf
    if key not in _COMPOSED:
        _COMPOSED[key] = _compose_anew(rest, config_name, hydra)
    composed = _COMPOSED[key]
    if isinstance(composed, list):
        raise ConfigError(composed)
    return (_with_values(composed[0], values) if values else composed[0]), list(composed[1])


def _values_apart(overrides: list[str]) -> tuple[list[str], list[Override]]:
    """``overrides`` as (what Hydra composes from, plain value changes): a value change (``key=value``, not a group
    choice, a sweep or an addition) of a key no other override names, above or below, is applied by Hydra last, one
    by one, to the config composed from the rest (``ConfigLoaderImpl._apply_overrides_to_config``). Composing the rest
    once and applying the values with that same function gives Hydra's config for each set of values: a test session
    composes the same config with hundreds of ``run.dir`` and ``provider.settings.base_url`` values."""
    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except OverrideParseException:
        return overrides, []  # Hydra says what is wrong

    settings = [o for o in parsed if not _is_group(o)]  # group choices are composed before any value (Hydra's order)

    def alone(o: Override) -> bool:
        key = o.key_or_group
        return not any(other is not o and (other.key_or_group == key or other.key_or_group.startswith(f"{key}.")
                                           or key.startswith(f"{other.key_or_group}.")) for other in settings)

    values = [o for o in settings if o.type is OverrideType.CHANGE and not o.is_sweep_override() and alone(o)]
    return [_typed(o) for o in parsed if all(o is not v for v in values)], values


def _with_values(cfg: DictConfig, values: list[Override]) -> DictConfig:
    """A read-only copy of ``cfg`` with ``values`` applied by Hydra's own function (hydra-core is pinned: the test of
    this module holds the result against Hydra composing everything at once)."""
    cfg = copy.deepcopy(cfg)
    OmegaConf.set_readonly(cfg, False)
    try:
        ConfigLoaderImpl._apply_overrides_to_config(values, cfg)
    except (HydraException, OmegaConfBaseException) as exc:
        raise ConfigError([_first_line(exc)]) from None
    OmegaConf.set_readonly(cfg, True)
    return cfg


def _compose_anew(overrides: list[str], config_name: str, hydra: bool) -> tuple[DictConfig, list[LocalFile]] | list[str]:
    """Hydra's composition, read-only, with the ``./conf`` files it read; or the lines of the ConfigError it is."""
    Plugins.instance().register(LocalConf)  # once per process: registering again changes nothing
    try:
        with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
            cfg = compose(config_name=config_name, overrides=overrides, return_hydra_config=hydra)
            OmegaConf.set_readonly(cfg, True)
            return cfg, local_files(config_name, overrides)
    except MissingConfigException as exc:
        return [_missing(exc, overrides)]
    except (HydraException, OmegaConfBaseException) as exc:
        return [_first_line(exc)]
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"{mark.name}:{mark.line + 1}:{mark.column + 1}" if mark else "a config file"
        return [f"{where}: not valid YAML ({exc.problem}); fix the file"]


def _missing(exc: MissingConfigException, overrides: list[str]) -> str:
    """No config of that name in its group: the nearest one, as the override to type (``+grid=c3_full`` for a
    mistyped ``+grid=c3_ful``, ``model@models.O=...`` for a model), else the group's choices."""
    group, _, name = (exc.missing_cfg_file or "").rpartition("/")
    if not group or exc.options is None:
        return str(exc).splitlines()[0]
    match = nearest(name, exc.options)
    if match is None:
        return f"no {group} named {name!r}; {group} choices: {', '.join(sorted(exc.options))}"
    typed = [o for o in OverridesParser.create().parse_overrides(overrides)
             if o.key_or_group == group and not isinstance(o.value(), list | dict) and str(o.value()) == name]
    if typed:
        return f"no {group} named {name!r}; did you mean {typed[-1].get_key_element()}={match}?"
    return f"no {group} named {name!r} (named in a config file's defaults); did you mean {match}?"


def _first_line(exc: Exception) -> str:
    """Hydra's or OmegaConf's message without its stack hints (its ``use +key`` advice kept), naming the key."""
    lines = str(exc).splitlines() or [type(exc).__name__]
    advice = [x.strip().replace("To append", "to append", 1) for x in lines[1:] if x.startswith("To append")]
    line = "; ".join([lines[0].rstrip("."), *advice])
    key = getattr(exc, "full_key", None)
    return f"{key}: {line}" if key and key not in line else line


def _first_absent(cfg: DictConfig, parts: list[str]) -> int | None:
    """The index of the first part of a dotted key that ``cfg`` does not hold; None when it holds it all."""
    for i in range(len(parts)):
        if OmegaConf.select(cfg, ".".join(parts[: i + 1]), default=_ABSENT, throw_on_missing=False) is _ABSENT:
            return i
    return None


KeysOf = Callable[[dict[str, Any], Sequence[str]], list[str] | None]  # free-form: Hydra's composed config, before validation
"""(the config composed from the group choices, a dotted path) -> the keys the schema allows right below the path,
None where it says nothing. The sweep's own schema knows its models; the resolver's (``design.resolved``) also
knows each game's family schema and each provider's settings."""


def sweep_keys(base: dict[str, Any], path: Sequence[str]) -> list[str] | None:  # free-form: Hydra's composed config, before validation
    return schema_keys(SweepConfig, path)


def compose_command(overrides: list[str] | tuple[str, ...], keys_of: KeysOf = sweep_keys,
                    config_name: str = "config") -> dict[str, Any]:  # free-form: Hydra's composed config, before validation
    """The config ``python -m bargain_ray [overrides]`` runs (another command's, ``config_name``: ``judge``), or
    ConfigError naming every mistake in one line each.

    Composed once as typed: Hydra accepts it only when every key it sets is present, and then ``command_overrides``
    would hand it the same lines; else ``command_overrides`` composes the group choices first to add ``+`` where the
    schema knows the key, or to name the mistake (one composition is ~0.1 s of the command's start-up)."""
    overrides = swap_models(overrides)
    try:
        return compose_dict(config_name, overrides)
    except ConfigError:
        return compose_dict(config_name, command_overrides(overrides, keys_of, config_name))


def show_config(overrides: list[str] | tuple[str, ...], part: str, keys_of: KeysOf = sweep_keys) -> str:
    """``--cfg job|hydra|all``, as Hydra prints it: the composed config (``job``), Hydra's own node (``hydra``), or
    both, as YAML; interpolations left as written."""
    cfg, _ = _compose(command_overrides(swap_models(overrides), keys_of), hydra=part != "job")
    if part == "hydra":
        cfg = OmegaConf.create({"hydra": cfg.hydra})
    elif part == "job":
        cfg = OmegaConf.masked_copy(cfg, [str(k) for k in cfg if k != "hydra"])
    return OmegaConf.to_yaml(cfg)


def command_overrides(overrides: list[str] | tuple[str, ...], keys_of: KeysOf = sweep_keys,
                      config_name: str = "config") -> list[str]:
    """The overrides as Hydra is handed them, or ConfigError naming every mistake in one line each.

    Hydra refuses a key its YAML leaves out and asks for ``+key``. Here a key the schema knows
    (``models.B.max_tokens`` of a model whose file omits it, ``grid.seeds``) is added as ``+key`` would;
    a key the schema does not know is refused with the nearest valid one (our choice: one rule, the schema's).
    """
    try:
        parsed = OverridesParser.create().parse_overrides(list(overrides))
    except OverrideParseException as exc:
        raise ConfigError([f"cannot read override {exc.override!r}: write key=value (see --help)"]) from None
    base, _ = _compose([_typed(o) for o in parsed if _is_group(o)], config_name)
    plain = cast("dict[str, Any]", OmegaConf.to_container(base, resolve=False))  # a DictConfig's container is a dict
    lines, problems = [], []
    for o in parsed:
        parts = o.key_or_group.split(".")
        absent = None if _is_group(o) or o.type is not OverrideType.CHANGE else _first_absent(base, parts)
        if absent is None:
            lines.append(_typed(o))
        elif all(parts[i] in (keys_of(plain, parts[:i]) or []) for i in range(absent, len(parts))):
            lines.append(f"+{_typed(o)}")
        else:
            level = OmegaConf.select(base, ".".join(parts[:absent])) if absent else base
            present = [str(k) for k in level] if isinstance(level, DictConfig) else []
            problems.append(unknown_key(parts, absent, [*present, *(keys_of(plain, parts[:absent]) or [])]))
    if problems:
        raise ConfigError(problems)
    return lines


def compose_dict(config_name: str, overrides: list[str] | tuple[str, ...] = ()) -> dict[str, Any]:  # free-form: Hydra's composed config, before validation
    """Compose one config with overrides, as a plain resolved dict (ConfigError when Hydra refuses them)."""
    cfg, files = _compose(list(overrides), config_name)
    try:
        data = cast("dict[str, Any]", OmegaConf.to_container(cfg, resolve=True))  # a DictConfig's container is a dict
    except OmegaConfBaseException as exc:
        raise ConfigError([_first_line(exc)]) from None
    data.pop("hydra", None)
    if config_name == "config":
        data["local_conf"] = [f.model_dump() for f in files]
    return data

