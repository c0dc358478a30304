"""Config validation: a wrong key, type, number or combination fails before any job runs,
in one line that names the key(s), and nothing is written."""

import copy
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from test_strict_yaml import alias_bomb

from entropic_bound.config.load import (
    ConfigError,
    check_finite,
    check_workflow_config,
    class_optim,
    config_hash,
    load_config,
    load_run_config,
    load_scale_list,
    load_schema,
    scale_study_asked,
    validate,
    validate_config,
)
from entropic_bound.core.rungs import parse_rung, rung_name
from entropic_bound.tasks.make import task_specs

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["config.yaml", "quick.yaml"])
def test_shipped_configs_validate(name):
    cfg = load_config(REPO / "config" / name)
    assert cfg["run_name"] in ("paper", "quick")


def test_claims_validate():
    load_config(REPO / "config" / "claims.yaml", schema="claims")


def _quick():
    return yaml.safe_load((REPO / "config" / "quick.yaml").read_text())


def test_unknown_key_is_named():
    cfg = _quick()
    cfg["task"]["n_trian"] = 5
    with pytest.raises(ConfigError, match="n_trian"):
        validate(cfg)


def test_wrong_type_is_named():
    cfg = _quick()
    cfg["task"]["d"] = "sixteen"
    with pytest.raises(ConfigError, match="task.d"):
        validate(cfg)


def test_missing_key_is_named():
    cfg = _quick()
    del cfg["frontier"]["n_seqs"]
    with pytest.raises(ConfigError, match="n_seqs"):
        validate(cfg)


def test_bad_claims_threshold_is_named():
    claims = yaml.safe_load((REPO / "config" / "claims.yaml").read_text())
    claims["C3"]["min_exact_rate"] = 1.5
    with pytest.raises(ConfigError, match="C3.min_exact_rate"):
        validate(claims, "claims")


