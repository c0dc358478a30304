"""A strict YAML reader for config files: no duplicate keys, bounded alias expansion.

PyYAML accepts ``{a: 1, a: 2}`` (the last value silently wins) and builds aliases as shared
references, so a kilobyte of nested aliases (``b: [*a, *a, ...]`` nine levels deep) loads in
microseconds but stands for ~10⁸ values: whatever walks or prints the loaded config afterwards
(jsonschema, and above all the ``pprint`` of the instance in a schema error's message, which
Snakemake formats) runs for minutes. This reader composes the node graph first, counts the
values it stands for with aliases expanded (memoised per node, so the count is linear in the
file) and rejects a file beyond :data:`MAX_VALUES`, a duplicate key, or a recursive alias,
before anything is constructed. Only safe tags (``yaml.SafeLoader``) are accepted.
"""

from __future__ import annotations

from pathlib import Path

import yaml

#: values (scalars, lists, mappings) a config file may stand for once aliases are expanded;
#: the paper config has ~200, so 10⁵ leaves room for any real grid and refuses alias bombs
MAX_VALUES = 100_000
#: nesting depth of a config file (the paper config nests 4 deep); guards Python's recursion
MAX_DEPTH = 50


class StrictYAMLError(ValueError):
    """A YAML file that is malformed, ambiguous or too large; the message is one line."""


def _where(node: yaml.Node) -> str:
    return f"line {node.start_mark.line + 1}"


def _key_text(node: yaml.Node) -> str:
    return str(node.value) if isinstance(node, yaml.ScalarNode) else f"<{node.tag}>"


def check_node(root: yaml.Node, max_values: int = MAX_VALUES) -> int:
    """Values that ``root`` stands for with aliases expanded; raise on a duplicate key in one
    mapping (naming its dotted path), a recursive alias, or more than ``max_values`` values."""
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def size(node: yaml.Node, path: str, depth: int) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in active:
            raise StrictYAMLError(f"key '{path}' holds a recursive alias ({_where(node)})")
        if depth > MAX_DEPTH:
            raise StrictYAMLError(f"key '{path}' is nested more than {MAX_DEPTH} levels deep")
        active.add(key)
        total = 1
        if isinstance(node, yaml.SequenceNode):
            for i, child in enumerate(node.value):
                total += size(child, f"{path}[{i}]", depth + 1)
                if total > max_values:
                    break
        elif isinstance(node, yaml.MappingNode):
            seen: dict[str, yaml.Node] = {}
            for k, v in node.value:
                name = _key_text(k)
                sub = f"{path}.{name}" if path else name
                if k.tag != "tag:yaml.org,2002:merge":  # `<<: *base` may be overridden by keys
                    if name in seen:
                        raise StrictYAMLError(
                            f"key '{sub}' appears twice ({_where(seen[name])} and {_where(k)}); "
                            "keep one"
                        )
                    seen[name] = k
                total += size(k, sub, depth + 1) + size(v, sub, depth + 1)
                if total > max_values:
                    break
        active.discard(key)
        if total > max_values:
            raise StrictYAMLError(
                f"key '{path or '<top level>'}' stands for more than {max_values} values once "
                "its aliases are expanded; write the values out or use fewer aliases"
            )
        sizes[key] = total
        return total

    return size(root, "", 0)


def load_strict(text: str, max_values: int = MAX_VALUES):
    """Parse one YAML document strictly (see the module docstring); ``None`` for an empty one."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        check_node(node, max_values)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        raise StrictYAMLError(f"not valid YAML: {' '.join(str(exc).split())}") from None
    except RecursionError:
        raise StrictYAMLError(f"nested more than {MAX_DEPTH} levels deep") from None
    finally:
        loader.dispose()


def read_strict(path, max_values: int = MAX_VALUES):
    """:func:`load_strict` of a file; errors name the file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StrictYAMLError(f"config file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise StrictYAMLError(f"config file {path} cannot be read ({exc})") from None
    try:
        return load_strict(text, max_values)
    except StrictYAMLError as exc:
        raise StrictYAMLError(f"config file {path}: {exc}") from None