def test_unreadable_config(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "none.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [1, 2\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)


def test_hash_is_order_independent_and_sensitive():
    a = _quick()
    b = dict(reversed(list(copy.deepcopy(a).items())))
    assert config_hash(a) == config_hash(b)
    b["seed"] = 1
    assert config_hash(a) != config_hash(b)


@pytest.mark.parametrize("key", ["lr", "batch", "max_steps", "converge_at", "chunk"])
def test_default_optimiser_names_every_key(key):
    """A key missing from classes.default fell through to the engine's Optim default (batch
    128, not 64) in load_config's users (the benchmarks), and for batch or max_steps to a KeyError
    in common.smk's train_runtime."""
    cfg = _quick()
    del cfg["train"]["classes"]["default"][key]
    with pytest.raises(
        ConfigError, match=rf"'train\.classes\.default': '{key}' is a required property"
    ):
        validate(cfg)
    cfg = _quick()
    cfg["train"]["classes"]["L4"] = {key: cfg["train"]["classes"]["default"][key]}
    validate(cfg)  # a class still overrides any subset


def test_class_optim_overrides_default():
    cfg = _quick()
    cfg["train"]["classes"]["L4"] = {"lr": 0.5}
    o = class_optim(cfg, "L4")
    assert o["lr"] == 0.5 and o["batch"] == cfg["train"]["classes"]["default"]["batch"]


# ---- integers: JSON Schema counts 8.0 as an integer, Python does not ----


@pytest.mark.parametrize(
    "dotted, value",
    [
        ("train__tasks_per_job", 8.0),  # was a TypeError traceback in common.smk at parse time
        ("task__n", 8.0),
        ("task__r_star", [1.0, 2]),  # was task files named L0_r1.0_s0
        ("threads", 1.0),
        ("seed", 0.0),
        ("frontier__n_seqs", 128.0),
        ("train__classes__default__batch", 64.0),
        ("exploratory__boundaries__per_decade", 4.0),
    ],
)
def test_integer_valued_float_is_not_an_integer(dotted, value):
    key = dotted.replace("__", ".")
    with pytest.raises(ConfigError, match=rf"config key '{key}(\[0\])?': .* not of type 'integer'"):
        validate(_with(**{dotted: value}))


def test_every_schema_integer_refuses_a_float():
    """Each `integer` of the schema, found by walking it: a float there is refused."""
    spec = load_schema("config")

    def resolve(node):
        while "$ref" in node:
            node = spec["$defs"][node["$ref"].rsplit("/", 1)[1]]
        return node

    found = []

    def walk(node, path):
        node = resolve(node)
        if node.get("type") == "integer":
            found.append(path)
        for key, sub in node.get("properties", {}).items():
            walk(sub, (*path, key))
        if isinstance(node.get("additionalProperties"), dict):
            walk(node["additionalProperties"], (*path, "default"))
        if "items" in node:
            walk(node["items"], (*path, 0))

    walk(spec, ())
    assert len(found) > 20
    for path in found:
        cfg = _quick()
        node = cfg
        for p in path[:-1]:
            if isinstance(p, int) and not node:
                node.append(8)
            node = (
                node.setdefault(p, {}) if isinstance(node, dict) else node[p]
            )  # optional sections
        last = path[-1]
        if isinstance(last, int) and not node:
            node.append(8)
        current = node.get(last, 8) if isinstance(node, dict) else node[last]
        node[last] = float(current) if isinstance(current, int) else 8.0
        with pytest.raises(ConfigError, match="not of type 'integer'"):
            validate(cfg)


# ---- non-finite numbers: YAML's .nan / .inf pass a schema's minimum ----


@pytest.mark.parametrize(
    "key, text",
    [
        ("task.beta", "beta: .nan"),
        ("task.sigma", "sigma: .inf"),
        ("task.gain", "gain: -.inf"),
    ],
)
def test_non_finite_task_number_is_named(key, text):
    src = (REPO / "config" / "quick.yaml").read_text()
    field = text.split(":")[0]
    src = src.replace(f"  {field}: ", f"  {text}  # was: ", 1)
    cfg = yaml.safe_load(src)
    with pytest.raises(
        ConfigError, match=rf"'{key}' is (nan|inf|-inf); every number must be finite"
    ):
        validate(cfg)


def test_non_finite_inside_lists_and_nested_mappings_is_named():
    cfg = _quick()
    cfg["frontier"]["sigma"] = [0.0, float("nan")]
    with pytest.raises(ConfigError, match=r"'frontier\.sigma\[1\]' is nan"):
        validate(cfg)
    cfg = _quick()
    cfg["train"]["classes"]["default"]["lr"] = float("nan")
    with pytest.raises(ConfigError, match=r"'train\.classes\.default\.lr' is nan"):
        validate(cfg)


_leaf = st.integers(0, 9) | st.floats(0, 1, allow_subnormal=False) | st.text(max_size=3)
_tree = st.recursive(
    _leaf,
    lambda inner: (
        st.lists(inner, min_size=1, max_size=3)
        | st.dictionaries(st.text("abc", min_size=1, max_size=2), inner, min_size=1, max_size=3)
    ),
    max_leaves=20,
)


def _paths(tree, path=()):
    """Every (path, leaf) of a nested dict/list."""
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from _paths(v, (*path, k))
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            yield from _paths(v, (*path, i))
    else:
        yield path, tree


def _set(tree, path, value):
    for p in path[:-1]:
        tree = tree[p]
    tree[path[-1]] = value


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text("xyz", min_size=1, max_size=2), _tree, min_size=1), st.data())
def test_check_finite_names_any_planted_nan(tree, data):
    check_finite(tree)  # finite everywhere: passes
    path, _ = data.draw(st.sampled_from(list(_paths(tree))))
    bad = data.draw(st.sampled_from([math.nan, math.inf, -math.inf]))
    _set(tree, path, bad)
    dotted = ""
    for p in path:
        dotted += f"[{p}]" if isinstance(p, int) else (f".{p}" if dotted else p)
    with pytest.raises(ConfigError, match=f"key '{__import__('re').escape(dotted)}' is"):
        check_finite(tree)


def test_shared_sublists_are_bounded():
    """A dict built in Python can share lists like an alias bomb; the walk stops early."""
    level = [1.0] * 10
    for _ in range(8):
        level = [level] * 10
    t0 = time.perf_counter()
    with pytest.raises(ConfigError, match="more than 100000 values"):
        check_finite({"task": level})
    assert (
        time.perf_counter() - t0 < 10.0
    )  # refused, not expanded (that takes minutes): a loose bound on a loaded machine


# ---- cross-key rules: each message names both keys ----


def _with(**changes):
    cfg = _quick()
    for dotted, value in changes.items():
        *head, last = dotted.split("__")
        node = cfg
        for h in head:
            node = node[h]
        node[last] = value
    return cfg


@pytest.mark.parametrize(
    "changes, keys",
    [
        # r* = 16 > d = 8: no rank-16 kernel of size 8 (L2..L4, Lλ; L0/L1 are n×n = 32×32)
        ({"task__n": 32, "task__r_star": [1, 16]}, ["task.r_star", "task.d"]),
        ({"task__r_star": [1, 16]}, ["task.r_star", "task.d"]),  # n = d: d is named
        # only static rungs: their kernel is n×n, so r* is bounded by n (here 4 < r* = 6 ≤ d)
        (
            {"task__n": 4, "task__rungs": ["L0", "L1"], "task__lambdas": [], "task__r_star": [6]},
            ["task.r_star", "task.n"],
        ),
        ({"frontier__r_star": [1, 9]}, ["frontier.r_star", "frontier.d"]),
        ({"task__n_train": 63}, ["task.n_train", "task.n", "task.d"]),
        ({"task__sigma": 0.05}, ["predict.noisy_sigmas[0]", "task.sigma"]),
        ({"task__sigma": 0.1}, ["predict.noisy_sigmas[0]", "task.sigma"]),
        ({"device": "cuda", "train__backend": "fused"}, ["train.backend", "device"]),
        ({"train__backend": "torch", "train__products": "factored"}, ["train.products"]),
        ({"device": "cuda", "train__products": "factored"}, ["train.products", "device"]),
        # an empty σ grid: the boundaries job raised, after every other job had run
        (
            {"exploratory__boundaries__sigma_min": 200.0},
            ["exploratory.boundaries.sigma_min", "exploratory.boundaries.sigma_max"],
        ),
        (
            {"exploratory__boundaries__sigma_min": 100.0},
            ["exploratory.boundaries.sigma_min", "exploratory.boundaries.sigma_max"],
        ),
    ],
)
def test_cross_key_violation_names_every_key(changes, keys):
    with pytest.raises(ConfigError) as exc:
        validate(_with(**changes))
    msg = str(exc.value)
    assert msg.startswith("config keys "), msg
    for k in keys:
        assert f"'{k}'" in msg, msg
    assert "\n" not in msg


def test_cross_key_boundaries_pass():
    """The limits themselves are valid: r* = d, n_train = n·d, static rungs with r* ≤ n < d."""
    validate(_with(task__r_star=[1, 8], task__n_train=64, frontier__r_star=[8]))
    validate(_with(task__n=4, task__rungs=["L0"], task__lambdas=[], task__r_star=[4]))
    validate(_with(task__rungs=["L3"], task__lambdas=[], task__r_star=[8], task__n=2))
    validate(_with(task__sigma=0.01))  # noisy copy 0.05 > 0.01
    validate(_with(device="cuda", train__backend="torch"))
    validate(_with(device="cuda", train__products="dense"))
    validate(_with(train__backend="fused", train__products="factored"))
    validate(_with(exploratory__boundaries__sigma_max=1.1e-4))  # just above sigma_min = 1e-4


# ---- run_name: a plain directory name under results/ ----


@pytest.mark.parametrize(
    "name", ["..", ".", "", "a/b", "../x", "/tmp/x", ".hidden", "-x", "a b", "x\ny", "é", "x" * 101]
)
def test_run_name_must_be_a_plain_directory_name(name):
    with pytest.raises(ConfigError, match="config key 'run_name': must be a plain directory name"):
        validate(_with(run_name=name))


@pytest.mark.parametrize("name", ["scale", "README.md"])
def test_run_name_is_not_a_reserved_name_under_results(name):
    """results/scale is the scale study's (its onerror and outputs), results/README.md a file:
    a run there mixed its files with the study's, or failed at its first job."""
    with pytest.raises(ConfigError, match=rf"config key 'run_name': results/{name} is not a run"):
        validate(_with(run_name=name))


@pytest.mark.parametrize("name", ["paper", "quick", "v1.2", "a-b_c", "0", "x" * 100, "scale_d8"])
def test_plain_run_names_pass(name):
    validate(_with(run_name=name))


# ---- Lλ rung names: unique and exact ----


def test_paper_rung_names_are_unchanged():
    cfg = load_config(REPO / "config" / "config.yaml")
    rungs = list(dict.fromkeys(t.rung for t in task_specs(cfg)))
    assert rungs == ["L0", "L1", "L2", "L3", "L4", "Lam0.25", "Lam0.50", "Lam0.75"]


def test_close_lambdas_get_distinct_exact_names():
    cfg = validate(_with(task__lambdas=[0.5, 0.501, 0.004]))
    rungs = list(dict.fromkeys(t.rung for t in task_specs(cfg)))
    assert rungs[-3:] == ["Lam0.50", "Lam0.501", "Lam0.004"]
    assert [t.lam for t in task_specs(cfg) if t.rung.startswith("Lam")][-1] == 0.004  # not λ = 0


@pytest.mark.parametrize("lambdas", [[0.0], [1.0], [0.5, 1.5], [0.5, 0.5]])
def test_lambdas_lie_strictly_between_l2_and_l4_and_differ(lambdas):
    """λ = 0 is L2 and λ = 1 is L4 (rungs of their own); a repeated λ trains a rung twice."""
    with pytest.raises(ConfigError, match=r"config key 'task\.lambdas"):
        validate(_with(task__lambdas=lambdas))


def test_lambda_with_too_many_digits_is_refused():
    with pytest.raises(ConfigError, match=r"'task\.lambdas\[1\]': λ = 0\.3333333333333333 needs"):
        validate(_with(task__lambdas=[0.5, 1 / 3]))


@settings(max_examples=300, deadline=None)
@given(st.floats(1e-9, 1, exclude_max=True))  # 1e-9, not 0 excluded: see test_strict_yaml (FTZ)
def test_rung_name_gives_lambda_back_exactly(lam):
    try:
        name = rung_name("Lam", lam)
    except ValueError:
        assert float(f"{lam:.12f}") != lam  # refused only when 12 decimals cannot hold it
        return
    assert parse_rung(name) == ("Lam", lam)  # exact, hence two λ never share a name
    assert len(name.split(".")[1]) >= 2


@given(st.integers(1, 99))
def test_two_decimal_lambdas_keep_their_two_decimal_names(k):
    assert rung_name("Lam", k / 100) == f"Lam{k / 100:.2f}"


# ---- claims, defaults, package data ----


def test_claims_rung_typo_is_named():
    claims = yaml.safe_load((REPO / "config" / "claims.yaml").read_text())
    claims["C5"]["rungs"] = ["L3", "l4"]
    with pytest.raises(ConfigError, match=r"claims key 'C5\.rungs\[1\]': unknown rung 'l4'"):
        validate(claims, "claims")
    claims = yaml.safe_load((REPO / "config" / "claims.yaml").read_text())
    claims["C9"]["noisy_sigma_invert"] = float("inf")
    with pytest.raises(ConfigError, match=r"claims key 'C9\.noisy_sigma_invert' is inf"):
        validate(claims, "claims")


@pytest.mark.parametrize("key", ["static_rungs", "attention_rungs"])
def test_claims_c6_rung_typo_is_named(key):
    """C6's rung lists were not checked: a typo there got through validation."""
    claims = yaml.safe_load((REPO / "config" / "claims.yaml").read_text())
    claims["C6"][key] = [*claims["C6"][key], "l9"]
    i = len(claims["C6"][key]) - 1
    with pytest.raises(ConfigError, match=rf"claims key 'C6\.{key}\[{i}\]': unknown rung 'l9'"):
        validate(claims, "claims")


@pytest.mark.parametrize(
    "key, name",
    [
        ("estimator", "energy_2"),  # τ > 1: energy_rank raised in the boundaries job
        ("estimator", "energy_0.9.9"),  # the schema's pattern admits it; not a number
        ("estimator", "energy_00.99"),  # τ = 0.99, but no table spells it so
        ("C8.estimators", "energy_1.5"),
        ("C8.estimators", "energy_0"),
    ],
)
def test_claims_estimator_must_be_an_estimator(key, name):
    claims = yaml.safe_load((REPO / "config" / "claims.yaml").read_text())
    if key == "estimator":
        claims["estimator"], where = name, "estimator"
    else:
        claims["C8"]["estimators"].append(name)
        where = rf"C8\.estimators\[{len(claims['C8']['estimators']) - 1}\]"
    with pytest.raises(ConfigError, match=rf"claims key '{where}': '{name}' is not an estimator"):
        validate(claims, "claims")


def test_registered_estimators_are_always_computed(tmp_path):
    """A registration's estimator is one the run computes whatever the config's predict.taus:
    a τ the config lacks is appended (its own τ and their order stay), never a refusal, so a
    config written before a registration runs unchanged (docs/method.md §5c)."""
    quick = REPO / "config" / "quick.yaml"
    claims = yaml.safe_load((REPO / "config" / "claims.yaml").read_text())
    claims["estimator"] = "energy_0.5"
    more = _write(tmp_path, "more.yaml", yaml.safe_dump(claims))
    cfg = _quick()
    cfg["predict"]["taus"] = [0.9]  # a config written for v1 alone
    assert check_workflow_config(cfg, [quick], more)["estimator"] == "energy_0.5"
    assert cfg["predict"]["taus"] == [0.9, 0.5, 0.999, 0.99, 0.95]
    again = copy.deepcopy(cfg)
    check_workflow_config(again, [quick], more)  # idempotent
    assert again["predict"]["taus"] == cfg["predict"]["taus"]


def test_opt_in_competitor_must_be_computed_by_the_frontier():
    from entropic_bound.config.claims import check_claims_estimators
    from entropic_bound.core import estimators

    cfg = _quick()
    claims = validate(yaml.safe_load((REPO / "config" / "claims.yaml").read_text()), "claims")
    estimators.OPT_IN_ESTIMATORS["fake_rank"] = estimators.OPT_IN_ESTIMATORS["floor"]
    try:
        claims["v3"]["C8"]["competitors"].append("fake_rank")
        with pytest.raises(
            ConfigError, match=r"'v3\.C8\.competitors\[5\]': 'fake_rank' is an opt-in"
        ):
            check_claims_estimators(cfg, claims)
    finally:
        del estimators.OPT_IN_ESTIMATORS["fake_rank"]


def test_converge_at_above_one_is_refused():
    """A student retires as converged at windowed R ≤ converge_at·ε: above 1 it would stop
    before reaching ε."""
    cfg = _quick()
    cfg["train"]["classes"]["L4"] = {"converge_at": 1.5}
    with pytest.raises(ConfigError, match=r"'train\.classes\.L4\.converge_at': 1\.5 is greater"):
        validate(cfg)
    cfg["train"]["classes"]["L4"] = {"converge_at": 1.0}
    validate(cfg)


@pytest.mark.parametrize("bad", [-1, 9, 1.5, True, "1"])
def test_restarts_out_of_range_or_not_an_integer_is_refused(bad):
    """train.classes.<class>.restarts: 0..8 fresh initialisations (train/restarts.py)."""
    cfg = _quick()
    cfg["train"]["classes"]["L2"] = {"restarts": bad}
    with pytest.raises(ConfigError, match=r"'train\.classes\.L2\.restarts'"):
        validate(cfg)
    cfg["train"]["classes"]["L2"] = {"restarts": 2}
    validate(cfg)


def test_schema_defaults_are_filled_in():
    cfg = _quick()
    del cfg["train"]["backend"]
    assert validate_config(cfg)["train"]["backend"] == "auto"


def test_schemas_are_package_data():
    import entropic_bound

    pkg = Path(entropic_bound.__file__).parent
    for name in ("config", "claims"):
        assert (pkg / "config" / "schemas" / f"{name}.schema.yaml").is_file()
        assert load_schema(name)["type"] == "object"
    assert not (REPO / "workflow" / "schemas").exists()


def test_long_schema_messages_are_cut_to_one_short_line():
    cfg = _with(task__seeds=list(range(5000)) + ["x"])
    with pytest.raises(ConfigError) as exc:
        validate(cfg)
    assert len(str(exc.value)) < 300 and "\n" not in str(exc.value)


# ---- the files Snakemake merged, re-read strictly ----


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_workflow_check_rereads_every_config_file(tmp_path):
    quick = REPO / "config" / "quick.yaml"
    claims = REPO / "config" / "claims.yaml"
    assert check_workflow_config(_quick(), [quick], claims)["C8"]["rung"] == "L4"
    dup = _write(tmp_path, "dup.yaml", "task:\n  n: 8\n  n: 16\n")
    with pytest.raises(ConfigError, match=rf"config file {dup}: key 'task\.n' appears twice"):
        check_workflow_config(_quick(), [quick, dup], claims)
    bomb = _write(tmp_path, "bomb.yaml", alias_bomb())
    t0 = time.perf_counter()
    with pytest.raises(ConfigError, match="more than 100000 values once its aliases"):
        check_workflow_config(_quick(), [bomb], claims)
    assert (
        time.perf_counter() - t0 < 10.0
    )  # refused, not expanded (that takes minutes): a loose bound on a loaded machine
    bad_claims = _write(tmp_path, "claims.yaml", claims.read_text() + "epsilon: 1.0\n")
    with pytest.raises(ConfigError, match="key 'epsilon' appears twice"):
        check_workflow_config(_quick(), [quick], bad_claims)


# ---- the scale list: its form and every config it names, before any scale runs ----


@pytest.mark.extras
def test_shipped_scale_lists_pass():
    for name in ("scales.yaml", "scales_cpu.yaml"):
        scales = load_scale_list(REPO / "config" / "scale" / name, resolve=lambda p: REPO / p)
        assert [s["d"] for s in scales] == [8, 16, 32, 48, 64][: len(scales)]
        assert len({s["run_name"] for s in scales}) == len(scales)


def _scale_list(tmp_path, entries, **configs):
    """A scale list of ``entries`` (d, config name) and the configs ``configs`` (name: text)."""
    for name, text in configs.items():
        _write(tmp_path, f"{name}.yaml", text)
    rows = "".join(f"  - {{d: {d}, config: {cfg}}}\n" for d, cfg in entries)
    return _write(tmp_path, "scales.yaml", "scales:\n" + rows)


def _resolve(tmp_path):
    def resolve(path):
        p = tmp_path / f"{path}.yaml"
        return p if p.exists() else REPO / path

    return resolve


D8 = "config/scale/d8.yaml"
SCALE_LISTS = {
    # was a ValueError traceback at parse time
    "d twice": ([(8, D8), (8, "config/config.yaml")], {}, "d = 8 is listed twice"),
    # was a TypeError traceback at parse time
    "config not a string": ([(16, 5)], {}, r"key 'scales\[0\]\.config': 5 is not of type"),
    # was an InputFunctionException traceback (int('True')) on `snakemake -n scale`
    "d a boolean": ([("true", D8)], {}, r"key 'scales\[0\]\.d': True is not of type 'integer'"),
    "d not positive": ([(-4, D8)], {}, r"-4 is less than the minimum of 1"),
    # was a MissingInputException of the rule that then ran each scale, once the study started
    "config missing": ([(8, "nowhere")], {}, r"config file .*nowhere does not exist"),
    # was accepted: the inner run failed on it after every scale before it had run
    "config invalid": ([(16, "bad")], {"bad": "task: {beta: .nan}\n"}, r"'task\.beta' is nan"),
    # was accepted: the d = 32 column held the d = 8 run
    "d not the config's": ([(32, D8)], {}, r"task\.d = 8, not d = 32"),
    # was accepted: two inner runs at once into results/scale_d8/ (both with --nolock)
    "one run_name twice": (
        [(8, D8), (16, "same")],
        {"same": "run_name: scale_d8\n"},
        r"scales\[1\] .*run_name 'scale_d8' is also scales\[0\]'s",
    ),
}


@pytest.mark.extras
@pytest.mark.parametrize("case", sorted(SCALE_LISTS))
def test_bad_scale_list_is_one_line(case, tmp_path):
    entries, configs, match = SCALE_LISTS[case]
    path = _scale_list(tmp_path, entries, **configs)
    with pytest.raises(ConfigError, match=match) as exc:
        load_scale_list(path, resolve=_resolve(tmp_path))
    assert str(exc.value).startswith(f"scale list {path}") and "\n" not in str(exc.value)


@pytest.mark.extras
def test_a_scale_whose_run_is_the_studys_own_must_be_its_config(tmp_path):
    """The config the study is started with writes results/<run_name>/ too: a scale with that
    run_name is that run (its jobs are the workflow's own) when the two configs are one,
    and refused, in one line naming the keys, when they differ (two rules for each file)."""
    quick = load_run_config(REPO / "config" / "quick.yaml")
    path = _scale_list(
        tmp_path, [(8, str(REPO / "config" / "quick.yaml")), (16, "config/config.yaml")]
    )
    scales = load_scale_list(path, resolve=_resolve(tmp_path), own={**quick, "scale_list": "x"})
    assert [(s["d"], s["own"]) for s in scales] == [(8, True), (16, False)]
    assert scales[0]["values"] == quick
    other = {**quick, "threads": 2, "seed": 3}
    with pytest.raises(
        ConfigError, match=r"scales\[0\] .*results/quick/ .*keys seed, threads"
    ) as exc:
        load_scale_list(path, resolve=_resolve(tmp_path), own=other)
    assert "\n" not in str(exc.value)


def test_scale_list_file_itself_is_read_strictly(tmp_path):
    with pytest.raises(ConfigError, match=r"^scale list .*none\.yaml does not exist"):
        load_scale_list(tmp_path / "none.yaml")
    with pytest.raises(ConfigError, match=r"^scale list .*: key 'scales' appears twice"):
        load_scale_list(_write(tmp_path, "s.yaml", "scales: []\nscales: []\n"))
    with pytest.raises(ConfigError, match=r"^scale list .*: key 'scales': \[\] should be non"):
        load_scale_list(_write(tmp_path, "s.yaml", "scales: []\n"))


@pytest.mark.parametrize(
    "argv, cfg, asked",
    [
        (["snakemake", "scale", "--cores", "2"], {}, True),
        (["snakemake", "-n", "results/scale/verdict_by_scale.csv"], {}, True),
        (["snakemake", "eb_scale"], {}, True),  # as a module: `use rule * from eb as eb_*`
        (["snakemake", "scale_table"], {}, True),
        (["snakemake", "scale_d8_reproduce-all"], {}, True),  # one scale's run
        (["snakemake", "reproduce-all", "--cores", "2"], {}, False),
        (["snakemake", "reproduce-all", "--configfile", "config/scale/d8.yaml"], {}, False),
        (["snakemake", "reproduce-all"], {"scale_list": "mine.yaml"}, True),
        # a cluster job of a scale's run: its rule (and wildcards) name the study
        (
            ["python", "-m", "snakemake", "--target-jobs", "scale_d8_train:rung=L0,chunk=0"],
            {},
            True,
        ),
        # a clone (or scratch directory) whose path holds "scale", as every job's command names
        (["python", "-m", "snakemake", "--snakefile", "/home/u/wt-scale/Snakefile"], {}, False),
        (["snakemake", "-d", "/scratch/scale_runs", "results/paper/claims.md"], {}, False),
    ],
)
def test_only_the_scale_study_checks_the_scale_list(argv, cfg, asked):
    """The list names config/config.yaml (d = 16): a user who edits that file to d = 32 and
    runs reproduce-all must not be stopped by the list of a study they did not ask for."""
    assert scale_study_asked(argv, cfg) is asked


@pytest.mark.extras
def test_snakemake_scale_stops_at_parse_time_on_a_bad_scale_list(tmp_path, capfd):
    from test_profiles import load_workflow

    path = _scale_list(tmp_path, [(32, str(REPO / D8))])
    before = _snapshot()
    with pytest.raises(SystemExit) as exc:
        load_workflow(scale_list=str(path))
    assert exc.value.code == 2
    err = [line for line in capfd.readouterr().err.splitlines() if "entropic-bound" in line]
    assert len(err) == 1 and "task.d = 8, not d = 32" in err[0], err
    assert _snapshot() == before


# ---- what the user sees: Snakemake stops at parse time, one line, exit 2, nothing written ----


def _snapshot():
    return {
        *REPO.iterdir(),
        *(REPO / "results").iterdir(),
    }


BAD_CONFIGS = {
    "nan": ("task:\n  beta: .nan\n", "'task.beta' is nan"),
    "inf_in_list": ("frontier:\n  sigma: [0.0, .inf]\n", "'frontier.sigma[1]' is inf"),
    "cross_key": ("task:\n  r_star: [1, 17]\n", "'task.r_star' and 'task.d'"),
    "frontier_cross_key": ("frontier:\n  r_star: [17]\n", "'frontier.r_star' and 'frontier.d'"),
    "n_train": ("task:\n  n_train: 10\n", "'task.n_train', 'task.n' and 'task.d'"),
    "run_name_dotdot": ("run_name: ..\n", "config key 'run_name'"),
    "run_name_dot": ("run_name: .\n", "config key 'run_name'"),
    "run_name_slash": ("run_name: a/b\n", "config key 'run_name'"),
    "run_name_reserved": ("run_name: scale\n", "config key 'run_name': results/scale"),
    "lambda_digits": ("task:\n  lambdas: [0.1234567890123]\n", "'task.lambdas[0]'"),
    "duplicate_key": ("seed: 0\nseed: 1\n", "key 'seed' appears twice"),
    "alias_bomb": (alias_bomb(), "more than 100000 values once its aliases"),
    "unknown_key": ("train:\n  epsilonn: 1\n", "epsilonn"),
    "sigma_grid": (
        "exploratory:\n  boundaries:\n    sigma_min: 1.0e+3\n",
        "'exploratory.boundaries.sigma_min' and 'exploratory.boundaries.sigma_max'",
    ),
    "integer_as_float": ("train:\n  tasks_per_job: 8.0\n", "'train.tasks_per_job'"),
}


@pytest.mark.extras
@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_snakemake_stops_at_parse_time(case, tmp_path, capfd):
    """Every class of bad config, through Snakemake's own parse (as `snakemake -n` does);
    the file overrides the paper config (the Snakefile's `configfile:`)."""
    from test_profiles import load_workflow

    text, named = BAD_CONFIGS[case]
    bad = _write(tmp_path, "bad.yaml", text)
    before = _snapshot()
    with pytest.raises(SystemExit) as exc:
        load_workflow(configfile=bad)
    assert exc.value.code == 2
    err = [line for line in capfd.readouterr().err.splitlines() if "entropic-bound" in line]
    assert len(err) == 1 and err[0].startswith("entropic-bound: error: "), err
    assert named in err[0], err
    assert _snapshot() == before  # nothing under results/, nothing beside it


@pytest.mark.extras
def test_snakemake_cli_exits_2_with_one_line(tmp_path):
    """The command a user types: exit 2, one error line, no traceback, nothing written."""
    bad = _write(tmp_path, "bad.yaml", "run_name: ..\n")
    before = _snapshot()
    smk = Path(sys.executable).with_name("snakemake")
    r = subprocess.run(
        [str(smk), "-n", "--configfile", "config/quick.yaml", str(bad)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 2, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    ours = [line for line in lines if line.startswith("entropic-bound: error: ")]
    assert ours == [
        "entropic-bound: error: config key 'run_name': must be a plain directory name under "
        "results/ (letters, digits, '_', '-', '.'; starting with a letter or digit; "
        "at most 100 characters)"
    ]
    # Snakemake's own info line ("Config file config/config.yaml is extended ...") is the
    # only other one; no traceback, no WorkflowError block
    assert all(line.startswith("Config file ") for line in lines if line not in ours), lines
    assert "Traceback" not in r.stderr + r.stdout
    assert _snapshot() == before


# ---------------------------------------------------------------- registration v2's cross-keys


@pytest.mark.parametrize(
    "edit,match",
    [
        (lambda c, k: c["train"].update(epsilon=2e-3), r"'train\.epsilon' \(0\.002\) is above"),
        (
            lambda c, k: c["bounds"].update(deficiency_rungs=["L0", "L3"]),
            r"'v2\.C7\.rungs\[1\]' \(L4\)",
        ),
    ],
    ids=["train_epsilon", "deficiency_rungs"],
)
def test_registration_v2_cross_keys(tmp_path, edit, match):
    """Each v2 setting the run must honour is checked before any job, naming both keys."""
    from entropic_bound.config.claims import check_claims_estimators

    cfg = _quick()
    validate(cfg, "config")
    claims = validate(yaml.safe_load((REPO / "config" / "claims.yaml").read_text()), "claims")
    check_claims_estimators(cfg, claims)  # as shipped: fine
    edit(cfg, claims)
    with pytest.raises(ConfigError, match=match):
        check_claims_estimators(cfg, claims)


def test_registration_v2_is_required_and_checked():
    claims = yaml.safe_load((REPO / "config" / "claims.yaml").read_text())
    bad = copy.deepcopy(claims)
    bad["v2"]["C6"]["static_rungs"] = ["L0", "L9"]
    with pytest.raises(ConfigError, match=r"v2\.C6\.static_rungs\[1\]"):
        validate(bad, "claims")
    del claims["v2"]
    with pytest.raises(ConfigError, match="v2"):
        validate(claims, "claims")


@pytest.mark.parametrize("value, ok", [(0, True), (256, True), (-1, False), (70000, False)])
def test_malloc_retain_mb_is_a_size_in_mb(value, ok):
    """Speed only (core/runner.retain_freed_memory): 0 (the C library's default) up to 64 GB."""
    if ok:
        validate(_with(malloc_retain_mb=value))
    else:
        with pytest.raises(ConfigError, match="malloc_retain_mb"):
            validate(_with(malloc_retain_mb=value))
